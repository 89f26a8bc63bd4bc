/**
 * The sharding soak, as a function: replicas of one operator (`kopf run -A --shards`, each a
 * child process with its own `POD_ID`) on one embedded API server; objects created, updated
 * and deleted in phases; replicas killed with SIGKILL and started again, one added. Every run
 * of a create/update/delete handler and every start and stop of a daemon is recorded outside the
 * API, in a ledger file (one JSON line per run: time, pid, identity, what, object, value).
 *
 * The verdict is read from the ledger and the API:
 * - every change was handled: each object's creation, each of its updates (one per phase, each
 *   with a value of its own) and its deletion has a ledger line;
 * - no change was handled twice — except where the first run was in a replica killed right
 *   after it (the kill fell between the handler and its patch): counted apart;
 * - no daemon ran on two replicas at once (a killed replica's daemons end at its kill);
 * - no object is left (no finalizer stuck);
 * - while all replicas were up, each owned ~1/N of the objects (`kopf_shard_owned_objects` on
 *   each replica's `/metrics`).
 *
 * `tests/reactor/sharding_test.ts` runs a short version in `deno task test`;
 * `deno task soak:sharding` runs the long one (sharding_soak.ts).
 *
 * @module
 */

import { OperatorProcess } from "../examples/_process.ts";
import { servedAt } from "../engines/_metrics.ts";
import { call, cluster, ROOT, until } from "../reactor/_setup.ts";

/** What to run. */
export interface SoakOptions {
  /** Replicas at the start (3). */
  replicas: number;
  /** Objects (60 in the short version, 1,000 in the soak). */
  objects: number;
  /** How many times a replica is killed (SIGKILL) and started again: 0, 1 or 2. */
  kills: 0 | 1 | 2;
  /** Whether to add one more replica after the kills. */
  addReplica: boolean;
  /**
   * A lagging watch of the objects while the replica is added (seconds; the API server's
   * `watchDelayMs` on kopfexamples, the Leases on time): the new replica starts while the group
   * is in the midst of slow updates of every object, so the hand-off (through the Leases)
   * outruns the old owners' last writes (through the objects' watch).
   */
  laggingWatch?: number;
  /**
   * Watch faults from the start to the end: every watch stream closed at a random moment within
   * 2 s of opening, and every 1.5 s the resourceVersions expired with the open streams closed
   * (the replicas resume into 410 Gone and relist). The report counts what was injected.
   */
  watchFaults?: boolean;
  /**
   * A share (0..1) of all API requests answered 429 Too Many Requests (Retry-After 1 s) from the
   * start to the end: the replicas' client retries them — Lease renewals, listings and relists at
   * the fresh points, handlers' patches alike.
   */
  rate429?: number;
  /**
   * Whether each object has a daemon (default true). Without, the replicas are plain operators,
   * whose own settled writes' echoes run no cycle (core/reactor/echoes.ts).
   */
  daemons?: boolean;
  /** The member Leases' duration in seconds (renewDeadline is 2/3 of it). */
  leaseDuration: number;
  /** Where progress lines go. */
  log?: (line: string) => void;
  /** Seconds to wait for each phase (default: 60 + objects / 10). */
  phaseTimeout?: number;
}

/** One ledger line. */
interface Entry {
  t: number;
  pid: number;
  id: string;
  kind: "startup" | "create" | "update" | "delete" | "daemon-start" | "daemon-stop";
  name?: string;
  value?: string;
  reason?: string;
}

