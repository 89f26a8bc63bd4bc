/**
 * JSON text as Python Kopf writes it into annotations — `json.dumps(value,
 * separators=(",", ":"))` — so that values we write are byte-identical to
 * Kopf's for the same data, and a value never flips back and forth between
 * the two ports' spellings (which would look like a change on every cycle).
 *
 * The only difference from `JSON.stringify` is Python's default
 * `ensure_ascii=True`: every character outside printable ASCII (U+007F and
 * above) is written as a `\uXXXX` escape (astral characters as a surrogate
 * pair), lowercase hex, as Python does. Known remaining difference: numbers
 * that Python holds as floats with an integral value (`1.0`) are written by
 * JavaScript as `1` — equal in meaning, and Kubernetes rarely sends them.
 *
 * @module
 */

/** A character that {@link dumpsCompact} escapes. */
const NON_ASCII = /[\u007f-\uffff]/;

/**
 * Serialises a JSON value compactly with non-ASCII characters escaped.
 *
 * @param value A JSON-serialisable value.
 * @returns The JSON text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dumpsCompact } from "./_pyjson.ts";
 * assert.equal(dumpsCompact({ message: "naïve ✓" }), String.raw`{"message":"na\u00efve \u2713"}`);
 * ```
 */
export function dumpsCompact(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError("The value is not JSON-serialisable.");
  // Mostly ASCII (an essence, a progress record): as it is, without a replacement's work.
  if (!NON_ASCII.test(text)) return text;
  return text.replace(
    /[\u007f-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
