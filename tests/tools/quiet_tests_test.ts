/**
 * tools/quiet_tests.ts (the guard of `deno task test`): a test that prints makes the run fail,
 * naming the test, even when every test passed; a quiet run keeps the command's exit code.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { postTestOutputs } from "../../tools/quiet_tests.ts";

const GUARD = new URL("../../tools/quiet_tests.ts", import.meta.url).pathname;

async function guarded(testFile: string): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", GUARD, Deno.execPath(), "test", "--no-check", "--parallel", testFile],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("quiet_tests: a passing test that prints fails the run, by name; a quiet one passes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-quiet-" });
  try {
    const loud = join(dir, "loud_test.ts");
    const quiet = join(dir, "quiet_test.ts");
    await Deno.writeTextFile(
      loud,
      'Deno.test("prints", () => { console.log("hello"); });\nDeno.test("other", () => {});\n',
    );
    await Deno.writeTextFile(quiet, 'Deno.test("silent", () => {});\n');
    const a = await guarded(loud);
    assert.equal(a.code, 1, a.stderr);
    assert.match(a.stderr, /quiet_tests: 1 test\(s\) printed output/);
    assert.match(a.stderr, /loud_test\.ts => prints/);
    const b = await guarded(quiet);
    assert.equal(b.code, 0, b.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("quiet_tests: post-test output blocks are found with and without colours", () => {
  const block = (name: string) =>
    `------- post-test output -------\nx\n${name} ...----- post-test output end -----\n`;
  assert.deepEqual(postTestOutputs(block("./a_test.ts => one") + "ok\n" + block("./b => two")), [
    "./a_test.ts => one",
    "./b => two",
  ]);
  assert.deepEqual(postTestOutputs(`\x1b[0m${block("./c => three")}\x1b[0m`), ["./c => three"]);
  assert.deepEqual(
    postTestOutputs("------- output -------\nx\n./d => four ...----- output end -----\n"),
    ["./d => four"],
  );
  assert.deepEqual(postTestOutputs("./a_test.ts => fine ... ok (1ms)\n"), []);
});
