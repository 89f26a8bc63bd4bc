/**
 * The layer check: reads the module graph with `deno info --json` and fails on
 * an import that goes up a layer (DESIGN.md §4), from the embedded API server
 * into the operator layers, or into `src/` from code that stands for a user's
 * (the examples, and the workspace members under `packages/`), which must go
 * through the public files only.
 *
 * Why a graph and not a grep: `deno info` resolves every specifier exactly as
 * the runtime does, so re-exports, `import type` and dynamic string imports
 * are judged alike, and a file renamed next month is still covered.
 *
 * Inside the embedded API server it holds the order of its rooms
 * (`APISERVER_ROOMS`): a room may import its own files and the rooms below it,
 * never one above it or a sibling of its rank, and every file lives in a room.
 *
 * It also fails on a file-level import circle under `src/` (naming the files of
 * each circle): a circle means no file in it can be read, tested or moved
 * without all the others, and it hides which of them is the bottom.
 *
 * Run: `deno run -A tools/check_layers.ts` (part of `deno task check`).
 *
 * @module
 */

import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const root = fromFileUrl(new URL("..", import.meta.url));

/** Layers from lowest to highest; a file may import its own layer or lower ones. */
const RANKS: ReadonlyArray<[prefix: string, rank: number]> = [
  ["src/cogs/aio/", 0],
  ["src/cogs/metrics/", 0],
  ["src/cogs/tracing/", 0],
  ["src/cogs/structs/", 1],
  ["src/cogs/configs/", 2],
  ["src/cogs/clients/", 3],
  ["src/core/actions/", 4],
  ["src/core/intents/", 5],
  ["src/core/engines/", 6],
  ["src/core/reactor/", 7],
  ["src/kits/", 8],
  ["src/cli/", 9],
];

/** The API server is its own subsystem: it may use the plain utilities only. */
const APISERVER_MAY_IMPORT = [
  "src/apiserver/",
  "src/cogs/aio/",
  "src/cogs/structs/",
  "src/cogs/tracing/",
];

/**
 * The API server's rooms (folders under `src/apiserver/`), from the bottom. A
 * room may import its own files and the rooms of a lower rank; rooms of one
 * rank are independent of each other. `shared/` is the bottom module of the
 * types and helpers several rooms name; the public files and `src/cli/` sit on
 * top of `serving/`.
 */
const APISERVER_ROOMS: ReadonlyArray<[room: string, rank: number]> = [
  ["shared", 0], // the types every room speaks, errors, resources, faults, certificates
  ["wire", 1], // requests and answers: query parameters, bodies and their limits, protobuf, tables
  ["storage", 2], // the store, the data directory, lists and watches
  ["schemas", 3], // structural schemas: prune, default, validate; CRD checks; metadata rules
  ["builtins", 4], // the built-in kinds: their list and their strategies (defaults, validation)
  ["objects", 5], // the verbs: create, update, patch (merge, JSON, strategic, apply), delete
  ["controllers", 6], // what runs after writes: garbage collection, namespace lifecycle
  ["webhooks", 6], // calling out: admission webhooks, CRD conversion
  ["auth", 6], // authentication, RBAC, impersonation, access reviews
  ["serving", 7], // listeners, routing, discovery, start-up
];
const PUBLIC_FILES = new Set(["mod.ts", "on.ts", "testing.ts", "cli.ts", "apiserver.ts"]);
/** Folders of the module's own development that may reach into src/ for unit tests. */
const INTERNAL_DIRS = ["src/", "tests/", "bench/", "tools/"];

/** The room of a file under `src/apiserver/` and its rank; undefined outside any room. */
function roomOf(path: string): { room: string; rank: number } | undefined {
  const room = path.slice("src/apiserver/".length).split("/")[0];
  const found = APISERVER_ROOMS.find(([name]) => name === room);
  if (!found || !path.startsWith(`src/apiserver/${found[0]}/`)) return undefined;
  return { room: found[0], rank: found[1] };
}

/** Judges an import between two files of the API server, by their rooms. */
function judgeRooms(from: string, to: string): string | undefined {
  const rooms = APISERVER_ROOMS.map(([name]) => name).join(", ");
  for (const file of [from, to]) {
    if (!roomOf(file)) return `${file} is in no room of the API server (${rooms})`;
  }
  const a = roomOf(from)!;
  const b = roomOf(to)!;
  if (a.room === b.room || b.rank < a.rank) return undefined;
  if (b.rank === a.rank) {
    return `the API server's rooms ${a.room}/ and ${b.room}/ are siblings and must not import each other`;
  }
  return `an upward import between the API server's rooms (${a.room}/ below ${b.room}/; order: ${rooms})`;
}

function rankOf(path: string): number | undefined {
  for (const [prefix, rank] of RANKS) if (path.startsWith(prefix)) return rank;
  return undefined;
}

/** Judges one import edge; returns why it is forbidden, or undefined when it is fine. */
export function judge(from: string, to: string): string | undefined {
  if (!to.startsWith("src/")) {
    if (from.startsWith("src/") && PUBLIC_FILES.has(to)) {
      return "src/ must not import the public files (they import src/, not the other way)";
    }
    return undefined;
  }
  if (!INTERNAL_DIRS.some((d) => from.startsWith(d)) && !PUBLIC_FILES.has(from)) {
    return "only the public files (mod.ts, on.ts, testing.ts, cli.ts, apiserver.ts) may be imported from here";
  }
  if (from.startsWith("src/apiserver/")) {
    if (!APISERVER_MAY_IMPORT.some((p) => to.startsWith(p))) {
      return "the embedded API server may import only src/apiserver, src/cogs/aio, src/cogs/structs and src/cogs/tracing";
    }
    return to.startsWith("src/apiserver/") ? judgeRooms(from, to) : undefined;
  }
  const fromRank = rankOf(from);
  const toRank = rankOf(to);
  if (fromRank === undefined) return undefined;
  if (to.startsWith("src/apiserver/") && !from.startsWith("src/cli/")) {
    return "operator layers must not import the embedded API server (only src/cli and the public files may)";
  }
  if (toRank !== undefined && toRank > fromRank) return "an upward import across layers";
  return undefined;
}

