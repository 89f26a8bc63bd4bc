/**
 * Before/after, side by side in one run: the operator's benchmarks
 * (`operator_bench.ts`, `daemons_bench.ts`, `conversion_bench.ts`) run
 * alternately on an earlier commit and on this tree, on the same machine in
 * the same minutes, and every figure is printed as a pair. Alternating
 * (before, after, before, after…) spreads what the machine's neighbours do
 * over both sides.
 *
 * The earlier commit is checked out as a temporary git worktree, and this
 * tree's `bench/` is copied over its own, so that both sides run the same
 * benchmark code against their own operator (the benchmarks use the public
 * files only, `mod.ts` and `testing.ts`).
 *
 * Run: `deno task bench:compare REF [ROUNDS]` — e.g. `deno task bench:compare
 * HEAD~5 2`. ROUNDS (default 1) is how many times each side runs each
 * benchmark; every run's figures are printed. `KOPF_BENCHES=operator_bench.ts` runs one of
 * them, and `KOPF_BENCH_PHASES=tuned` only some phases of the operator's (see there).
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url).pathname;
/** The benchmarks to run (`KOPF_BENCHES`, comma-separated file names; all three by default). */
const BENCHES = Deno.env.get("KOPF_BENCHES")?.split(",").map((b) => b.trim()) ??
  ["operator_bench.ts", "daemons_bench.ts", "conversion_bench.ts"];

/** One figure line: its label, and the rest (the value, the unit, the notes). */
interface Figure {
  label: string;
  rest: string;
}

/**
 * The figure lines of a benchmark's output, in order.
 *
 * @param text The output.
 * @returns The figures.
 *
 * @example
 * ```ts
 * import { figures } from "./compare.ts";
 * import assert from "node:assert/strict";
 * const [f] = figures("operator: 1,000 created in a burst: 1,393 objects/s  [CPU: 1 µs]");
 * assert.deepEqual(f, {
 *   label: "operator: 1,000 created in a burst",
 *   rest: "1,393 objects/s  [CPU: 1 µs]",
 * });
 * ```
 */
export function figures(text: string): Figure[] {
  const out: Figure[] = [];
  for (const line of text.split("\n")) {
    if (/^\s/.test(line)) continue;
    // Labels may hold ": " themselves ("operator: 1,000 created in a burst: 1,393 objects/s");
    // the value is the last ": <number> " before the notes (which open with "[").
    const notes = line.indexOf("[");
    const head = notes < 0 ? line : line.slice(0, notes);
    let at = -1;
    for (const m of head.matchAll(/: [\d.,]+ /g)) at = m.index;
    if (at > 0) out.push({ label: line.slice(0, at), rest: line.slice(at + 2) });
  }
  return out;
}

async function git(...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd: ROOT, stderr: "inherit" }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout).trim();
}

async function runBench(tree: string, bench: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${tree}/bench/${bench}`],
    cwd: tree,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) console.error(`${bench} in ${tree} exited with ${out.code}`);
  return text;
}

async function main(): Promise<number> {
  const [ref, roundsArg] = Deno.args;
  if (!ref) {
    console.error("usage: deno task bench:compare REF [ROUNDS]  (REF: the commit to compare with)");
    return 2;
  }
  const rounds = Number(roundsArg ?? 1);
  if (!Number.isInteger(rounds) || rounds < 1) {
    console.error(`ROUNDS must be a positive integer, not ${JSON.stringify(roundsArg)}`);
    return 2;
  }
  const commit = await git("rev-parse", "--short", ref);
  const head = await git("rev-parse", "--short", "HEAD");
  const dirty = (await git("status", "--porcelain", "--untracked-files=no")) ? "+changes" : "";
  const before = await Deno.makeTempDir({ prefix: "kopf-bench-before-" });
  await git("worktree", "add", "--detach", before, commit);
  try {
    // The same benchmark code on both sides.
    await Deno.remove(`${before}/bench`, { recursive: true });
    await new Deno.Command("cp", { args: ["-r", `${ROOT}bench`, `${before}/bench`] }).output();
    const sides = [[`before (${commit})`, before], [`after (${head}${dirty})`, ROOT]] as const;
    for (const bench of BENCHES) {
      const results: Array<[string, Figure[]]> = [];
      for (let round = 0; round < rounds; round++) {
        for (const [name, tree] of sides) {
          console.error(`${bench}: ${name}, round ${round + 1} of ${rounds}…`);
          results.push([`${name} #${round + 1}`, figures(await runBench(tree, bench))]);
        }
      }
      console.log(`\n== ${bench} ==`);
      const labels = [...new Set(results.flatMap(([, f]) => f.map((x) => x.label)))];
      const width = Math.max(...results.map(([name]) => name.length));
      for (const label of labels) {
        console.log(label);
        for (const [name, f] of results) {
          const found = f.filter((x) => x.label === label).map((x) => x.rest);
          console.log(`  ${name.padEnd(width)}  ${found.join(" | ") || "—"}`);
        }
      }
    }
  } finally {
    await git("worktree", "remove", "--force", before);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main());
