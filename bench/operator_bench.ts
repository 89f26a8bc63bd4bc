/**
 * The operator benchmark: an operator with one create and one delete handler
 * (the delete handler is not optional, so every object gets a finalizer) runs
 * as a process of its own (`_bench_operator.ts`, driven through
 * `_operator_process.ts`), a fresh one for every burst and phase, against the
 * API server in a process of its own (`_server_process.ts`). This process is
 * the load generator: the POSTs, the DELETEs, and a watch of the benchmark's
 * own that sees when each object's create result lands in `status` and when
 * each object is gone, all come from its worker thread (`_load_worker.ts`,
 * kept so that the main thread's sampling and the worker's steady-rate timing
 * do not queue on one event loop). So the three parties are three processes,
 * and each one's CPU time (`/proc/<pid>/stat`, all its threads) and memory are
 * its own: the operator's peak RSS is its `VmHWM` (the exact peak, not a
 * sample), in a process that held nothing before the burst. The server's
 * request counters give the API requests per object lifecycle.
 *
 * 0. idle: a fresh operator, ready, with no objects to handle — its RSS, beside
 *    a bare Deno process's on the same machine; then the same against a second
 *    server that speaks TLS with a bearer token, as a cluster's API server does
 *    (Deno's TLS adds ≈4 MiB), and from the sources;
 * 1. an accounting run: processing cycles and API writes per object
 *    lifecycle, from a counting `kopf.on.event` handler and the operator's log
 *    lines (also the warm-up of the server and the load generator);
 * 2. bursts of 1,000 (best of 3), 2,000 and 10,000 creations (50 in flight),
 *    then deletions: objects fully handled per second, requests per lifecycle
 *    by verb, CPU per lifecycle of the operator (its main thread and the whole
 *    process), the server and the load generator; for 2,000 and 10,000 the
 *    operator's peak RSS and its settled RSS after the burst; for 10,000 the
 *    CPU per object of the creations alone (from the first POST until all are
 *    handled) of each of the three processes, and whether the operator's is
 *    the smallest — with the default settings, and for comparison 10,000 with
 *    `settings.batching.workerLimit` set;
 * 3. the floor (`floor`): the same 10,000 creations and deletions handled by
 *    `_floor_operator.ts`, which makes the operator's API calls through the same
 *    client and nothing else: its CPU per object is the least an operator on
 *    this client costs, and the operator's CPU above it is the framework's;
 *    then the operator (events off) and the floor side by side, each a fresh
 *    process under a 10,000 burst of its own at once, in two rounds: the
 *    operator's CPU per object of the creations over the floor's (the mean of
 *    the rounds' ratios: one after the other, the two swing by a third here);
 * 4. creation-to-handler latency at a steady 100 objects/s for 10 s, with
 *    the default batching window and with a short one (the create handler's
 *    start times come from the operator's report over its stdin);
 * 5. the trickle (`trickle`): a steady 100 creations/s for 20 s (open loop), in
 *    rounds of two fresh processes measured at the same time, each watching a
 *    namespace of its own under a load generator of its own — the operator as
 *    shipped (the default settings: the framework's own lines posted as
 *    Events) beside its floor (`_floor_operator.ts`: the same API calls, the
 *    Events' POSTs included, with no framework), then with event posting off
 *    beside the floor without Events, then as shipped beside its floor again —
 *    the operator's CPU per object from the first POST until its last object
 *    was handled (all threads; a trickle pays in full what a burst shares:
 *    wake-ups, timers, one request per write), its CPU per second idle just
 *    before, its peak RSS, its create→handler p50/p99, the API requests per
 *    object, and its CPU over the floor's: the mean of the two rounds' ratios
 *    (one process measured alone swings by ±35 % from minute to minute on these
 *    shared machines; two measured at once swing together — `pair_probe.ts`);
 *    then each process takes as many objects again at the same rate, measured
 *    apart ("warm": a fresh process's first seconds include V8 compiling the
 *    code the trickle runs, which a long-running operator has long done); and a
 *    last round of the floor beside the runtime's floor (`_raw_floor.ts`: the
 *    same requests as bytes on sockets, with no client at all);
 * 6. events: a burst of 10,000 creations whose create handler logs one line,
 *    with event posting on (the default settings) and, for comparison, off:
 *    the share of the events (per-object log lines at `info` and above)
 *    posted or folded 0, 1, 3 and 5 s after the last object was handled (the
 *    operator's `kopf_events_*` counters, asked for over its stdin), the
 *    operator's CPU per object up to that moment with and without posting,
 *    and after the operator's exit (its last report line) how many were
 *    written, dropped and counted, or lost uncounted.
 * 7. tracing (`tracing`): a 2,000 burst with `OTEL_DENO=true` (spans exported
 *    over OTLP/HTTP JSON to a receiver in this process that discards them) and
 *    without, interleaved, two runs each: the operator's CPU per object of the
 *    creations, and the difference — tracing's overhead.
 *
 * Except in the events phase, event posting is off and logs go nowhere at
 * level warning, so what is measured is the handling. Every operator process
 * starts cold (no JIT warm-up carried over from an earlier phase), as a real
 * one does. Rates depend on the CPU the three parties get; CPU per lifecycle
 * does not, and the load average is printed for that reason.
 *
 * The operator processes run with the V8 flags and the code cache setting of the image's
 * `kopf run` (deploy/entrypoint.sh; `KOPF_BENCH_V8_FLAGS` sets other V8 flags, `none` Deno's
 * defaults, and `KOPF_BENCH_CODE_CACHE=1` turns the code cache on: `_operator_process.ts`), and
 * from their bundles, as the image runs `kopf run` (`kopf bundle`'s steps, bundled once per run
 * before anything is timed; `KOPF_BENCH_BUNDLE=0` runs the sources) — the floor's alike.
 *
 * Run alone: `deno run -A bench/operator_bench.ts`; only some phases:
 * `KOPF_BENCH_PHASES=tuned,bursts deno run -A bench/operator_bench.ts` (phases:
 * `accounting`, `tuned`, `bursts`, `floor`, `latency`, `trickle`, `events`, `tracing`; the idle and
 * accounting runs always run first); only some bursts: `KOPF_BENCH_BURSTS=2000,10000`. The operator's processes use only the
 * public `mod.ts`, so that `compare.ts` can run this benchmark on earlier
 * commits.
 *
 * @module
 */

