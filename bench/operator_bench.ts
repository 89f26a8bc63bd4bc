/**
 * The operator benchmark: an operator with one create and one delete handler
 * (the delete handler is not optional, so every object gets a finalizer)
 * runs on this process's main thread against the API server in a process of
 * its own. The load — POSTs, DELETEs, and a watch of the benchmark's own that
 * sees when each object's create result lands in `status` and when each
 * object is gone — comes from a worker thread (`_load_worker.ts`), so it
 * never queues on the operator's event loop. The server's request counters
 * give the API requests per object lifecycle.
 *
 * 1. an accounting run (which also warms up the JIT): processing cycles and
 *    API writes per object lifecycle, from a counting `kopf.on.event`
 *    handler and the operator's debug lines;
 * 2. bursts of 1,000 (best of 3) and 10,000 creations (50 in flight), then
 *    deletions: objects fully handled per second, requests per lifecycle by
 *    verb, CPU per lifecycle, and (for 10,000) the peak RSS of this process,
 *    sampled every 100 ms — with the default settings, and for comparison
 *    10,000 with `settings.batching.workerLimit` set;
 * 3. creation-to-handler latency at a steady 100 objects/s for 10 s, with
 *    the default batching window and with a short one;
 * 4. events: a burst of 10,000 creations whose create handler logs one line,
 *    with event posting on (the default settings) and, for comparison, off:
 *    the share of the events (per-object log lines at `info` and above)
 *    posted or folded 0, 1, 3 and 5 s after the last object was handled, the
 *    operator's CPU per object up to that moment with and without posting,
 *    and after the operator's exit how many were written, dropped and
 *    counted, or lost uncounted.
 *
 * Except in the events phase, event posting is off and logs go nowhere at
 * level warning, so what is measured is the handling. Rates depend on the CPU the three parties get;
 * CPU per lifecycle (the operator's thread, the whole process, the server)
 * does not, and the load average is printed for that reason.
 *
 * Run alone: `deno run -A bench/operator_bench.ts`; only some phases:
 * `KOPF_BENCH_PHASES=tuned,bursts deno run -A bench/operator_bench.ts` (phases:
 * `accounting`, `tuned`, `bursts`, `latency`, `events`; the accounting run always runs
 * first, as the warm-up).
 *
 * @module
 */

import * as kopf from "../mod.ts";
import { BenchClient, expectOk, setUpKopfExamples } from "./_client.ts";
import { LoadGenerator } from "./_load_generator.ts";
import { readCpuSeconds, type ServerProcess, startServerProcess } from "./_server_process.ts";
import { figure, fmt, percentile } from "./_stats.ts";

const NAMESPACE = "bench-operator";
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
/** How the server counts requests to KopfExamples. */
const RESOURCE_KEY = "kopfexamples.kopf.dev";
const CONCURRENCY = 50;
/** The worker limit of the comparison burst (the default is none). */
const TUNED_WORKERS = 100;
const MB = 1024 * 1024;

/** The phases to run (`KOPF_BENCH_PHASES`, comma-separated; all by default). */
const PHASES = Deno.env.get("KOPF_BENCH_PHASES")?.split(",").map((p) => p.trim());

/** Whether a phase runs. */
function phase(name: "tuned" | "bursts" | "latency" | "events"): boolean {
  return !PHASES || PHASES.includes(name);
}

/** Epoch milliseconds with sub-millisecond precision, comparable across threads. */
const now = () => performance.timeOrigin + performance.now();

/** What the operator benchmark reports back to `bench/main.ts`. */
export interface OperatorBenchOutcome {
  /** How many figures had a target, and how many met it. */
  targets: number;
  met: number;
  /** Why the benchmark itself broke, if it did. */
  broken: string[];
}

/** The operator under test, running in this process. */
interface BenchOperator extends AsyncDisposable {
  /** Name → when the create handler started (epoch ms, sub-ms precision). */
  starts: Map<string, number>;
  /** Processing cycles seen by the counting event handler (accounting runs only). */
  cycles: number;
  /** Log messages by their first words (accounting runs only). */
  messages: Map<string, number>;
}

