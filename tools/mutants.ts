/**
 * `deno task mutants`: a small mutation check of our own. Each entry of the list
 * (`tools/mutants_list.ts`) plants one plausible one-line bug in a central function and names
 * the tests that must catch it. The tool copies the working tree (tracked and untracked files,
 * not the ignored ones) to a temporary directory — the real tree is never changed, nothing is
 * stashed —, runs the named tests once unchanged (they must pass, or a "killed" would mean
 * nothing), then applies one mutant at a time, runs only its tests with a time limit, puts the
 * line back, and reports each mutant killed or survived.
 *
 * Why: a green suite says only that no test failed; it does not say that a test would fail if
 * the guarantee it stands for broke. A mutant that survives is a guarantee with no test.
 *
 * Exit code: 0 when every mutant was killed; 1 when one survived, or when an entry's original
 * text is not found exactly once in its file (so the list cannot rot silently when the code
 * changes); 2 for bad usage or named tests that fail with no mutant planted.
 *
 * Run: `deno task mutants` (all), `deno task mutants --only <id>,<id>`, `--list`,
 * `--limit <seconds>` (the time limit per run; default 120). Before a release, and whenever
 * a function in the list changes.
 *
 * @module
 */

import { MUTANTS } from "./mutants_list.ts";

/** One planted bug: where, what it replaces, and which tests must catch it. */
export interface Mutant {
  /** A short unique name, e.g. `timeout-per-attempt`. */
  id: string;
  /** The file to change, relative to the repository's root. */
  file: string;
  /** The exact original text (a line or a snippet); it must occur exactly once in the file. */
  original: string;
  /** What replaces it: the bug (`""` removes the original). */
  mutant: string;
  /** The test files (or, for JSDoc examples, source files run with `--doc`) that must fail. */
  tests: string[];
  /** What guarantee breaks, in a few words. */
  why: string;
}

/** The list of mutants is malformed, or an entry no longer matches its file. */
export class MutantListError extends Error {
  override name = "MutantListError";
}

/**
 * Checks the list's shape: every field a non-empty string (tests a non-empty list), ids unique,
 * the mutant different from the original.
 *
 * @param list The entries, as written in the list file.
 * @returns The same entries, typed.
 * @throws {MutantListError} Naming the entry and what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkList } from "./mutants.ts";
 * const m = { id: "a", file: "x.ts", original: "a + 1", mutant: "a - 1", tests: ["t_test.ts"], why: "sums" };
 * assert.equal(checkList([m]).length, 1);
 * assert.throws(() => checkList([m, m]), /mutant "a" is listed twice/);
 * ```
 */
export function checkList(list: readonly unknown[]): Mutant[] {
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const e = entry as Partial<Mutant>;
    const name = typeof e?.id === "string" && e.id ? `mutant "${e.id}"` : `entry #${i + 1}`;
    for (const key of ["id", "file", "original", "why"] as const) {
      if (typeof e?.[key] !== "string" || !e[key]) {
        throw new MutantListError(`${name}: "${key}" must be a non-empty string`);
      }
    }
    if (typeof e.mutant !== "string") {
      throw new MutantListError(`${name}: "mutant" must be a string ("" removes the original)`);
    }
    if (
      !Array.isArray(e.tests) || !e.tests.length ||
      !e.tests.every((t) => typeof t === "string" && t)
    ) {
      throw new MutantListError(`${name}: "tests" must name at least one test file`);
    }
    if (e.original === e.mutant) {
      throw new MutantListError(`${name}: the mutant is the same as the original`);
    }
    if (seen.has(e.id!)) throw new MutantListError(`${name} is listed twice`);
    seen.add(e.id!);
    return e as Mutant;
  });
}

/**
 * Plants a mutant in a file's text.
 *
 * @param text The file's text.
 * @param m The mutant.
 * @returns The text with the original replaced by the mutant.
 * @throws {MutantListError} If the original is not in the text, or is there more than once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyMutant } from "./mutants.ts";
 * const m = { id: "a", file: "x.ts", original: "a + 1", mutant: "a - 1", tests: ["t_test.ts"], why: "sums" };
 * assert.equal(applyMutant("return a + 1;", m), "return a - 1;");
 * assert.throws(() => applyMutant("return a + 2;", m), /not found/);
 * ```
 */
