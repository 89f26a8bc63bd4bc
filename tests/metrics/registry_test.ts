/**
 * Our Prometheus registry and its text exposition (format 0.0.4): counters,
 * gauges, histograms, labels and their escaping, default labels, numbers,
 * and the mistakes it refuses.
 */
import assert from "node:assert/strict";
import { MetricsRegistry } from "../../mod.ts";

Deno.test("`MetricsRegistry.metrics()` writes HELP, TYPE and samples, a blank line between metrics", async () => {
  const registry = new MetricsRegistry();
  const jobs = registry.counter({ name: "jobs_total", help: "Jobs.\nDone \\ failed." });
  const temp = registry.gauge({ name: "temp", help: "T.", labelNames: ["room"] });
  jobs.inc();
  jobs.inc(2.5);
  temp.set({ room: "a" }, -3);
  temp.set({ room: 'b"\\\n' }, 1e21);
  assert.equal(
    await registry.metrics(),
    [
      "# HELP jobs_total Jobs.\\nDone \\\\ failed.",
      "# TYPE jobs_total counter",
      "jobs_total 3.5",
      "",
      "# HELP temp T.",
      "# TYPE temp gauge",
      'temp{room="a"} -3',
      'temp{room="b\\"\\\\\\n"} 1e+21',
      "",
    ].join("\n"),
  );
  assert.equal(registry.contentType, "text/plain; version=0.0.4; charset=utf-8");
});

Deno.test("`Gauge` sets, goes up and down, writes infinities and NaN by name", async () => {
  const registry = new MetricsRegistry();
  const g = registry.gauge({ name: "g", help: "G.", labelNames: ["k"] });
  g.inc({ k: "up" });
  g.inc({ k: "up" }, 4);
  g.dec({ k: "up" }, 2);
  g.set({ k: "inf" }, Infinity);
  g.set({ k: "-inf" }, -Infinity);
  g.set({ k: "nan" }, NaN);
  assert.equal(g.get({ k: "up" }), 3);
  assert.equal(g.get({ k: "never" }), 0);
  const text = await registry.metrics();
  assert.match(text, /^g\{k="up"\} 3$/m);
  assert.match(text, /^g\{k="inf"\} \+Inf$/m);
  assert.match(text, /^g\{k="-inf"\} -Inf$/m);
  assert.match(text, /^g\{k="nan"\} NaN$/m);
  assert.doesNotMatch(text, /never/, "reading a label set does not make it");
  g.reset();
  assert.equal(await registry.metrics(), "# HELP g G.\n# TYPE g gauge\n");
});

Deno.test("`Gauge`'s collect sets its values at each scrape, awaited", async () => {
  const registry = new MetricsRegistry();
  let n = 0;
  registry.gauge({
    name: "scrapes",
    help: "Scrapes.",
    labelNames: ["of"],
    async collect(gauge) {
      await Promise.resolve();
      gauge.set({ of: "me" }, ++n);
    },
  });
  assert.match(await registry.metrics(), /^scrapes\{of="me"\} 1$/m);
  assert.match(await registry.metrics(), /^scrapes\{of="me"\} 2$/m);
});

Deno.test("`Histogram` counts in cumulative buckets with +Inf, sum and count; buckets sorted", async () => {
  const registry = new MetricsRegistry();
  const h = registry.histogram({
    name: "size",
    help: "Sizes.",
    labelNames: ["kind"],
    buckets: [10, 1],
  });
  for (const v of [0.5, 1, 5, 50]) h.observe({ kind: "x" }, v);
  assert.equal(
    await registry.metrics(),
    [
      "# HELP size Sizes.",
      "# TYPE size histogram",
      'size_bucket{le="1",kind="x"} 2',
      'size_bucket{le="10",kind="x"} 3',
      'size_bucket{le="+Inf",kind="x"} 4',
      'size_sum{kind="x"} 56.5',
      'size_count{kind="x"} 4',
      "",
    ].join("\n"),
  );
});