/**
 * Starts an operator with the benchmark's handlers and waits until it watches.
 *
 * @param kubeconfig The server's kubeconfig.
 * @param options The batching window (default: the default); whether to count cycles and messages.
 * @returns The running operator.
 */
async function startOperator(
  kubeconfig: string,
  options: {
    batchWindow?: number;
    workerLimit?: number;
    account?: boolean;
    /** Post events (a log line per create handler), logging to this sink and counting in these metrics. */
    events?: { sink: kopf.LogSink; metrics: kopf.OperatorMetrics };
  } = {},
): Promise<BenchOperator> {
  const registry = new kopf.OperatorRegistry();
  const starts = new Map<string, number>();
  const messages = new Map<string, number>();
  const op: BenchOperator = {
    starts,
    cycles: 0,
    messages,
    [Symbol.asyncDispose]: async () => {},
  };
  const chatty = !!options.events;
  kopf.on.create("kopf.dev", "v1", "kopfexamples", { registry, id: "create_fn" }, (c) => {
    starts.set(c.name as string, now());
    if (chatty) c.logger.info("Created.");
    return { message: "created" };
  });
  kopf.on.delete("kopf.dev", "v1", "kopfexamples", { registry, id: "delete_fn" }, () => {});
  if (options.account) {
    kopf.on.event("kopf.dev", "v1", "kopfexamples", { registry, id: "count_fn" }, () => {
      op.cycles++;
    });
  }
  const settings = new kopf.OperatorSettings();
  settings.posting.enabled = chatty;
  if (options.batchWindow !== undefined) settings.batching.batchWindow = options.batchWindow;
  if (options.workerLimit !== undefined) settings.batching.workerLimit = options.workerLimit;

  const stop = new AbortController();
  let ready!: () => void;
  const readiness = new Promise<void>((resolve) => (ready = resolve));
  const running = kopf.operator({
    registry,
    settings,
    clusterwide: true,
    kubeconfig,
    signal: stop.signal,
    onReady: () => ready(),
    ...(options.events ? { sink: options.events.sink, metrics: options.events.metrics } : {}),
    ...(options.events ? {} : options.account
      ? {
        sink: (record: kopf.LogRecord) => {
          const key = record.message.split(": ")[0]!;
          messages.set(key, (messages.get(key) ?? 0) + 1);
        },
      }
      : { logging: { level: "warning" as const, write: () => {} } }),
  });
  await Promise.race([
    readiness,
    running.then(() => {
      throw new Error("the operator stopped before it was ready");
    }),
  ]);
  op[Symbol.asyncDispose] = async () => {
    stop.abort();
    await running;
  };
  return op;
}

/** Request counts of the server, by `"<verb> <resource> <code>"`. */
type Counts = Map<string, number>;

async function requestCounts(api: BenchClient): Promise<Counts> {
  const answer = await api.send("GET", "/admin/stats", { parse: true });
  expectOk(answer, "reading the server's request counts");
  const requests = (answer.body as { requests: Record<string, number> }).requests;
  return new Map(Object.entries(requests));
}

/** The requests made between two readings, summed by verb for KopfExamples, and the rest. */
interface RequestDiff {
  /** Verb → count, KopfExamples only, any code. */
  verbs: Map<string, number>;
  /** `"<verb> <code>"` → count of KopfExample requests that were not 2xx. */
  failures: Map<string, number>;
  /** `"<verb> <resource>"` → count, other resources (admin excluded). */
  others: Map<string, number>;
}

function diffCounts(before: Counts, after: Counts): RequestDiff {
  const out: RequestDiff = { verbs: new Map(), failures: new Map(), others: new Map() };
  const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
  for (const [key, count] of after) {
    const n = count - (before.get(key) ?? 0);
    if (n <= 0) continue;
    const [verb = "", resource = "", code = ""] = key.split(" ");
    if (verb === "admin") continue;
    if (resource !== RESOURCE_KEY) {
      add(out.others, `${verb} ${resource || "-"}`, n);
      continue;
    }
    add(out.verbs, verb, n);
    if (!code.startsWith("2")) add(out.failures, `${verb} ${code}`, n);
  }
  return out;
}