import * as kopf from "../mod.ts";
import { BenchClient, expectOk, setUpKopfExamples } from "./_client.ts";
import { LoadGenerator } from "./_load_generator.ts";
import {
  bundledScript,
  type ChildOptions,
  type ChildReport,
  operatorBundled,
  OperatorProcess,
  operatorRunFlags,
} from "./_operator_process.ts";
import {
  readCpuSeconds,
  readRss,
  type ServerProcess,
  startServerProcess,
} from "./_server_process.ts";
import { figure, fmt, percentile } from "./_stats.ts";

const NAMESPACE = "bench-operator";
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
/** How the server counts requests to KopfExamples. */
const RESOURCE_KEY = "kopfexamples.kopf.dev";
const CONCURRENCY = 50;
/** The worker limit of the comparison burst (the default is none). */
const TUNED_WORKERS = 100;
const MB = 1024 * 1024;
/** Peak RSS targets of the operator process by burst size, in MiB. */
const PEAK_RSS_TARGETS = new Map([[2_000, 100], [10_000, 140]]);
/** How long after a burst the settled RSS is read: past the workers' idle timeout (5 s). */
const SETTLE_SECONDS = 6;
/** How long after it is ready the idle operator's RSS is read. */
const IDLE_SECONDS = 3;
/** The trickle: objects created per second, for how many seconds. */
const TRICKLE_RATE = 100;
const TRICKLE_SECONDS = 20;
/** How long the idle CPU is measured before the trickle (after a second to settle). */
const TRICKLE_IDLE_SECONDS = 3;
/** The trickle's targets: CPU per object as shipped (ms), and over the floor at the same rate. */
const TRICKLE_CPU_TARGET = 0.45;
const TRICKLE_FLOOR_TARGET = 1.3;
/** The trickle's peak RSS target as shipped, and the idle operator's, in MiB (at most). */
const TRICKLE_RSS_TARGET = 70;
const IDLE_RSS_TARGET = 50;
/** The 10,000 burst's target over its floor, and the side-by-side rounds that measure it. */
const BURST_FLOOR_TARGET = 1.15;
const FLOOR_ROUNDS = 2;

/** The phases to run (`KOPF_BENCH_PHASES`, comma-separated; all by default). */
const PHASES = Deno.env.get("KOPF_BENCH_PHASES")?.split(",").map((p) => p.trim());

/** Whether a phase runs. */
function phase(
  name: "tuned" | "bursts" | "floor" | "latency" | "trickle" | "events" | "tracing",
): boolean {
  return !PHASES || PHASES.includes(name);
}

/** The burst sizes to run in the bursts phase (`KOPF_BENCH_BURSTS`, comma-separated; all by default). */
const BURSTS = Deno.env.get("KOPF_BENCH_BURSTS")?.split(",").map((n) => Number(n.trim()));

/** Whether a burst of this size runs. */
function burstSize(objects: number): boolean {
  return !BURSTS || BURSTS.includes(objects);
}

/** Epoch milliseconds with sub-millisecond precision, comparable across threads and processes. */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The RSS of a bare Deno process on this machine (`deno eval` of a sleep, read
 * {@link IDLE_SECONDS} s after its start): what the operator's idle RSS compares with.
 */
async function bareDenoRss(): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", `await new Promise((r) => setTimeout(r, ${(IDLE_SECONDS + 2) * 1000}));`],
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    await sleep(IDLE_SECONDS * 1000);
    return await readRss(child.pid);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

/** What the operator benchmark reports back to `bench/main.ts`. */
export interface OperatorBenchOutcome {
  /** How many figures had a target, and how many met it. */
  targets: number;
  met: number;
  /** Why the benchmark itself broke, if it did. */
  broken: string[];
}

/**
 * Starts an operator process with the benchmark's handlers and waits until it watches.
 *
 * @param kubeconfig The server's kubeconfig.
 * @param options The batching window and worker limit (default: the defaults); whether to
 *   count cycles and messages, keep the create handler's start times, post events.
 * @returns The running operator.
 */
function startOperator(kubeconfig: string, options: ChildOptions = {}): Promise<OperatorProcess> {
  return OperatorProcess.start(kubeconfig, options);
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

/** CPU seconds of the three parties: the operator (its main thread, and the whole process), the server, the load generator (this process). */
interface Cpu {
  operatorThread: number;
  operator: number;
  server: number;
  load: number;
}

async function cpuNow(op: OperatorProcess, server: ServerProcess): Promise<Cpu> {
  const [operatorThread, operator, srv, load] = await Promise.all([
    op.mainThreadCpuSeconds(),
    op.cpuSeconds(),
    server.cpuSeconds(),
    readCpuSeconds(Deno.pid),
  ]);
  return { operatorThread, operator, server: srv, load };
}

function cpuSince(before: Cpu, after: Cpu): Cpu {
  return {
    operatorThread: after.operatorThread - before.operatorThread,
    operator: after.operator - before.operator,
    server: after.server - before.server,
    load: after.load - before.load,
  };
}

/** Microseconds of CPU per object, formatted. */
const us = (seconds: number, objects: number) => fmt((seconds / objects) * 1e6);

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
  /** CPU seconds of the creations alone (from the first POST until all were handled). */
  createCpu: Cpu;
  /** CPU seconds of the whole burst. */
  cpu: Cpu;
  /** Wall seconds of the whole burst. */
  seconds: number;
  /** The operator's RSS when ready (before the burst), its peak (`VmHWM`), in bytes. */
  rssBefore: number;
  peakRss: number;
  /** Its RSS {@link SETTLE_SECONDS} after the last object was gone, if asked for. */
  settledRss?: number;
  /** Its V8 heap (used, reserved) and the memory outside the heap then, in bytes. */
  settledMemory?: ChildReport["memory"];
}

