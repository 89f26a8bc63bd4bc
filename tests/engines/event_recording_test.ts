/**
 * Events as client-go writes them, end to end over real HTTP against the
 * embedded API server: one Event per object for a line logged once; a line
 * logged 50 times about one object is one Event whose count is bumped by
 * PATCHes, as far as the per-object spam filter lets it (25 at once); the
 * `/metrics` counters add up to every occurrence; and at exit the pending
 * Events are written within `settings.posting.flushTimeout`, or counted and
 * logged once when they cannot be.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { type Cluster, cluster, until } from "../reactor/_setup.ts";
import { sample, startOperator } from "./_metrics.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** What the operator logged: records per object at `info` and above (what is posted), and all. */
interface Recorded {
  sink: kopf.LogSink;
  /** Occurrences of events (per-object records at info and above), by object name. */
  occurrences: Map<string, number>;
  /** Objects whose create handler succeeded. */
  handled: Set<string>;
  /** The operator's own messages (not about objects). */
  messages: string[];
  total(): number;
}

function recorded(): Recorded {
  const r: Recorded = {
    occurrences: new Map(),
    handled: new Set(),
    messages: [],
    total: () => [...r.occurrences.values()].reduce((a, b) => a + b, 0),
    sink: (record) => {
      if (!record.object) r.messages.push(record.message);
      else if (record.level !== "debug") {
        const name = record.object.name!;
        r.occurrences.set(name, (r.occurrences.get(name) ?? 0) + 1);
        if (record.message === "Handler 'createFn' succeeded.") r.handled.add(name);
      }
    },
  };
  return r;
}

async function events(c: Cluster): Promise<Obj[]> {
  return (await c.call("GET", "/api/v1/namespaces/default/events")).body.items;
}

const countOf = (e: Obj): number => e.count ?? 1;

Deno.test("events over HTTP: one Event per object; 50 identical lines about one object are one Event with the count the spam filter allows", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ name, logger }) {
    for (let i = 0; i < (name === "kex-chatty" ? 50 : 1); i++) logger.info("The same line.");
  });
  const log = recorded();
  const metrics = new kopf.OperatorMetrics();
  await using op = startOperator({
    registry,
    kubeconfig: c.api.kubeconfig.path,
    metrics,
    sink: log.sink,
  });
  await op.ready;
  const names = Array.from({ length: 200 }, (_, i) => `kex-${i}`);
  await Promise.all([...names, "kex-chatty"].map((n) => c.createKex("default", n)));
  await until(() => log.handled.size === 201, "all objects handled", 60);

  // Every occurrence ends up posted, folded or dropped — the metrics say when all have.
  let text = "";
  const outcomes = (t: string) =>
    (sample(t, "kopf_events_posted_total") ?? 0) + (sample(t, "kopf_events_folded_total") ?? 0) +
    (sample(t, "kopf_events_dropped_total") ?? 0);
  await until(
    async () => {
      text = await (await fetch(op.metricsUrl)).text();
      return outcomes(text) === log.total();
    },
    "every event written or dropped",
    30,
  );

  const items = await events(c);
  const lines = items.filter((e) => e.message === "The same line.");
  const byObject = Map.groupBy(lines, (e) => e.involvedObject.name as string);
  for (const name of names) {
    assert.deepEqual(byObject.get(name)?.map(countOf), [1], name);
  }
  // The chatty object: one Event, PATCHed up to the spam filter's burst (25 events about an
  // object at once, client-go's); its other lines beyond the burst are dropped, and counted.
  const chatty = items.filter((e) => e.involvedObject.name === "kex-chatty");
  const line = byObject.get("kex-chatty")!;
  assert.equal(line.length, 1);
  const one = line[0]!;
  assert.equal(chatty.reduce((n, e) => n + countOf(e), 0), 25);
  assert.equal(one.count, 25 - (chatty.length - 1)); // any lines Kopf logged before it
  assert.equal(one.reportingComponent, "kopf");
  assert.deepEqual(one.source, { component: "kopf" });
  assert.ok(Date.parse(one.lastTimestamp) >= Date.parse(one.firstTimestamp));

  // The counters match what the server holds.
  const total = items.reduce((n, e) => n + countOf(e), 0);
  assert.equal(sample(text, "kopf_events_posted_total"), items.length);
  assert.equal(sample(text, "kopf_events_folded_total"), total - items.length);
  assert.equal(
    sample(text, "kopf_events_dropped_total", { reason: "spam" }),
    log.occurrences.get("kex-chatty")! - 25,
  );
  for (const reason of ["failed", "overflow", "unflushed"]) {
    assert.equal(sample(text, "kopf_events_dropped_total", { reason }), 0, reason);
  }
  assert.equal(sample(text, "kopf_events_aggregated_total"), 0);
  // Writes: a POST per Event, and far fewer PATCHes than repeats (they coalesce while the
  // chatty Event's write waits or is in flight — into its POST even, when the writers are busy).
  const patches = c.api.countRequests({ verb: "patch", resource: "events" });
  assert.equal(c.api.countRequests({ verb: "create", resource: "events" }), items.length);
  assert.ok(patches <= 24, `${patches} PATCHes`);
});