/** The operator's writes (the benchmark's own creates and deletes left out). */
function operatorWrites(d: RequestDiff, objects: number): number {
  let n = 0;
  for (const [verb, count] of d.verbs) {
    if (verb === "patch" || verb === "update") n += count;
    if (verb === "create" || verb === "delete") n += count - objects;
  }
  return n;
}

function perObject(d: RequestDiff, objects: number): string {
  const order = ["patch", "get", "list", "watch", "update", "create", "delete"];
  const verbs = [...d.verbs.keys()].sort((a, b) =>
    (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99)
  );
  const parts = verbs.map((v) => `${v} ${fmt(d.verbs.get(v)! / objects, 2)}`);
  const failures = [...d.failures].map(([k, n]) => `${k}: ${fmt(n)}`);
  const others = [...d.others].map(([k, n]) => `${k}: ${fmt(n)}`);
  return parts.join(", ") +
    (failures.length ? `; not 2xx: ${failures.join(", ")}` : "") +
    (others.length ? `; other resources: ${others.join(", ")}` : "");
}

/** CPU seconds of this process's main thread (the operator's event loop), from `/proc`. */
async function mainThreadCpuSeconds(): Promise<number> {
  const text = await Deno.readTextFile(`/proc/${Deno.pid}/task/${Deno.pid}/stat`);
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The figures of one burst. */
interface BurstResult {
  objects: number;
  /** Objects fully handled per second, from the first POST to the last status. */
  createRate: number;
  /** Objects gone per second, from the first DELETE to the last DELETED event. */
  deleteRate: number;
  /** Objects through their whole lifecycle per second (both phases' time). */
  lifecycleRate: number;
  createSeconds: number;
  deleteSeconds: number;
  /** How long the POSTs (the DELETEs) alone took, in seconds. */
  postSeconds: number;
  deleteRequestSeconds: number;
  requests: RequestDiff;
  /** CPU seconds: the operator's thread, the whole process, the server. */
  operatorCpu: number;
  processCpu: number;
  serverCpu: number;
  /** Wall seconds of the whole burst. */
  seconds: number;
  /** Peak RSS of this process (sampled every 100 ms), and the RSS before, in bytes. */
  peakRss: number;
  rssBefore: number;
}

async function burst(
  api: BenchClient,
  server: ServerProcess,
  load: LoadGenerator,
  prefix: string,
  objects: number,
): Promise<BurstResult> {
  const names = Array.from({ length: objects }, (_, i) => `${prefix}-${i}`);
  const timeoutMs = 60_000 + objects * 20;
  await load.reset();
  const rssBefore = Deno.memoryUsage().rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
  }, 100);
  try {
    const counts0 = await requestCounts(api);
    const operator0 = await mainThreadCpuSeconds();
    const process0 = await readCpuSeconds(Deno.pid);
    const server0 = await server.cpuSeconds();

    const posting = await load.create(names, CONCURRENCY);
    const created = await load.awaitAll(names, "handled", timeoutMs);
    const deleting = await load.remove(names, CONCURRENCY);
    const gone = await load.awaitAll(names, "gone", timeoutMs);
    const seconds = (now() - posting.started) / 1000;

    const operatorCpu = await mainThreadCpuSeconds() - operator0;
    const processCpu = await readCpuSeconds(Deno.pid) - process0;
    const serverCpu = await server.cpuSeconds() - server0;
    const requests = diffCounts(counts0, await requestCounts(api));
    peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
    const createSeconds = (created.last - posting.started) / 1000;
    const deleteSeconds = (gone.last - deleting.started) / 1000;
    return {
      objects,
      createRate: objects / createSeconds,
      deleteRate: objects / deleteSeconds,
      lifecycleRate: objects / (createSeconds + deleteSeconds),
      createSeconds,
      deleteSeconds,
      postSeconds: (posting.finished - posting.started) / 1000,
      deleteRequestSeconds: (deleting.finished - deleting.started) / 1000,
      requests,
      operatorCpu,
      processCpu,
      serverCpu,
      seconds,
      peakRss,
      rssBefore,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** The figures of a steady-rate run. */
interface LatencyResult {
  objects: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** How late the generator sent its latest POST, in ms. */
  maxSendDelay: number;
}

async function steady(
  op: BenchOperator,
  load: LoadGenerator,
  prefix: string,
  rate: number,
  seconds: number,
): Promise<LatencyResult> {
  const objects = Math.round(rate * seconds);
  const names = Array.from({ length: objects }, (_, i) => `${prefix}-${i}`);
  await load.reset();
  const { sent, maxSendDelay } = await load.steady(names, rate);
  await load.awaitAll(names, "handled", 60_000);
  const latencies = names.map((n, i) => op.starts.get(n)! - sent[i]!).sort((a, b) => a - b);
  await load.remove(names, CONCURRENCY);
  await load.awaitAll(names, "gone", 60_000);
  return {
    objects,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1]!,
    maxSendDelay,
  };
}

/** The figures of an events burst. */
interface EventsResult {
  objects: number;
  /** Events (per-object log records at info and above) by 5 s after the last object handled. */
  occurrences: number;
  /** Events posted or folded at 0, 1, 3, 5 s after the last object handled. */
  written: number[];
  /** Where `written` comes from: the operator's counters, or the server's event writes. */
  source: "metrics" | "server";
  /** Seconds from the first POST to the last object handled. */
  createSeconds: number;
  /** CPU seconds up to 5 s after the last object handled: operator thread, process, server. */
  operatorCpu: number;
  processCpu: number;
  serverCpu: number;
  /** After the exit (deletions included): all events, written, dropped and counted. */
  total: number;
  totalWritten: number;
  dropped: number | undefined;
  /** Peak RSS of this process during the burst (sampled every 100 ms), in bytes. */
  peakRss: number;
}

const MARKS = [0, 1, 3, 5];

/** Events written so far: the operator's posted + folded counters if it has them, else the server's event POSTs. */
async function eventsWritten(
  metrics: kopf.OperatorMetrics | undefined,
  api: BenchClient,
  before: Counts,
): Promise<{ n: number; source: "metrics" | "server" }> {
  const text = metrics ? await metrics.metrics() : "";
  const value = (name: string) => {
    let sum: number | undefined;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))) {
      sum = (sum ?? 0) + Number(m[1]);
    }
    return sum;
  };
  const posted = value("kopf_events_posted_total");
  if (posted !== undefined) {
    return { n: posted + (value("kopf_events_folded_total") ?? 0), source: "metrics" };
  }
  const after = await requestCounts(api);
  let n = 0;
  for (const [key, count] of after) {
    if (/^create events 2\d\d$/.test(key)) n += count - (before.get(key) ?? 0);
  }
  return { n, source: "server" };
}