async function burst(
  api: BenchClient,
  server: ServerProcess,
  load: LoadGenerator,
  op: OperatorProcess,
  prefix: string,
  objects: number,
  options: { settle?: boolean } = {},
): Promise<BurstResult> {
  const names = Array.from({ length: objects }, (_, i) => `${prefix}-${i}`);
  const timeoutMs = 60_000 + objects * 20;
  await load.reset();
  const rssBefore = await op.rss();
  const counts0 = await requestCounts(api);
  const cpu0 = await cpuNow(op, server);

  const posting = await load.create(names, CONCURRENCY);
  const created = await load.awaitAll(names, "handled", timeoutMs);
  const cpu1 = await cpuNow(op, server);
  const deleting = await load.remove(names, CONCURRENCY);
  const gone = await load.awaitAll(names, "gone", timeoutMs);
  const seconds = (now() - posting.started) / 1000;
  const cpu2 = await cpuNow(op, server);
  const requests = diffCounts(counts0, await requestCounts(api));
  let settledRss: number | undefined;
  let settledMemory: ChildReport["memory"] | undefined;
  if (options.settle) {
    await sleep(SETTLE_SECONDS * 1000);
    settledRss = await op.rss();
    settledMemory = (await op.report()).memory;
  }
  const peakRss = await op.peakRss();
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
    createCpu: cpuSince(cpu0, cpu1),
    cpu: cpuSince(cpu0, cpu2),
    seconds,
    rssBefore,
    peakRss,
    ...(settledRss !== undefined ? { settledRss } : {}),
    ...(settledMemory !== undefined ? { settledMemory } : {}),
  };
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
  op: OperatorProcess,
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
  const latency = await latencyOf(op, names, sent, maxSendDelay);
  await load.remove(names, CONCURRENCY);
  await load.awaitAll(names, "gone", 60_000);
  return latency;
}

/**
 * Creation→handler latencies from the operator's report of its create handler's starts.
 *
 * @param op The operator (run with `starts`).
 * @param names The objects, in the order they were sent.
 * @param sent When each was sent (epoch ms).
 * @param maxSendDelay How late the generator sent the latest one (ms).
 * @returns The percentiles.
 */
async function latencyOf(
  op: OperatorProcess,
  names: string[],
  sent: number[],
  maxSendDelay: number,
): Promise<LatencyResult> {
  const { starts } = await op.report();
  const latencies = names.map((n, i) => {
    const start = starts[n];
    if (start === undefined) throw new Error(`the operator reported no create handler for ${n}`);
    return start - sent[i]!;
  }).sort((a, b) => a - b);
  return {
    objects: names.length,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1]!,
    maxSendDelay,
  };
}

/** The figures of a trickle (see the module doc, phase 5). */
interface TrickleResult {
  objects: number;
  /** CPU seconds from the first POST until the last object was handled. */
  cpu: Cpu;
  /** Wall seconds of that span. */
  seconds: number;
  /** The operator's CPU seconds per second, idle just before the trickle. */
  idle: number;
  /** Its peak RSS (`VmHWM`) up to the last object handled, in bytes. */
  peakRss: number;
  /** The server's requests over the trickle, of every side measured at once. */
  requests: RequestDiff;
  /** How many objects `requests` are of (every side's). */
  requestObjects: number;
  /** Event POSTs (and PATCHes) per object, from the server's counts (shared by the sides). */
  eventWrites: number;
  /** Create→handler latencies (ms), if the operator reports its handler's starts. */
  latency: LatencyResult | undefined;
  /**
   * The same trickle again, right after, in the same process (its JIT warmed up by the first):
   * CPU seconds from its first POST until its last object was handled.
   */
  warm: Cpu;
}

/** One side of a trickle: its process, and the load generator of its own namespace. */
interface TrickleSide extends PairSide {
  /** Whether the process reports its create handler's starts (for latencies). */
  latency: boolean;
}

/**
 * A steady trickle of creations at `rate` per second for `seconds`, open loop, to every side at
 * once — each in its own namespace, from its own load generator, so that the sides see the same
 * machine (one process measured alone swings by ±35 % from minute to minute on these shared
 * machines; two measured at once swing together: `pair_probe.ts`); then as many again at the
 * same rate, measured apart (`warm`); then the deletions (not measured).
 */
async function trickle(
  api: BenchClient,
  server: ServerProcess,
  sides: TrickleSide[],
): Promise<TrickleResult[]> {
  const objects = TRICKLE_RATE * TRICKLE_SECONDS;
  const names = sides.map((s) => Array.from({ length: objects }, (_, i) => `${s.prefix}-${i}`));
  const more = names.map((list) => list.map((n) => `${n}-warm`));
  await Promise.all(sides.map((s) => s.load.reset()));
  await sleep(1000);
  const idle0 = await Promise.all(sides.map((s) => s.op.cpuSeconds()));
  const idleStart = now();
  await sleep(TRICKLE_IDLE_SECONDS * 1000);
  const idle1 = await Promise.all(sides.map((s) => s.op.cpuSeconds()));
  const idleSeconds = (now() - idleStart) / 1000;
  const counts0 = await requestCounts(api);
  const cold = await Promise.all(sides.map(async (s, i) => {
    const cpu0 = await cpuNow(s.op, server);
    const { sent, maxSendDelay } = await s.load.steady(names[i]!, TRICKLE_RATE);
    const created = await s.load.awaitAll(names[i]!, "handled", 60_000);
    const cpu = cpuSince(cpu0, await cpuNow(s.op, server));
    return { sent, maxSendDelay, created, cpu, peakRss: await s.op.peakRss() };
  }));
  const after = await requestCounts(api);
  const requests = diffCounts(counts0, after);
  let eventWrites = 0;
  for (const [key, n] of after) {
    if (/^(create|patch) events 2\d\d$/.test(key)) eventWrites += n - (counts0.get(key) ?? 0);
  }
  // Warm: the next as many objects at the same rate (what a long-running operator pays; a fresh
  // process's first seconds include V8 compiling the code the trickle runs).
  const warm = await Promise.all(sides.map(async (s, i) => {
    const cpu1 = await cpuNow(s.op, server);
    await s.load.steady(more[i]!, TRICKLE_RATE);
    await s.load.awaitAll(more[i]!, "handled", 60_000);
    return cpuSince(cpu1, await cpuNow(s.op, server));
  }));
  const results = await Promise.all(sides.map(async (s, i): Promise<TrickleResult> => {
    const { sent, maxSendDelay, created, cpu, peakRss } = cold[i]!;
    const latency = s.latency ? await latencyOf(s.op, names[i]!, sent, maxSendDelay) : undefined;
    return {
      warm: warm[i]!,
      objects,
      cpu,
      seconds: (created.last - sent[0]!) / 1000,
      idle: (idle1[i]! - idle0[i]!) / idleSeconds,
      peakRss,
      // The server's counts are of all the sides: per object, they are shared among them all.
      requests,
      requestObjects: objects * sides.length,
      eventWrites: eventWrites / (objects * sides.length),
      latency,
    };
  }));
  await Promise.all(sides.map(async (s, i) => {
    await s.load.remove([...names[i]!, ...more[i]!], CONCURRENCY);
    await s.load.awaitAll([...names[i]!, ...more[i]!], "gone", 60_000);
  }));
  return results;
}

