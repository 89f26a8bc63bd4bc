/**
 * Counters of an operator process over a window, for `trickle_probe.ts`: loaded
 * before the operator with `--preload`, it does nothing until the first
 * SIGUSR2 (the window opens) and writes what it counted at the second
 * (the window closes) to `$KOPF_PROBE_DIR/<pid>.json`:
 *
 * - timers: `setTimeout`/`setInterval` calls, and `clearTimeout`/`clearInterval`
 *   (with `KOPF_PROBE=timers`, by caller);
 * - promises made (V8's promise hook `init`, every promise: async functions',
 *   the runtime's, ours) and settled (`resolve`), with `KOPF_PROBE=promises`
 *   only (the hooks cost time of their own); with `KOPF_PROBE=promise-sites`, every 16th
 *   promise's maker (the first frames of its stack), counted by caller;
 * - bytes allocated on V8's heap (`node:v8` `total_allocated_bytes`);
 * - with `KOPF_PROBE=cpu` a CPU profile of the window only (`<pid>.cpuprofile`,
 *   250 µs sampling), with `KOPF_PROBE=heap` a sampling heap profile of what was
 *   allocated in it, collected objects included (`<pid>.heapprofile`), with
 *   `KOPF_PROBE=survivors` the same without what a young-generation collection freed,
 *   with `KOPF_PROBE=snapshot` a heap snapshot at the window's end after a full
 *   collection (`<pid>.heapsnapshot`: what the process keeps), with `KOPF_PROBE=calls` V8's
 *   precise call counts of every function over the window (`<pid>.coverage`: the inspector's
 *   `Profiler.takePreciseCoverage`, function granularity — how many calls and how many
 *   functions the window's work runs through);
 * - CPU seconds by thread name (`/proc/self/task`).
 *
 * @module
 */

import v8 from "node:v8";
import { Session } from "node:inspector";

const dir = Deno.env.get("KOPF_PROBE_DIR") ?? "/tmp";
const mode = Deno.env.get("KOPF_PROBE") ?? "";
const core = (Deno as unknown as Record<symbol, { core: Record<string, unknown> }>)[
  (Deno as unknown as { internal: symbol }).internal
]!.core as { setPromiseHooks: (...hooks: Array<((p: unknown) => void) | undefined>) => void };

/** With `KOPF_PROBE=timers`: the timers' callers, counted. */
const callers = new Map<string, number>();
const counts = { setTimeout: 0, setInterval: 0, clearTimeout: 0, promises: 0, resolved: 0 };
let open = false;
const g = globalThis as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const name of ["setTimeout", "setInterval", "clearTimeout", "clearInterval"] as const) {
  const original = g[name]!;
  const key = name === "clearInterval" ? "clearTimeout" : name;
  g[name] = function (this: unknown, ...args: unknown[]) {
    if (open) {
      counts[key]++;
      if (mode === "timers") {
        // Where the timer comes from: the first frames outside this file.
        const at = `${name}(${typeof args[1] === "number" ? Math.round(args[1]) : "-"}) ` +
          (new Error().stack ?? "").split("\n").slice(2, 6).map((l) => l.trim()).join(" < ");
        callers.set(at, (callers.get(at) ?? 0) + 1);
      }
    }
    return original.apply(this, args);
  };
}

// With `KOPF_PROBE=now`: calls of `performance.now()` (an op of ~0.8 µs here), by caller.
if (mode === "now") {
  const original = performance.now.bind(performance);
  performance.now = () => {
    if (open) {
      const at = (new Error().stack ?? "").split("\n").slice(2, 5).map((l) => l.trim()).join(" < ");
      callers.set(at, (callers.get(at) ?? 0) + 1);
    }
    return original();
  };
}

// With `KOPF_PROBE=writes`: the time spent in socket writes' synchronous part (the syscall).
const writes = { calls: 0, ms: 0 };
if (mode === "writes") {
  // The connections' class is not exported: its prototype is patched at the first connect.
  const connect = Deno.connect;
  let patched = false;
  (Deno as { connect: unknown }).connect = async (...args: Parameters<typeof connect>) => {
    const conn = await connect(...args);
    if (!patched) {
      patched = true;
      const proto = Object.getPrototypeOf(conn) as { write: (b: Uint8Array) => Promise<number> };
      const original = proto.write;
      proto.write = function (this: unknown, bytes: Uint8Array) {
        const t0 = performance.now();
        const result = original.call(this, bytes);
        if (open) {
          writes.calls++;
          writes.ms += performance.now() - t0;
        }
        return result;
      };
    }
    return conn;
  };
}

const session = new Session();
const post = (method: string, params: Record<string, unknown> = {}) =>
  new Promise<Record<string, unknown>>((resolve, reject) => {
    session.post(method, params, (error: Error | null, result?: object) => {
      if (error) reject(error);
      else resolve((result ?? {}) as Record<string, unknown>);
    });
  });

let connected = false;
let start:
  | {
    t: number;
    allocated: number;
    cpu: ReturnType<typeof cpu>;
    switches: ReturnType<typeof switches>;
    threads: ReturnType<typeof threads>;
  }
  | undefined;
const allocated = () =>
  (v8.getHeapStatistics() as { total_allocated_bytes: number }).total_allocated_bytes;
