/**
 * tools/test_time_limit.ts (preloaded by `deno task test` through tools/test_preload.ts): a test
 * that hangs — awaiting forever with a timer pending, spinning in a synchronous loop, or a doc
 * example that never ends — fails the run within the limit, named with its file and line, and the
 * runner lists it; a test that declares a longer limit keeps it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { callerLocation, definition } from "../../tools/test_time_limit.ts";

const TOOLS = new URL("../../tools/", import.meta.url).pathname;

/** A planted test file: what hangs, what is honest but slower than the planted limit. */
const PLANTED = `/**
 * \`\`\`ts
 * await new Promise(() => setInterval(() => {}, 1000)); // a doc example that never ends
 * \`\`\`
 * @module
 */
export const nothing = 0;

Deno.test("hangs with a timer pending", async () => {
  const timer = setInterval(() => {}, 50);
  await new Promise(() => {});
  clearInterval(timer);
});

Deno.test({ name: "spins in a synchronous loop" }, () => {
  while (Date.now() > 0) { /* forever */ }
});

Deno.test({ name: "declares a longer limit", timeout: 10_000 }, async () => {
  await new Promise((resolve) => setTimeout(resolve, 2_500));
});

Deno.test("quick", () => {});
`;

Deno.test({
  name: "a planted hang fails the run within the limit, naming the test, its file and line",
  // The mechanism under test is the limit itself: if it does not work, the child is killed at
  // 45 s (and this test fails on its exit code) rather than hanging.
  timeout: 60_000,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-time-limit-" });
  try {
    const file = join(dir, "hang_test.ts");
    await Deno.writeTextFile(file, PLANTED);
    const started = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${TOOLS}quiet_tests.ts`,
        "deno",
        "test",
        "-A",
        "--no-check",
        "--doc",
        "--parallel",
        "--preload",
        `${TOOLS}test_preload.ts`,
        file,
      ],
      cwd: dir,
      env: { KOPF_TEST_TIME_LIMIT_MS: "2000", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(45_000),
    }).output();
    const seconds = (performance.now() - started) / 1000;
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, text);
    assert.ok(seconds < 40, `the run took ${seconds} s`);
    for (
      const [name, line] of [["hangs with a timer pending", 9], ["spins in a synchronous loop", 15]]
    ) {
      assert.match(
        text,
        new RegExp(
          `${name} => \\./hang_test\\.ts:${line}:6\\nerror: Test timed out after 2000ms\\.`,
        ),
      );
      assert.match(
        text,
        new RegExp(`^  ${name} \\(\\./hang_test\\.ts:${line}:6\\) — over 2000 ms$`, "m"),
      );
    }
    assert.match(
      text,
      /hang_test\.ts#2-5\.ts => \.\/hang_test\.ts#2-5\.ts:2:6\nerror: Test timed out after 2000ms\./,
    );
    assert.match(text, /quiet_tests: 3 test\(s\) ran over their time limit/);
    assert.match(text, /declares a longer limit \.\.\. ok/);
    assert.match(text, /quick \.\.\. ok/);
    assert.match(text, /FAILED \| 2 passed \| 3 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("callerLocation(): the first frame outside the skipped modules", () => {
  const stack = [
    "Error",
    "    at register (file:///r/tools/test_time_limit.ts:180:20)",
    "    at Object.test (file:///r/tools/test_time_limit.ts:188:5)",
    "    at kubectlTests (file:///r/tests/apiserver/_kubectl.ts:90:3)",
    "    at file:///r/tests/apiserver/a_test.ts:12:1",
  ].join("\n");
  const self = "file:///r/tools/test_time_limit.ts";
  assert.equal(callerLocation(stack, self), "file:///r/tests/apiserver/_kubectl.ts:90:3");
  assert.equal(
    callerLocation(stack, self, "file:///r/tests/apiserver/_kubectl.ts"),
    "file:///r/tests/apiserver/a_test.ts:12:1",
  );
  assert.equal(callerLocation("Error\n    at <anonymous>", self), undefined);
});

Deno.test("definition(): every shape of Deno.test's arguments, the caller's options untouched", () => {
  const fn = function named() {};
  const options = { sanitizeOps: false };
  assert.deepEqual(definition(["a", fn]), { name: "a", fn });
  assert.deepEqual(definition(["a", options, fn]), { sanitizeOps: false, name: "a", fn });
  assert.deepEqual(options, { sanitizeOps: false });
  assert.deepEqual(definition([fn]), { name: "named", fn });
  assert.deepEqual(definition([{ fn }]), { name: "named", fn });
  assert.deepEqual(definition([{ name: "b" }, fn]), { name: "b", fn });
  assert.deepEqual(definition([{ timeout: 5, fn }]), { timeout: 5, name: "named", fn });
  assert.equal(definition(["a"]), undefined);
  assert.equal(definition(["a", fn, fn]), undefined);
});
