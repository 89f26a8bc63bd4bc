/**
 * The health endpoint (`--liveness`): 503 until the operator has finished
 * its startup and is ready, then the probe handlers' results as JSON, cached
 * for the caching period and computed once for parallel requests; a failing
 * probe answers 500; `/metrics` on the same server.
 */
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { OperatorLogger } from "../../src/core/actions/loggers.ts";
import type { ActivityHandler } from "../../src/core/intents/handlers.ts";
import { OperatorMetrics } from "../../src/core/engines/metrics.ts";
import { PROBE_CACHE_PERIOD, Prober } from "../../src/core/engines/probing.ts";
import { cluster } from "../reactor/_setup.ts";
import { startOperator } from "./_metrics.ts";

function probe(id: string, fn: () => unknown): ActivityHandler {
  return {
    kind: "activity",
    activity: "probe",
    id,
    fn,
    param: undefined,
    errors: "permanent",
    timeout: undefined,
    retries: undefined,
    backoff: undefined,
  } as ActivityHandler;
}

const env = {
  logger: new OperatorLogger(() => {}),
  memo: {},
  settings: new kopf.OperatorSettings(),
  indices: {},
};

Deno.test("`Prober` reuses probe results for the caching period (10 s, as in Kopf)", async () => {
  assert.equal(PROBE_CACHE_PERIOD, 10);
  const clock = new FakeClock();
  let calls = 0;
  const prober = new Prober({
    probes: () => [probe("calls", () => ++calls)],
    env,
    clock,
  });
  prober.ready();
  const get = async () => await (await prober.handle(new Request("http://x/healthz"))).json();
  assert.deepEqual(await get(), { calls: 1 });
  await clock.advance(9.9);
  assert.deepEqual(await get(), { calls: 1 }, "cached within the period");
  await clock.advance(0.2);
  assert.deepEqual(await get(), { calls: 2 }, "refreshed after the period");
});

Deno.test("`Prober` takes the caching period from settings.probing.cachePeriod, read at each request", async () => {
  const clock = new FakeClock();
  const settings = new kopf.OperatorSettings();
  settings.probing.cachePeriod = 1;
  let calls = 0;
  const prober = new Prober({
    probes: () => [probe("calls", () => ++calls)],
    env: { ...env, settings },
    clock,
  });
  prober.ready();
  const get = async () => await (await prober.handle(new Request("http://x/healthz"))).json();
  assert.deepEqual(await get(), { calls: 1 });
  await clock.advance(0.9);
  assert.deepEqual(await get(), { calls: 1 }, "cached within the period");
  await clock.advance(0.2);
  assert.deepEqual(await get(), { calls: 2 }, "refreshed after the period");
  settings.probing.cachePeriod = 0; // e.g. by a startup handler, after the server started
  assert.deepEqual(await get(), { calls: 3 }, "no caching now");
});

Deno.test("`Prober` runs the probes once for requests that come in parallel", async () => {
  let calls = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const prober = new Prober({
    probes: () => [probe("slow", async () => {
      calls++;
      await gate;
      return "done";
    })],
    env,
    cachePeriod: 0,
  });
  prober.ready();
  const pending = Array.from({ length: 5 }, () => prober.handle(new Request("http://x/healthz")));
  await new Promise((resolve) => setTimeout(resolve, 20));
  release();
  const answers = await Promise.all(pending);
  for (const a of answers) assert.deepEqual(await a.json(), { slow: "done" });
  assert.equal(calls, 1);
});

Deno.test("`Prober` answers 503 before ready, 500 for a failing probe, 404 elsewhere, metrics on /metrics", async () => {
  const metrics = new OperatorMetrics();
  const prober = new Prober({
    probes: () => [probe("broken", () => {
      throw new kopf.PermanentError("the database is unreachable");
    })],
    env,
    metrics,
    path: "/health",
  });
  const before = await prober.handle(new Request("http://x/health"));
  assert.equal(before.status, 503);
  assert.match((await before.json()).error, /not ready/);
  prober.ready();
  const failed = await prober.handle(new Request("http://x/health"));
  assert.equal(failed.status, 500);
  assert.match((await failed.json()).error, /broken.*the database is unreachable/);
  const other = await prober.handle(new Request("http://x/healthz"));
  assert.equal(other.status, 404);
  await other.body?.cancel();
  const scraped = await prober.handle(new Request("http://x/metrics"));
  assert.equal(scraped.status, 200);
  assert.equal(scraped.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  assert.match(await scraped.text(), /# TYPE kopf_handler_runs_total counter/);
});

Deno.test("--liveness: 503 while the startup runs, 200 with the probe results once ready, closed at the stop", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  let release!: () => void;
  const startupDone = new Promise<void>((resolve) => (release = resolve));
  kopf.on.startup({ registry }, async function slowStartup() {
    await startupDone;
  });
  kopf.on.probe({ registry, id: "answer" }, () => 42);
  kopf.on.probe({ registry, id: "now" }, () => new Date().toISOString());
  kopf.on.create("kopfexamples", { registry }, () => {});
  const op = startOperator({ registry, kubeconfig: c.api.kubeconfig.path });
  try {
    // The server is up during the startup, and says "not yet".
    let early: Response | undefined;
    const deadline = Date.now() + 10_000;
    while (!early && Date.now() < deadline) {
      // (op.url throws until the server listens.)
      early = await Promise.resolve().then(() => fetch(op.url)).catch(() => undefined);
      if (!early) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(early, "the liveness endpoint answers during the startup");
    assert.equal(early.status, 503);
    await early.body?.cancel();

    release();
    await op.ready;
    const ready = await fetch(op.url);
    assert.equal(ready.status, 200);
    assert.equal(ready.headers.get("content-type"), "application/json");
    const body = await ready.json();
    assert.deepEqual(Object.keys(body).sort(), ["answer", "now"]);
    assert.equal(body.answer, 42);
    assert.ok(!Number.isNaN(Date.parse(body.now)));
    // Cached: the same timestamp comes back at once.
    assert.equal((await (await fetch(op.url)).json()).now, body.now);
  } finally {
    release();
    await op.stop();
  }
  await assert.rejects(() => fetch(op.url));
});

Deno.test("--liveness: a failed startup closes the health server too", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, function failingStartup() {
    throw new kopf.PermanentError("no way");
  });
  const op = startOperator({ registry, kubeconfig: c.api.kubeconfig.path });
  await assert.rejects(() => op.stop(), kopf.OperatorError);
  await assert.rejects(() => fetch(op.url));
});
