/**
 * The CPU of sharded replicas: 1 vs 3 replicas (processes of their own, `kopf run -n NS
 * --shards`) against one API server (a process of its own) on the same burst of 6,000
 * creations with a light create handler — each replica's CPU (user + system, from
 * `/proc/<pid>/stat`), the three replicas' sum over the one replica's, and the CPU per event of
 * an object a replica owns next to one it does not own.
 *
 * How owned and not owned are told apart, two ways:
 * - The three: the one replica owns every object, so its CPU for the burst (less its idle CPU
 *   over as long) per event is the cost of an owned event. Each of the three owns the objects
 *   whose create handler it ran (the handler writes its replica's name into `status`), and
 *   receives every event of the others' objects too: what its CPU is beyond its idle CPU and its
 *   owned objects at the one replica's cost is counted as the events' it does not own. The events
 *   are counted by a referee watch of this process (every replica receives the same events:
 *   ADDED, and the MODIFIED of each handler's write). This is an upper bound: three processes
 *   contend for the cores, and each gets its own objects at a third of the pace — batched less,
 *   they cost more each than in the one replica's burst — and all that counts as not owned.
 * - Beside stand-ins (the figure with the target): one replica in a group with two stand-in
 *   members (`StandIns`: Leases that acknowledge its view and handle nothing). It owns about a
 *   third and receives the ADDED of every object; then its twin, a lone replica of its own that
 *   is given only such objects (so that both hold as many), gets just as many as it owned, each
 *   created at the moment its counterpart was. The difference of the two replicas' CPU, over the
 *   events of the stand-ins' objects, is a non-owned event's cost — the same owned work,
 *   arriving alike, on both sides, and no other replica's process on the cores. It is signed:
 *   noise may make it negative.
 *
 * The groups run side by side in namespaces of their own (a replica watches only its own), and
 * their bursts alternate, so that a change of the machine's load (it may be shared) hits both
 * alike; the burst with the smallest CPU sum counts (noise only ever adds CPU).
 *
 * Run alone: `deno run -A bench/shard_cpu_bench.ts [BURST] [ROUNDS]`; before/after:
 * `KOPF_BENCHES=shard_cpu_bench.ts deno task bench:compare REF`.
 *
 * @module
 */

import { BenchClient, expectOk, runBounded, setUpKopfExamples } from "./_client.ts";
import { type ServerProcess, startServerProcess } from "./_server_process.ts";
import { converged, Replica, replicaProgram, StandIns } from "./_shard_replicas.ts";
import { figure, fmt, RESULTS_ENV, writeResults } from "./_stats.ts";

const ROOT = new URL("../", import.meta.url);
const BURST = 6_000;
const ROUNDS = 2;
const WARMUP = 500;
const CONCURRENCY = 50;
/** Seconds of idle CPU measured before each burst (the renewals of the member Leases). */
const IDLE_SECONDS = 2;
/** The burst is over when the referee has seen no event for this long after the last handled. */
const QUIET_MS = 1_000;

/** What this benchmark reports back to `bench/main.ts`. */
export interface ShardCpuOutcome {
  /** How many figures had a target, and how many met it. */
  targets: number;
  met: number;
  /** Why the benchmark itself broke, if it did. */
  broken: string[];
}

/** The handlers of every replica: a light create handler that names its replica. */
function handlers(): string {
  return `import * as kopf from "${new URL("mod.ts", ROOT).pathname}";
const me = Deno.env.get("POD_ID");
kopf.on.startup(({ settings }) => {
  settings.posting.enabled = false;
  settings.sharding.leaseDuration = 3;
  settings.sharding.renewDeadline = 2;
  settings.sharding.renewPeriod = 0.5;
});
kopf.on.create("kopfexamples", { id: "create_fn" }, () => ({ by: me }));
`;
}

/** One watch of the namespace: the events of a burst, and who handled each object. */
class Referee implements AsyncDisposable {
  events = 0;
  lastEvent = 0;
  readonly handledBy = new Map<string, string>();
  readonly #stop = new AbortController();
  readonly #reading: Promise<void>;

  private constructor(response: Response) {
    this.#reading = this.#read(response).catch(() => {});
  }

  static async open(api: BenchClient, path: string): Promise<Referee> {
    const list = await api.send("GET", `${path}?limit=1`, { parse: true });
    expectOk(list, "listing the objects");
    const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const referee = new AbortController();
    const response = await api.stream(
      `${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=3600`,
      referee.signal,
    );
    const r = new Referee(response);
    r.#stop.signal.addEventListener("abort", () => referee.abort());
    return r;
  }

