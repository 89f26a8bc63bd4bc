/**
 * The daemons-and-timers benchmark: 10,000 objects, each with a 10-second
 * timer and one daemon sleeping on its stop-flag, served by an operator in
 * this process against the API server in a process of its own. Once every
 * object's timer has run and the start-up writes have settled, it measures
 * over a steady window:
 *
 * - the CPU share of one core of this process (CPU time / wall time);
 * - the timer drift: each run's delay past its schedule (the previous run +
 *   the interval), p50 and p99;
 * - the RSS of this process.
 *
 * Targets: under 15% of a core, drift p99 under 100 ms, under 300 MB.
 *
 * Run alone: `deno run -A bench/daemons_bench.ts` (it starts its own server);
 * `deno task bench` runs it after the other benchmarks. With `KOPF_BENCH_RESULTS=FILE`, its
 * figures go to that JSON file as well (as `deno task bench` collects them).
 *
 * @module
 */

import * as kopf from "../mod.ts";
import { BenchClient, expectOk, runBounded, setUpKopfExamples } from "./_client.ts";
import { readCpuSeconds, type ServerProcess, startServerProcess } from "./_server_process.ts";
import { figure, fmt, percentile, RESULTS_ENV, writeResults } from "./_stats.ts";

const MB = 1024 * 1024;

/** What the daemons benchmark found. */
export interface DaemonsBenchOutcome {
  targets: number;
  met: number;
  broken: string[];
}

/** Options of the run (the defaults are the figures). */
export interface DaemonsBenchOptions {
  objects?: number;
  /** The timer's interval, seconds. */
  interval?: number;
  /** The steady window, seconds. */
  window?: number;
  /** `settings.batching.workerLimit` (default: none, as in the default settings). */
  workerLimit?: number;
  /** The namespace of the objects (one per run on a shared server). */
  namespace?: string;
}

/**
 * Runs the benchmark against a fresh server and prints its figures.
 *
 * @param server The API server process (fresh: the benchmark creates the CRD and a namespace).
 * @param root The repository root.
 * @param options Objects, interval, window.
 * @returns How many targets were met, and what broke.
 *
 * @example
 * ```ts ignore
 * const server = await startServerProcess({ root });
 * await measureDaemons(server, root);
 * ```
 */
