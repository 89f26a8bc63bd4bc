/**
 * Newline-delimited JSON from a byte stream, as watch responses send it.
 * Chunks arrive cut anywhere — in the middle of a line, or of a multi-byte
 * UTF-8 character — so bytes are decoded in streaming mode and lines are cut
 * only at `\n`. Lines can be megabytes long (big Secrets, ConfigMaps): only
 * each new chunk is searched for newlines, and a line's pieces are joined
 * once, so a long line arriving in many chunks costs linear, not quadratic,
 * time. Each chunk is decoded as soon as it arrives, before the next one is
 * asked for: a chunk may be a view of a buffer that its source reuses then
 * (the lean HTTP client's watch streams give such views: no copy per chunk).
 *
 * @module
 */

import { ResponseTooLargeError } from "./connection_errors.ts";

/**
 * Yields the JSON value of each non-empty line.
 *
 * @param chunks The bytes, in chunks of any size.
 * @returns The parsed lines, in order.
 * @throws {SyntaxError} For a line that is not JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { iterJsonLines } from "./jsonlines.ts";
 *
 * const bytes = new TextEncoder().encode('{"a":"ü"}\n\n{"b":2}');
 * const chunks = [bytes.slice(0, 7), bytes.slice(7)]; // cuts "ü" in half
 * const values = [];
 * for await (const value of iterJsonLines(chunks)) values.push(value);
 * assert.deepEqual(values, [{ a: "ü" }, { b: 2 }]);
 * ```
 */
export async function* iterJsonLines(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<unknown, void, undefined> {
  for await (const batch of iterJsonLineBatches(chunks)) yield* batch;
}

/**
 * Yields the JSON values of the lines completed by each chunk, as one array
 * per chunk: a stream of 100,000 small lines (a streamed list) then costs one
 * step of the consumer's loop per chunk instead of one per line. A line that
 * is not JSON throws after the values before it in its chunk were yielded.
 *
 * @param chunks The bytes, in chunks of any size.
 * @returns The parsed lines, a batch per chunk (no empty batches), in order.
 * @throws {SyntaxError} For a line that is not JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { iterJsonLineBatches } from "./jsonlines.ts";
 *
 * const bytes = new TextEncoder().encode('{"a":1}\n{"b":2}\n{"c"');
 * const batches = [];
 * for await (const batch of iterJsonLineBatches([bytes, new TextEncoder().encode(":3}\n")])) {
 *   batches.push(batch);
 * }
 * assert.deepEqual(batches, [[{ a: 1 }, { b: 2 }], [{ c: 3 }]]);
 * ```
 */
export async function* iterJsonLineBatches(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<unknown[], void, undefined> {
  const lines = new JsonLineSplitter();
  for await (const chunk of chunks) {
    const values: unknown[] = [];
    try {
      lines.feed(chunk, values);
    } catch (error) {
      if (values.length) yield values;
      throw error;
    }
    if (values.length) yield values;
  }
  const values: unknown[] = [];
  lines.end(values);
  if (values.length) yield values;
}

/**
 * The lines of newline-delimited JSON, fed chunk by chunk: the parsing of
 * {@link iterJsonLineBatches}, for a reader with a loop of its own (a watch
 * stream reads its chunks itself: no iterator between it and the connection).
 * A chunk is decoded when it is fed, so it may be a view of a buffer that is
 * reused afterwards.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { JsonLineSplitter } from "./jsonlines.ts";
 *
 * const bytes = new TextEncoder().encode('{"a":"ü"}\n{"b"');
 * const lines = new JsonLineSplitter();
 * const values: unknown[] = [];
 * lines.feed(bytes.subarray(0, 7), values); // cuts "ü" in half
 * lines.feed(bytes.subarray(7), values);
 * assert.deepEqual(values, [{ a: "ü" }]);
 * lines.feed(new TextEncoder().encode(":2}"), values);
 * lines.end(values); // the last line needs no newline
 * assert.deepEqual(values, [{ a: "ü" }, { b: 2 }]);
 *
 * // A line longer than the limit fails as it comes, before it is joined or parsed.
 * const short = new JsonLineSplitter({ maxLine: 8, setting: "watching.maxLineSize" });
 * assert.throws(() => short.feed(new TextEncoder().encode('{"a":"123'), []), /over 8 bytes/);
 * ```
 */
export class JsonLineSplitter {
  #decoder = new TextDecoder();
  /** The pieces of the current, unfinished line. */
  #pending: string[] = [];
  /** Their length in all. */
  #pendingSize = 0;
  #maxLine: number;
  #setting: string;
  #prefilter: ((line: string) => unknown) | undefined;

  /**
   * Creates the splitter.
   *
   * @param options `maxLine`: the most characters a line may have (a longer one throws a
   *   {@link ResponseTooLargeError} naming `setting`); default: no limit. `prefilter`: sees each
   *   non-empty line before it is parsed; what it returns (other than undefined) is the line's
   *   value instead, and the line is not parsed (a watch skips the events of objects another
   *   replica owns so).
   */
  constructor(
    options: {
      maxLine?: number | undefined;
      setting?: string | undefined;
      prefilter?: ((line: string) => unknown) | undefined;
    } = {},
  ) {
    this.#maxLine = options.maxLine ?? Infinity;
    this.#setting = options.setting ?? "the line limit";
    this.#prefilter = options.prefilter;
  }

  /**
   * Decodes a chunk and parses the lines it completes.
   *
   * @param chunk The bytes, cut anywhere.
   * @param values Where the values of the completed non-empty lines are pushed, in order.
   * @throws {SyntaxError} For a line that is not JSON (the values before it are pushed).
   * @throws {ResponseTooLargeError} For a line over the limit (the values before it are pushed).
   */
  feed(chunk: Uint8Array, values: unknown[]): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
      if (this.#pendingSize + end - start > this.#maxLine) throw this.#tooLong();
      // A line within one chunk (the usual case) is parsed from its slice, with no joining.
      let line = text.slice(start, end);
      if (this.#pending.length) {
        this.#pending.push(line);
        line = this.#pending.join("");
        this.#pending = [];
        this.#pendingSize = 0;
      }
      start = end + 1;
      if (isBlank(line)) continue;
      const early = this.#prefilter?.(line);
      values.push(early !== undefined ? early : JSON.parse(line));
    }
    if (start < text.length) {
      this.#pendingSize += text.length - start;
      if (this.#pendingSize > this.#maxLine) throw this.#tooLong();
      this.#pending.push(text.slice(start));
    }
  }

  #tooLong(): ResponseTooLargeError {
    this.#pending = [];
    this.#pendingSize = 0;
    return new ResponseTooLargeError("A line of the stream", this.#maxLine, this.#setting);
  }

  /**
   * Ends the input: parses the last line if it had no newline.
   *
   * @param values Where its value is pushed, if it is not empty.
   * @throws {SyntaxError} If it is not JSON.
   */
  end(values: unknown[]): void {
    this.#pending.push(this.#decoder.decode());
    const rest = this.#pending.join("");
    this.#pending = [];
    this.#pendingSize = 0;
    if (isBlank(rest)) return;
    const early = this.#prefilter?.(rest);
    values.push(early !== undefined ? early : JSON.parse(rest));
  }
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}
