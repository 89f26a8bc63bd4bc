/**
 * What the operator pays per object in a trickle, counted: one operator process
 * (as the operator bench's `trickle` phase runs it) under a steady 100
 * creations/s, with `_probe_preload.ts` preloaded — it counts over a window
 * opened and closed by this driver: 5 s idle (before any object), then the
 * trickle (from the first POST until the last object is handled). Per object
 * (per second, idle): CPU, timers set and cleared, promises (mode `promises`),
 * bytes allocated on V8's heap, API requests by verb (the server's counts; each
 * write of a KopfExample is one watch event the operator reads), and with mode
 * `strace` the syscalls (`strace -c -f` attached to the process), with `cpu` a
 * CPU profile of the window (summarised by `cpuprofile.ts`), with `heap` a
 * sampling heap profile of the window's allocations (summarised here by file
 * and function), with `survivors` the same of what outlived a young-generation
 * collection only (promoted, or live at the end: what the scavenges copy and
 * the old generation's collections mark), with `snapshot` what is live at the
 * window's end (a heap snapshot after a full collection, summarised by
 * constructor: per object, what the process keeps), with `calls` V8's exact call counts (per
 * object: the calls, and the functions they go through, by file and by function), with `perf`
 * `perf record` of the whole process (`-e cpu-clock -g`; the file is left for `perf report`;
 * add `--perf-basic-prof` to `KOPF_BENCH_V8_FLAGS` to name the JIT's code), with `prof` V8's
 * own tick log (`--prof`: the main thread's ticks by tier — Ignition, Sparkplug, Maglev,
 * TurboFan —, builtins, and native code by its first JavaScript caller; `v8log.ts`). The CPU is
 * also shown by thread
 * (V8's workers run the GC's parallel and concurrent work and the optimising
 * compiler). Modes other than `counts` cost time of their own: their CPU
 * figures are not the operator's.
 *
 * The operator (or the floor) runs from its bundle, as the operator bench runs it
 * (`KOPF_BENCH_BUNDLE=0`: from the sources).
 *
 * Run: `deno run -A bench/trickle_probe.ts [shipped|quiet|floor|floorq|raw|rawq]
 * [counts|promises|calls|cpu|heap|survivors|snapshot|strace|perf|prof] [SECONDS]` (default: shipped, counts,
 * 20);
 * the files go to `$KOPF_PROBE_DIR` (default a new temporary directory).
 * With `KOPF_PROBE_WARMUP=S`, a trickle of S seconds comes first, unmeasured (the JIT's
 * warm-up; its objects deleted, unless `KOPF_PROBE_WARMUP_KEEP=1`). With `KOPF_PROBE_BURST=N`, the window is a burst instead: N creations at once (50 in
 * flight, as the operator bench's bursts), until all are handled. `KOPF_PROBE_OPTIONS` adds
 * the child's options as JSON (e.g. `{"noMetrics":true}`); mode `calls` lists
 * `KOPF_PROBE_ROWS` files and functions (default 25).
 *
 * @module
 */

import { BenchClient, expectOk, setUpKopfExamples } from "./_client.ts";
import { LoadGenerator } from "./_load_generator.ts";
import { type ChildOptions, OperatorProcess, operatorV8Flags } from "./_operator_process.ts";
import { startServerProcess } from "./_server_process.ts";
import { summarize } from "./cpuprofile.ts";
import { printV8LogSummary, summarizeV8Log } from "./v8log.ts";
import { fmt } from "./_stats.ts";

const NAMESPACE = "bench-operator";
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const RATE = 100;
const IDLE_SECONDS = 5;

/** The counters of one window (`_probe_preload.ts`). */
interface Window {
  seconds: number;
  cpuSeconds: number;
  systemSeconds: number;
  voluntary: number;
  involuntary: number;
  allocatedBytes: number;
  setTimeout: number;
  setInterval: number;
  clearTimeout: number;
  promises: number;
  resolved: number;
  /** The window's start and end, in milliseconds since the process started. */
  from: number;
  to: number;
  /** CPU seconds by thread name (the main thread is the process's name, e.g. `deno`). */
  threads?: Record<string, number>;
}