export async function measureDaemons(
  server: ServerProcess,
  root: URL,
  options: DaemonsBenchOptions = {},
): Promise<DaemonsBenchOutcome> {
  const objects = options.objects ?? 10_000;
  const interval = options.interval ?? 10;
  const window = options.window ?? 30;
  const namespace = options.namespace ?? "bench-daemons";
  const collection = `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`;
  const tuned = options.workerLimit !== undefined
    ? ` with settings.batching.workerLimit = ${options.workerLimit}`
    : "";
  const outcome: DaemonsBenchOutcome = { targets: 0, met: 0, broken: [] };
  const report = (f: { line: string; met: boolean }) => {
    outcome.targets++;
    if (f.met) outcome.met++;
    console.log(f.line);
  };

  using api = new BenchClient(server.url);
  await setUpKopfExamples(api, root, namespace);
  await runBounded(objects, 32, async (i) => {
    expectOk(
      await api.send("POST", collection, {
        body: {
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name: `kex-${i}` },
          spec: { field: i },
        },
      }),
      "creating an object",
    );
  });

  // The operator: a timer and a daemon per object.
  const registry = new kopf.OperatorRegistry();
  const lastRun = new Map<string, number>();
  let drifts: number[] | undefined; // collected only in the steady window
  let daemons = 0;
  kopf.timer("kopf.dev", "v1", "kopfexamples", { registry, interval }, function tick({ name }) {
    const now = performance.now();
    const last = lastRun.get(name);
    lastRun.set(name, now);
    if (drifts && last !== undefined) drifts.push(now - last - interval * 1000);
  });
  kopf.daemon("kopf.dev", "v1", "kopfexamples", { registry }, async function sleeper({ stopped }) {
    daemons++;
    await stopped.wait();
    daemons--;
  });
  const settings = new kopf.OperatorSettings();
  settings.posting.enabled = false;
  if (options.workerLimit !== undefined) settings.batching.workerLimit = options.workerLimit;
  const stop = new AbortController();
  let ready!: () => void;
  const readiness = new Promise<void>((resolve) => (ready = resolve));
  const t0 = performance.now();
  const running = kopf.operator({
    registry,
    settings,
    kubeconfig: server.kubeconfig,
    namespaces: [namespace],
    signal: stop.signal,
    onReady: () => ready(),
    logging: { level: "warning", write: () => {} },
  });
  try {
    await Promise.race([
      readiness,
      running.then(() => {
        throw new Error("the operator stopped before it was ready");
      }),
    ]);
    // Start-up: every object's daemon spawned and timer run once; then one more interval for
    // the start-up writes (the finalizers) and their events to settle.
    const deadline = performance.now() + 300_000;
    while ((lastRun.size < objects || daemons < objects) && performance.now() < deadline) {
      await kopf.sleep(0.5);
    }
    const startup = (performance.now() - t0) / 1000;
    if (lastRun.size < objects || daemons < objects) {
      outcome.broken.push(
        `only ${lastRun.size} timers ran and ${daemons} daemons run of ${objects} objects`,
      );
      return outcome;
    }
    await kopf.sleep(interval);

    drifts = [];
    // The event loop's lag meanwhile (a 10 ms probe's lateness): what of the drift is this
    // process's own work in the way, and what is the rest of a run (its writes to the server).
    const lags: number[] = [];
    let probed = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      lags.push(now - probed - 10);
      probed = now;
    }, 10);
    const cpu0 = await readCpuSeconds(Deno.pid);
    const serverCpu0 = await server.cpuSeconds();
    const w0 = performance.now();
    await kopf.sleep(window);
    clearInterval(probe);
    const cpu = await readCpuSeconds(Deno.pid) - cpu0;
    const serverCpu = await server.cpuSeconds() - serverCpu0;
    const wall = (performance.now() - w0) / 1000;
    const samples = drifts;
    drifts = undefined;
    // With `--v8-flags=--expose-gc`, the heap figure is what is retained, not garbage too.
    (globalThis as { gc?: () => void }).gc?.();
    const rss = Deno.memoryUsage().rss;
    const sorted = [...samples].sort((a, b) => a - b);
    const expected = objects * window / interval;
    const note = `[${fmt(objects)} objects × (1 timer every ${interval} s + 1 daemon); ` +
      `${fmt(samples.length)} timer runs in ${fmt(wall, 1)} s (≈${fmt(expected)} expected); ` +
      `start-up ${fmt(startup, 1)} s]`;
    report(figure(`daemons: operator CPU while steady${tuned}`, (cpu / wall) * 100, "% of a core", {
      decimals: 1,
      target: { below: 15 },
      note,
    }));
    report(figure(`daemons: timer drift p99${tuned}`, percentile(sorted, 99), "ms", {
      decimals: 1,
      target: { below: 100 },
      note:
        `[p50 ${fmt(percentile(sorted, 50), 1)} ms, max ${
          fmt(sorted[sorted.length - 1] ?? 0, 1)
        } ms; the event loop's lag p99 ${fmt(percentile(lags.sort((a, b) => a - b), 99), 1)} ms, ` +
        `max ${fmt(lags[lags.length - 1] ?? 0, 1)} ms; the API server's CPU ` +
        `${fmt((serverCpu / wall) * 100, 1)} % of a core]`,
    }));
    report(figure(`daemons: operator RSS${tuned}`, rss / MB, "MB", {
      target: { below: 300 },
      note: `[V8 heap used ${fmt(Deno.memoryUsage().heapUsed / MB)} MB; the start-up burst of ` +
        `${fmt(objects)} writes (the finalizers) runs at most ` +
        `settings.networking.maxConcurrentRequests at a time]`,
    }));
    // No target: the peak is what a pod's memory limit must allow (it includes the seeding).
    const peak = /VmHWM:\s*(\d+) kB/.exec(await Deno.readTextFile("/proc/self/status"))?.[1];
    if (peak) {
      console.log(
        figure("daemons: operator peak RSS (start-up)", Number(peak) / 1024, "MB", {
          note: "[the process's high-water mark, seeding included; no target]",
        }).line,
      );
    }
    if (samples.length < expected * 0.9) {
      outcome.broken.push(`only ${samples.length} timer runs of ≈${expected} expected`);
    }
  } finally {
    stop.abort();
    await running.catch((e) => outcome.broken.push(`the operator failed: ${e}`));
  }
  if (daemons !== 0) outcome.broken.push(`${daemons} daemons did not exit at the operator's exit`);
  return outcome;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  const server = await startServerProcess({ root });
  let code = 0;
  try {
    const objects = Number(Deno.args[0] ?? 10_000);
    const limit = Deno.env.get("KOPF_BENCH_WORKER_LIMIT");
    const r = await measureDaemons(server, root, {
      objects,
      ...(limit ? { workerLimit: Number(limit) } : {}),
    });
    for (const b of r.broken) console.error(`bench broken: ${b}`);
    code = r.broken.length ? 1 : 0;
    const results = Deno.env.get(RESULTS_ENV);
    if (results) await writeResults(results);
  } finally {
    await server.stop();
  }
  Deno.exit(code);
}
