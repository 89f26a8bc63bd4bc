/**
 * Small numeric helpers for the benchmark: percentiles over latency samples
 * and one-line figures with their target, so every result reads the same way.
 *
 * Every figure is also kept as data ({@link FigureRecord}): `deno task bench`
 * writes all of a run's figures to one JSON file ({@link writeResults}), those
 * of its child processes (daemons, start-up) included, so that runs can be
 * compared without parsing their text.
 *
 * @module
 */

/**
 * The nearest-rank percentile of samples.
 *
 * @param sorted Samples sorted ascending.
 * @param p The percentile, 0–100.
 * @returns The sample at that rank (NaN for no samples).
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Formats a number with thousands separators and a fixed number of decimals.
 *
 * @param n The number.
 * @param decimals Decimals to show (default 0).
 * @returns E.g. `"7,812"` or `"3.4"`.
 */
export function fmt(n: number, decimals = 0): string {
  return n.toLocaleString("en-US", {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

/** A target a figure is held against: at least, below, or at most. */
export type Target = { atLeast: number } | { below: number } | { atMost: number };

/** One figure as data: what its line says, for the JSON file of a run. */
export interface FigureRecord {
  /** What was measured (without the indentation of a sub-figure's line). */
  label: string;
  /** The measured value. */
  value: number;
  /** Its unit (e.g. `"patches/s"`). */
  unit: string;
  /** The target, if there is one. */
  target?: Target;
  /** Whether the target was met (true when there is none). */
  met: boolean;
  /** The bracketed details of the line, if any. */
  note?: string;
  /** The line as printed. */
  line: string;
}

/** The figures of this process, in the order they were made. */
const recorded: FigureRecord[] = [];

/**
 * The figures made in this process so far (and those added by {@link recordFigures}).
 *
 * @returns The figures, in order.
 */
export function recordedFigures(): readonly FigureRecord[] {
  return recorded;
}

/**
 * Adds figures made elsewhere (a child process's results file) to this process's.
 *
 * @param figures The figures.
 */
export function recordFigures(figures: Iterable<FigureRecord>): void {
  recorded.push(...figures);
}

/** The environment variable naming the JSON file a run writes its figures to. */
export const RESULTS_ENV = "KOPF_BENCH_RESULTS";

/** The JSON file of a run: where and on what it ran, and every figure. */
export interface BenchResults {
  /** When the file was written (ISO 8601). */
  date: string;
  /** The Deno version. */
  deno: string;
  /** Logical CPUs of the machine. */
  cpus: number;
  /** The 1-minute load average at the end of the run. */
  load: number;
  /** The commit of the tree (`git describe --always --dirty`), if it is a git tree. */
  commit?: string;
  /** The figures, in the order they were printed. */
  figures: FigureRecord[];
}

/**
 * Writes this process's figures to a JSON file ({@link BenchResults}).
 *
 * @param path The file.
 * @returns The path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { figure, readResults, writeResults } from "./_stats.ts";
 * figure("merge-patch throughput", 5_200, "patches/s", { target: { atLeast: 5_000 } });
 * const path = await writeResults(await Deno.makeTempFile({ suffix: ".json" }));
 * const [f] = await readResults(path);
 * assert.deepEqual([f?.label, f?.value, f?.unit, f?.met], ["merge-patch throughput", 5200, "patches/s", true]);
 * await Deno.remove(path);
 * ```
 */
export async function writeResults(path: string): Promise<string> {
  let commit: string | undefined;
  try {
    const out = await new Deno.Command("git", {
      args: ["describe", "--always", "--dirty"],
      cwd: new URL("../", import.meta.url),
      stdout: "piped",
      stderr: "null",
    }).output();
    if (out.success) commit = new TextDecoder().decode(out.stdout).trim();
  } catch {
    // Not a git tree, or no git: the file goes without the commit.
  }
  const results: BenchResults = {
    date: new Date().toISOString(),
    deno: Deno.version.deno,
    cpus: navigator.hardwareConcurrency,
    load: Deno.loadavg()[0] ?? 0,
    ...(commit ? { commit } : {}),
    figures: recorded,
  };
  await Deno.writeTextFile(path, JSON.stringify(results, null, 2) + "\n");
  return path;
}

/**
 * Reads the figures of a results file (e.g. a child process's).
 *
 * @param path The file.
 * @returns Its figures; none if the file does not exist.
 */
export async function readResults(path: string): Promise<FigureRecord[]> {
  try {
    return (JSON.parse(await Deno.readTextFile(path)) as BenchResults).figures;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/** A target's bound as written: thousands separated, its decimals shown (`"1,000"`, `"0.3"`). */
function bound(n: number): string {
  return n.toLocaleString("en-US", { maximumFractionDigits: 6 });
}

/**
 * One line for one figure: label, value, unit, and the target with ✓ or ✗ (kept as data too:
 * {@link recordedFigures}).
 *
 * @param label What was measured.
 * @param value The measured value.
 * @param unit Its unit (e.g. `"patches/s"`).
 * @param options Decimals, and the target if there is one.
 * @returns The line, and whether the target was met (true when there is none).
 */
export function figure(
  label: string,
  value: number,
  unit: string,
  options: { decimals?: number; target?: Target; note?: string } = {},
): { line: string; met: boolean } {
  const { decimals = 0, target, note } = options;
  let line = `${label}: ${fmt(value, decimals)} ${unit}`;
  let met = true;
  if (target) {
    if ("atLeast" in target) {
      met = value >= target.atLeast;
      line += `  (target ≥ ${bound(target.atLeast)})  ${met ? "✓" : "✗"}`;
    } else if ("atMost" in target) {
      met = value <= target.atMost;
      line += `  (target ≤ ${bound(target.atMost)})  ${met ? "✓" : "✗"}`;
    } else {
      met = value < target.below;
      line += `  (target < ${bound(target.below)})  ${met ? "✓" : "✗"}`;
    }
  }
  if (note) line += `  ${note}`;
  recorded.push({
    label: label.trim(),
    value,
    unit,
    ...(target ? { target } : {}),
    met,
    ...(note ? { note } : {}),
    line,
  });
  return { line, met };
}
