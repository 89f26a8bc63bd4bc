/**
 * The elector on a fake clock against the embedded API server: acquiring,
 * renewing, take-over after the observed lease duration, abdication at the
 * renew deadline (before the lease can expire anywhere), release on leave,
 * transitions. A replica's connection is cut by a `fetch` that hangs.
 *
 * The elector's requests are real HTTP, which the fake clock does not wait for: the tests step
 * the clock with {@link World.until}, which after each step waits for the replicas' requests in
 * flight to finish (an event, not a real-time window), so a timer's request is answered at the
 * fake time it was sent.
 */
import assert from "node:assert/strict";
import { FakeClock, type RunningApiServer, startApiServer } from "../../testing.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { LeaseLock, readLease } from "../../src/cogs/clients/leases.ts";
import { LeaderElectionSettings } from "../../src/cogs/configs/leader_election.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { type LogRecord, OperatorLogger } from "../../src/core/actions/loggers.ts";
import { LeaderElector } from "../../src/core/engines/leader_election.ts";

const TIMINGS = { leaseDuration: 2, renewDeadline: 1.5, retryPeriod: 0.3 };

/** One candidate: its gate, its log, a switch that cuts its connection, and when it led. */
class Replica {
  readonly paused = new ToggleSet();
  readonly lines: string[] = [];
  readonly elector: LeaderElector;
  readonly api: ApiClient;
  /** [fake ms when the gate opened, when it closed (or undefined)]. */
  readonly terms: Array<[number, number | undefined]> = [];
  cut = false;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;

  constructor(
    readonly identity: string,
    readonly vault: Vault,
    readonly clock: FakeClock,
    random = () => 0,
    flights: Flights = new Flights(clock),
  ) {
    this.api = new ApiClient({
      vault,
      settings: { networking: { errorBackoffs: [] } },
      fetch: (url, init) => {
        if (!this.cut) return flights.track(fetch(url, init));
        return new Promise((_, reject) => {
          init.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
        });
      },
    });
    const toggle = this.paused.make("leader election", true);
    this.paused.subscribe((on) => {
      if (!on) this.terms.push([clock.now(), undefined]);
      else if (this.terms.length) this.terms[this.terms.length - 1]![1] = clock.now();
    });
    const sink = (r: LogRecord) => this.lines.push(`${r.level}: ${r.message}`);
    this.elector = new LeaderElector({
      lock: new LeaseLock({
        api: this.api,
        namespace: "default",
        name: "op",
        identity,
        leaseDuration: TIMINGS.leaseDuration,
        clock,
      }),
      timings: TIMINGS,
      toggle,
      logger: new OperatorLogger(sink),
      clock,
      random,
    });
  }

  start(): void {
    this.#running = this.elector.run(this.#stop.signal);
  }

  get leading(): boolean {
    return !this.paused.on;
  }

  async leave(): Promise<void> {
    this.#stop.abort();
    this.cut = false;
    await this.elector.leave();
    await this.#running;
  }
}

/** The replicas' real requests in flight (a cut connection's hanging ones not counted). */
class Flights {
  #count = 0;
  #drained = Promise.withResolvers<void>();

  constructor(readonly clock: FakeClock) {}