/** A node of a sampling heap profile. */
export interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** A sampling heap profile's allocations, summed: in all, by function, by file. */
export interface HeapSums {
  total: number;
  /** `name file:line` → bytes. */
  byFunction: Map<string, number>;
  /** File (from `src/` or `bench/` on) → bytes. */
  byFile: Map<string, number>;
}

/**
 * Sums a sampling heap profile's allocations by function and by file.
 *
 * @param head The profile's root node.
 * @returns The sums.
 */
export function sumHeapProfile(head: HeapNode): HeapSums {
  const sums: HeapSums = { total: 0, byFunction: new Map(), byFile: new Map() };
  const walk = (node: HeapNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(src|bench)\//, "$1/") || "(native)";
    if (node.selfSize) {
      sums.total += node.selfSize;
      const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
      sums.byFunction.set(key, (sums.byFunction.get(key) ?? 0) + node.selfSize);
      sums.byFile.set(file, (sums.byFile.get(file) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c);
  };
  walk(head);
  return sums;
}

/** One script's precise coverage (the inspector's `Profiler.ScriptCoverage`, function level). */
export interface ScriptCoverage {
  /** The script's URL. */
  url: string;
  /** Its functions: the first range's count is the function's calls. */
  functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[];
}

/**
 * Sums precise call counts: all calls, the functions called at least `per` times (once per
 * object), and the calls by file and by function (most first; paths relative to `root`).
 *
 * @param scripts The coverage.
 * @param root The tree's root URL (cut from the paths).
 * @param per The objects of the window.
 * @returns The sums.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sumCalls } from "./trickle_probe.ts";
 * const fn = (functionName: string, count: number) => ({ functionName, ranges: [{ startOffset: 0, count }] });
 * const sums = sumCalls([{ url: "file:///t/a.ts", functions: [fn("f", 4), fn("g", 1)] }], "file:///t/", 2);
 * assert.deepEqual([sums.calls, sums.functions, sums.byFile], [5, 1, [["a.ts", 5]]]);
 * ```
 */
export function sumCalls(
  scripts: readonly ScriptCoverage[],
  root: string,
  per: number,
): { calls: number; functions: number; byFile: [string, number][]; top: [string, number][] } {
  let calls = 0;
  let functions = 0;
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const script of scripts) {
    const file = script.url.startsWith(root) ? script.url.slice(root.length) : script.url;
    for (const f of script.functions) {
      const count = f.ranges[0]?.count ?? 0;
      if (!count) continue;
      calls += count;
      if (count >= per) functions++;
      byFile.set(file, (byFile.get(file) ?? 0) + count);
      const key = `${file}:${f.functionName || "(anonymous)"}@${f.ranges[0]!.startOffset}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + count);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { calls, functions, byFile: sorted(byFile), top: sorted(byFunction) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function requestCounts(api: BenchClient): Promise<Map<string, number>> {
  const answer = await api.send("GET", "/admin/stats", { parse: true });
  expectOk(answer, "reading the server's request counts");
  return new Map(Object.entries((answer.body as { requests: Record<string, number> }).requests));
}

if (import.meta.main) {
  const [which = "shipped", mode = "counts", seconds = "20"] = Deno.args;
  const dir = Deno.env.get("KOPF_PROBE_DIR") ?? await Deno.makeTempDir({ prefix: "kopf-probe-" });
  await Deno.mkdir(dir, { recursive: true });
  Deno.env.set("KOPF_PROBE_DIR", dir);
  Deno.env.set("KOPF_PROBE", mode);
  const flags = Deno.env.get("KOPF_BENCH_OPERATOR_FLAGS") ?? "";
  Deno.env.set(
    "KOPF_BENCH_OPERATOR_FLAGS",
    `${flags} --preload ${new URL("./_probe_preload.ts", import.meta.url).pathname}`,
  );
  if (mode === "prof") {
    // V8's tick log of the whole process (its window is cut out by time, v8log.ts), with the
    // V8 flags the operator runs with otherwise.
    const shipped = operatorV8Flags()[0]?.slice("--v8-flags=".length);
    const prof = ["--prof", "--prof-sampling-interval=250", `--logfile=${dir}/v8.log`];
    Deno.env.set(
      "KOPF_BENCH_V8_FLAGS",
      [shipped, ...prof, "--no-logfile-per-isolate"].filter(Boolean).join(","),
    );
  }
  const root = new URL("../", import.meta.url);
  await using server = await startServerProcess({ root });
  using api = new BenchClient(server.url);
  await setUpKopfExamples(api, root, NAMESPACE);
  await using load = await LoadGenerator.start(server.url, COLLECTION, "create_fn");
  const options: Record<string, [ChildOptions, string]> = {
    shipped: [{ posting: true }, "./_bench_operator.ts"],
    quiet: [{}, "./_bench_operator.ts"],
    floor: [{ events: true }, "./_floor_operator.ts"],
    floorq: [{}, "./_floor_operator.ts"],
    raw: [{ events: true }, "./_raw_floor.ts"],
    rawq: [{}, "./_raw_floor.ts"],
  };
  const [preset, script] = options[which] ?? options.shipped!;
  // KOPF_PROBE_OPTIONS: more of the child's options, as JSON (e.g. `{"workerLimit": 16}`).
  const childOptions = { ...preset, ...JSON.parse(Deno.env.get("KOPF_PROBE_OPTIONS") ?? "{}") };
  await using op = await OperatorProcess.start(server.kubeconfig, childOptions, script);

  let n = 0;
  /** Opens a window, runs `body`, closes it; returns the counters and strace's table. */
  const window = async (body: () => Promise<void>): Promise<[Window, string]> => {
    Deno.kill(op.pid, "SIGUSR2");
    await sleep(200); // the profilers start
    const strace = mode === "strace"
      ? new Deno.Command("strace", {
        args: [
          // KOPF_PROBE_STRACE: strace's options instead of the summary (`-c`), e.g. `-e trace=write`.
          ...(Deno.env.get("KOPF_PROBE_STRACE")?.split(" ") ?? ["-c"]),
          "-f",
          "-p",
          String(op.pid),
          "-o",
          `${dir}/${op.pid}-${n}.strace`,
        ],
        stdout: "null",
        stderr: "null",
      }).spawn()
      : undefined;
    // perf: the whole process's samples (V8's generated code named by `--perf-basic-prof`).
    const perf = mode === "perf"
      ? new Deno.Command("perf", {
        args: [
          "record",
          "-e",
          "cpu-clock",
          "-F",
          "4000",
          "-g",
          "-p",
          String(op.pid),
          "-o",
          `${dir}/${op.pid}-${n}.perf`,
        ],
        stdout: "null",
        stderr: "null",
      }).spawn()
      : undefined;
    if (strace || perf) await sleep(500);
    await body();
    for (const tracer of [strace, perf]) {
      if (!tracer) continue;
      tracer.kill("SIGINT");
      await tracer.status;
    }
    const path = `${dir}/${op.pid}.json`;
    await Deno.remove(path).catch(() => {});
    Deno.kill(op.pid, "SIGUSR2");
    for (let i = 0; i < 100; i++) {
      try {
        const w = JSON.parse(await Deno.readTextFile(path)) as Window;
        await Deno.rename(path, `${dir}/${op.pid}-${n}.json`);
        for (const ext of ["cpuprofile", "heapprofile", "heapsnapshot", "coverage"]) {
          await Deno.rename(`${dir}/${op.pid}.${ext}`, `${dir}/${op.pid}-${n}.${ext}`)
            .catch(() => {});
        }
        const table = strace
          ? await Deno.readTextFile(`${dir}/${op.pid}-${n}.strace`).catch(() => "")
          : "";
        n++;
        return [w, table];
      } catch {
        await sleep(100);
      }
    }
    throw new Error("the probe wrote no counters");
  };

  const show = (title: string, w: Window, per: number, unit: string, table: string) => {
    const f = (x: number, d = 2) => fmt(x / per, d);
    console.log(
      `${title}: ${fmt(w.seconds, 1)} s; per ${unit}: CPU ${f(w.cpuSeconds * 1e3, 3)} ms ` +
        `(system ${f(w.systemSeconds * 1e3, 3)} ms), context switches ${f(w.voluntary)} ` +
        `(preempted ${f(w.involuntary)}), ` +
        `setTimeout ${f(w.setTimeout)}, setInterval ${f(w.setInterval)}, clearTimeout ${
          f(w.clearTimeout)
        }, ` +
        (mode === "promises" ? `promises ${f(w.promises)} (settled ${f(w.resolved)}), ` : "") +
        `allocated ${f(w.allocatedBytes / 1024, 1)} KiB`,
    );
    const threads = Object.entries(w.threads ?? {}).filter(([, s]) => s > 0)
      .sort((a, b) => b[1] - a[1]);
    if (threads.length) {
      console.log(
        `  CPU per ${unit} by thread: ` +
          threads.map(([name, s]) => `${name} ${f(s * 1e3, 3)} ms`).join(", "),
      );
    }
    if (table) {
      const rows = table.split("\n").filter((l) =>
        /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+/.test(l) && !/total$/.test(l)
      );
      const calls = rows.map((l) => {
        const parts = l.trim().split(/\s+/);
        return { name: parts[parts.length - 1]!, calls: Number(parts[3]) };
      }).sort((a, b) => b.calls - a.calls);
      const total = calls.reduce((s, c) => s + c.calls, 0);
      console.log(
        `  syscalls per ${unit}: ${f(total, 1)} — ` +
          calls.slice(0, 12).map((c) => `${c.name} ${f(c.calls, 2)}`).join(", "),
      );
    }
  };

  // KOPF_PROBE_WARMUP=S: first a trickle of S seconds (created, handled, deleted), unmeasured —
  // the JIT's warm-up, so that the window sees the steady state of a process that has run a while.
  const warmup = Number(Deno.env.get("KOPF_PROBE_WARMUP") ?? 0);
  if (warmup > 0) {
    const warm = Array.from({ length: RATE * warmup }, (_, i) => `warm-${i}`);
    await load.steady(warm, RATE);
    await load.awaitAll(warm, "handled", 120_000);
    if (!Deno.env.get("KOPF_PROBE_WARMUP_KEEP")) {
      await load.remove(warm, 50);
      await load.awaitAll(warm, "gone", 60_000);
    }
  }
  await sleep(1000);
  const [idle, idleTable] = await window(async () => {
    await sleep(IDLE_SECONDS * 1000);
  });
  show("idle", idle, idle.seconds, "second", idleTable);

  const burst = Number(Deno.env.get("KOPF_PROBE_BURST") ?? 0);
  const objects = burst || RATE * Number(seconds);
  const names = Array.from({ length: objects }, (_, i) => `probe-${i}`);
  await load.reset();
  const counts0 = await requestCounts(api);
  const [w, table] = await window(async () => {
    if (burst) await load.create(names, 50);
    else await load.steady(names, RATE);
    await load.awaitAll(names, "handled", 120_000);
  });
  const counts1 = await requestCounts(api);
  const title = burst ? `burst of ${fmt(objects)}` : `trickle of ${fmt(objects)} at ${RATE}/s`;
  show(`${title} (${which}, ${mode})`, w, objects, "object", table);
  const requests: string[] = [];
  for (const [key, count] of counts1) {
    const d = count - (counts0.get(key) ?? 0);
    if (d > 0 && !key.startsWith("admin")) requests.push(`${key} ${fmt(d / objects, 2)}`);
  }
  console.log(`  API requests per object (the server's counts): ${requests.join(", ")}`);

  if (mode === "cpu") {
    const s = summarize(JSON.parse(await Deno.readTextFile(`${dir}/${op.pid}-1.cpuprofile`)));
    const rows = (title: string, list: { name: string; ms: number; share: number }[]) =>
      console.log(
        `  ${title}:\n` +
          list.slice(0, 25).map((r) =>
            `    ${fmt((r.ms / objects) * 1e3, 1).padStart(6)} µs ${
              fmt(r.share * 100, 1).padStart(5)
            }%  ${r.name}`
          ).join("\n"),
      );
    console.log(`  profile: ${fmt((s.busyMs / objects) * 1e3)} µs busy per object`);
    rows("self time by function, per object", s.functions);
    rows("self time by file, per object", s.filesSelf);
    rows("total time by file, per object", s.filesTotal);
  }
  if (mode === "calls") {
    const scripts = JSON.parse(
      await Deno.readTextFile(`${dir}/${op.pid}-1.coverage`),
    ) as ScriptCoverage[];
    const { calls, functions, byFile, top } = sumCalls(scripts, root.href, objects);
    console.log(
      `  calls per object: ${fmt(calls / objects, 1)}, through ${fmt(functions)} functions ` +
        `called at least once per object (V8's precise counts, function granularity)`,
    );
    // KOPF_PROBE_ROWS: how many files and functions to list (default 25).
    const shown = Number(Deno.env.get("KOPF_PROBE_ROWS") ?? 25);
    const rows = (list: [string, number][]) =>
      list.slice(0, shown).map(([k, v]) => `    ${fmt(v / objects, 2).padStart(8)}  ${k}`).join(
        "\n",
      );
    console.log(`  by file:\n${rows(byFile)}\n  by function:\n${rows(top)}`);
  }
  if (mode === "heap" || mode === "survivors") {
    const { head } = JSON.parse(
      await Deno.readTextFile(`${dir}/${op.pid}-1.heapprofile`),
    ) as { head: HeapNode };
    const { total, byFunction, byFile } = sumHeapProfile(head);
    const top = (m: Map<string, number>) =>
      [...m].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) =>
        `    ${fmt(v / objects / 1024, 2).padStart(6)} KiB ${
          fmt((100 * v) / total, 1).padStart(5)
        }%  ${k}`
      ).join("\n");
    console.log(`  sampled allocations: ${fmt(total / objects / 1024, 1)} KiB per object`);
    console.log(`  by function:\n${top(byFunction)}\n  by file:\n${top(byFile)}`);
  }
  if (mode === "snapshot") {
    // What the window added to what is live: the snapshot at its end less the idle one's.
    const live = async (n: number) => {
      const snapshot = JSON.parse(
        await Deno.readTextFile(`${dir}/${op.pid}-${n}.heapsnapshot`),
      ) as {
        snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
        nodes: number[];
        strings: string[];
      };
      const { node_fields: fields, node_types: [types] } = snapshot.snapshot.meta;
      const [type, name, size] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
      const kept = new Map<string, { count: number; bytes: number }>();
      for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
        const kind = types[snapshot.nodes[i + type!]!]!;
        const label = kind === "object" || kind === "closure"
          ? snapshot.strings[snapshot.nodes[i + name!]!]!.slice(0, 60)
          : `(${kind})`;
        const row = kept.get(label) ?? kept.set(label, { count: 0, bytes: 0 }).get(label)!;
        row.count++;
        row.bytes += snapshot.nodes[i + size!]!;
      }
      return kept;
    };
    const [before, after] = [await live(0), await live(1)];
    const added = [...after].map(([k, r]) => {
      const b = before.get(k) ?? { count: 0, bytes: 0 };
      return [k, { count: r.count - b.count, bytes: r.bytes - b.bytes }] as const;
    });
    const total = added.reduce((n, [, r]) => n + r.bytes, 0);
    console.log(
      `  live at the end, more than idle: ${fmt(total / 1048576, 1)} MiB, ` +
        `${fmt(total / objects, 0)} B per object; by constructor (per object: bytes, count):\n` +
        added.sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 30).map(([k, r]) =>
          `    ${fmt(r.bytes / objects, 0).padStart(6)} B ${
            fmt(r.count / objects, 2).padStart(6)
          }  ${k}`
        ).join("\n"),
    );
  }
  await load.remove(names, 50);
  await load.awaitAll(names, "gone", 60_000);
  if (mode === "prof") {
    await op.stop(); // the log is complete once the process has exited
    const log = await Deno.readTextFile(`${dir}/v8.log`);
    console.log("  V8's ticks (--prof, the main thread, every 250 µs) in the window, per object:");
    printV8LogSummary(
      summarizeV8Log(log, w.from * 1000, w.to * 1000),
      Number(Deno.env.get("KOPF_PROBE_ROWS") ?? 25),
      objects,
    );
  }
  console.log(`  files in ${dir}`);
}