/** Starts the process of one side of a pair, watching its own namespace only. */
type StartSide = (namespace: string) => Promise<OperatorProcess>;

/** One side of a pair: its process, the load generator of its namespace, its objects' prefix. */
interface PairSide {
  op: OperatorProcess;
  load: LoadGenerator;
  prefix: string;
}

/**
 * Two fresh processes measured at once (`measure`), each watching a namespace of its own
 * (`bench-<label>-<round>a`, `…b`) under a load generator of its own, so that both see the same
 * machine: one process measured alone swings by ±35 % from minute to minute on these shared
 * machines, two measured at once swing together (`pair_probe.ts`). They are started in turn,
 * the other side first in every other round; a floor whose writes failed fails the round.
 */
async function sideBySide<T>(
  api: BenchClient,
  server: ServerProcess,
  root: URL,
  label: string,
  round: number,
  starts: [StartSide, StartSide],
  measure: (sides: [PairSide, PairSide]) => Promise<T>,
): Promise<T> {
  const namespaces = [`bench-${label}-${round}a`, `bench-${label}-${round}b`];
  for (const ns of namespaces) await setUpKopfExamples(api, root, ns);
  const collection = (ns: string) => `/apis/kopf.dev/v1/namespaces/${ns}/kopfexamples`;
  await using loadA = await LoadGenerator.start(
    server.url,
    collection(namespaces[0]!),
    "create_fn",
  );
  await using loadB = await LoadGenerator.start(
    server.url,
    collection(namespaces[1]!),
    "create_fn",
  );
  const [first, second] = round % 2 ? [0, 1] : [1, 0];
  const ops: OperatorProcess[] = [];
  ops[first] = await starts[first]!(namespaces[first]!);
  try {
    ops[second] = await starts[second]!(namespaces[second]!);
    const result = await measure([
      { op: ops[0]!, load: loadA, prefix: `${label}${round}a` },
      { op: ops[1]!, load: loadB, prefix: `${label}${round}b` },
    ]);
    for (const op of ops) {
      const failures = (await op.report()).messages.failures;
      if (failures) throw new Error(`the floor's writes failed ${failures} times`);
    }
    return result;
  } finally {
    await Promise.all(ops.map((op) => op?.stop().catch(() => {})));
  }
}

/**
 * A burst of `objects` creations to each side at once ({@link CONCURRENCY} in flight each): each
 * side's CPU from its first POST until all its objects were handled; then the deletions (not
 * measured).
 */
async function burstSideBySide(
  server: ServerProcess,
  sides: PairSide[],
  objects: number,
): Promise<Cpu[]> {
  const names = sides.map((s) => Array.from({ length: objects }, (_, i) => `${s.prefix}-${i}`));
  const timeoutMs = 60_000 + objects * 40;
  await Promise.all(sides.map((s) => s.load.reset()));
  const cpus = await Promise.all(sides.map(async (s, i) => {
    const cpu0 = await cpuNow(s.op, server);
    await s.load.create(names[i]!, CONCURRENCY);
    await s.load.awaitAll(names[i]!, "handled", timeoutMs);
    return cpuSince(cpu0, await cpuNow(s.op, server));
  }));
  await Promise.all(sides.map(async (s, i) => {
    await s.load.remove(names[i]!, CONCURRENCY);
    await s.load.awaitAll(names[i]!, "gone", timeoutMs);
  }));
  return cpus;
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
  /** CPU seconds up to 5 s after the last object handled. */
  cpu: Cpu;
  /** After the exit (deletions included): all events, written, dropped and counted. */
  total: number;
  totalWritten: number;
  dropped: number | undefined;
  /** The operator's peak RSS (`VmHWM`) over the burst, in bytes. */
  peakRss: number;
}

const MARKS = [0, 1, 3, 5];

/** Sums a metric over its label sets in the Prometheus text format; undefined if absent. */
function metricSum(text: string, name: string): number | undefined {
  let sum: number | undefined;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))) {
    sum = (sum ?? 0) + Number(m[1]);
  }
  return sum;
}

