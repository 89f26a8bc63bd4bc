/**
 * A child process's output collected as it comes, for the tests that wait on what it logs and
 * show it when they fail.
 *
 * @module
 */

/** What {@link collect} gives: the text so far, and the end of the stream. */
export interface Collected {
  /** The chunks so far (`logs.join("")` is the text). */
  readonly logs: string[];
  /** Resolves when the stream has ended. */
  readonly reading: Promise<void>;
}

/**
 * Collects a stream's text (e.g. a child's stderr) as it comes.
 *
 * @param stream The stream.
 * @returns The chunks, growing, and the end of the stream.
 */
export function collect(stream: ReadableStream<Uint8Array>): Collected {
  const logs: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) logs.push(decoder.decode(chunk, { stream: true }));
  })();
  return { logs, reading };
}