/**
 * Finds the import circles of a graph: its strongly connected components with
 * more than one file, or one file that imports itself (Tarjan's algorithm,
 * iterative so a deep graph cannot overflow the stack). Each circle comes back
 * sorted, and the circles sorted by their first file, so a report is stable.
 */
export function findCycles(edges: ReadonlyMap<string, Iterable<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const targets = (node: string): string[] => [...(edges.get(node) ?? [])];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const frames: Array<{ node: string; deps: string[]; at: number }> = [];
    const enter = (node: string) => {
      index.set(node, next);
      low.set(node, next++);
      stack.push(node);
      onStack.add(node);
      frames.push({ node, deps: targets(node), at: 0 });
    };
    enter(start);
    while (frames.length) {
      const frame = frames[frames.length - 1]!;
      if (frame.at < frame.deps.length) {
        const dep = frame.deps[frame.at++]!;
        if (!index.has(dep)) enter(dep);
        else if (onStack.has(dep)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(dep)!));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfLoop = targets(frame.node).includes(frame.node);
      if (component.length > 1 || selfLoop) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Judges one circle; returns why it is forbidden, or undefined when it is allowed. */
export function judgeCycle(files: readonly string[]): string | undefined {
  if (!files.some((f) => f.startsWith("src/"))) return undefined;
  return `an import circle of ${files.length} files: ${files.join(", ")}`;
}

/** The most lines a file under `src/` may have (issue 27: a file a reader takes in whole). */
export const MAX_SRC_LINES = 500;

/**
 * Judges a file's length: under `src/`, at most {@link MAX_SRC_LINES} lines.
 *
 * @param file The file, relative to the root.
 * @param text Its text.
 * @returns Why it is too long, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { judgeLength } from "./check_layers.ts";
 * assert.equal(judgeLength("src/a.ts", "x\n".repeat(500)), undefined);
 * assert.match(judgeLength("src/a.ts", "x\n".repeat(501))!, /501 lines/);
 * assert.equal(judgeLength("tests/a_test.ts", "x\n".repeat(900)), undefined);
 * ```
 */
export function judgeLength(file: string, text: string): string | undefined {
  if (!file.startsWith("src/")) return undefined;
  const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
  return lines > MAX_SRC_LINES
    ? `${file}: ${lines} lines (at most ${MAX_SRC_LINES} under src/): split it by concern`
    : undefined;
}

async function walk(dir: string, out: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && !entry.name.startsWith(".") && entry.name !== "fixtures") {
      await walk(path, out);
    } else if (entry.isFile && entry.name.endsWith(".ts")) out.push(path);
  }
}

async function main(): Promise<number> {
  const files: string[] = [];
  // packages/: the workspace members (e.g. @kopf/cli), which stand for a user's code too.
  for (const top of ["src", "tests", "examples", "bench", "tools", "packages"]) {
    try {
      await walk(`${root}${top}`, files);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  for (const f of PUBLIC_FILES) files.push(`${root}${f}`);
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    entry,
    files.map((f) => `import type {} from ${JSON.stringify(`file://${f}`)};`).join("\n"),
  );
  try {
    const cmd = new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `--config=${root}deno.json`, entry],
      stdout: "piped",
      stderr: "piped",
    });
    const out = await cmd.output();
    if (!out.success) {
      console.error(new TextDecoder().decode(out.stderr));
      return 2;
    }
    const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: Array<
        {
          specifier: string;
          dependencies?: Array<{ code?: { specifier?: string }; type?: { specifier?: string } }>;
        }
      >;
    };
    const local = (spec: string | undefined): string | undefined =>
      spec?.startsWith(`file://${root}`) ? relative(root, fromFileUrl(spec)) : undefined;
    const problems: string[] = [];
    const srcEdges = new Map<string, Set<string>>();
    for (const mod of graph.modules) {
      const from = local(mod.specifier);
      if (!from) continue;
      for (const dep of mod.dependencies ?? []) {
        for (const spec of [dep.code?.specifier, dep.type?.specifier]) {
          const to = local(spec);
          if (!to) continue;
          const why = judge(from, to);
          if (why) problems.push(`${from} -> ${to}: ${why}`);
          if (from.startsWith("src/") && to.startsWith("src/")) {
            const out = srcEdges.get(from) ?? new Set<string>();
            srcEdges.set(from, out.add(to));
          }
        }
      }
    }
    for (const cycle of findCycles(srcEdges)) {
      const why = judgeCycle(cycle);
      if (why) problems.push(why);
    }
    for (const file of files) {
      const path = relative(root, file);
      if (!path.startsWith("src/")) continue;
      const why = judgeLength(path, await Deno.readTextFile(file));
      if (why) problems.push(why);
    }
    for (const p of [...new Set(problems)]) console.error(`layer check: ${p}`);
    if (problems.length) return 1;
    console.log(
      `layer check: ${graph.modules.length} modules, no forbidden imports, no circles, ` +
        `no src file over ${MAX_SRC_LINES} lines`,
    );
    return 0;
  } finally {
    await Deno.remove(entry);
  }
}

if (import.meta.main) Deno.exit(await main());
