/**
 * A summary of a V8 CPU profile (`deno run --cpu-prof`, a `.cpuprofile` file):
 * the time by function (self) and by file (self, and total: the samples with
 * the file anywhere on their stack, each counted once), so that two profiles —
 * before and after a change, the operator and its floor — can be read side by
 * side without a browser. Time is the profile's own: the samples' time deltas
 * (`(idle)` is the event loop waiting; `(garbage collector)` and `(program)`,
 * V8's and the runtime's own work, are shown as such).
 *
 * Run: `deno run -A bench/cpuprofile.ts PROFILE.cpuprofile [TOP]` (TOP rows per
 * table, default 25); the operator bench passes `--cpu-prof` to its operators
 * with `KOPF_BENCH_OPERATOR_FLAGS="--cpu-prof --cpu-prof-dir=DIR"`.
 *
 * @module
 */

/** One node of a V8 CPU profile. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** A V8 CPU profile as `--cpu-prof` writes it. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One row of a summary: a name, its time in ms, and its share of the busy time (not idle). */
export interface ProfileRow {
  name: string;
  ms: number;
  share: number;
}

/** What {@link summarize} finds in a profile. */
export interface ProfileSummary {
  /** All the sampled time, idle included, in ms. */
  totalMs: number;
  /** The time not `(idle)`, in ms. */
  busyMs: number;
  /** By function (`name file:line`), self time, largest first. */
  functions: ProfileRow[];
  /** By function, total time (samples with the function on their stack, each once), largest first. */
  functionsTotal: ProfileRow[];
  /** By file (or V8's own `(program)`, `(garbage collector)`), self time, largest first. */
  filesSelf: ProfileRow[];
  /** By file, total time (samples with the file on their stack), largest first. */
  filesTotal: ProfileRow[];
}

/** A file's short name: the path from `src/`, `bench/`, `ext:` or `node:` on; V8's own `(…)`. */
function fileOf(frame: ProfileNode["callFrame"]): string {
  const url = frame.url;
  if (!url) {
    return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  }
  const m = url.match(/\/(src|bench|tests|npm\/registry\.npmjs\.org)\/(.*)$/);
  if (m) return `${m[1] === "npm/registry.npmjs.org" ? "npm" : m[1]}/${m[2]}`;
  return url.replace(/^file:\/\/.*\//, "");
}

/**
 * Sums a profile by function and by file.
 *
 * @param profile The profile.
 * @returns The summary.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarize } from "./cpuprofile.ts";
 * const frame = (functionName: string, url = "") => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
 * const s = summarize({
 *   nodes: [
 *     { id: 1, callFrame: frame("(root)"), children: [2, 4] },
 *     { id: 2, callFrame: frame("a", "file:///x/src/a.ts"), children: [3] },
 *     { id: 3, callFrame: frame("b", "file:///x/src/b.ts") },
 *     { id: 4, callFrame: frame("(idle)") },
 *   ],
 *   startTime: 0, endTime: 4000, samples: [2, 3, 3, 4], timeDeltas: [1000, 1000, 1000, 1000],
 * });
 * assert.deepEqual([s.totalMs, s.busyMs], [4, 3]);
 * assert.deepEqual(s.filesSelf.map((r) => [r.name, r.ms]), [["src/b.ts", 2], ["src/a.ts", 1]]);
 * assert.deepEqual(s.filesTotal.map((r) => [r.name, r.ms]), [["src/a.ts", 3], ["src/b.ts", 2]]);
 * ```
 */
export function summarize(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfByNode = new Map<number, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    if (byId.get(id)?.callFrame.functionName === "(idle)") idle += dt;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + dt);
  });
  const busy = total - idle;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const functions = new Map<string, number>();
  const filesSelf = new Map<string, number>();
  const filesTotal = new Map<string, number>();
  const functionsTotal = new Map<string, number>();
  const nameOf = (frame: ProfileNode["callFrame"]) =>
    `${frame.functionName || "(anonymous)"} ${fileOf(frame)}:${frame.lineNumber + 1}`;
  /** The files (and the functions) on each node's stack (itself and its ancestors), each once. */
  const stackFiles = new Map<number, Set<string>>();
  const stackFunctions = new Map<number, Set<string>>();
  const filesOn = (id: number): Set<string> => {
    let set = stackFiles.get(id);
    if (set) return set;
    const node = byId.get(id)!;
    const up = parent.get(id);
    set = new Set(up === undefined ? [] : filesOn(up));
    if (node.callFrame.functionName !== "(root)") set.add(fileOf(node.callFrame));
    stackFiles.set(id, set);
    return set;
  };
  const functionsOn = (id: number): Set<string> => {
    let set = stackFunctions.get(id);
    if (set) return set;
    const node = byId.get(id)!;
    const up = parent.get(id);
    set = new Set(up === undefined ? [] : functionsOn(up));
    if (node.callFrame.functionName !== "(root)") set.add(nameOf(node.callFrame));
    stackFunctions.set(id, set);
    return set;
  };
  for (const [id, ms] of selfByNode) {
    const node = byId.get(id)!;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") continue;
    const file = fileOf(frame);
    add(functions, nameOf(frame), ms);
    add(filesSelf, file, ms);
    for (const f of filesOn(id)) add(filesTotal, f, ms);
    for (const f of functionsOn(id)) add(functionsTotal, f, ms);
  }
  const rows = (m: Map<string, number>): ProfileRow[] =>
    [...m].map(([name, ms]) => ({ name, ms, share: busy > 0 ? ms / busy : 0 }))
      .sort((a, b) => b.ms - a.ms);
  return {
    totalMs: total,
    busyMs: busy,
    functions: rows(functions),
    functionsTotal: rows(functionsTotal),
    filesSelf: rows(filesSelf),
    filesTotal: rows(filesTotal),
  };
}

if (import.meta.main) {
  const [path, top = "25"] = Deno.args;
  if (!path) throw new Error("usage: cpuprofile.ts PROFILE.cpuprofile [TOP]");
  const s = summarize(JSON.parse(await Deno.readTextFile(path)) as CpuProfile);
  const n = Number(top);
  const table = (title: string, rows: ProfileRow[]) => {
    console.log(`\n${title}`);
    for (const r of rows.slice(0, n)) {
      console.log(
        `${r.ms.toFixed(1).padStart(9)} ms ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.name}`,
      );
    }
  };
  console.log(
    `${path}: ${s.totalMs.toFixed(0)} ms sampled, ${s.busyMs.toFixed(0)} ms busy (not idle)`,
  );
  table("self time by function", s.functions);
  table("total time by function (on the stack)", s.functionsTotal);
  table("self time by file", s.filesSelf);
  table("total time by file (on the stack)", s.filesTotal);
}
