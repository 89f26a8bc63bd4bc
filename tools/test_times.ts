/**
 * Where the test suite's time goes: runs each test file alone the way CI runs the suite
 * (`deno test -A --no-check --preload tools/test_preload.ts`), and reports per unit its wall time and its CPU time — user plus system
 * of the whole process tree (the `deno test` process, the kubectl, `deno run` and python3
 * processes it started), as the shell's `times` reads it after the unit's process has been waited
 * for.
 *
 * Why both: CI's machine has two cores, so the suite's wall time is bounded below by its CPU time
 * divided by two, and a file whose wall time is far above its CPU time is waiting — on the real
 * clock, on a subprocess, on a server — and is the first place to look. The longest files are the
 * critical path of a `--parallel` run.
 *
 * Each unit pays its own start-up (the Deno process and its module graph), which a `--parallel`
 * run shares between files; the figures rank units, they do not add up to the whole run.
 *
 * Run:
 * - `deno task test:times` — every unit, two at a time; writes `test-times.json`.
 * - `deno task test:times --jobs 1 --out before.json tests/clients/` — some units only (files or
 *   folders).
 * - `--doc-units`: also the source files' JSDoc examples as `deno test --doc` runs them, one unit
 *   per folder (`doc:src/cogs/aio`…) — to measure a tree from before the suite ran them through
 *   [tests/docs/_jsdoc_examples.ts](../tests/docs/_jsdoc_examples.ts).
 * - `deno task test:times --compare before.json after.json` — the two runs side by side: the
 *   top units by wall and by CPU, and the totals.
 *
 * @module
 */

import { join, relative } from "node:path";

/** One unit's figures. */
export interface UnitTime {
  /** The test file (relative to the root), or `doc:<folder>` for a folder's doc examples. */
  unit: string;
  /** Seconds from start to exit. */
  wall: number;
  /** Seconds of user CPU of the unit's process tree. */
  user: number;
  /** Seconds of system CPU of the unit's process tree. */
  sys: number;
  /** The `deno test` exit code (0: passed). */
  code: number;
}

/** What `test-times.json` holds. */
export interface TimesReport {
  /** When the run started (ISO 8601). */
  started: string;
  /** The machine's load averages (1, 5, 15 minutes) at the start and at the end. */
  load: { start: number[]; end: number[] };
  /** How many units ran at once. */
  jobs: number;
  /** Seconds from the first unit's start to the last one's end. */
  wall: number;
  /** Every unit, in the order they finished. */
  units: UnitTime[];
}

const ROOT = new URL("..", import.meta.url).pathname;

/**
 * Seconds from one of the shell's `times` figures (`1m2.345s`).
 *
 * @param text The figure.
 * @returns Seconds.
 * @throws {SyntaxError} If the text is not such a figure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shellSeconds } from "./test_times.ts";
 * assert.equal(shellSeconds("1m2.500s"), 62.5);
 * assert.equal(shellSeconds("0m0.010s"), 0.01);
 * ```
 */
export function shellSeconds(text: string): number {
  const m = /^(\d+)m(\d+(?:[.,]\d+)?)s$/.exec(text.trim());
  if (!m) throw new SyntaxError(`not a shell time figure: ${JSON.stringify(text)}`);
  return Number(m[1]) * 60 + Number(m[2]!.replace(",", "."));
}

/**
 * The children's user and system CPU seconds from the shell's `times` output (its second line).
 *
 * @param output What `times` printed.
 * @returns The children's user and system seconds.
 * @throws {SyntaxError} If the output has no second line of two figures.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { childTimes } from "./test_times.ts";
 * assert.deepEqual(childTimes("0m0.001s 0m0.002s\n0m3.250s 0m0.750s\n"), { user: 3.25, sys: 0.75 });
 * ```
 */
export function childTimes(output: string): { user: number; sys: number } {
  const line = output.trim().split("\n")[1]?.trim().split(/\s+/);
  if (line?.length !== 2) {
    throw new SyntaxError(`not the output of times: ${JSON.stringify(output)}`);
  }
  return { user: shellSeconds(line[0]!), sys: shellSeconds(line[1]!) };
}

