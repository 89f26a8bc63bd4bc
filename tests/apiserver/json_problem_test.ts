/**
 * `jsonProblem()`: where and why a text is not JSON, on one line — a table of hostile texts
 * (new lines, binary, a million brackets), and agreement with `JSON.parse` on random texts:
 * the scan calls a text JSON exactly when `JSON.parse` takes it, and where `JSON.parse` names a
 * position, the scan names the same one.
 */
import assert from "node:assert/strict";
import { jsonProblem } from "../../src/apiserver/storage/_json_problem.ts";

function problem(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return jsonProblem(text, e);
  }
  throw new Error(`valid JSON: ${text}`);
}

Deno.test("jsonProblem(): the words and the position, on one line, for hostile texts", () => {
  const rows: Array<[string, string]> = [
    ["not json\nat all\n", "Unexpected 'o' at line 1 column 2 (position 1)"],
    ["\u0000\u0001garbage\n", "Unexpected character U+0000 at line 1 column 1 (position 0)"],
    ['{"a": 1,\n "b": x}', "Unexpected 'x' at line 2 column 7 (position 15)"],
    ["{nope", "Expected property name or '}' at line 1 column 2 (position 1)"],
    ['{"a":1\n', "Expected ',' or '}' after property value at line 2 column 1 (position 7)"],
    ["", "the file is empty"],
    [" \n\t", "the file is empty"],
    [
      "[".repeat(1_000_000),
      "Unexpected end of the text at line 1 column 1000001 (position 1000000)",
    ],
    ['{"a":"\u0007"}', "Bad control character in string literal at line 1 column 7 (position 6)"],
    ["[1,]", "Unexpected ']' at line 1 column 4 (position 3)"],
  ];
  for (const [text, expected] of rows) {
    const got = problem(text);
    assert.equal(got, expected, JSON.stringify(text.slice(0, 30)));
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(got, /[\u0000-\u001f]/);
  }
});

Deno.test("jsonProblem(): the scan agrees with JSON.parse on random texts", () => {
  const alphabet = '{}[],:"a1-.eE+trunlfs0\\/ \n\t\u0001'.split("");
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let checked = 0;
  for (let k = 0; k < 50_000; k++) {
    let text = "";
    for (let i = 0, n = 1 + Math.floor(random() * 12); i < n; i++) {
      text += alphabet[Math.floor(random() * alphabet.length)];
    }
    let message: string | undefined;
    try {
      JSON.parse(text);
    } catch (e) {
      message = (e as Error).message;
    }
    if (message === undefined) continue;
    const got = jsonProblem(text, new SyntaxError(message));
    const theirs = /at position (\d+)/.exec(message)?.[1];
    const ours = /\(position (\d+)\)$/.exec(got)?.[1];
    assert.ok(ours !== undefined || got === "the file is empty", `${JSON.stringify(text)}: ${got}`);
    if (theirs !== undefined) assert.equal(ours, theirs, `${JSON.stringify(text)}: ${message}`);
    checked++;
  }
  assert.ok(checked > 10_000, `only ${checked} invalid texts`);
});