  /** Counts a request until its answer's body has been read (handed on as a buffered copy). */
  async track(answer: Promise<Response>): Promise<Response> {
    this.#count++;
    try {
      const response = await answer;
      const body = await response.arrayBuffer();
      const { status, statusText, headers } = response;
      return new Response(body, { status, statusText, headers });
    } finally {
      if (--this.#count === 0) this.#drained.resolve();
    }
  }

  /** Resolves when no request is in flight and the code its answers woke has settled. */
  async idle(): Promise<void> {
    while (true) {
      if (this.#count > 0) {
        await this.#drained.promise;
        this.#drained = Promise.withResolvers<void>();
      }
      await this.clock.advance(0); // settles what the answers woke (it may send again)
      if (this.#count === 0) return;
    }
  }
}

interface World extends AsyncDisposable {
  server: RunningApiServer;
  vault: Vault;
  clock: FakeClock;
  flights: Flights;
  /**
   * Advances the fake clock in steps of 10 ms until `condition` holds (checked after each
   * step), for `limit` fake seconds at most, waiting after each step for the replicas' requests
   * in flight. Returns whether the condition holds.
   */
  until(condition: () => boolean, limit: number): Promise<boolean>;
}

async function world(): Promise<World> {
  const server = await startApiServer();
  const vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
  const clock = new FakeClock();
  const flights = new Flights(clock);
  return {
    server,
    vault,
    clock,
    flights,
    async until(condition, limit) {
      const end = clock.now() + limit * 1000;
      await flights.idle();
      while (!condition()) {
        if (clock.now() >= end) return false;
        await clock.advance(Math.min(0.01, (end - clock.now()) / 1000));
        await flights.idle();
      }
      return true;
    },
    async [Symbol.asyncDispose]() {
      vault.close();
      await server.stop();
    },
  };
}

async function lease(vault: Vault) {
  return (await readLease(new ApiClient({ vault }), "default", "op"))!.record;
}

/** Milliseconds of fake time since the fake clock's start for a MicroTime it wrote. */
function msOf(time: string | undefined, clock: FakeClock): number {
  return Date.parse(time!) - (clock.date().getTime() - clock.now());
}

Deno.test("LeaderElector: a lone candidate acquires at once, opens the gate, renews every retryPeriod", async () => {
  await using w = await world();
  const a = new Replica("a", w.vault, w.clock, undefined, w.flights);
  a.start();
  assert.ok(await w.until(() => a.leading, 1));
  assert.ok(a.lines.includes("info: attempting to acquire leader lease default/op..."));
  assert.ok(a.lines.includes("info: successfully acquired lease default/op"));
  const first = await lease(w.vault);
  assert.equal(first.holderIdentity, "a");
  await w.until(() => false, 1); // 1 s: renewals at 0.3, 0.6, 0.9
  const renewed = await lease(w.vault);
  assert.equal(renewed.acquireTime, first.acquireTime);
  assert.ok(msOf(renewed.renewTime, w.clock) >= 900, `${renewed.renewTime}`);
  assert.ok(a.leading);
  await a.leave();
  assert.equal((await lease(w.vault)).holderIdentity, "");
});

Deno.test("LeaderElector: a standby takes over only after the lease duration on its clock; the cut-off leader abdicated at its renew deadline, before that", async () => {
  await using w = await world();
  const a = new Replica("a", w.vault, w.clock, undefined, w.flights);
  const b = new Replica("b", w.vault, w.clock, undefined, w.flights);
  a.start();
  assert.ok(await w.until(() => a.leading, 1));
  b.start();
  await w.until(() => false, 1);
  assert.ok(!b.leading);
  assert.ok(b.lines.includes("info: new leader elected: a"));

  a.cut = true; // a's connection hangs from now on: it can neither renew nor release
  const lastRenewal = msOf((await lease(w.vault)).renewTime, w.clock);
  assert.ok(await w.until(() => b.leading, 5));
  const [[, aClosed]] = a.terms as [[number, number]];
  const [[bOpened]] = b.terms as [[number, number | undefined]];
  // a stopped exactly at its deadline, counted from when it sent its last successful renewal.
  assert.equal(aClosed - lastRenewal, TIMINGS.renewDeadline * 1000);
  assert.ok(
    a.lines.includes("info: failed to renew lease default/op: timed out waiting for the condition"),
  );
  // b started no earlier than a full lease duration after a's last renewal — after a stopped.
  assert.ok(bOpened - lastRenewal >= TIMINGS.leaseDuration * 1000, `${bOpened - lastRenewal}`);
  assert.ok(bOpened > aClosed);
  const now = await lease(w.vault);
  assert.equal(now.holderIdentity, "b");
  assert.equal(now.leaseTransitions, 1);
  assert.ok(b.lines.includes("info: successfully acquired lease default/op"));

  a.cut = false; // the connection is back: a sees b and stays a standby
  await w.until(() => false, 2);
  assert.ok(!a.leading && b.leading);
  assert.ok(a.lines.includes("info: new leader elected: b"));
  await Promise.all([a.leave(), b.leave()]);
});

Deno.test("LeaderElector: leave() releases the Lease; the standby takes over at its next try", async () => {
  await using w = await world();
  const a = new Replica("a", w.vault, w.clock, undefined, w.flights);
  const b = new Replica("b", w.vault, w.clock, () => 0.5, w.flights); // retries every 0.3 × 1.6 = 0.48 s
  a.start();
  assert.ok(await w.until(() => a.leading, 1));
  b.start();
  await w.until(() => false, 1);
  const left = w.clock.now();
  await a.leave();
  assert.ok(a.lines.includes("info: released lease default/op"));
  const released = await lease(w.vault);
  assert.equal(released.holderIdentity, "");
  assert.equal(released.leaseDurationSeconds, 1);
  assert.ok(await w.until(() => b.leading, 1));
  assert.ok(b.terms[0]![0] - left <= 480 + 20, `${b.terms[0]![0] - left}`);
  assert.equal((await lease(w.vault)).leaseTransitions, 1);
  await b.leave();
});

Deno.test("LeaderElector: a leader that finds the Lease held by another abdicates at once", async () => {
  await using w = await world();
  const a = new Replica("a", w.vault, w.clock, undefined, w.flights);
  a.start();
  assert.ok(await w.until(() => a.leading, 1));
  // Someone overwrites the Lease (e.g. an operator of the same name elsewhere).
  const api = new ApiClient({ vault: w.vault });
  const current = (await readLease(api, "default", "op"))!;
  await api.request("PUT", `/apis/coordination.k8s.io/v1/namespaces/default/leases/op`, {
    body: { ...current.body, spec: { ...current.record, holderIdentity: "intruder" } },
  });
  const at = w.clock.now();
  assert.ok(await w.until(() => !a.leading, 1));
  assert.ok(w.clock.now() - at <= 400);
  assert.ok(
    a.lines.includes("info: failed to renew lease default/op: the lease is held by intruder"),
  );
  assert.ok(a.lines.includes("info: new leader elected: intruder"));
  await a.leave();
  assert.equal((await lease(w.vault)).holderIdentity, "intruder"); // not ours: not released
});

Deno.test("LeaderElector: API errors are a warning once per distinct error; the gate stays closed", async () => {
  await using w = await world();
  w.server.setFaults({ rate500: 1 });
  const a = new Replica("a", w.vault, w.clock, undefined, w.flights);
  a.start();
  await w.until(() => false, 3);
  assert.ok(!a.leading);
  const warnings = a.lines.filter((l) => l.startsWith("warning: error trying to acquire lease"));
  assert.equal(warnings.length, 1, a.lines.join("\n"));
  w.server.setFaults({ rate500: 0 });
  assert.ok(await w.until(() => a.leading, 2));
  await a.leave();
});

Deno.test("LeaderElectionSettings: client-go's defaults and rule, one line each", () => {
  const s = new LeaderElectionSettings();
  assert.deepEqual([s.enabled, s.leaseDuration, s.renewDeadline, s.retryPeriod], [
    false,
    15,
    10,
    2,
  ]);
  s.check();
  s.renewDeadline = 15;
  assert.throws(
    () => s.check(),
    {
      message:
        "settings.leaderElection.leaseDuration (15s) must be greater than renewDeadline (15s).",
    },
  );
  s.renewDeadline = 2.4;
  assert.throws(
    () => s.check(),
    {
      message:
        "settings.leaderElection.renewDeadline (2.4s) must be greater than retryPeriod × 1.2 (2.4s).",
    },
  );
  s.renewDeadline = 2.5;
  s.check();
  assert.throws(() => (s.leaseDuration = 1.5), /whole number of seconds/);
  assert.throws(() => (s.retryPeriod = 0), /positive number of seconds; got 0/);
  assert.throws(() => (s.name = ""), /non-empty string or null/);
});