/** What the soak found. */
export interface SoakReport {
  /** Changes made: creations, updates and deletions. */
  changes: number;
  /** Changes with at least one handler run. */
  handled: number;
  /** Changes never handled (`name kind value`). */
  missing: string[];
  /** Handler runs that match no change made. */
  unexpected: string[];
  /** Changes handled twice because the first run's replica was killed right after it. */
  killWindowRepeats: string[];
  /** Changes handled twice otherwise (a failure). */
  repeats: string[];
  /** Daemons that ran on two replicas at once (a failure). */
  daemonOverlaps: string[];
  /** Daemon starts in all (for the figures). */
  daemonStarts: number;
  /** Objects still there at the end (a stuck finalizer). */
  stuck: string[];
  /** Owned objects per replica while all were up, one record per such moment. */
  owned: Array<Record<string, number>>;
  /** Handler runs per replica identity (creations, updates, deletions). */
  runsByReplica: Record<string, number>;
  /** Seconds from a kill to the last of the killed replica's objects handled elsewhere. */
  takeovers: number[];
  /** Seconds each phase took. */
  phases: Record<string, number>;
  /** Exit codes of the replicas stopped at the end (SIGTERM). */
  exitCodes: Record<string, number>;
  /**
   * The objects' LISTs, WATCHes (a watch with initial events is a listing too) and GETs, as the
   * server counted them, in each phase.
   */
  requests: Record<string, { list: number; watch: number; get: number }>;
  /** With `watchFaults` or `rate429`: the watch streams closed, the 410 Gone and 429 answers. */
  faults?: { closedWatches: number; expiredWatches: number; tooManyRequests: number };
}

const NS = "default";
const KEX = `/apis/kopf.dev/v1/namespaces/${NS}/kopfexamples`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;

/** The handlers of every replica: they write the ledger. */
function handlersSource(leaseDuration: number, daemons: boolean): string {
  return `import * as kopf from "${ROOT}mod.ts";
const path = Deno.env.get("KOPF_LEDGER")!;
const id = Deno.env.get("POD_ID");
const enc = new TextEncoder();
const note = (entry: Record<string, unknown>) =>
  Deno.writeFileSync(path, enc.encode(JSON.stringify({ t: Date.now(), pid: Deno.pid, id, ...entry }) + "\\n"), { append: true });
kopf.on.startup(({ settings }) => {
  settings.posting.enabled = false;
  settings.sharding.leaseDuration = ${leaseDuration};
  settings.sharding.renewDeadline = ${(leaseDuration * 2) / 3};
  settings.sharding.renewPeriod = ${Math.min(1, leaseDuration / 6)};
  note({ kind: "startup" });
});
// A little work after the record: a kill may fall between a handler and its patch.
const work = () => new Promise((r) => setTimeout(r, 20));
kopf.on.create("kopfexamples", async ({ name, spec }) => {
  note({ kind: "create", name, value: spec.field });
  await work();
});
kopf.on.update("kopfexamples", async ({ name, spec }) => {
  note({ kind: "update", name, value: spec.field });
  // "slow": still running when a replica joins (its write comes after the joiner's listing).
  await (spec.field === "slow" ? new Promise((r) => setTimeout(r, 1500)) : work());
});
kopf.on.delete("kopfexamples", ({ name }) => note({ kind: "delete", name }));
${
    daemons
      ? `kopf.daemon("kopfexamples", async ({ name, stopped }) => {
  note({ kind: "daemon-start", name });
  await stopped.wait();
  note({ kind: "daemon-stop", name, reason: stopped.reason });
});
`
      : ""
  }`;
}

/** One replica slot: an identity that keeps its name across restarts, and its process. */
class Replica {
  proc: OperatorProcess | undefined;
  readonly id: string;
  readonly #env: Record<string, string>;
  readonly #file: string;

  constructor(id: string, file: string, env: Record<string, string>) {
    this.id = id;
    this.#file = file;
    this.#env = env;
  }

