/**
 * Small numeric helpers for the benchmark: percentiles over latency samples
 * and one-line figures with their target, so every result reads the same way.
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

/** A target a figure is held against: at least, or below. */
export type Target = { atLeast: number } | { below: number };

/**
 * One line for one figure: label, value, unit, and the target with ✓ or ✗.
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
      line += `  (target ≥ ${fmt(target.atLeast)})  ${met ? "✓" : "✗"}`;
    } else {
      met = value < target.below;
      line += `  (target < ${fmt(target.below)})  ${met ? "✓" : "✗"}`;
    }
  }
  if (note) line += `  ${note}`;
  return { line, met };
}
