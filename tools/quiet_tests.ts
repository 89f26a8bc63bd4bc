/**
 * The guard against "post-test output": runs a test command (`deno task test` runs the suite
 * through it), passes its output through as it comes, and fails when `deno test` reported
 * output that a test printed — with `--parallel`, every line a test or a doc example prints
 * shows up as a "post-test output" block (an "output" block without `--parallel`), and a suite of 3,000 lines hides its real failures
 * in them. The suite runs once: the guard reads the same output that the terminal shows.
 *
 * A test that measures something prints it only when asked (`KOPF_TEST_REPORT=1`); a doc
 * example states its results with assertions, not `console.log`.
 *
 * It also sums up at the end the tests that did not run here and why (a test that cannot run
 * registers as ignored with "(not run: why)" in its name), and lists the tests that ran over their time limit (`deno task test` preloads
 * [test_preload.ts](./test_preload.ts), which gives every test one: see
 * [test_time_limit.ts](./test_time_limit.ts)), with how to give a test that needs it a longer one.
 *
 * Run: `deno run -A tools/quiet_tests.ts deno test -A --preload tools/test_preload.ts --parallel …`
 * (as `deno task test`).
 * Exit code: the command's, or 1 if it passed but printed post-test output.
 *
 * @module
 */

/** `deno test`'s frame around what a test printed: "output", or "post-test output" when it came late. */
const START = /------- (?:post-test )?output -------/g;
const END = /----- (?:post-test )?output end -----/;

/**
 * The tests (as `deno test` names them) that printed, in a `deno test` output.
 *
 * @param output The output, colours and all.
 * @returns One entry per post-test output block: the test's name as reported, or `?`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { postTestOutputs } from "./quiet_tests.ts";
 * const out = "------- post-test output -------\nhi\n./a_test.ts => prints ...----- post-test output end -----\n";
 * assert.deepEqual(postTestOutputs(out), ["./a_test.ts => prints"]);
 * ```
 */
export function postTestOutputs(output: string): string[] {
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const found: string[] = [];
  for (const start of plain.matchAll(START)) {
    const from = start.index + start[0].length;
    const end = END.exec(plain.slice(from));
    const block = plain.slice(from, end ? from + end.index : undefined);
    const name = /([^\n]*?) \.\.\.$/.exec(block.trimEnd())?.[1]?.trim();
    found.push(name ?? "?");
  }
  return found;
}

/** A test registered as ignored with the reason it did not run: "name (not run: why) ... ignored". */
const NOT_RUN = /^.* \(not run: (.*)\) \.\.\. ignored/gm;

/**
 * The reasons tests did not run, with how many did not for each, in a `deno test` output.
 *
 * @param output The output, colours and all.
 * @returns Each reason with its count, most frequent first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notRun } from "./quiet_tests.ts";
 * const out = "./a_test.ts => kubectl 1.27: x (not run: no kubectl) ... ignored (0ms)\n" +
 *   "./a_test.ts => kubectl 1.33: x (not run: no kubectl) ... ignored (0ms)\n";
 * assert.deepEqual(notRun(out), [["no kubectl", 2]]);
 * ```
 */
export function notRun(output: string): Array<[reason: string, count: number]> {
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const counts = new Map<string, number>();
  for (const [, why] of plain.matchAll(NOT_RUN)) counts.set(why!, (counts.get(why!) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

/** `deno test`'s report of a test stopped by its `timeout`, in the ERRORS section. */
const TIMED_OUT = /^(.*?) => (\S+)\nerror: Test timed out after (\d+)ms\.$/gm;

/**
 * The tests that ran over their time limit, in a `deno test` output.
 *
 * @param output The output, colours and all.
 * @returns One line per test: its name, where it is, and the limit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { timedOutTests } from "./quiet_tests.ts";
 * const out = " ERRORS \n\nhangs => ./a_test.ts:3:6\nerror: Test timed out after 1000ms.\n";
 * assert.deepEqual(timedOutTests(out), ["hangs (./a_test.ts:3:6) — over 1000 ms"]);
 * ```
 */
export function timedOutTests(output: string): string[] {
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  return [...plain.matchAll(TIMED_OUT)].map(([, name, where, ms]) =>
    `${name} (${where}) — over ${ms} ms`
  );
}

/**
 * Runs the command, echoing its output, and judges it.
 *
 * @param command The command and its arguments.
 * @returns The exit code to exit with.
 */
export async function runQuietly(command: string[]): Promise<number> {
  const [program, ...args] = command;
  if (!program) {
    console.error("quiet_tests: give the test command, e.g. deno test -A tests/");
    return 2;
  }
  // `deno` is this very Deno (on a machine where it came from npx, it is not on the PATH).
  const child = new Deno.Command(program === "deno" ? Deno.execPath() : program, {
    args,
    stdin: "inherit",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let seen = "";
  const decoder = new TextDecoder();
  const pump = async (from: ReadableStream<Uint8Array>, to: typeof Deno.stdout) => {
    for await (const chunk of from) {
      seen += decoder.decode(chunk, { stream: true });
      let rest = chunk;
      while (rest.length) rest = rest.subarray(to.writeSync(rest));
    }
  };
  await Promise.all([pump(child.stdout, Deno.stdout), pump(child.stderr, Deno.stderr)]);
  const { code } = await child.status;
  const skipped = notRun(seen);
  if (skipped.length) {
    const total = skipped.reduce((sum, [, n]) => sum + n, 0);
    console.error(`\nquiet_tests: ${total} test(s) did not run here (listed above as ignored):`);
    for (const [why, n] of skipped) console.error(`  ${n} — ${why}`);
  }
  const late = timedOutTests(seen);
  if (late.length) {
    console.error(
      `\nquiet_tests: ${late.length} test(s) ran over their time limit and were stopped — a hang ` +
        "or a regression; a test that honestly needs longer says so: Deno.test({ name, timeout: ms }, fn):",
    );
    for (const line of late) console.error(`  ${line}`);
  }
  const printed = postTestOutputs(seen);
  if (printed.length) {
    console.error(
      `\nquiet_tests: ${printed.length} test(s) printed output — a test states its ` +
        "results with assertions (measurements only with KOPF_TEST_REPORT=1):",
    );
    for (const name of printed) console.error(`  ${name}`);
    return code || 1;
  }
  return code;
}

if (import.meta.main) Deno.exit(await runQuietly(Deno.args));
