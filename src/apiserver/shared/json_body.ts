/**
 * Response bodies in the bytes kube-apiserver writes. Its JSON serializer is Go's
 * `json.Encoder`: compact, HTML-safe (`<`, `>`, `&`, U+2028 and U+2029 escaped as `\u003c`…)
 * and ended by a newline; a pretty answer (`?pretty=true`, or a curl / Wget / browser
 * User-Agent) is Go's `json.MarshalIndent` with two spaces — and no newline at its end.
 * Clients that compare error bodies byte for byte (as the official Python client's tests do)
 * see no difference.
 *
 * @module
 */

const UNSAFE_ALL = /[<>&\u2028\u2029]/g;
const ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/**
 * A body as kube-apiserver's JSON serializer writes it.
 *
 * @param body The value.
 * @param pretty Indented (no trailing newline) rather than compact with one.
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonText } from "./json_body.ts";
 * assert.deepEqual(jsonText({ a: "<b>" }), '{"a":"\\u003cb\\u003e"}\n');
 * assert.deepEqual(jsonText({ a: 1 }, true), '{\n  "a": 1\n}');
 * ```
 */
export function jsonText(body: unknown, pretty = false): string {
  return pretty ? htmlSafe(JSON.stringify(body, null, 2)) : jsonLine(JSON.stringify(body));
}

/**
 * A compact body from JSON text already encoded (the store's own encoding of the object written),
 * as {@linkcode jsonText} would write the value: HTML-safe, ended by a newline.
 *
 * @param json The compact JSON text of the value (`JSON.stringify`'s).
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonLine, jsonText } from "./json_body.ts";
 * assert.equal(jsonLine(JSON.stringify({ a: "<b>" })), jsonText({ a: "<b>" }));
 * ```
 */
export function jsonLine(json: string): string {
  return htmlSafe(json) + "\n";
}

function htmlSafe(text: string): string {
  // Outside strings JSON has none of these characters: escaping the whole text is escaping
  // the strings.
  // (includes() is a fast scan; a regular expression over every body cost as much as half a
  // JSON.stringify.)
  return text.includes("<") || text.includes(">") || text.includes("&") ||
      text.includes("\u2028") || text.includes("\u2029")
    ? text.replace(UNSAFE_ALL, (c) => ESCAPES[c]!)
    : text;
}
