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
 * Run: `deno run -A tools/quiet_tests.ts deno test -A --parallel …` (as `deno task test`).
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