Deno.test("`Histogram`'s default buckets are prom-client's: 5 ms to 10 s", async () => {
  const registry = new MetricsRegistry();
  registry.histogram({ name: "d", help: "D." }).observe(0.007);
  const les = [...(await registry.metrics()).matchAll(/le="([^"]+)"\} (\d+)/g)]
    .map((m) => `${m[1]}:${m[2]}`);
  assert.deepEqual(les, [
    "0.005:0",
    "0.01:1",
    "0.025:1",
    "0.05:1",
    "0.1:1",
    "0.25:1",
    "0.5:1",
    "1:1",
    "2.5:1",
    "5:1",
    "10:1",
    "+Inf:1",
  ]);
});

Deno.test("`MetricsRegistry` adds default labels after a metric's own, unless it has them", async () => {
  const registry = new MetricsRegistry({ labels: { app: "shop", kind: "default" } });
  registry.counter({ name: "a_total", help: "A." }).inc();
  registry.counter({ name: "b_total", help: "B.", labelNames: ["kind"] }).inc({ kind: "own" });
  const text = await registry.metrics();
  assert.match(text, /^a_total\{app="shop",kind="default"\} 1$/m);
  assert.match(text, /^b_total\{kind="own",app="shop"\} 1$/m);
});

Deno.test("`Counter` tells label sets apart by each value (numbers as text, a NUL in a value too)", () => {
  const registry = new MetricsRegistry();
  const c = registry.counter({ name: "c_total", help: "C.", labelNames: ["a", "b"] });
  c.inc({ a: "x\u0000", b: "y" });
  c.inc({ a: "x", b: "\u0000y" }, 2);
  c.inc({ b: 200, a: "get" });
  c.inc({ a: "get", b: "200" });
  assert.equal(c.get({ a: "x\u0000", b: "y" }), 1);
  assert.equal(c.get({ a: "x", b: "\u0000y" }), 2);
  assert.equal(c.get({ a: "get", b: 200 }), 2);
});

Deno.test("`MetricsRegistry` refuses bad names, taken names, missing or unknown labels, counters going down", () => {
  const registry = new MetricsRegistry();
  const c = registry.counter({ name: "c_total", help: "C.", labelNames: ["verb"] });
  assert.throws(() => registry.gauge({ name: "c_total", help: "again" }), /registered already/);
  assert.throws(() => registry.counter({ name: "bad-name", help: "x" }), TypeError);
  assert.throws(
    () => registry.counter({ name: "x_total", help: "x", labelNames: ["__x"] }),
    TypeError,
  );
  assert.throws(
    () => registry.histogram({ name: "h", help: "x", labelNames: ["le"] }),
    /reserved/,
  );
  assert.throws(() => new MetricsRegistry({ labels: { "a-b": "x" } }), TypeError);
  assert.throws(() => c.inc(), /"verb" of c_total has no value/);
  assert.throws(() => c.inc({ verb: "get", code: 1 } as { verb: string }), /not a label/);
  assert.throws(() => c.inc({ verb: "get" }, -1), RangeError);
  assert.throws(() => c.inc({ verb: "get" }, NaN), RangeError);
  assert.equal(c.get({ verb: "get" }), 0);
  // An unknown label is refused on a label set seen before too, and on a metric without labels.
  c.inc({ verb: "list" });
  assert.throws(
    () => c.inc({ verb: "list", code: 1 } as { verb: string }),
    /"code" is not a label/,
  );
  const bare = registry.gauge({ name: "bare", help: "No labels." });
  assert.throws(
    () => bare.set({ x: "1" } as Record<never, string>, 1),
    /"x" is not a label of bare/,
  );
  assert.equal(c.get({ verb: "list" }), 1);
  assert.equal(bare.get(), 0);
  // A missing value or one that is not a number is refused (untyped callers), not stored as NaN.
  const h = registry.histogram({ name: "h_seconds", help: "H.", labelNames: ["k"] });
  const g = registry.gauge({ name: "g", help: "G.", labelNames: ["k"] });
  // deno-lint-ignore no-explicit-any
  const untyped = (f: any, ...args: unknown[]) => () => f(...args);
  assert.throws(untyped(h.observe.bind(h), { k: "a" }), /h_seconds must be a number/);
  assert.throws(untyped(g.set.bind(g), { k: "a" }), /g must be a number/);
  assert.throws(untyped(c.inc.bind(c), { verb: "list" }, "2"), /c_total must be a number/);
  assert.equal(c.get({ verb: "list" }), 1);
  g.set({ k: "a" }, NaN); // NaN given as such is a gauge's value
  assert.ok(Number.isNaN(g.get({ k: "a" })));
});