/** Events written so far: the operator's posted + folded counters if it has them, else the server's event POSTs. */
async function eventsWritten(
  metrics: string | undefined,
  api: BenchClient,
  before: Counts,
): Promise<{ n: number; source: "metrics" | "server" }> {
  const posted = metrics === undefined ? undefined : metricSum(metrics, "kopf_events_posted_total");
  if (posted !== undefined) {
    return {
      n: posted + (metricSum(metrics!, "kopf_events_folded_total") ?? 0),
      source: "metrics",
    };
  }
  const after = await requestCounts(api);
  let n = 0;
  for (const [key, count] of after) {
    if (/^create events 2\d\d$/.test(key)) n += count - (before.get(key) ?? 0);
  }
  return { n, source: "server" };
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
  await using op = await startOperator(kubeconfig, posting ? { events: true } : {});
  const names = Array.from({ length: objects }, (_, i) => `${prefix}-${i}`);
  const timeoutMs = 60_000 + objects * 20;
  await load.reset();
  const counts0 = await requestCounts(api);
  const cpu0 = await cpuNow(op, server);
  const posted = await load.create(names, CONCURRENCY);
  const created = await load.awaitAll(names, "handled", timeoutMs);
  const written: number[] = [];
  let source: "metrics" | "server" = "server";
  let occurrences = 0;
  for (const mark of MARKS) {
    await sleep(Math.max(0, created.last + mark * 1000 - now()));
    const report = posting ? await op.report() : undefined;
    const w = await eventsWritten(report?.metrics, api, counts0);
    written.push(w.n);
    source = w.source;
    occurrences = report?.occurrences ?? 0;
  }
  const cpu = cpuSince(cpu0, await cpuNow(op, server));
  await load.remove(names, CONCURRENCY);
  await load.awaitAll(names, "gone", timeoutMs);
  const peakRss = await op.peakRss();
  const final = await op.stop(); // the exit: pending events are flushed (or dropped) here
  return {
    objects,
    occurrences,
    written,
    source,
    createSeconds: (created.last - posted.started) / 1000,
    cpu,
    total: final.occurrences,
    totalWritten: (await eventsWritten(posting ? final.metrics : undefined, api, counts0)).n,
    dropped: posting ? metricSum(final.metrics, "kopf_events_dropped_total") : undefined,
    peakRss,
  };
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
  // As kopf run ships (deploy/entrypoint.sh), unless KOPF_BENCH_V8_FLAGS/_CODE_CACHE say otherwise.
  const bundled = operatorBundled();
  console.log(
    `operator processes: deno run ${operatorRunFlags().join(" ") || "(Deno's defaults)"}` +
      (bundled
        ? " from their bundles (as the image runs kopf run: kopf bundle; KOPF_BENCH_BUNDLE=0 " +
          "runs the sources)"
        : " from the sources"),
  );
  try {
    // Bundled once, before anything is timed (the operator's and the floor's, alike).
    if (bundled) {
      for (const script of ["./_bench_operator.ts", "./_floor_operator.ts"]) {
        await bundledScript(new URL(script, import.meta.url).pathname);
      }
    }
    using api = new BenchClient(server.url);
    await setUp(api, root);
    await using load = await LoadGenerator.start(server.url, COLLECTION, "create_fn");

    // Idle: a fresh operator, ready, with nothing to handle (as shipped; then from the sources).
    {
      const started = performance.now();
      await using op = await startOperator(server.kubeconfig);
      const readySeconds = (performance.now() - started) / 1000;
      const cpu0 = await op.cpuSeconds();
      await sleep(IDLE_SECONDS * 1000);
      const rss = await op.rss();
      const cpu = await op.cpuSeconds();
      const bare = await bareDenoRss();
      report(figure("operator: RSS idle with no objects", rss / MB, "MiB", {
        decimals: 1,
        target: { atMost: IDLE_RSS_TARGET },
        note: `[VmRSS of the operator process${bundled ? " (bundled)" : ""} ${IDLE_SECONDS} s ` +
          `after it was ready ` +
          `(${fmt(readySeconds, 2)} s after the start); a bare Deno process here: ` +
          `${fmt(bare / MB)} MiB; ` +
          `peak so far (VmHWM) ${fmt((await op.peakRss()) / MB)} MiB; CPU ` +
          `${fmt(cpu, 2)} s in all, ${fmt((100 * (cpu - cpu0)) / IDLE_SECONDS, 1)}% while idle]`,
      }));
    }
    // Idle over TLS, as a cluster's API server speaks (Deno's TLS is what this adds).
    {
      const token = "bench-token";
      await using tls = await startServerProcess({ root, args: ["--tls", "--token", token] });
      const kubeconfig = await Deno.readTextFile(tls.kubeconfig);
      const ca = atob(/certificate-authority-data:\s*(\S+)/.exec(kubeconfig)![1]!);
      using tlsApi = new BenchClient(tls.url, { ca, token });
      await setUp(tlsApi, root);
      await using op = await startOperator(tls.kubeconfig);
      await sleep(IDLE_SECONDS * 1000);
      console.log(
        figure("operator: RSS idle with no objects, over TLS", (await op.rss()) / MB, "MiB", {
          decimals: 1,
          note: `[the same${bundled ? " (bundled)" : ""}, against kopf apiserver --tls --token ` +
            `from a kubeconfig: as a cluster's API server is reached (a pod's service account ` +
            `login reads no YAML: ≈1.7 MiB less, docs/deployment.md)]`,
        }).line,
      );
    }
    if (bundled) {
      const started = performance.now();
      await using op = await OperatorProcess.start(server.kubeconfig, {}, undefined, {}, false);
      const readySeconds = (performance.now() - started) / 1000;
      await sleep(IDLE_SECONDS * 1000);
      console.log(
        figure(
          "operator: RSS idle with no objects, from the sources",
          (await op.rss()) / MB,
          "MiB",
          {
            decimals: 1,
            note: `[the same, not bundled (as kopf run handlers.ts runs); ready ` +
              `${fmt(readySeconds, 2)} s after the start]`,
          },
        ).line,
      );
    }

    // Accounting (and warm-up of the server and the load generator): cycles and writes per lifecycle.
    {
      const objects = 200;
      await using op = await startOperator(server.kubeconfig, { account: true });
      const r = await burst(api, server, load, op, "acct", objects);
      const { cycles, messages } = await op.report();
      const writes = operatorWrites(r.requests, objects);
      const lines = Object.entries(messages)
        .filter(([m, n]) => n / objects >= 0.05 && !m.startsWith("Handler 'count_fn'"))
        .sort((a, b) => b[1] - a[1])
        .map(([m, n]) => `${fmt(n / objects, 2)}× ${m}`);
      report(figure("operator: API writes per processing cycle", writes / cycles, "", {
        decimals: 2,
        target: { below: 4 },
        note: `[Kopf: 0–4 patches per cycle; here ${fmt(writes / objects, 2)} writes in ` +
          `${fmt(cycles / objects, 2)} cycles per lifecycle (create + delete, one handler ` +
          `each), cycles counted by a kopf.on.event handler over ${fmt(objects)} objects]`,
      }));
      console.log(`  per lifecycle, the operator's log lines: ${lines.join("; ")}`);
    }

    // A burst with a worker limit, for comparison: fewer requests in flight, hence
    // fewer connections and less CPU per request.
    if (phase("tuned")) {
      const objects = 10_000;
      await using op = await startOperator(server.kubeconfig, { workerLimit: TUNED_WORKERS });
      const r = await burst(api, server, load, op, "tuned", objects);
      console.log(
        `operator: ${fmt(objects)} in a burst with settings.batching.workerLimit = ` +
          `${TUNED_WORKERS}: ${fmt(r.createRate)} objects/s fully handled, ` +
          `${fmt(r.deleteRate)} objects/s gone  [not the default; API requests per lifecycle: ` +
          `${perObject(r.requests, objects)}; CPU per lifecycle: ` +
          `operator thread ${us(r.cpu.operatorThread, objects)} µs, operator process ${
            us(r.cpu.operator, objects)
          } µs, server ${us(r.cpu.server, objects)} µs, load generator ${
            us(r.cpu.load, objects)
          } µs; operator's peak RSS (VmHWM) ${fmt(r.peakRss / MB)} MiB]`,
      );
    }

    // Bursts with the defaults: 1,000 objects three times (the best counts:
    // neighbours on the machine only ever slow a run down), then 2,000 and 10,000
    // once — each with a fresh operator process.
    const bursts = [[1_000, 3], [2_000, 1], [10_000, 1]] as const;
    /** The operator's CPU of the 10,000 burst's creations, for the floor's comparison. */
    let operatorCpu: Cpu | undefined;
    for (const [objects, runs] of phase("bursts") ? bursts.filter(([n]) => burstSize(n)) : []) {
      const rssTarget = PEAK_RSS_TARGETS.get(objects);
      const results: BurstResult[] = [];
      for (let run = 0; run < runs; run++) {
        await using op = await startOperator(server.kubeconfig);
        results.push(
          await burst(api, server, load, op, `burst${objects}-${run}`, objects, {
            settle: rssTarget !== undefined,
          }),
        );
      }
      const r = results.reduce((a, b) => (b.lifecycleRate > a.lifecycleRate ? b : a));
      const others = results.length > 1
        ? `; all runs: ${
          results.map((x) => `${fmt(x.createRate)}/${fmt(x.deleteRate)}`).join(", ")
        } create/delete per s`
        : "";
      const c = r.createCpu;
      const creationCpu = objects === 10_000
        ? `; CPU per object of the creations: operator ${us(c.operator, objects)} µs ` +
          `(main thread ${us(c.operatorThread, objects)}), server ${us(c.server, objects)} µs, ` +
          `load generator ${us(c.load, objects)} µs`
        : "";
      report(figure(
        `operator: ${fmt(objects)} created in a burst`,
        r.createRate,
        "objects/s fully handled",
        {
          target: { atLeast: 1_000 },
          note: `[all handled ${fmt(r.createSeconds, 2)} s after the first POST; ` +
            `POSTs took ${fmt(r.postSeconds, 2)} s (${CONCURRENCY} in flight)${others}` +
            `${creationCpu}]`,
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
      const cpu = `CPU per lifecycle: operator thread ${us(r.cpu.operatorThread, objects)} µs, ` +
        `operator process ${us(r.cpu.operator, objects)} µs, server ${
          us(r.cpu.server, objects)
        } µs, load generator ${us(r.cpu.load, objects)} µs; operator thread busy ${
          fmt((100 * r.cpu.operatorThread) / r.seconds)
        }%; operator's peak RSS (VmHWM) ${fmt(r.peakRss / MB)} MiB`;
      console.log(
        figure(`operator: ${fmt(objects)} whole lifecycles`, r.lifecycleRate, "objects/s", {
          note: `[API requests per lifecycle: ${perObject(r.requests, objects)}; ` +
            `operator writes ${fmt(writes / objects, 2)}/lifecycle; ${cpu}]`,
        }).line,
      );
      if (rssTarget !== undefined) {
        report(
          figure(`operator: peak RSS during the ${fmt(objects)} burst`, r.peakRss / MB, "MiB", {
            target: { atMost: rssTarget },
            note: `[VmHWM of a fresh operator process: the exact peak over the creations and ` +
              `the deletions; ${fmt(r.rssBefore / MB)} MiB when it was ready, ` +
              `${fmt(r.settledRss! / MB)} MiB settled (VmRSS ${SETTLE_SECONDS} s after the last ` +
              `object was gone; then V8's heap ${fmt(r.settledMemory!.heapUsed / MB)} MiB used ` +
              `of ${fmt(r.settledMemory!.heapTotal / MB)} MiB, ` +
              `${fmt(r.settledMemory!.external / MB)} MiB outside it)]`,
          }),
        );
      }
      if (objects === 10_000) {
        operatorCpu = c;
        report(figure(
          `operator: CPU per object fully handled, ${fmt(objects)} burst`,
          (c.operator / objects) * 1e3,
          "ms operator process (all threads)",
          {
            decimals: 3,
            target: { below: 0.3 },
            note: `[creations only, from the first POST until all were handled ` +
              `(${fmt(r.createSeconds, 2)} s); main thread ${
                fmt((c.operatorThread / objects) * 1e3, 3)
              } ms; /proc/<pid>/stat utime + stime]`,
          },
        ));
        const least = Math.min(c.server, c.load);
        const total = c.operator + c.server + c.load;
        const share = (x: number) => `${us(x, objects)} µs (${fmt((100 * x) / total)}%)`;
        report(figure(
          `operator: operator CPU ÷ the least of the server's and the load generator's, ` +
            `${fmt(objects)} burst`,
          c.operator / least,
          "",
          {
            decimals: 2,
            target: { below: 1 },
            note: `[the operator's share of the CPU must be the smallest of the three: per ` +
              `object of the creations, operator ${share(c.operator)}, server ${
                share(c.server)
              }, load generator ${share(c.load)} (this process, its worker included)]`,
          },
        ));
      }
    }

    // The floor: the operator's API calls for the same 10,000 objects through the same client,
    // without the framework (_floor_operator.ts) — the least an operator on this client costs.
    if (phase("floor")) {
      const objects = 10_000;
      {
        // Cluster-wide, as the operator of the bursts: gone before the rounds below.
        await using floor = await OperatorProcess.start(
          server.kubeconfig,
          {},
          "./_floor_operator.ts",
        );
        const r = await burst(api, server, load, floor, "floor", objects);
        const failures = (await floor.report()).messages.failures;
        if (failures) throw new Error(`the floor's writes failed ${failures} times`);
        const c = r.createCpu;
        const framework = operatorCpu
          ? `; the operator's ${us(operatorCpu.operator, objects)} µs in this run is ${
            fmt((100 * (operatorCpu.operator - c.operator)) / operatorCpu.operator)
          }% above it (the framework's share)`
          : "";
        console.log(
          figure(
            `operator: the floor, ${
              fmt(objects)
            } burst: CPU per object of the operator's API calls alone`,
            (c.operator / objects) * 1e3,
            "ms process (all threads)",
            {
              decimals: 3,
              note:
                `[the same writes (${perObject(r.requests, objects)} per lifecycle) and watch ` +
                `through kopf.KubeClient, no framework: main thread ${
                  fmt((c.operatorThread / objects) * 1e3, 3)
                } ms; server ${us(c.server, objects)} µs, load generator ${
                  us(c.load, objects)
                } µs` +
                `; ${fmt(r.createRate)} objects/s; peak RSS ${
                  fmt(r.peakRss / MB)
                } MiB${framework}]`,
            },
          ).line,
        );
      }
      // The target's ratio: the operator (events off, as in the bursts) and its floor, each a
      // fresh process under a burst of its own at once, in two rounds — one process measured
      // after the other swings by a third here, as the framework's share above shows run to run.
      const ratios: string[] = [];
      let sum = 0;
      for (let round = 1; round <= FLOOR_ROUNDS; round++) {
        const [op, fl] = await sideBySide(api, server, root, "burstpair", round, [
          (namespace) => startOperator(server.kubeconfig, { namespace }),
          (namespace) =>
            OperatorProcess.start(server.kubeconfig, { namespace }, "./_floor_operator.ts"),
        ], (sides) => burstSideBySide(server, sides, objects));
        const ratio = op!.operator / fl!.operator;
        sum += ratio;
        ratios.push(
          `${us(op!.operator, objects)} µs over ${us(fl!.operator, objects)} µs = ${fmt(ratio, 2)}`,
        );
      }
      report(figure(
        `operator: CPU per object in a ${fmt(objects)} burst ÷ the floor's, side by side`,
        sum / FLOOR_ROUNDS,
        "",
        {
          decimals: 2,
          target: { atMost: BURST_FLOOR_TARGET },
          note: `[the mean of ${FLOOR_ROUNDS} rounds, each a fresh operator (events off) and a ` +
            `fresh floor under a burst of their own at once (${CONCURRENCY} in flight each), ` +
            `creations only: ${ratios.join("; ")}]`,
        },
      ));
    }

    // Latency at a steady rate, with the default batching window and a short one.
    const defaultWindow = new kopf.OperatorSettings().batching.batchWindow;
    for (const window of phase("latency") ? [defaultWindow, 0.01] : []) {
      await using op = await startOperator(server.kubeconfig, {
        batchWindow: window,
        starts: true,
      });
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

    // The trickle: a steady 100 creations/s for 20 s — as shipped, events off, and the floor.
    if (phase("trickle")) {
      type Start = StartSide;
      let round = 0;
      // A round: two fresh processes measured at once, each under its own 100 objects/s.
      const pair = (
        starts: [Start, Start],
        latency: [boolean, boolean],
      ): Promise<[TrickleResult, TrickleResult]> =>
        sideBySide(api, server, root, "trickle", ++round, starts, async ([a, b]) => {
          const [ra, rb] = await trickle(api, server, [
            { ...a, latency: latency[0] },
            { ...b, latency: latency[1] },
          ]);
          return [ra!, rb!];
        });
      const startShipped: Start = (namespace) =>
        startOperator(server.kubeconfig, { posting: true, starts: true, namespace });
      const startFloor: Start = (namespace) =>
        OperatorProcess.start(
          server.kubeconfig,
          { events: true, namespace },
          "./_floor_operator.ts",
        );
      const [shipped, floor] = await pair([startShipped, startFloor], [true, false]);
      const [quiet, floorQuiet] = await pair([
        (namespace) => startOperator(server.kubeconfig, { starts: true, namespace }),
        (namespace) =>
          OperatorProcess.start(server.kubeconfig, { namespace }, "./_floor_operator.ts"),
      ], [true, false]);
      // A second round of the two the target compares.
      const [shipped2, floor2] = await pair([startShipped, startFloor], [true, false]);
      // The floor beside the runtime's own (the same requests as bytes on sockets, no client).
      const [floor3, raw] = await pair([
        startFloor,
        (namespace) =>
          OperatorProcess.start(server.kubeconfig, { events: true, namespace }, "./_raw_floor.ts"),
      ], [false, false]);
      const ms = (r: TrickleResult) => (r.cpu.operator / r.objects) * 1e3;
      const warmMs = (r: TrickleResult) => (r.warm.operator / r.objects) * 1e3;
      const at = `at a steady ${TRICKLE_RATE} objects/s for ${TRICKLE_SECONDS} s`;
      const about = (r: TrickleResult) =>
        `main thread ${fmt((r.cpu.operatorThread / r.objects) * 1e3, 3)} ms, idle before ` +
        `${fmt(r.idle * 100, 2)}% of a CPU (${fmt((r.idle / TRICKLE_RATE) * 1e3, 3)} ms per ` +
        `object at this rate); API requests per object: ${
          perObject(r.requests, r.requestObjects)
        }; ` +
        `event writes ${fmt(r.eventWrites, 2)}/object; peak RSS (VmHWM) ${
          fmt(r.peakRss / MB)
        } MiB` +
        (r.latency
          ? `; create→handler p50 ${fmt(r.latency.p50, 1)} ms, p99 ${fmt(r.latency.p99, 1)} ms, ` +
            `max ${fmt(r.latency.max, 1)} ms (generator up to ${
              fmt(r.latency.maxSendDelay, 1)
            } ms late)`
          : "");
      report(figure(
        `operator: CPU per object ${at}, as shipped (events posted)`,
        ms(shipped),
        "ms operator process (all threads)",
        {
          decimals: 3,
          target: { atMost: TRICKLE_CPU_TARGET },
          note:
            `[from the first POST until the last object handled (${
              fmt(shipped.seconds, 2)
            } s), creations only; ${about(shipped)}; the runtime's floor at this rate, below: ` +
            `${fmt(ms(raw), 3)} ms]`,
        },
      ));
      console.log(
        figure(`operator: CPU per object ${at}, events off`, ms(quiet), "ms operator process", {
          decimals: 3,
          note: `[${about(quiet)}]`,
        }).line,
      );
      console.log(
        figure(
          `operator: create→handler p99 ${at}, as shipped`,
          shipped.latency!.p99,
          "ms",
          {
            decimals: 1,
            note: `[measured with the floor's process running beside it (the round's other ` +
              `side), which the latency phase's figures have not; p50 ${
                fmt(shipped.latency!.p50, 1)
              } ms; events off: p50 ${fmt(quiet.latency!.p50, 1)} ms, p99 ${
                fmt(quiet.latency!.p99, 1)
              } ms]`,
          },
        ).line,
      );
      report(
        figure(
          `operator: peak RSS ${at}, as shipped`,
          Math.max(shipped.peakRss, shipped2.peakRss) / MB,
          "MiB",
          {
            target: { atMost: TRICKLE_RSS_TARGET },
            note: `[VmHWM of a fresh operator process up to the last object handled, the higher ` +
              `of 2 rounds (${fmt(shipped.peakRss / MB)}, ${fmt(shipped2.peakRss / MB)} MiB); ` +
              `events off ${fmt(quiet.peakRss / MB)} MiB; the floor's ` +
              `${fmt(floor.peakRss / MB)} MiB]`,
          },
        ),
      );
      console.log(
        figure(`operator: the floor ${at}: CPU per object`, ms(floor), "ms process (all threads)", {
          decimals: 3,
          note: `[_floor_operator.ts: the operator's API calls as shipped (its Event POSTs ` +
            `included) through kopf.KubeClient, no framework; ${about(floor)}; without the ` +
            `Events: ${fmt(ms(floorQuiet), 3)} ms (${about(floorQuiet)})]`,
        }).line,
      );
      console.log(
        figure(`operator: the runtime's floor ${at}: CPU per object`, ms(raw), "ms process", {
          decimals: 3,
          note:
            `[_raw_floor.ts: the floor's requests (its Event POSTs included) written as bytes ` +
            `on Deno.connect sockets, answers read by content-length, watch lines by chunks, ` +
            `each JSON.parse'd: no client; side by side with the floor, which took ` +
            `${fmt(ms(floor3), 3)} ms (${fmt(ms(floor3) / ms(raw), 2)}×: the client's share); ` +
            `${about(raw)}]`,
        }).line,
      );
      const cold = [ms(shipped) / ms(floor), ms(shipped2) / ms(floor2)];
      const warm = [warmMs(shipped) / warmMs(floor), warmMs(shipped2) / warmMs(floor2)];
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      report(figure(
        `operator: CPU per object ${at} ÷ the floor's, as shipped`,
        mean(cold),
        "",
        {
          decimals: 3, // 1.303 is over 1.3: shown so, not as "1.30 ✗"
          target: { atMost: TRICKLE_FLOOR_TARGET },
          note: `[the mean of 2 rounds, each a fresh operator and a fresh floor measured at ` +
            `once, side by side: ` +
            `${fmt(ms(shipped), 3)} ms over ${fmt(ms(floor), 3)} ms = ${fmt(cold[0]!, 2)}, ` +
            `${fmt(ms(shipped2), 3)} ms over ${fmt(ms(floor2), 3)} ms = ${fmt(cold[1]!, 2)}; ` +
            `events off over the floor without Events: ${fmt(ms(quiet) / ms(floorQuiet), 2)} (${
              fmt(ms(quiet), 3)
            } ms over ${fmt(ms(floorQuiet), 3)} ms)]`,
        },
      ));
      console.log(
        figure(
          `operator: CPU per object at a steady ${TRICKLE_RATE} objects/s, the next ${TRICKLE_SECONDS} s (warm) ÷ the floor's, as shipped`,
          mean(warm),
          "",
          {
            decimals: 2,
            note: `[the same processes, right after the first ${TRICKLE_SECONDS} s, as many ` +
              `objects again: ${fmt(warmMs(shipped), 3)} ms over ${fmt(warmMs(floor), 3)} ms = ${
                fmt(warm[0]!, 2)
              }, ${fmt(warmMs(shipped2), 3)} ms over ${fmt(warmMs(floor2), 3)} ms = ${
                fmt(warm[1]!, 2)
              }; events off ${fmt(warmMs(quiet), 3)} ms, its floor ${
                fmt(warmMs(floorQuiet), 3)
              } ms; a fresh process's first seconds include V8 compiling the code it runs]`,
          },
        ).line,
      );
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
          (r.cpu.operatorThread / objects) * 1e6,
          "µs operator thread",
          {
            note: `[without posting ${us(quiet.cpu.operatorThread, objects)} µs; ` +
              `operator process ${us(r.cpu.operator, objects)} µs (${
                us(quiet.cpu.operator, objects)
              } µs), server ${us(r.cpu.server, objects)} µs (${
                us(quiet.cpu.server, objects)
              } µs), load generator ${us(r.cpu.load, objects)} µs (${
                us(quiet.cpu.load, objects)
              } µs); from the first POST to 5 s after the last object handled, creations only; ` +
              `operator's peak RSS (VmHWM) ${fmt(r.peakRss / MB)} MiB (${
                fmt(quiet.peakRss / MB)
              } MiB)]`,
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
    // Tracing: the same burst with OTEL_DENO=true (spans exported over OTLP/HTTP to a receiver
    // in this process that discards them) and without, alternately; the difference of the
    // operator's CPU per object is tracing's overhead.
    if (phase("tracing")) {
      const objects = 2_000;
      await using sink = discardingReceiver();
      const cpu: Record<"off" | "on", number[]> = { off: [], on: [] };
      const thread: Record<"off" | "on", number[]> = { off: [], on: [] };
      const exported = { spans: 0 };
      for (let run = 0; run < TRACING_ROUNDS; run++) {
        for (const mode of ["off", "on"] as const) {
          const env = mode === "on" ? sink.env : {};
          await using op = await OperatorProcess.start(
            server.kubeconfig,
            {},
            "./_bench_operator.ts",
            env,
          );
          const r = await burst(api, server, load, op, `tracing-${mode}-${run}`, objects);
          cpu[mode].push(r.createCpu.operator / objects);
          thread[mode].push(r.createCpu.operatorThread / objects);
        }
      }
      exported.spans = sink.requests;
      const least = (xs: number[]) => Math.min(...xs);
      const overhead = least(cpu.on) - least(cpu.off);
      console.log(
        figure(
          `operator: tracing overhead per object fully handled, ${fmt(objects)} burst`,
          overhead * 1e6,
          "µs operator process CPU (OTEL_DENO=true)",
          {
            note:
              `[least of ${TRACING_ROUNDS} interleaved runs each: on ${
                fmt(least(cpu.on) * 1e6)
              } µs, off ${fmt(least(cpu.off) * 1e6)} µs per object (${
                fmt((100 * overhead) / least(cpu.off))
              }%); all runs on ${cpu.on.map((x) => fmt(x * 1e6)).join(", ")}, off ${
                cpu.off.map((x) => fmt(x * 1e6)).join(", ")
              } µs; its main thread (the event loop; the rest is the runtime's other threads, ` +
              `where the export runs) on ${thread.on.map((x) => fmt(x * 1e6)).join(", ")}, off ${
                thread.off.map((x) => fmt(x * 1e6)).join(", ")
              } µs; creations only; spans exported over OTLP/HTTP (JSON) to a local receiver ` +
              `that discards them (${fmt(exported.spans)} export requests)]`,
          },
        ).line,
      );
    }
  } catch (e) {
    outcome.broken.push(`operator benchmark: ${e instanceof Error ? e.message : String(e)}`);
  }
  return outcome;
}

/** Runs of the tracing phase, each with tracing off and on. */
const TRACING_ROUNDS = 2;

/** An OTLP/HTTP receiver that discards what it is sent, and the env that exports to it. */
function discardingReceiver(): AsyncDisposable & {
  env: Record<string, string>;
  readonly requests: number;
} {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    requests++;
    await req.arrayBuffer();
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  return {
    env: {
      OTEL_DENO: "true",
      OTEL_SERVICE_NAME: "kopf-bench",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${server.addr.port}`,
    },
    get requests() {
      return requests;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
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