/** The dropped (and counted) events of an operator's counters, if it has them. */
async function eventsDropped(metrics: kopf.OperatorMetrics): Promise<number | undefined> {
  const text = await metrics.metrics();
  let sum: number | undefined;
  for (const m of text.matchAll(/^kopf_events_dropped_total\{[^}]*\} (\S+)$/gm)) {
    sum = (sum ?? 0) + Number(m[1]);
  }
  return sum;
}

/**
 * A burst of creations whose handler logs a line: how soon the events are
 * written, and what they cost; then the deletions and the operator's exit.
 */
async function eventsBurst(
  api: BenchClient,
  server: ServerProcess,
  load: LoadGenerator,
  kubeconfig: string,
  prefix: string,
  objects: number,
  posting: boolean,
): Promise<EventsResult> {
  let occurrences = 0;
  const sink = Object.assign((record: kopf.LogRecord) => {
    if (record.object && record.level !== "debug") occurrences++;
  }, { level: "info" as const });
  const metrics = new kopf.OperatorMetrics();
  const op = await startOperator(kubeconfig, posting ? { events: { sink, metrics } } : {});
  const names = Array.from({ length: objects }, (_, i) => `${prefix}-${i}`);
  const timeoutMs = 60_000 + objects * 20;
  let peakRss = Deno.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, Deno.memoryUsage().rss)), 100);
  try {
    await load.reset();
    const counts0 = await requestCounts(api);
    const operator0 = await mainThreadCpuSeconds();
    const process0 = await readCpuSeconds(Deno.pid);
    const server0 = await server.cpuSeconds();
    const posted = await load.create(names, CONCURRENCY);
    const created = await load.awaitAll(names, "handled", timeoutMs);
    const written: number[] = [];
    let source: "metrics" | "server" = "server";
    for (const mark of MARKS) {
      await new Promise((r) => setTimeout(r, Math.max(0, created.last + mark * 1000 - now())));
      const w = await eventsWritten(posting ? metrics : undefined, api, counts0);
      written.push(w.n);
      source = w.source;
    }
    const result: EventsResult = {
      objects,
      occurrences,
      written,
      source,
      createSeconds: (created.last - posted.started) / 1000,
      operatorCpu: await mainThreadCpuSeconds() - operator0,
      processCpu: await readCpuSeconds(Deno.pid) - process0,
      serverCpu: await server.cpuSeconds() - server0,
      total: 0,
      totalWritten: 0,
      dropped: undefined,
      peakRss: 0,
    };
    await load.remove(names, CONCURRENCY);
    await load.awaitAll(names, "gone", timeoutMs);
    await op[Symbol.asyncDispose](); // the exit: pending events are flushed (or dropped) here
    result.total = occurrences;
    result.totalWritten = (await eventsWritten(posting ? metrics : undefined, api, counts0)).n;
    if (posting) result.dropped = await eventsDropped(metrics);
    result.peakRss = peakRss;
    return result;
  } finally {
    clearInterval(sampler);
    await op[Symbol.asyncDispose]();
  }
}