Deno.test("events over HTTP: with settings.posting.spamBurst raised, 50 identical lines are one Event with count 50", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ logger }) {
    for (let i = 0; i < 50; i++) logger.info("The same line.");
  });
  const settings = new kopf.OperatorSettings();
  settings.posting.spamBurst = 100;
  const log = recorded();
  await using op = startOperator({
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
    sink: log.sink,
  });
  await op.ready;
  await c.createKex("default", "kex-chatty");
  await until(() => log.handled.size === 1, "handled");
  await until(async () => {
    const line = (await events(c)).find((e) => e.message === "The same line.");
    return line?.count === 50;
  }, "the count of 50");
});

/** Runs an operator whose handlers log 5 lines per object, against a server with latency. */
async function exiting(
  c: Cluster,
  options: { objects: number; latencyMs: number; concurrency: number; flushTimeout: number },
) {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ logger }) {
    for (const word of ["one", "two", "three"]) logger.info(`Line ${word}.`);
  });
  const settings = new kopf.OperatorSettings();
  settings.posting.concurrency = options.concurrency;
  settings.posting.flushTimeout = options.flushTimeout;
  const log = recorded();
  const metrics = new kopf.OperatorMetrics();
  const op = startOperator({
    registry,
    settings,
    metrics,
    kubeconfig: c.api.kubeconfig.path,
    sink: log.sink,
  });
  await op.ready;
  const names = Array.from({ length: options.objects }, (_, i) => `kex-${i}`);
  await Promise.all(names.map((n) => c.createKex("default", n)));
  c.api.setFaults({ latencyMs: options.latencyMs }); // the Events' writes (and all else) slow
  await until(() => log.handled.size === options.objects, "all objects handled", 30);
  const written = async () => {
    const text = await metrics.metrics();
    return (sample(text, "kopf_events_posted_total") ?? 0) +
      (sample(text, "kopf_events_folded_total") ?? 0);
  };
  const pendingAtStop = log.total() - await written();
  const started = Date.now();
  await op.stop();
  const seconds = (Date.now() - started) / 1000;
  c.api.setFaults({ latencyMs: null });
  return { log, metrics, pendingAtStop, seconds, written: await written() };
}

Deno.test("events over HTTP: at exit, the pending Events are written within settings.posting.flushTimeout", async () => {
  await using c = await cluster();
  const r = await exiting(c, { objects: 10, latencyMs: 40, concurrency: 1, flushTimeout: 30 });
  assert.ok(r.pendingAtStop > 10, `${r.pendingAtStop} pending at the stop`);
  // All of them are on the server after the stop, none dropped.
  assert.equal(r.written, r.log.total());
  const items = await events(c);
  assert.equal(items.reduce((n, e) => n + countOf(e), 0), r.log.total());
  const text = await r.metrics.metrics();
  assert.equal(sample(text, "kopf_events_dropped_total", { reason: "unflushed" }), 0);
  assert.ok(!r.log.messages.some((m) => m.includes("flushTimeout")));
});

Deno.test("events over HTTP: what cannot be written within settings.posting.flushTimeout is dropped, counted, and logged once", async () => {
  await using c = await cluster();
  const r = await exiting(c, { objects: 5, latencyMs: 300, concurrency: 1, flushTimeout: 0.5 });
  assert.ok(r.seconds < 10, `stopped in ${r.seconds} s`);
  const text = await r.metrics.metrics();
  const unflushed = sample(text, "kopf_events_dropped_total", { reason: "unflushed" })!;
  assert.ok(unflushed > 0);
  assert.equal(r.written + unflushed, r.log.total()); // nothing lost uncounted
  // Only what was written is on the server.
  await new Promise((resolve) => setTimeout(resolve, 400)); // a request cut at the deadline may land
  const items = await events(c);
  assert.ok(items.reduce((n, e) => n + countOf(e), 0) <= r.written + 1);
  const warnings = r.log.messages.filter((m) => m.includes("settings.posting.flushTimeout"));
  assert.deepEqual(warnings, [
    `${unflushed} event(s) were not posted within settings.posting.flushTimeout (0.5s) at exit ` +
    `and are dropped (counted in kopf_events_dropped_total).`,
  ]);
});