/** The units under the given paths (test files alone; `doc:` groups as they are). */
async function unitsOf(paths: string[]): Promise<string[]> {
  const units: string[] = [];
  for (const path of paths) {
    if (path.startsWith("doc:")) {
      units.push(path);
      continue;
    }
    const info = await Deno.stat(join(ROOT, path));
    if (info.isFile) units.push(relative(ROOT, join(ROOT, path)));
    else units.push(...(await testFiles(join(ROOT, path))).map((f) => relative(ROOT, f)));
  }
  return units;
}

async function testFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "fixtures") found.push(...await testFiles(path));
    else if (entry.isFile && /_test\.ts$/.test(entry.name)) found.push(path);
  }
  return found.sort();
}

/** The doc-example groups of `deno test --doc`: the public files, packages/, and each folder two deep under src/. */
async function docUnits(): Promise<string[]> {
  const units = ["doc:mod.ts on.ts testing.ts cli.ts apiserver.ts", "doc:packages"];
  for await (const top of Deno.readDir(join(ROOT, "src"))) {
    if (!top.isDirectory) continue;
    const subs: string[] = [];
    let files = false;
    for await (const entry of Deno.readDir(join(ROOT, "src", top.name))) {
      if (entry.isDirectory) subs.push(`doc:src/${top.name}/${entry.name}`);
      else files = true;
    }
    // A folder with files of its own and sub-folders: its own files as one unit (by glob).
    if (files && subs.length > 0) units.push(`doc:src/${top.name}/*.ts`);
    units.push(...(subs.length > 0 ? subs : [`doc:src/${top.name}`]));
  }
  return units.sort();
}

/** The `deno test` arguments of a unit. */
function testArgs(unit: string): string[] {
  const base = ["test", "-A", "--no-check", "--preload", "tools/test_preload.ts"];
  if (!unit.startsWith("doc:")) return [...base, unit];
  const targets = unit.slice(4).split(" ");
  const expanded = targets.flatMap((t) => t.endsWith("/*.ts") ? expandGlob(t) : [t]);
  return [...base, "--doc", ...expanded];
}

function expandGlob(pattern: string): string[] {
  const dir = pattern.slice(0, -"/*.ts".length);
  return [...Deno.readDirSync(join(ROOT, dir))]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => `${dir}/${e.name}`)
    .sort();
}

async function runUnit(unit: string, logDir: string): Promise<UnitTime> {
  const log = join(logDir, unit.replace(/[^A-Za-z0-9_.-]+/g, "_") + ".log");
  const quoted = testArgs(unit).map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  // The shell runs the unit, waits for it, then prints its children's CPU (the whole tree's:
  // every process in it was waited for by its parent) on `times`' second line.
  const script = `'${Deno.execPath()}' ${quoted} >'${log}' 2>&1; code=$?; times; exit $code`;
  const start = performance.now();
  const out = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const wall = (performance.now() - start) / 1000;
  const cpu = childTimes(new TextDecoder().decode(out.stdout));
  return { unit, wall: round(wall), user: round(cpu.user), sys: round(cpu.sys), code: out.code };
}

function round(s: number): number {
  return Math.round(s * 100) / 100;
}

function loadAverage(): number[] {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).map(Number);
  } catch {
    return [];
  }
}

/**
 * The report's lines: the top units by wall and by CPU, and the totals; with a second report,
 * each unit's figures before → after.
 *
 * @param report The run (the "before" when comparing).
 * @param after The second run to compare with, if any.
 * @param top How many units to list in each ranking.
 * @returns The lines to print.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summary, type TimesReport } from "./test_times.ts";
 * const run = (wall: number): TimesReport => ({
 *   started: "", load: { start: [1, 1, 1], end: [1, 1, 1] }, jobs: 1, wall,
 *   units: [{ unit: "tests/a_test.ts", wall, user: 1, sys: 0.5, code: 0 }],
 * });
 * const lines = summary(run(4), run(2), 5);
 * assert.ok(lines.some((l) => /tests\/a_test\.ts +4\.0 → 2\.0/.test(l)));
 * assert.ok(lines.some((l) => /total CPU +1\.5 → 1\.5/.test(l)));
 * ```
 */
