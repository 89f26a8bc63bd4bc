/**
 * `goJsonSyntaxError()` against the messages of Go's `encoding/json` (its scanner's contexts:
 * `looking for beginning of value`, `after object key`, `in string literal`, …, and the extra
 * space it steps with at the end, which names a number or literal cut short).
 *
 * @module
 */

import assert from "node:assert/strict";
import { goJsonSyntaxError, summarizeBody } from "../../src/apiserver/wire/go_json_error.ts";

const bytes = (s: string | number[]) =>
  typeof s === "string" ? new TextEncoder().encode(s) : new Uint8Array(s);

const ROWS: Array<[string | number[], string | undefined]> = [
  ["", "unexpected end of JSON input"],
  ["  \n", "unexpected end of JSON input"],
  ['{"a":', "unexpected end of JSON input"],
  ['{"a": "b', "unexpected end of JSON input"],
  ["[1,", "unexpected end of JSON input"],
  ["{bad", "invalid character 'b' looking for beginning of object key string"],
  ["{,}", "invalid character ',' looking for beginning of object key string"],
  ['{"a" 1}', "invalid character '1' after object key"],
  ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
  ["[1 2]", "invalid character '2' after array element"],
  ["[1,]", "invalid character ']' looking for beginning of value"],
  ["{}x", "invalid character 'x' after top-level value"],
  ["01", "invalid character '1' after top-level value"],
  ["-", "invalid character ' ' in numeric literal"],
  ["-x", "invalid character 'x' in numeric literal"],
  ["1.", "invalid character ' ' after decimal point in numeric literal"],
  ["1.e5", "invalid character 'e' after decimal point in numeric literal"],
  ["1e", "invalid character ' ' in exponent of numeric literal"],
  ["1e+x", "invalid character 'x' in exponent of numeric literal"],
  ["tru", "invalid character ' ' in literal true (expecting 'e')"],
  ["[nul]", "invalid character ']' in literal null (expecting 'l')"],
  ["fals3", "invalid character '3' in literal false (expecting 'e')"],
  ['"a\tb"', "invalid character '\\t' in string literal"],
  ['"\\q"', "invalid character 'q' in string escape code"],
  ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
  ["'a'", "invalid character '\\'' looking for beginning of value"],
  ["\\", "invalid character '\\\\' looking for beginning of value"],
  [[0x01], "invalid character '\\x01' looking for beginning of value"],
  [[0x7f], "invalid character '\\x7f' looking for beginning of value"],
  // A byte over 0x7f is shown as the code point of that number, as Go's string(rune(b)).
  ["é", "invalid character 'Ã' looking for beginning of value"],
  [[0x85], "invalid character '\\u0085' looking for beginning of value"],
  [[0xef, 0xbb, 0xbf, 0x7b, 0x7d], "invalid character 'ï' looking for beginning of value"],
  ['{"a": [1, {"b": null}], "c": -0.5e-3}', undefined],
  ["123", undefined],
  [' "x" ', undefined],
];

for (const [input, want] of ROWS) {
  Deno.test(`goJsonSyntaxError(${JSON.stringify(typeof input === "string" ? input : input.map((b) => b.toString(16)))}) is Go's message`, () => {
    assert.equal(goJsonSyntaxError(bytes(input)), want);
  });
}

Deno.test("goJsonSyntaxError() walks a million open brackets without a deep stack", () => {
  assert.equal(goJsonSyntaxError(bytes("[".repeat(1_000_000))), "unexpected end of JSON input");
});

Deno.test("summarizeBody() quotes a body as kube-apiserver's summarizeData", () => {
  assert.equal(summarizeBody(new Uint8Array()), "<empty>");
  assert.equal(summarizeBody(new Uint8Array([0, 1, 2])), "<binary> len 3");
  assert.equal(summarizeBody(bytes("x".repeat(30))), "x".repeat(30));
  assert.equal(summarizeBody(bytes("x".repeat(31))), "x".repeat(30) + " ...");
});