  start(): void {
    // The probes on a port the system picks; the log names it (see owned()).
    this.proc = new OperatorProcess(
      ["run", "-A", "--shards", "--liveness", "http://127.0.0.1:0/healthz", this.#file],
      { ...this.#env, POD_ID: this.id, NO_COLOR: "1" },
    );
  }

  async joined(seconds: number): Promise<void> {
    await this.proc!.waitFor(`Joined the shard group 'kopf' as '${this.id}'`, seconds);
  }

  /** `kopf_shard_owned_objects` on its `/metrics`. */
  async owned(): Promise<number> {
    const served = servedAt(this.proc!.output);
    if (!served) return NaN;
    const text = await (await fetch(new URL("/metrics", served))).text();
    const m = /^kopf_shard_owned_objects\{group="kopf"\} (\d+)$/m.exec(text);
    return m ? Number(m[1]) : NaN;
  }
}

/**
 * A request of the soak itself, sent again while the server answers 429 (the `rate429` fault:
 * the request was not processed).
 */
async function retried<T>(send: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await send();
    } catch (e) {
      if (!/ -> 429: /.test(String(e))) throw e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/**
 * Runs the soak.
 *
 * @param o What to run.
 * @returns The report (the caller judges it).
 */
export async function runShardingSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? (() => {});
  const timeout = o.phaseTimeout ?? 60 + o.objects / 10;
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-sharding-soak-" });
  const file = `${dir}/handlers.ts`;
  const ledger = `${dir}/ledger.jsonl`;
  await Deno.writeTextFile(file, handlersSource(o.leaseDuration, o.daemons ?? true));
  await Deno.writeTextFile(ledger, "");
  const env = { KUBECONFIG: c.api.kubeconfig.path, KOPF_LEDGER: ledger };
  const replicas: Replica[] = [];
  let expiring: ReturnType<typeof setInterval> | undefined;
  const kills = new Map<string, number>(); // "id/pid" of a killed process → when
  const report: SoakReport = {
    changes: 0,
    handled: 0,
    missing: [],
    unexpected: [],
    killWindowRepeats: [],
    repeats: [],
    daemonOverlaps: [],
    daemonStarts: 0,
    stuck: [],
    owned: [],
    runsByReplica: {},
    takeovers: [],
    phases: {},
    requests: {},
    exitCodes: {},
  };
  const expected = new Set<string>();
  const names = Array.from({ length: o.objects }, (_, i) => `kex-${String(i).padStart(4, "0")}`);
  /** The ledger's complete lines (a replica may be appending the last one as we read). */
  const read = async (): Promise<Entry[]> => {
    const text = await Deno.readTextFile(ledger);
    return text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter(Boolean)
      .map((l) => JSON.parse(l));
  };
  /** The pid of an identity's latest process (from its startup line). */
  const pidOf = async (id: string): Promise<number> =>
    (await read()).findLast((e) => e.kind === "startup" && e.id === id)!.pid;
  /** The server's count of the objects' requests of a verb (any status). */
  const counted = (verb: string) =>
    [...c.api.server.requestCounts].filter(([k]) => k.startsWith(`${verb} kopfexamples.`))
      .reduce((sum, [, n]) => sum + n, 0);
  const phase = async (name: string, body: () => Promise<void>) => {
    const t0 = performance.now();
    const [list, watch, get] = [counted("list"), counted("watch"), counted("get")];
    log(`phase: ${name}`);
    await body();
    report.phases[name] = (performance.now() - t0) / 1000;
    report.requests[name] = {
      list: counted("list") - list,
      watch: counted("watch") - watch,
      get: counted("get") - get,
    };
  };
  /** Waits until the ledger has every expected change. */
  const handled = async (what: string) => {
    await until(
      async () => {
        const seen = new Set((await read()).map(keyOf));
        return [...expected].every((k) => seen.has(k));
      },
      what,
      timeout,
    );
  };
  /** Waits until every live replica's Lease shows the same view of exactly them, nothing releasing. */
  const converged = async () => {
    const ids = replicas.filter((r) => r.proc).map((r) => r.id).sort();
    await until(
      async () => {
        const r = await retried(() =>
          c.call("GET", `${LEASES}?labelSelector=kopf.dev%2Fshard-group%3Dkopf`)
        );
        // deno-lint-ignore no-explicit-any
        const items: any[] = r.body.items;
        const holders = items.map((i) => i.spec.holderIdentity).sort();
        if (JSON.stringify(holders) !== JSON.stringify(ids)) return false;
        const views = items.map((i) => i.metadata.annotations?.["kopf.dev/shard-view"]);
        const releasing = items.map((i) => i.metadata.annotations?.["kopf.dev/shard-releasing"]);
        return new Set(views).size === 1 &&
          JSON.stringify(Object.keys(JSON.parse(views[0] ?? "{}")).sort()) ===
            JSON.stringify(ids) &&
          releasing.every((x) => x === "[]");
      },
      `the shard group converged on ${ids.join(", ")}`,
      timeout,
    );
  };
  const owned = async () => {
    const counts: Record<string, number> = {};
    await until(
      async () => {
        for (const r of replicas) if (r.proc) counts[r.id] = await r.owned();
        return Object.values(counts).reduce((a, b) => a + b, 0) === o.objects;
      },
      "the owned objects add up",
      timeout,
    );
    report.owned.push({ ...counts });
    log(`owned: ${JSON.stringify(counts)}`);
  };
  const patchAll = async (value: string, some = names) => {
    for (const name of some) expected.add(`${name} update ${value}`);
    await pool(some, 20, async (name) => {
      await retried(() =>
        call(c.api, "PATCH", `${KEX}/${name}`, { spec: { field: value } }, {
          contentType: "application/merge-patch+json",
        })
      );
    });
  };
  const kill = async (r: Replica, pid: number) => {
    await r.proc!.stop("SIGKILL");
    kills.set(`${r.id}/${pid}`, Date.now());
    r.proc = undefined;
  };

  try {
    if (o.rate429) c.api.setFaults({ rate429: o.rate429, retryAfterSeconds: 1 });
    if (o.watchFaults) {
      c.api.setFaults({ closeWatchesRandomly: 2 });
      expiring = setInterval(() => c.api.expireResourceVersions(true), 1500);
    }
    await phase("start", async () => {
      for (let i = 0; i < o.replicas; i++) {
        const r = new Replica(`replica-${i + 1}`, file, env);
        replicas.push(r);
        r.start();
      }
      for (const r of replicas) await r.joined(timeout);
      await converged();
    });

    await phase("create", async () => {
      for (const name of names) expected.add(`${name} create v0`);
      await pool(
        names,
        20,
        (name) => retried(() => c.createKex(NS, name, { spec: { field: "v0" } })).then(() => {}),
      );
      await handled("every creation handled");
      // Stored too (the diff base written), not only run: the ledger's line comes before the
      // cycle's write, which a 429's retry delays by a second; a replica killed in between leaves
      // a creation that its objects' next owner handles as one — with the spec of then, which
      // the kills below change (a create of the new value, not the update this soak expects).
      // Read in the server's store: no request that the phases' counts would show.
      const store = c.api.server.store;
      await until(
        () =>
          names.every((name) =>
            store.get("kopfexamples.kopf.dev", NS, name)?.metadata?.annotations
              ?.["kopf.zalando.org/last-handled-configuration"]?.includes('"v0"')
          ),
        "every creation stored",
        timeout,
      );
      await owned();
    });

    for (let k = 1; k <= o.kills; k++) {
      await phase(`kill ${k}`, async () => {
        const victim = replicas[k % replicas.length]!;
        const pid = await pidOf(victim.id);
        const value = `v${k}`;
        // A third of the objects changed: their handlers are running when the kill comes.
        const third = Math.ceil(names.length / 3);
        await patchAll(value, names.slice(0, third));
        await new Promise((r) => setTimeout(r, 30));
        const killedAt = Date.now();
        await kill(victim, pid);
        log(`killed ${victim.id} (pid ${pid})`);
        await patchAll(value, names.slice(third));
        if (k === 1) {
          // Not back before its Lease expired: the others take its objects over.
          await converged();
          await handled(`every update to ${value} handled after the kill`);
          const entries = await read();
          const last = Math.max(
            ...entries.filter((e) => e.kind === "update" && e.value === value && e.t > killedAt)
              .map((e) => e.t),
          );
          report.takeovers.push((last - killedAt) / 1000);
          victim.start();
          await victim.joined(timeout);
          await converged();
        } else {
          // Back at once with the same identity: it takes its own Lease over (a new incarnation).
          victim.start();
          await victim.joined(timeout);
          await converged();
          await handled(`every update to ${value} handled after the restart`);
        }
      });
    }

    if (o.addReplica) {
      await phase("add a replica", async () => {
        if (o.laggingWatch) {
          // Updates whose handlers run 1.5 s: begun before the new replica lists the objects,
          // written after it, and released to it only then; their writes' events lag behind.
          c.api.setFaults({
            watchDelayMs: o.laggingWatch * 1000,
            watchDelayResources: ["kopfexamples"],
          });
          await patchAll("slow");
          await handled("every slow update begun");
        }
        const r = new Replica(`replica-${replicas.length + 1}`, file, env);
        replicas.push(r);
        r.start();
        await r.joined(timeout);
        await converged();
        c.api.setFaults({ watchDelayMs: null, watchDelayResources: null });
        await patchAll("v9");
        await handled("every update to v9 handled by the grown group");
        await owned();
      });
    }

    await phase("delete", async () => {
      for (const name of names) expected.add(`${name} delete -`);
      await pool(
        names,
        20,
        (name) => retried(() => c.call("DELETE", `${KEX}/${name}`)).then(() => {}),
      );
      await handled("every deletion handled");
      await until(
        async () => {
          const r = await retried(() => c.call("GET", KEX));
          return r.body.items.length === 0;
        },
        "every object gone (no finalizer stuck)",
        timeout,
      ).catch(() => {});
      const left = await retried(() => c.call("GET", KEX));
      // deno-lint-ignore no-explicit-any
      report.stuck = left.body.items.map((i: any) => i.metadata.name);
    });
  } finally {
    clearInterval(expiring);
    if (o.watchFaults || o.rate429) {
      const counts = c.api.faultCounts;
      report.faults = {
        closedWatches: counts.watchClosed,
        expiredWatches: counts.expiredWatches,
        tooManyRequests: counts.error429,
      };
      c.api.setFaults({ closeWatchesRandomly: null, rate429: null });
    }
    for (const r of replicas) {
      if (r.proc) report.exitCodes[r.id] = await r.proc.stop();
    }
  }

  judge(report, expected, await read(), kills);
  await Deno.remove(dir, { recursive: true });
  return report;
}

function keyOf(e: Entry): string {
  return `${e.name} ${e.kind} ${e.value ?? "-"}`;
}

/** Fills in the verdict from the ledger. */
function judge(
  report: SoakReport,
  expected: Set<string>,
  entries: Entry[],
  kills: Map<string, number>,
) {
  report.changes = expected.size;
  const runs = new Map<string, Entry[]>();
  for (const e of entries) {
    if (e.kind !== "create" && e.kind !== "update" && e.kind !== "delete") continue;
    const k = keyOf(e);
    runs.set(k, [...(runs.get(k) ?? []), e]);
    report.runsByReplica[e.id] = (report.runsByReplica[e.id] ?? 0) + 1;
  }
  for (const k of expected) if (!runs.has(k)) report.missing.push(k);
  for (const [k, list] of runs) {
    if (!expected.has(k)) report.unexpected.push(k);
    else report.handled++;
    if (list.length < 2) continue;
    // Every run but the last must be in a process killed after it.
    const killed = list.slice(0, -1).every((e) => {
      const at = kills.get(`${e.id}/${e.pid}`);
      return at !== undefined && e.t <= at;
    });
    (killed ? report.killWindowRepeats : report.repeats).push(
      `${k}: ${list.map((e) => `${e.id}/${e.pid}`).join(", ")}`,
    );
  }
  // Daemons: per object, the intervals of each process must not overlap.
  const intervals = new Map<string, Array<{ who: string; from: number; to: number }>>();
  const open = new Map<string, { who: string; from: number }>();
  const end = Math.max(...entries.map((e) => e.t)) + 1;
  for (const e of entries) {
    const who = `${e.id}/${e.pid}`;
    if (e.kind === "daemon-start") {
      report.daemonStarts++;
      open.set(`${e.name} ${who}`, { who, from: e.t });
    } else if (e.kind === "daemon-stop") {
      const o = open.get(`${e.name} ${who}`);
      open.delete(`${e.name} ${who}`);
      if (o) intervals.set(e.name!, [...(intervals.get(e.name!) ?? []), { ...o, to: e.t }]);
    }
  }
  for (const [key, o] of open) {
    const name = key.split(" ")[0]!;
    const to = kills.get(o.who) ?? end;
    intervals.set(name, [...(intervals.get(name) ?? []), { ...o, to }]);
  }
  for (const [name, list] of intervals) {
    list.sort((a, b) => a.from - b.from);
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1]!;
      const b = list[i]!;
      if (b.from < a.to && a.who !== b.who) {
        report.daemonOverlaps.push(
          `${name}: ${a.who} [${a.from}, ${a.to}] and ${b.who} from ${b.from}`,
        );
      }
    }
  }
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}
