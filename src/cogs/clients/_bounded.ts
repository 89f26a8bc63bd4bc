/**
 * Reading an error answer's body with a size and a time bound (both
 * transports): the body of a 4xx/5xx is only read for its `Status`, so a
 * server that sends a huge one, or one that stalls after the headers, must
 * neither fill the memory nor hold the caller — a watch would otherwise hang
 * on it forever (its inactivity timer runs only on 2xx streams). What came
 * within the bounds is the text; the rest is dropped with the connection.
 *
 * @module
 */

import { realClock } from "../aio/clock.ts";

/**
 * Reads a body's pieces until it ends, `size` bytes came, or `seconds` passed: the text of
 * what came (at most `size` bytes, decoded; a character cut at the end is replaced). Reading
 * stops by `cancel()` (which must make a pending `read` settle); a failed read ends the text.
 *
 * @param read Gives the next piece (it may be a view valid until the next read), null at the end.
 * @param cancel Drops the rest of the body (the connection).
 * @param size The most bytes to read.
 * @param seconds The most time to read for; null: none.
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boundedText } from "./_bounded.ts";
 *
 * const pieces = [new TextEncoder().encode("Status: "), new TextEncoder().encode("too long")];
 * let cancelled = false;
 * const read = () => Promise.resolve(pieces.shift() ?? null);
 * assert.equal(await boundedText(read, () => (cancelled = true), 10, 1), "Status: to");
 * assert.ok(cancelled);
 * // A body that stalls: the time bound cancels it, and the text is what came (nothing).
 * let stop: () => void = () => {};
 * const never = () => new Promise<Uint8Array | null>((resolve) => (stop = () => resolve(null)));
 * assert.equal(await boundedText(never, () => stop(), 10, 0.05), "");
 * ```
 */
export async function boundedText(
  read: () => Promise<Uint8Array | null>,
  cancel: () => void,
  size: number,
  seconds: number | null,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let got = 0;
  let timedOut = false;
  const stopTimer = seconds !== null && seconds > 0
    ? realClock.timer(seconds * 1000, () => {
      timedOut = true;
      cancel();
    })
    : undefined;
  try {
    while (!timedOut && got < size) {
      let piece: Uint8Array | null;
      try {
        piece = await read();
      } catch {
        break; // cut by the time bound, or the connection broke: what came is the text
      }
      if (piece === null) return text + decoder.decode();
      const take = Math.min(piece.length, size - got);
      got += take;
      text += decoder.decode(take < piece.length ? piece.subarray(0, take) : piece, {
        stream: true,
      });
    }
    cancel(); // more than wanted, or too slow: the rest is not read
    return text + decoder.decode();
  } finally {
    stopTimer?.();
  }
}
