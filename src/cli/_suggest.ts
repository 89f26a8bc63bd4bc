/**
 * "Did you mean …?" for the command line: the known words closest to a mistyped command or flag,
 * by edits (an adjacent swap counting as one). Apart from the parser because it is a measure of
 * words, not a rule of the command line.
 *
 * @module
 */

/**
 * The closest candidates to a mistyped word, as ` (did you mean X?)`, or nothing: those fewest
 * edits away (at most 3, an adjacent swap counting as one), and alike in more than 40% of their
 * length. Flags are compared without their leading `--`.
 *
 * @param word The mistyped word (`--namspace`, `rnu`).
 * @param candidates The known words.
 * @returns ` (did you mean …?)`, or an empty string.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { suggestion } from "./_suggest.ts";
 * assert.equal(suggestion("--namspace", ["--namespace", "--peering"]), " (did you mean --namespace?)");
 * ```
 */
export function suggestion(word: string, candidates: readonly string[]): string {
  const dashes = word.startsWith("--") ? "--" : "";
  const bare = word.slice(dashes.length);
  let best = 3;
  let near: string[] = [];
  for (const candidate of new Set(candidates.map((c) => c.slice(dashes.length)))) {
    if (candidate.length <= 1) continue;
    const d = editDistance(bare, candidate);
    const length = Math.max(bare.length, candidate.length);
    if ((length - d) / length <= 0.4) continue;
    if (d < best) {
      best = d;
      near = [candidate];
    } else if (d === best) {
      near.push(candidate);
    }
  }
  near = near.sort((a, b) => a.localeCompare(b)).map((c) => dashes + c);
  if (near.length > 1) return ` (did you mean one of ${near.join(", ")}?)`;
  return near.length ? ` (did you mean ${near[0]}?)` : "";
}

/**
 * Edits (insert, delete, replace, swap two neighbours) from `a` to `b`; far apart beyond 3.
 *
 * @param a One word.
 * @param b The other.
 * @returns The number of edits (the longer length when the lengths differ by more than 3).
 */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Math.max(a.length, b.length);
  // d[i][j]: the edits from a's first i characters to b's first j.
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1];
      let e = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (same ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        e = Math.min(e, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = e;
    }
  }
  return d[a.length]![b.length]!;
}