export function applyMutant(text: string, m: Mutant): string {
  const at = text.indexOf(m.original);
  if (at < 0) {
    throw new MutantListError(
      `mutant "${m.id}": its original is not found in ${m.file} (the code changed: update ` +
        `the entry in tools/mutants_list.ts): ${JSON.stringify(m.original)}`,
    );
  }
  if (text.indexOf(m.original, at + 1) >= 0) {
    throw new MutantListError(
      `mutant "${m.id}": its original occurs more than once in ${m.file} (make it longer, ` +
        `so that it names one place): ${JSON.stringify(m.original)}`,
    );
  }
  return text.slice(0, at) + m.mutant + text.slice(at + m.original.length);
}

/**
 * The `deno test` arguments for a mutant's tests (or several mutants' at once): the test files,
 * with `--doc` when a source file is named for its JSDoc examples. No type check: a mutant is
 * meant to be caught by behaviour, and the check would cost more than the tests.
 *
 * @param tests The files.
 * @param parallel Run the files in parallel (the baseline).
 * @returns The arguments after `deno`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { testArgs } from "./mutants.ts";
 * assert.deepEqual(testArgs(["tests/a_test.ts"]), ["test", "-A", "--no-check", "--fail-fast", "tests/a_test.ts"]);
 * assert.ok(testArgs(["src/x.ts"]).includes("--doc"));
 * ```
 */
export function testArgs(tests: readonly string[], parallel = false): string[] {
  const doc = tests.some((t) => !/_test\.ts$/.test(t));
  return [
    "test",
    "-A",
    "--no-check",
    ...(parallel ? ["--parallel"] : ["--fail-fast"]),
    ...(doc ? ["--doc"] : []),
    ...tests,
  ];
}

/**
 * Checks every entry against the tree: its file and its test files exist, and its original
 * occurs exactly once.
 *
 * @param root The repository's root directory.
 * @param list The mutants.
 * @returns The problems found (empty when the list matches the tree).
 */
export async function verifyList(root: string, list: readonly Mutant[]): Promise<string[]> {
  const problems: string[] = [];
  for (const m of list) {
    try {
      applyMutant(await Deno.readTextFile(`${root}/${m.file}`), m);
    } catch (e) {
      problems.push(
        e instanceof Deno.errors.NotFound
          ? `mutant "${m.id}": no file ${m.file}`
          : (e as Error).message,
      );
    }
    for (const t of m.tests) {
      try {
        await Deno.stat(`${root}/${t}`);
      } catch {
        problems.push(`mutant "${m.id}": no test file ${t}`);
      }
    }
  }
  return problems;
}

/** How one run of tests ended. */
interface Run {
  passed: boolean;
  timedOut: boolean;
  seconds: number;
  output: string;
}

