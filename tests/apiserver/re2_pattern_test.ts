/**
 * CRD `pattern`s read as Go's RE2 reads them (`re2_pattern.ts`): RE2-only
 * syntax translated and enforced, what RE2 refuses refused with Go's wording,
 * what cannot be translated accepted and not enforced.
 *
 * @module
 */

import assert from "node:assert/strict";
import { compileRe2 } from "../../src/apiserver/schemas/re2_pattern.ts";

Deno.test("compileRe2() translates RE2-only syntax and matches as RE2 does", () => {
  const cases: Array<[string, string[], string[]]> = [
    ["(?i)^ab$", ["AB", "ab"], ["abc"]],
    ["^a\\z", ["a"], ["a\n", "ab"]],
    ["\\Aa", ["ab"], ["ba"]],
    ["^(?P<x>a+)$", ["aa"], ["b"]],
    ["^[[:digit:][:upper:]]+$", ["1A"], ["a"]],
    ["^\\pL+$", ["abc", "é"], ["1"]],
    ["^[]a]+$", ["]a"], ["b"]],
    ["^a\\-b\\:c$", ["a-b:c"], ["ab:c"]], // RE2 escapes any punctuation (not so with the u flag).
  ];
  for (const [pattern, yes, no] of cases) {
    const { regexp, error } = compileRe2(pattern);
    assert.equal(error, undefined, pattern);
    for (const s of yes) assert.ok(regexp!.test(s), `${pattern} should match ${JSON.stringify(s)}`);
    for (const s of no) {
      assert.ok(!regexp!.test(s), `${pattern} should not match ${JSON.stringify(s)}`);
    }
  }
});

Deno.test("compileRe2() refuses what Go's regexp refuses, worded as Go words it", () => {
  assert.equal(
    compileRe2("a(?!b)").error,
    "error parsing regexp: invalid or unsupported Perl syntax: `(?!`",
  );
  assert.equal(
    compileRe2("(?<=a)b").error,
    "error parsing regexp: invalid or unsupported Perl syntax: `(?<=`",
  );
  assert.equal(compileRe2("(a)\\1").error, "error parsing regexp: invalid escape sequence: `\\1`");
  assert.match(compileRe2('(["').error!, /^error parsing regexp: /);
  assert.match(compileRe2("a**").error!, /^error parsing regexp: /);
  assert.deepEqual(compileRe2("[\\1]").error, undefined, "\\1 in a class is an octal escape");
});

Deno.test("compileRe2() accepts without enforcing what it cannot translate", () => {
  for (const pattern of ["(?U)a+", "a(?i)b", "\\Qa.b\\E", "[[:^alpha:]]"]) {
    assert.deepEqual(compileRe2(pattern), {}, pattern);
  }
});