/** CPU seconds of the process (all threads), user and system. */
const cpu = () => {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]!.split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
};
/** CPU seconds by thread name (`/proc/self/task/<tid>/stat`: the comm, utime + stime). */
const threads = () => {
  const byName: Record<string, number> = {};
  for (const task of Deno.readDirSync("/proc/self/task")) {
    try {
      const stat = Deno.readTextFileSync(`/proc/self/task/${task.name}/stat`);
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      byName[name] = (byName[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch { /* the thread ended meanwhile */ }
  }
  return byName;
};
/** Context switches of all the process's threads, voluntary (it waited) and not (preempted). */
const switches = () => {
  let voluntary = 0, involuntary = 0;
  for (const task of Deno.readDirSync("/proc/self/task")) {
    const status = Deno.readTextFileSync(`/proc/self/task/${task.name}/status`);
    voluntary += Number(status.match(/^voluntary_ctxt_switches:\s*(\d+)/m)?.[1] ?? 0);
    involuntary += Number(status.match(/^nonvoluntary_ctxt_switches:\s*(\d+)/m)?.[1] ?? 0);
  }
  return { voluntary, involuntary };
};

Deno.addSignalListener("SIGUSR2", async () => {
  if (!start) {
    if (["cpu", "heap", "survivors", "snapshot", "calls"].includes(mode) && !connected) {
      session.connect();
      connected = true;
    }
    if (mode === "cpu") {
      await post("Profiler.enable");
      await post("Profiler.setSamplingInterval", { interval: 250 });
      await post("Profiler.start");
    }
    if (mode === "calls") {
      await post("Profiler.enable");
      await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    }
    if (mode === "heap" || mode === "survivors") {
      // `survivors`: only what outlived a young-generation collection (what was promoted, or
      // is live at the end): the allocations that cost the scavenges and the old generation.
      await post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: mode === "heap",
      });
    }
    if (mode === "promises") {
      core.setPromiseHooks(() => void counts.promises++, undefined, undefined, () => {
        counts.resolved++;
      });
    }
    if (mode === "promise-sites") {
      // Every 16th promise's maker: the first frames of its stack, counted.
      core.setPromiseHooks(
        () => {
          if ((++counts.promises & 15) !== 0) return;
          const at = (new Error().stack ?? "").split("\n").slice(2, 6).map((l) => l.trim())
            .join(" < ");
          callers.set(at, (callers.get(at) ?? 0) + 16);
        },
        undefined,
        undefined,
        undefined,
      );
    }
    if (mode === "timers") {
      (globalThis as unknown as { __adds: Map<string, number> }).__adds = callers;
    }
    open = true;
    start = {
      t: performance.now(),
      allocated: allocated(),
      cpu: cpu(),
      switches: switches(),
      threads: threads(),
    };
    return;
  }
  open = false;
  if (mode === "promises" || mode === "promise-sites") {
    core.setPromiseHooks(undefined, undefined, undefined, undefined);
  }
  const out = {
    seconds: (performance.now() - start.t) / 1000,
    // The window, in milliseconds since the process started (a `--prof` log's clock, near enough).
    from: start.t,
    to: performance.now(),
    ...(() => {
      const { user, system } = cpu();
      const { voluntary, involuntary } = switches();
      return {
        cpuSeconds: user + system - start!.cpu.user - start!.cpu.system,
        systemSeconds: system - start!.cpu.system,
        voluntary: voluntary - start!.switches.voluntary,
        involuntary: involuntary - start!.switches.involuntary,
      };
    })(),
    allocatedBytes: allocated() - start.allocated,
    threads: Object.fromEntries(
      Object.entries(threads()).map(([name, s]) => [name, s - (start!.threads[name] ?? 0)]),
    ),
    ...counts,
    ...(mode === "timers" || mode === "now" || mode === "promise-sites"
      ? { callers: Object.fromEntries(callers) }
      : {}),
    ...(mode === "writes" ? { writes: { ...writes } } : {}),
  };
  if (mode === "cpu") {
    const { profile } = await post("Profiler.stop");
    await Deno.writeTextFile(`${dir}/${Deno.pid}.cpuprofile`, JSON.stringify(profile));
  }
  if (mode === "calls") {
    const { result } = await post("Profiler.takePreciseCoverage");
    await post("Profiler.stopPreciseCoverage");
    await Deno.writeTextFile(`${dir}/${Deno.pid}.coverage`, JSON.stringify(result));
  }
  if (mode === "heap" || mode === "survivors") {
    const { profile } = await post("HeapProfiler.stopSampling");
    await Deno.writeTextFile(`${dir}/${Deno.pid}.heapprofile`, JSON.stringify(profile));
  }
  if (mode === "snapshot") {
    // What is live at the window's end, after a full collection: what the operator keeps.
    const chunks: string[] = [];
    const chunk = (m: { params: { chunk: string } }) => void chunks.push(m.params.chunk);
    session.on("HeapProfiler.addHeapSnapshotChunk", chunk);
    await post("HeapProfiler.collectGarbage");
    await post("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    session.removeListener("HeapProfiler.addHeapSnapshotChunk", chunk);
    await Deno.writeTextFile(`${dir}/${Deno.pid}.heapsnapshot`, chunks.join(""));
  }
  await Deno.writeTextFile(`${dir}/${Deno.pid}.json`, JSON.stringify(out));
  start = undefined;
  for (const key of Object.keys(counts) as Array<keyof typeof counts>) counts[key] = 0;
  callers.clear();
});