async function runTests(dir: string, args: string[], limitSeconds: number): Promise<Run> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, limitSeconds * 1000);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return {
      passed: out.success && !timedOut,
      timedOut,
      seconds: (performance.now() - started) / 1000,
      output: dec.decode(out.stdout) + dec.decode(out.stderr),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Copies the working tree's files (tracked and untracked, not ignored) into `dest`. */
async function copyTree(root: string, dest: string): Promise<void> {
  const listed = await new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!listed.success) {
    throw new Error(`git ls-files failed: ${new TextDecoder().decode(listed.stderr)}`);
  }
  const files = new TextDecoder().decode(listed.stdout).split("\0").filter(Boolean);
  const made = new Set<string>();
  for (const file of files) {
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    if (dir && !made.has(dir)) {
      await Deno.mkdir(`${dest}/${dir}`, { recursive: true });
      made.add(dir);
    }
    try {
      await Deno.copyFile(`${root}/${file}`, `${dest}/${file}`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e; // deleted but not yet staged
    }
  }
}

/**
 * The first failure in a `deno test` output: the failing test's name and its error's first line.
 *
 * @param output The output (without colours).
 * @returns One line, e.g. `tests/a_test.ts => name: AssertionError: …`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstFailure } from "./mutants.ts";
 * const out = "x ... FAILED\n ERRORS \n\nx => ./tests/a_test.ts:3:6\nerror: AssertionError: no\n";
 * assert.equal(firstFailure(out), "x => ./tests/a_test.ts:3:6: AssertionError: no");
 * ```
 */
export function firstFailure(output: string): string {
  const lines = output.split("\n");
  const at = lines.findIndex((l) => l.startsWith("error: "));
  if (at < 0) return "(no error line; see the test output)";
  const where = at > 0 && / => /.test(lines[at - 1]!) ? `${lines[at - 1]!.trim()}: ` : "";
  return `${where}${lines[at]!.slice("error: ".length)}`.slice(0, 300);
}

/** The last lines of a test run's output, for a report. */
function tail(output: string, lines = 15): string {
  return output.trimEnd().split("\n").slice(-lines).map((l) => `    ${l}`).join("\n");
}

async function main(args: string[]): Promise<number> {
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  let limit = 120;
  let only: Set<string> | undefined;
  let listOnly = false;
  let baseline = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--list") listOnly = true;
    else if (a === "--no-baseline") baseline = false;
    else if (a === "--only" && args[i + 1]) only = new Set(args[++i]!.split(","));
    else if (a === "--limit" && Number(args[i + 1]) > 0) limit = Number(args[++i]);
    else {
      console.error(
        `mutants: unknown argument ${a}: use --list, --only <id,…>, --limit <seconds>, --no-baseline`,
      );
      return 2;
    }
  }
  let list: Mutant[];
  try {
    list = checkList(MUTANTS);
  } catch (e) {
    console.error(`mutants: ${(e as Error).message}`);
    return 1;
  }
  if (only) {
    const unknown = [...only].filter((id) => !list.some((m) => m.id === id));
    if (unknown.length) {
      console.error(`mutants: no mutant ${unknown.join(", ")}: see --list`);
      return 2;
    }
    list = list.filter((m) => only.has(m.id));
  }
  if (listOnly) {
    for (const m of list) console.log(`${m.id.padEnd(32)} ${m.file}: ${m.why}`);
    return 0;
  }
  const problems = await verifyList(root, list);
  if (problems.length) {
    for (const p of problems) console.error(`mutants: ${p}`);
    return 1;
  }
  const dir = await Deno.makeTempDir({ prefix: "kopf-mutants-" });
  try {
    await copyTree(root, dir);
    const started = performance.now();
    if (baseline) {
      const tests = [...new Set(list.flatMap((m) => m.tests))];
      console.log(`baseline: ${tests.length} test files with no mutant …`);
      const run = await runTests(dir, testArgs(tests, true), limit * 2);
      if (!run.passed) {
        console.error(
          `mutants: the named tests fail with no mutant planted${
            run.timedOut ? " (time limit)" : ""
          }; fix them first:\n${tail(run.output, 40)}`,
        );
        return 2;
      }
      console.log(`baseline: passed in ${run.seconds.toFixed(0)} s`);
    }
    const survived: Mutant[] = [];
    for (const [i, m] of list.entries()) {
      const path = `${dir}/${m.file}`;
      const original = await Deno.readTextFile(path);
      await Deno.writeTextFile(path, applyMutant(original, m));
      let run: Run;
      try {
        run = await runTests(dir, testArgs(m.tests), limit);
      } finally {
        await Deno.writeTextFile(path, original);
      }
      const verdict = run.passed ? "SURVIVED" : run.timedOut ? "killed (time limit)" : "killed";
      console.log(
        `[${i + 1}/${list.length}] ${m.id}: ${verdict} in ${run.seconds.toFixed(1)} s — ${m.why}`,
      );
      if (!run.passed && !run.timedOut) console.log(`    by: ${firstFailure(run.output)}`);
      if (run.passed) {
        survived.push(m);
        console.log(`    ${m.file}: ${JSON.stringify(m.original)} → ${JSON.stringify(m.mutant)}`);
        console.log(`    tests: ${m.tests.join(" ")}\n${tail(run.output, 5)}`);
      }
    }
    const total = ((performance.now() - started) / 1000).toFixed(0);
    console.log(
      `${list.length - survived.length} of ${list.length} mutants killed, ${survived.length} ` +
        `survived (${total} s)${
          survived.length ? `: ${survived.map((m) => m.id).join(", ")}` : ""
        }`,
    );
    return survived.length ? 1 : 0;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