Deno.test("`labels()` binds a label set once: the same series as the labelled calls, anew after a reset", async () => {
  const registry = new MetricsRegistry();
  const calls = registry.counter({ name: "calls_total", help: "C.", labelNames: ["verb", "code"] });
  const gets = calls.labels({ verb: "get", code: 200 });
  gets.inc();
  calls.inc({ verb: "get", code: "200" }, 2);
  gets.inc(0.5);
  assert.deepEqual([gets.get(), calls.get({ verb: "get", code: 200 })], [3.5, 3.5]);
  assert.match(await registry.metrics(), /^calls_total\{verb="get",code="200"\} 3\.5$/m);
  calls.reset(); // the bound set is forgotten with the others, then counts from zero
  assert.equal(gets.get(), 0);
  assert.doesNotMatch(await registry.metrics(), /^calls_total\{/m);
  gets.inc();
  assert.deepEqual([gets.get(), calls.get({ verb: "get", code: 200 })], [1, 1]);
  const total = registry.counter({ name: "total", help: "T." }).labels({}); // no labels
  total.inc(4);
  assert.match(await registry.metrics(), /^total 4$/m);

  const level = registry.gauge({ name: "level", help: "L.", labelNames: ["tank"] });
  const a = level.labels({ tank: "a" });
  a.set(10);
  a.dec(3);
  a.inc();
  assert.deepEqual([a.get(), level.get({ tank: "a" })], [8, 8]);
  const took = registry.histogram({ name: "took", help: "T.", labelNames: ["step"], buckets: [1] });
  const fetch = took.labels({ step: "fetch" });
  fetch.observe(0.5);
  took.observe({ step: "fetch" }, 2);
  const text = await registry.metrics();
  assert.match(text, /^took_bucket\{le="1",step="fetch"\} 1$/m);
  assert.match(text, /^took_count\{step="fetch"\} 2$/m);
  assert.match(text, /^took_sum\{step="fetch"\} 2\.5$/m);
});

Deno.test("`labels()` refuses a wrong label set when binding, and wrong values at each use", () => {
  const registry = new MetricsRegistry();
  const calls = registry.counter({ name: "calls_total", help: "C.", labelNames: ["verb"] });
  assert.throws(() => calls.labels({} as never), /The label "verb" of calls_total has no value/);
  assert.throws(
    () => calls.labels({ verb: "get", code: 1 } as never),
    /Label "code" is not a label of calls_total \(it has: verb\)/,
  );
  const gets = calls.labels({ verb: "get" });
  assert.throws(
    () => gets.inc(-1),
    /A counter goes up by a finite number ≥ 0, not -1 \(calls_total\)/,
  );
  assert.throws(() => gets.inc(Infinity), RangeError);
  assert.throws(() => gets.inc("1" as never), /The value for calls_total must be a number/);
  const gauge = registry.gauge({ name: "g", help: "G." }).labels({});
  assert.throws(() => gauge.set(undefined as never), /The value for g must be a number/);
  const labels = { verb: "put" };
  const puts = calls.labels(labels);
  labels.verb = "delete"; // the caller's object changed afterwards: the bound set is kept
  puts.inc();
  assert.deepEqual([calls.get({ verb: "put" }), calls.get({ verb: "delete" })], [1, 0]);
  assert.equal(gets.get(), 0);
});