  reset(): void {
    this.events = 0;
    this.handledBy.clear();
  }

  async #read(response: Response): Promise<void> {
    let buffered = "";
    for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let start = 0;
      let at: number;
      while ((at = buffered.indexOf("\n", start)) >= 0) {
        const line = buffered.slice(start, at);
        start = at + 1;
        if (!line || line.startsWith('{"type":"BOOKMARK"')) continue;
        this.events++;
        this.lastEvent = performance.now();
        if (!line.includes('"create_fn"')) continue;
        const o = JSON.parse(line).object;
        const by = o?.status?.create_fn?.by;
        if (typeof by === "string") this.handledBy.set(o.metadata.name, by);
      }
      buffered = buffered.slice(start);
    }
  }

  async until(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#stop.abort();
    await this.#reading;
  }
}

/** One burst of a group: each replica's CPU beyond idle, its owned objects, the events. */
interface Burst {
  /** Per replica: CPU seconds for the burst (idle CPU over as long taken off), objects owned. */
  replicas: Array<{ id: string; cpu: number; owned: number }>;
  /** Events of the burst (every replica receives them all). */
  events: number;
  /** Seconds from the first creation to the last event. */
  seconds: number;
  /** Seconds the creations took. */
  posting: number;
  /** When each object the first replica handled was created (ms after the first creation). */
  createdOwned: number[];
}

/**
 * N sharded replicas in a namespace of their own, with a referee watch — or one replica beside
 * stand-ins (members that acknowledge its view and handle nothing: their objects stay unhandled).
 */
class Group implements AsyncDisposable {
  readonly replicas: Replica[];
  readonly #api: BenchClient;
  readonly #path: string;
  readonly #referee: Referee;
  readonly #standIns: StandIns | undefined;
  #round = 0;

  private constructor(
    api: BenchClient,
    path: string,
    replicas: Replica[],
    referee: Referee,
    standIns: StandIns | undefined,
  ) {
    this.#api = api;
    this.#path = path;
    this.replicas = replicas;
    this.#referee = referee;
    this.#standIns = standIns;
  }

  static async start(
    api: BenchClient,
    server: ServerProcess,
    file: string,
    n: number,
    ns: string,
    standIns = 0,
  ): Promise<Group> {
    await setUpKopfExamples(api, ROOT, ns);
    const program = await replicaProgram(file);
    const replicas = Array.from(
      { length: n },
      (_, i) => new Replica(`${ns}-${i + 1}`, file, ns, server.kubeconfig, program),
    );
    const ids = Array.from({ length: standIns }, (_, i) => `${ns}-${n + i + 1}`);
    const stand = standIns ? new StandIns(api, ns, replicas[0]!.id, ids) : undefined;
    try {
      await converged(api, ns, [...replicas.map((r) => r.id), ...ids]);
      const path = `/apis/kopf.dev/v1/namespaces/${ns}/kopfexamples`;
      return new Group(api, path, replicas, await Referee.open(api, path), stand);
    } catch (e) {
      for (const r of replicas) await r.stop();
      await stand?.[Symbol.asyncDispose]();
      throw e;
    }
  }

