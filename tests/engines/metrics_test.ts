/**
 * Prometheus metrics on `/metrics` next to the liveness endpoint: handler
 * runs, failures and durations by handler and kind, API requests by verb and
 * code, the per-object queues' gauges, watch (re)connects by resource — per
 * operator, never shared between two operators of one process.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { cluster, until } from "../reactor/_setup.ts";
import { sample, startOperator } from "./_metrics.ts";

const KEX = "kopfexamples.kopf.dev";

async function scrape(url: string): Promise<string> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return await response.text();
}

Deno.test("/metrics: runs, failures and durations by handler, API requests by verb and code, queue gauges", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const failedOnce = new Set<string>();
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    return "created";
  });
  kopf.on.create("kopfexamples", { registry, backoff: 0.1 }, function flakyFn({ name }) {
    if (!failedOnce.has(name!)) {
      failedOnce.add(name!);
      throw new Error("the first attempt fails");
    }
  });
  kopf.on.event("kopfexamples", { registry }, function eventFn() {});
  await using op = startOperator({ registry, kubeconfig: c.api.kubeconfig.path });
  await op.ready;
  for (const name of ["kex-1", "kex-2"]) await c.createKex("default", name);
  await until(
    () => op.lines.filter((l) => l.includes("All handlers succeeded for creation.")).length === 2,
    "both objects created",
  );

  const text = await scrape(op.metricsUrl);
  const changing = (handler: string) => ({ handler, kind: "changing" });
  assert.equal(sample(text, "kopf_handler_runs_total", changing("createFn")), 2);
  assert.equal(sample(text, "kopf_handler_runs_total", changing("flakyFn")), 4);
  assert.equal(sample(text, "kopf_handler_failures_total", changing("flakyFn")), 2);
  assert.equal(sample(text, "kopf_handler_failures_total", changing("createFn")), undefined);
  assert.ok(sample(text, "kopf_handler_runs_total", { handler: "eventFn", kind: "event" })! >= 2);
  // Durations: a histogram per handler, with its count, sum and buckets.
  assert.match(text, /# TYPE kopf_handler_duration_seconds histogram/);
  assert.equal(sample(text, "kopf_handler_duration_seconds_count", changing("flakyFn")), 4);
  assert.ok(sample(text, "kopf_handler_duration_seconds_sum", changing("createFn"))! >= 0);
  assert.equal(
    sample(text, "kopf_handler_duration_seconds_bucket", { ...changing("createFn"), le: "+Inf" }),
    2,
  );
  // API requests by verb and code: the listing, the watches, the patches of the handling.
  assert.ok(sample(text, "kopf_api_requests_total", { verb: "list", code: "200" })! >= 1);
  assert.ok(sample(text, "kopf_api_requests_total", { verb: "watch", code: "200" })! >= 1);
  assert.ok(sample(text, "kopf_api_requests_total", { verb: "patch", code: "200" })! >= 4);
  // The queue gauges are there for the served resource; once the echoes of the last writes are
  // taken (they may still be queued right after the log line), nothing waits.
  assert.match(text, /# TYPE kopf_queue_depth gauge/);
  let idle = text;
  await until(
    async () => sample(idle = await scrape(op.metricsUrl), "kopf_queue_depth") === 0,
    "an idle queue",
  );
  assert.match(idle, /^kopf_queue_depth\{resource="[^"]*kopfexamples[^"]*"\} 0$/m);
  assert.ok(sample(text, "kopf_watch_connects_total", { resource: KEX })! >= 1);
});

Deno.test("/metrics: watch reconnects are counted when the API server closes the streams", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, () => {});
  // Every watch stream is closed 0.3 s after it opens (from the first one on).
  c.api.setFaults({ closeWatchesEvery: 0.3 });
  await using op = startOperator({ registry, kubeconfig: c.api.kubeconfig.path });
  await op.ready;
  const connects = async () =>
    sample(await scrape(op.metricsUrl), "kopf_watch_connects_total", { resource: KEX }) ?? 0;
  await until(async () => (await connects()) >= 1, "the first watch connect");
  const before = await connects();
  await until(async () => (await connects()) >= before + 3, "three reconnects counted");
  assert.ok((c.api.faultCounts.watchClosed ?? 0) >= 3, "the server did close the streams");
});

Deno.test("/metrics: two operators in one process keep separate metrics", async () => {
  await using c = await cluster();
  for (const ns of ["ns-a", "ns-b"]) await c.createNamespace(ns);
  const registryA = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry: registryA }, function createA() {});
  const registryB = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry: registryB }, function createB() {});
  kopf.on.create("kopfexamples", { registry: registryB }, function createB2() {});
  const common = { kubeconfig: c.api.kubeconfig.path };
  await using a = startOperator({ ...common, registry: registryA, namespaces: ["ns-a"] });
  // B records into a metrics object of the application's own (also served on its /metrics).
  const metricsB = new kopf.OperatorMetrics({ labels: { operator: "b" } });
  await using b = startOperator({
    ...common,
    registry: registryB,
    namespaces: ["ns-b"],
    metrics: metricsB,
  });
  await Promise.all([a.ready, b.ready]);
  await c.createKex("ns-a", "kex-a1");
  await c.createKex("ns-b", "kex-b1");
  await c.createKex("ns-b", "kex-b2");
  const created = (lines: string[]) =>
    lines.filter((l) => l.includes("All handlers succeeded for creation.")).length;
  await until(() => created(a.lines) === 1 && created(b.lines) === 2, "all created");

  const textA = await scrape(a.metricsUrl);
  const textB = await scrape(b.metricsUrl);
  assert.equal(sample(textA, "kopf_handler_runs_total", { handler: "createA" }), 1);
  assert.equal(sample(textA, "kopf_handler_runs_total", { handler: "createB" }), undefined);
  assert.equal(sample(textB, "kopf_handler_runs_total", { handler: "createB" }), 2);
  assert.equal(sample(textB, "kopf_handler_runs_total", { handler: "createA" }), undefined);
  assert.equal(
    sample(textB, "kopf_handler_runs_total", { handler: "createB2", operator: "b" }),
    2,
  );
  // The served text is the object's own (read both until they agree: an event post of B's may
  // still be counted between two reads).
  let own = "", served = "";
  await until(async () => {
    own = await metricsB.metrics();
    served = await scrape(b.metricsUrl);
    return own === served;
  }, "the application's metrics object serves what /metrics shows");
  assert.equal(own, served);
});

Deno.test("/metrics: daemon and timer runs are recorded by kind", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function tickFn() {});
  kopf.daemon("kopfexamples", { registry }, function onceFn() {
    return "done";
  });
  await using op = startOperator({ registry, kubeconfig: c.api.kubeconfig.path });
  await op.ready;
  await c.createKex("default", "kex-1");
  await until(async () => {
    const text = await scrape(op.metricsUrl);
    return (sample(text, "kopf_handler_runs_total", { handler: "tickFn", kind: "timer" }) ?? 0) >=
        3 &&
      sample(text, "kopf_handler_runs_total", { handler: "onceFn", kind: "daemon" }) === 1;
  }, "timer and daemon runs in the metrics");
});