export function summary(report: TimesReport, after?: TimesReport, top = 20): string[] {
  const cpu = (u: UnitTime) => u.user + u.sys;
  const byUnit = new Map((after?.units ?? []).map((u) => [u.unit, u]));
  const f = (n: number | undefined) => n === undefined ? "-" : n.toFixed(1);
  const pair = (a: number | undefined, b: number | undefined) =>
    after ? `${f(a).padStart(6)} → ${f(b).padEnd(6)}` : f(a).padStart(6);
  const lines: string[] = [];
  const width = Math.max(...report.units.map((u) => u.unit.length), 10);
  for (const [title, key] of [["wall", (u: UnitTime) => u.wall], ["CPU", cpu]] as const) {
    lines.push(`top ${top} by ${title} (s)${after ? "  before → after" : ""}:`);
    lines.push(
      `  ${"unit".padEnd(width)}  ${"wall".padStart(after ? 15 : 6)}  ${
        "CPU".padStart(after ? 15 : 6)
      }`,
    );
    for (const u of [...report.units].sort((a, b) => key(b) - key(a)).slice(0, top)) {
      const b = byUnit.get(u.unit);
      lines.push(
        `  ${u.unit.padEnd(width)}  ${pair(u.wall, b?.wall)}  ${
          pair(cpu(u), b ? cpu(b) : undefined)
        }${u.code || b?.code ? "  FAILED" : ""}`,
      );
    }
  }
  const total = (r: TimesReport) => r.units.reduce((s, u) => s + cpu(u), 0);
  const sumWall = (r: TimesReport) => r.units.reduce((s, u) => s + u.wall, 0);
  lines.push(`units: ${report.units.length}${after ? ` → ${after.units.length}` : ""}`);
  lines.push(
    `total CPU ${pair(total(report), after && total(after))} s (user+sys, each unit alone)`,
  );
  lines.push(`sum of walls ${pair(sumWall(report), after && sumWall(after))} s`);
  lines.push(
    `run wall ${pair(report.wall, after?.wall)} s (${report.jobs}${
      after ? `/${after.jobs}` : ""
    } at once)`,
  );
  const failed = [...report.units, ...(after?.units ?? [])].filter((u) => u.code !== 0);
  for (const u of failed) lines.push(`FAILED: ${u.unit} (exit ${u.code})`);
  return lines;
}

async function main(args: string[]): Promise<number> {
  let jobs = 2;
  let out = "test-times.json";
  let docs = false;
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--jobs") jobs = Number(args[++i]);
    else if (a === "--out") out = args[++i]!;
    else if (a === "--doc-units") docs = true;
    else if (a === "--compare") {
      const [x, y] = [args[++i], args[++i]];
      if (!x || !y) throw new TypeError("--compare takes two reports: before.json after.json");
      const read = async (p: string) => JSON.parse(await Deno.readTextFile(p)) as TimesReport;
      console.log(summary(await read(x), await read(y)).join("\n"));
      return 0;
    } else paths.push(a);
  }
  if (!Number.isInteger(jobs) || jobs < 1) throw new TypeError("--jobs takes a whole number ≥ 1");
  const units = paths.length > 0 ? await unitsOf(paths) : [
    ...(await unitsOf(["tests"])),
    ...(docs ? await docUnits() : []),
  ];
  const logDir = await Deno.makeTempDir({ prefix: "kopf-test-times-" });
  const report: TimesReport = {
    started: new Date().toISOString(),
    load: { start: loadAverage(), end: [] },
    jobs,
    wall: 0,
    units: [],
  };
  const start = performance.now();
  const queue = [...units];
  await Promise.all(Array.from({ length: jobs }, async () => {
    for (let unit = queue.shift(); unit !== undefined; unit = queue.shift()) {
      const time = await runUnit(unit, logDir);
      report.units.push(time);
      console.error(
        `${time.unit}: wall ${time.wall.toFixed(1)} s, CPU ${(time.user + time.sys).toFixed(1)} s` +
          (time.code ? `  FAILED (log: ${logDir})` : ""),
      );
    }
  }));
  report.wall = round((performance.now() - start) / 1000);
  report.load.end = loadAverage();
  await Deno.writeTextFile(out, JSON.stringify(report, null, 1) + "\n");
  console.log(summary(report).join("\n"));
  console.log(
    `load average at start ${report.load.start.join(" ")}, at end ${report.load.end.join(" ")}`,
  );
  console.log(`written: ${out}; the units' output: ${logDir}`);
  return report.units.some((u) => u.code !== 0) ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