  /**
   * Creates `count` objects (50 at a time, or each at its moment of `schedule`, ms after the first)
   * and waits until they are handled (beside stand-ins: until the events stop).
   */
  async burst(count: number, schedule?: number[]): Promise<Burst> {
    const referee = this.#referee;
    const prefix = `r${this.#round++}-`;
    const cpus = () => Promise.all(this.replicas.map((r) => r.cpuSeconds()));
    // Idle CPU first (the member Leases' renewals), to take off the burst's.
    const idle0 = await cpus();
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const cpu0 = await cpus();
    const idle = cpu0.map((c, i) => (c - idle0[i]!) / IDLE_SECONDS);
    referee.reset();
    const t0 = performance.now();
    const created: number[] = [];
    await runBounded(count, CONCURRENCY, async (i) => {
      if (schedule) {
        const due = t0 + schedule[i]!;
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      }
      created[i] = performance.now() - t0;
      expectOk(
        await this.#api.send("POST", this.#path, {
          body: {
            apiVersion: "kopf.dev/v1",
            kind: "KopfExample",
            metadata: { name: `${prefix}${i}` },
            spec: { field: "x" },
          },
        }),
        "creating an object",
      );
    });
    const posting = (performance.now() - t0) / 1000;
    const handled = () => [...referee.handledBy.keys()].filter((n) => n.startsWith(prefix));
    // Beside stand-ins, only the replica's own share is ever handled: the quiet tells the end.
    await referee.until(
      () => this.#standIns !== undefined || handled().length >= count,
      600_000,
      () => `${count} objects handled (${handled().length} so far)`,
    );
    await referee.until(
      () => performance.now() - referee.lastEvent >= QUIET_MS,
      60_000,
      () => "the events to stop",
    );
    const seconds = (referee.lastEvent - t0) / 1000;
    const elapsed = (performance.now() - t0) / 1000;
    const cpu1 = await cpus();
    const owned = new Map<string, number>();
    for (const [name, by] of referee.handledBy) {
      if (name.startsWith(prefix)) owned.set(by, (owned.get(by) ?? 0) + 1);
    }
    return {
      replicas: this.replicas.map((r, i) => ({
        id: r.id,
        cpu: Math.max(0, cpu1[i]! - cpu0[i]! - idle[i]! * elapsed),
        owned: owned.get(r.id) ?? 0,
      })),
      events: referee.events,
      seconds,
      posting,
      createdOwned: created.filter((_, i) =>
        referee.handledBy.get(`${prefix}${i}`) === this.replicas[0]!.id
      ),
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#referee[Symbol.asyncDispose]();
    for (const r of this.replicas) await r.stop();
    await this.#standIns?.[Symbol.asyncDispose]();
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * Runs the benchmark against a server and prints one line per figure.
 *
 * @param server A fresh API server process.
 * @param options The burst and the rounds.
 * @returns The targets met and what broke.
 */
export async function measureShardCpu(
  server: ServerProcess,
  options: { burst?: number; rounds?: number } = {},
): Promise<ShardCpuOutcome> {
  const burst = options.burst ?? BURST;
  const rounds = options.rounds ?? ROUNDS;
  const outcome: ShardCpuOutcome = { targets: 0, met: 0, broken: [] };
  const report = (f: { line: string; met: boolean }, target = true) => {
    if (target) {
      outcome.targets++;
      if (f.met) outcome.met++;
    }
    console.log(f.line);
  };
  const dir = await Deno.makeTempDir({ prefix: "kopf-bench-shard-cpu-" });
  const file = `${dir}/handlers.ts`;
  await Deno.writeTextFile(file, handlers());
  try {
    using api = new BenchClient(server.url);
    await using one = await Group.start(api, server, file, 1, "shardcpu-one");
    await using three = await Group.start(api, server, file, 3, "shardcpu-three");
    await using beside = await Group.start(api, server, file, 1, "shardcpu-beside", 2);
    // The beside replica's twin: a lone replica that gets only the objects the beside one owned,
    // so that both hold as many objects (a replica's heap, and its GC, grow with what it holds).
    await using twin = await Group.start(api, server, file, 1, "shardcpu-twin");
    // Warm-up (not measured): the JIT of every replica and of the server.
    await one.burst(WARMUP);
    await three.burst(WARMUP);
    await beside.burst(WARMUP);
    await twin.burst(Math.round(WARMUP / 3));
    let best: { one: Burst; three: Burst } | undefined;
    const pairs: Array<{ one: Burst; beside: Burst }> = [];
    const total = (x: Burst) => sum(x.replicas.map((r) => r.cpu));
    for (let round = 0; round < rounds; round++) {
      const a = await one.burst(burst);
      const b = await three.burst(burst);
      const c = await beside.burst(burst);
      // The twin, with only the objects the replica beside the stand-ins owned, each created
      // when it was there: the same owned work, without the others' events.
      const d = await twin.burst(c.createdOwned.length, c.createdOwned);
      if (!best || total(a) + total(b) < total(best.one) + total(best.three)) {
        best = { one: a, three: b };
      }
      pairs.push({ one: d, beside: c });
    }
    const { one: a, three: b } = best!;
    const cpuOne = a.replicas[0]!.cpu;
    const cpuThree = sum(b.replicas.map((r) => r.cpu));
    // The one replica owns everything: its CPU per object is an owned object's cost.
    const perOwnedObject = cpuOne / burst;
    const eventsPerObject = a.events / burst;
    const perOwnedEvent = cpuOne / a.events;
    // Each of the three: what is beyond its owned objects (at that cost) is its non-owned ones'.
    const nonOwnedObjects = sum(b.replicas.map((r) => burst - r.owned));
    const nonOwnedCpu = sum(b.replicas.map((r) => r.cpu - r.owned * perOwnedObject));
    const perNonOwnedEvent = Math.max(0, nonOwnedCpu) / (nonOwnedObjects * (b.events / burst));
    const what = `a burst of ${fmt(burst)} (light create handler)`;
    report(
      figure(`shard CPU: 1 replica, ${what}`, cpuOne, "CPU s", {
        decimals: 2,
        note: `[${fmt(a.events)} events (${fmt(eventsPerObject, 1)} per object) in ` +
          `${fmt(a.seconds, 1)} s; best of ${rounds}; idle CPU taken off]`,
      }),
      false,
    );
    report(
      figure(`shard CPU: 3 replicas, the same`, cpuThree, "CPU s", {
        decimals: 2,
        note: `[${
          b.replicas.map((r) => `${r.id}: ${fmt(r.cpu, 2)} s, owns ${fmt(r.owned)}`).join("; ")
        }; ${fmt(b.events)} events in ${fmt(b.seconds, 1)} s]`,
      }),
      false,
    );
    report(
      figure(`shard CPU: 3 replicas' sum over 1 replica's, ${what}`, cpuThree / cpuOne, "×", {
        decimals: 2,
        target: { atMost: 1.5 },
      }),
    );
    report(
      figure(`shard CPU: per owned event`, perOwnedEvent * 1e6, "µs", {
        note: "[the one replica's CPU per event]",
      }),
      false,
    );
    report(
      figure(`shard CPU: per non-owned event`, perNonOwnedEvent * 1e6, "µs", {
        note: "[the three's CPU beyond their owned objects (at the one replica's cost), per " +
          "event of the objects they do not own]",
      }),
      false,
    );
    report(
      figure(
        `shard CPU: a non-owned event over an owned one, 3 replicas`,
        (perNonOwnedEvent / perOwnedEvent) * 100,
        "%",
        {
          decimals: 1,
          note: "[an upper bound: the three's contention for the cores, and the slower pace of " +
            "each one's own objects (a third each: less batching), count as non-owned]",
        },
      ),
      false,
    );
    // Beside stand-ins: the replica's CPU beyond the lone replica's for the same owned objects at
    // the same pace (the same round) is its non-owned objects' events' — one each (ADDED: nobody
    // handles them), with no other replica's process on the cores. Per round, then the median:
    // signed (noise can make a round's negative: those events cost less than the runs' spread).
    const paired = pairs.map(({ one: lone, beside: c }) => ({
      perEvent: (c.replicas[0]!.cpu - lone.replicas[0]!.cpu) / (c.events - lone.events),
      perOwned: lone.replicas[0]!.cpu / lone.events,
      text: `owns ${fmt(c.replicas[0]!.owned)}: ${fmt(c.replicas[0]!.cpu, 2)} vs ` +
        `${fmt(lone.replicas[0]!.cpu, 2)} CPU s over ${fmt(c.events - lone.events)} events`,
    }));
    const perBeside = median(paired.map((r) => r.perEvent));
    const perLoneEvent = sum(paired.map((r) => r.perOwned)) / paired.length;
    report(
      figure(
        `shard CPU: per non-owned event, a replica beside 2 stand-ins`,
        perBeside * 1e6,
        "µs",
        {
          note: `[the median of ${paired.length} rounds: ${
            paired.map((r) => `${fmt(r.perEvent * 1e6)} µs (${r.text})`).join("; ")
          } — the replica beside them, then its twin with as many objects, created at the same moments]`,
        },
      ),
      false,
    );
    report(
      figure(
        `shard CPU: a non-owned event over an owned one, a replica beside 2 stand-ins`,
        (perBeside / perLoneEvent) * 100,
        "%",
        { decimals: 1, target: { atMost: 15 } },
      ),
    );
  } catch (e) {
    outcome.broken.push(`shard CPU: ${e instanceof Error ? e.message : e}`);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return outcome;
}

if (import.meta.main) {
  const server = await startServerProcess({ root: ROOT });
  let outcome: ShardCpuOutcome;
  try {
    console.log(
      `kopf shard CPU benchmark: server pid ${server.pid}, ${navigator.hardwareConcurrency} CPUs, ` +
        `load average ${(await Deno.readTextFile("/proc/loadavg")).split(" ")[0]}`,
    );
    outcome = await measureShardCpu(server, {
      burst: Deno.args[0] ? Number(Deno.args[0]) : undefined,
      rounds: Deno.args[1] ? Number(Deno.args[1]) : undefined,
    });
    const results = Deno.env.get(RESULTS_ENV);
    if (results) await writeResults(results);
  } finally {
    await server.stop();
  }
  console.log(`targets met: ${outcome.met} of ${outcome.targets}`);
  for (const b of outcome.broken) console.error(`bench broken: ${b}`);
  Deno.exit(outcome.broken.length ? 1 : 0);
}