/**
 * Creates the KopfExample CRD and the benchmark's namespace.
 *
 * @param api The client.
 * @param root The repository root (for `examples/crd.yaml`).
 */
function setUp(api: BenchClient, root: URL): Promise<void> {
  return setUpKopfExamples(api, root, NAMESPACE);
}

/**
 * What the machine is doing: CPUs and load average (neighbours slow the rates down).
 *
 * @returns E.g. `"2 CPUs, load average 0.52"`.
 */
export function machine(): string {
  let load = "?";
  try {
    load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0] ?? "?";
  } catch { /* not Linux */ }
  return `${navigator.hardwareConcurrency} CPUs, load average ${load}`;
}

/**
 * Runs the operator benchmark against a running server and prints its figures.
 *
 * @param server The API server process (fresh: the benchmark creates the CRD and a namespace).
 * @param root The repository root.
 * @returns How many targets were met, and what broke.
 */
export async function measureOperator(
  server: ServerProcess,
  root: URL,
): Promise<OperatorBenchOutcome> {
  const outcome: OperatorBenchOutcome = { targets: 0, met: 0, broken: [] };
  const report = (f: { line: string; met: boolean }) => {
    outcome.targets++;
    if (f.met) outcome.met++;
    console.log(f.line);
  };
  try {
    using api = new BenchClient(server.url);
    await setUp(api, root);
    await using load = await LoadGenerator.start(server.url, COLLECTION, "create_fn");
    const idleRss = Deno.memoryUsage().rss;

    // Accounting (and warm-up): cycles and writes per lifecycle.
    {
      const objects = 200;
      await using op = await startOperator(server.kubeconfig, { account: true });
      const r = await burst(api, server, load, "acct", objects);
      const writes = operatorWrites(r.requests, objects);
      const lines = [...op.messages]
        .filter(([m, n]) => n / objects >= 0.05 && !m.startsWith("Handler 'count_fn'"))
        .sort((a, b) => b[1] - a[1])
        .map(([m, n]) => `${fmt(n / objects, 2)}× ${m}`);
      report(figure("operator: API writes per processing cycle", writes / op.cycles, "", {
        decimals: 2,
        target: { below: 4 },
        note: `[Kopf: 0–4 patches per cycle; here ${fmt(writes / objects, 2)} writes in ` +
          `${fmt(op.cycles / objects, 2)} cycles per lifecycle (create + delete, one handler ` +
          `each), cycles counted by a kopf.on.event handler over ${fmt(objects)} objects]`,
      }));
      console.log(`  per lifecycle, the operator's log lines: ${lines.join("; ")}`);
    }

    // Bursts with a worker limit, for comparison: fewer requests in flight, hence
    // fewer connections and less CPU per request. First, so that RSS is its own
    // (freed memory mostly stays with the process).
    if (phase("tuned")) {
      const objects = 10_000;
      await using _op = await startOperator(server.kubeconfig, { workerLimit: TUNED_WORKERS });
      const r = await burst(api, server, load, "tuned", objects);
      console.log(
        `operator: ${fmt(objects)} in a burst with settings.batching.workerLimit = ` +
          `${TUNED_WORKERS}: ${fmt(r.createRate)} objects/s fully handled, ` +
          `${fmt(r.deleteRate)} objects/s gone  [not the default; API requests per lifecycle: ` +
          `${perObject(r.requests, objects)}; CPU per lifecycle: ` +
          `operator thread ${fmt((r.operatorCpu / objects) * 1e6)} µs, server ${
            fmt((r.serverCpu / objects) * 1e6)
          } µs; peak RSS ${fmt(r.peakRss / MB)} MB]`,
      );
    }

    // Bursts with the defaults: 1,000 objects three times (the best counts:
    // neighbours on the machine only ever slow a run down), then 10,000 once.
    for (const [objects, runs] of phase("bursts") ? [[1_000, 3], [10_000, 1]] as const : []) {
      const results: BurstResult[] = [];
      for (let run = 0; run < runs; run++) {
        await using _op = await startOperator(server.kubeconfig);
        results.push(await burst(api, server, load, `burst${objects}-${run}`, objects));
      }
      const r = results.reduce((a, b) => (b.lifecycleRate > a.lifecycleRate ? b : a));
      const others = results.length > 1
        ? `; all runs: ${
          results.map((x) => `${fmt(x.createRate)}/${fmt(x.deleteRate)}`).join(", ")
        } create/delete per s`
        : "";
      const cpu = `CPU per lifecycle: operator thread ${
        fmt((r.operatorCpu / objects) * 1e6)
      } µs, whole process ${fmt((r.processCpu / objects) * 1e6)} µs, server ${
        fmt((r.serverCpu / objects) * 1e6)
      } µs; operator thread busy ${fmt((100 * r.operatorCpu) / r.seconds)}%`;
      report(figure(
        `operator: ${fmt(objects)} created in a burst`,
        r.createRate,
        "objects/s fully handled",
        {
          target: { atLeast: 1_000 },
          note: `[all handled ${fmt(r.createSeconds, 2)} s after the first POST; ` +
            `POSTs took ${fmt(r.postSeconds, 2)} s (${CONCURRENCY} in flight)${others}]`,
        },
      ));
      report(figure(
        `operator: ${fmt(objects)} deleted in a burst`,
        r.deleteRate,
        "objects/s gone (finalizer released)",
        {
          target: { atLeast: 1_000 },
          note: `[all gone ${fmt(r.deleteSeconds, 2)} s after the first DELETE; ` +
            `DELETEs took ${fmt(r.deleteRequestSeconds, 2)} s]`,
        },
      ));
      const writes = operatorWrites(r.requests, objects);
      console.log(
        figure(`operator: ${fmt(objects)} whole lifecycles`, r.lifecycleRate, "objects/s", {
          note: `[API requests per lifecycle: ${perObject(r.requests, objects)}; ` +
            `operator writes ${fmt(writes / objects, 2)}/lifecycle; ${cpu}]`,
        }).line,
      );
      if (objects === 10_000) {
        console.log(
          figure(`operator: peak RSS during the ${fmt(objects)} burst`, r.peakRss / MB, "MB", {
            note: `[${fmt(r.rssBefore / MB)} MB before it, ${fmt(idleRss / MB)} MB before any ` +
              `operator ran; the process holds the load generator's worker too; ` +
              `sampled every 100 ms]`,
          }).line,
        );
      }
    }

    // Latency at a steady rate, with the default batching window and a short one.
    const defaultWindow = new kopf.OperatorSettings().batching.batchWindow;
    for (const window of phase("latency") ? [defaultWindow, 0.01] : []) {
      await using op = await startOperator(server.kubeconfig, { batchWindow: window });
      const rate = 100;
      const r = await steady(op, load, `steady${window * 1000}`, rate, 10);
      report(figure(
        `operator: creation → create handler p99 at ${rate} objects/s, batchWindow ${window} s${
          window === defaultWindow ? " (default)" : ""
        }`,
        r.p99,
        "ms",
        {
          decimals: 1,
          target: { below: 100 },
          note: `[p50 ${fmt(r.p50, 1)} ms, p90 ${fmt(r.p90, 1)} ms, max ${fmt(r.max, 1)} ms; ` +
            `${fmt(r.objects)} objects, from the POST being sent` +
            `${
              window === defaultWindow
                ? "; a lone event is not batched: the window applies to bursts"
                : ""
            }; ` +
            `generator sent up to ${fmt(r.maxSendDelay, 1)} ms late]`,
        },
      ));
    }

    // Events: a log line per create handler, posted (the default settings) or not.
    if (phase("events")) {
      const objects = 10_000;
      const quiet = await eventsBurst(
        api,
        server,
        load,
        server.kubeconfig,
        "quiet",
        objects,
        false,
      );
      const r = await eventsBurst(api, server, load, server.kubeconfig, "events", objects, true);
      const share = (n: number) => (100 * n) / Math.max(1, r.occurrences);
      const us = (cpu: number) => fmt((cpu / objects) * 1e6);
      report(figure(
        `operator: events of a ${
          fmt(objects)
        } burst posted or folded 5 s after the last object handled`,
        share(r.written[r.written.length - 1]!),
        "%",
        {
          decimals: 1,
          target: { atLeast: 99 },
          note: `[${fmt(r.occurrences / objects, 2)} events per object (log lines at info and ` +
            `above); at ${
              MARKS.map((m, i) => `+${m} s ${fmt(share(r.written[i]!), 1)}%`).join(", ")
            }` +
            ` (${
              r.source === "metrics" ? "the operator's counters" : "the server's event POSTs"
            }); ` +
            `all handled ${fmt(r.createSeconds, 2)} s after the first POST (` +
            `${fmt(quiet.createSeconds, 2)} s without posting)]`,
        },
      ));
      console.log(
        figure(
          `operator: CPU per object of a ${fmt(objects)} burst with events posted`,
          (r.operatorCpu / objects) * 1e6,
          "µs operator thread",
          {
            note:
              `[without posting ${us(quiet.operatorCpu)} µs; whole process ${
                us(r.processCpu)
              } µs (${us(quiet.processCpu)} µs), server ${us(r.serverCpu)} µs (${
                us(quiet.serverCpu)
              } µs); from the first POST to 5 s after the last object handled, creations only; ` +
              `peak RSS ${fmt(r.peakRss / MB)} MB (${fmt(quiet.peakRss / MB)} MB)]`,
          },
        ).line,
      );
      const lost = r.total - r.totalWritten - (r.dropped ?? 0);
      console.log(
        figure(`operator: events lost uncounted at the exit`, lost, "", {
          note: `[after the deletions and the exit: ${fmt(r.totalWritten)} of ${
            fmt(r.total)
          } events written, ${
            r.dropped === undefined ? "no drop counter" : `${fmt(r.dropped)} dropped and counted`
          }]`,
        }).line,
      );
    }
  } catch (e) {
    outcome.broken.push(`operator benchmark: ${e instanceof Error ? e.message : String(e)}`);
  }
  return outcome;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  await using server = await startServerProcess({ root });
  console.log(`kopf operator benchmark: server pid ${server.pid} at ${server.url}; ${machine()}`);
  const outcome = await measureOperator(server, root);
  console.log(`targets met: ${outcome.met} of ${outcome.targets}`);
  for (const b of outcome.broken) console.error(`bench broken: ${b}`);
  const code = await server.stop();
  Deno.exit(outcome.broken.length || code !== 0 ? 1 : 0);
}
