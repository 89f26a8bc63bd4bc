/**
 * The pure parts of `deno task mutants` (tools/mutants.ts): the list's checks, planting a
 * mutant (and the errors when its original is missing or ambiguous), the test command, and that
 * every entry of the real list still matches the tree — so the list cannot rot silently. The
 * mutants themselves are not run here (`deno task mutants` does that, in minutes).
 */

import assert from "node:assert/strict";
import {
  applyMutant,
  checkList,
  firstFailure,
  type Mutant,
  MutantListError,
  testArgs,
  verifyList,
} from "../../tools/mutants.ts";
import { MUTANTS } from "../../tools/mutants_list.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

const m: Mutant = {
  id: "m1",
  file: "src/x.ts",
  original: "a <= b",
  mutant: "a < b",
  tests: ["tests/x_test.ts"],
  why: "off by one",
};

Deno.test("checkList(): names the entry and the field that is wrong", () => {
  assert.deepEqual(checkList([m]), [m]);
  assert.throws(() => checkList([{ ...m, id: "" }]), /entry #1: "id" must be a non-empty string/);
  assert.throws(() => checkList([{ ...m, original: "" }]), /mutant "m1": "original" must be/);
  assert.throws(() => checkList([{ ...m, tests: [] }]), /mutant "m1": "tests" must name/);
  assert.throws(() => checkList([{ ...m, mutant: m.original }]), /same as the original/);
  assert.throws(() => checkList([m, { ...m }]), /mutant "m1" is listed twice/);
  assert.throws(() => checkList([{ ...m, mutant: 1 }]), /"mutant" must be a string/);
  assert.deepEqual(checkList([{ ...m, mutant: "" }])[0]!.mutant, "", "a removed line");
});

Deno.test("applyMutant(): replaces the one occurrence; a missing or repeated original is an error", () => {
  assert.equal(applyMutant("if (a <= b) return;\n", m), "if (a < b) return;\n");
  assert.equal(applyMutant("x\na <= b\ny", { ...m, mutant: "" }), "x\n\ny");
  assert.throws(
    () => applyMutant("if (a < b) return;", m),
    (e) =>
      e instanceof MutantListError && /mutant "m1": its original is not found in src\/x\.ts/.test(
        e.message,
      ),
  );
  assert.throws(() => applyMutant("a <= b; a <= b", m), /occurs more than once in src\/x\.ts/);
  // Multi-line originals match exactly, indentation included.
  const snippet = { ...m, original: "  a();\n  b();", mutant: "  b();" };
  assert.equal(applyMutant("f() {\n  a();\n  b();\n}", snippet), "f() {\n  b();\n}");
  assert.throws(() => applyMutant("f() {\n a();\n  b();\n}", snippet), /not found/);
});

Deno.test("testArgs(): the named files, fail-fast, no type check; --doc for a source file's examples", () => {
  assert.deepEqual(testArgs(["tests/a_test.ts", "tests/b_test.ts"]), [
    "test",
    "-A",
    "--no-check",
    "--fail-fast",
    "tests/a_test.ts",
    "tests/b_test.ts",
  ]);
  assert.deepEqual(testArgs(["src/cogs/structs/diffs.ts"]), [
    "test",
    "-A",
    "--no-check",
    "--fail-fast",
    "--doc",
    "src/cogs/structs/diffs.ts",
  ]);
  assert.ok(testArgs(["tests/a_test.ts"], true).includes("--parallel"));
});

Deno.test("firstFailure(): the failing test and its error's first line", () => {
  const out = "t ... FAILED\n\n ERRORS \n\nt => ./tests/a_test.ts:3:6\nerror: AssertionError: x\n";
  assert.equal(firstFailure(out), "t => ./tests/a_test.ts:3:6: AssertionError: x");
  assert.equal(firstFailure("ok | 1 passed"), "(no error line; see the test output)");
});

Deno.test("the list of mutants is well-formed and every entry matches the tree exactly once", async () => {
  const list = checkList(MUTANTS);
  assert.ok(list.length >= 20, `${list.length} mutants`);
  assert.deepEqual(await verifyList(ROOT, list), []);
  // The ones issue 26 names are there.
  for (
    const id of [
      "timeout-per-attempt",
      "server-ignores-rv-precondition",
      "example-expects-wrong-op",
    ]
  ) {
    assert.ok(list.some((x) => x.id === id), id);
  }
  assert.ok(list.filter((x) => x.id.startsWith("untrimmed-")).length === 4, "the four trimmings");
});

Deno.test("verifyList(): a missing file, test file or original is reported by name", async () => {
  const problems = await verifyList(ROOT, [
    { ...m, id: "nofile", file: "src/nope.ts", tests: ["tests/tools/mutants_test.ts"] },
    { ...m, id: "notest", file: "deno.json", original: '"name"', tests: ["tests/nope_test.ts"] },
    {
      ...m,
      id: "gone",
      file: "deno.json",
      original: "no such text",
      tests: ["tests/tools/mutants_test.ts"],
    },
  ]);
  assert.deepEqual(problems.map((p) => p.split(":")[0]), [
    'mutant "nofile"',
    'mutant "notest"',
    'mutant "gone"',
  ]);
  assert.match(problems[0]!, /no file src\/nope\.ts/);
  assert.match(problems[1]!, /no test file tests\/nope_test\.ts/);
  assert.match(problems[2]!, /original is not found in deno\.json/);
});
