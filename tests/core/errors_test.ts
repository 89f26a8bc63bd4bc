/**
 * "Error handling", end to end: TemporaryError with its delay, arbitrary
 * errors retried after `backoff` (60 s by default), `errors: "permanent"`
 * and `"ignored"`, PermanentError, `retries` and `timeout` limits — with
 * Kopf's log lines — and what happens on errors of the framework itself.
 *
 * The delays, backoffs and timeouts are on the operator's fake clock (`clocked()` in
 * _handling.ts; the I/O stays real) and asserted in its time: each retry comes after its delay
 * plus the few 10 ms steps its writes and their echoes take.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import {
  annotations,
  clocked,
  count,
  kopfAnnotations,
  LAST_HANDLED,
  type Obj,
  setup,
} from "./_handling.ts";

const SUCCEEDED = "[default/kex] All handlers succeeded for creation.";

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => (t - times[i]!) / 1000);
}

Deno.test("errors: a TemporaryError retries the handler after its delay, counting retries", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const times: number[] = [];
  const retries: number[] = [];
  const t = clocked();
  kopf.on.create("kopfexamples", { registry }, function create_fn({ retry }) {
    times.push(t.clock.now());
    retries.push(retry);
    if (retry < 2) throw new kopf.TemporaryError("not yet", { delay: 0.5 });
    return "done";
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => runner.output.includes(SUCCEEDED), "the creation handled");
  let obj: Obj | undefined;
  // The outcome: the annotation (on the object) and the result (the status: another request).
  await t.drive(async () => {
    obj = await env.get("kex");
    return !!annotations(obj)[LAST_HANDLED] && obj?.status?.create_fn !== undefined;
  }, "the annotation and the result");
  await t.stop(runner);
  assert.deepEqual(retries, [0, 1, 2]);
  for (const gap of gaps(times)) assert.ok(gap >= 0.5 && gap < 0.55, `gap ${gap}s`);
  assert.equal(
    count(runner.output, "[default/kex] Handler 'create_fn' failed temporarily: not yet"),
    2,
  );
  assert.equal(obj!.status.create_fn, "done");
  assert.deepEqual(Object.keys(kopfAnnotations(obj)), ["last-handled-configuration"]);
});

Deno.test("errors: arbitrary errors are retried after the handler's backoff ('failed with an exception. Will retry.')", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const times: number[] = [];
  const t = clocked();
  kopf.on.create("kopfexamples", { registry, backoff: 0.5 }, function create_fn({ retry }) {
    times.push(t.clock.now());
    if (retry === 0) throw new Error("boom");
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => runner.output.includes(SUCCEEDED), "the creation handled");
  await t.stop(runner);
  assert.equal(times.length, 2);
  assert.ok(gaps(times)[0]! >= 0.5 && gaps(times)[0]! < 0.55, `gap ${gaps(times)[0]}s`);
  assert.match(
    runner.output,
    /\[default\/kex\] Handler 'create_fn' failed with an exception\. Will retry\./,
  );
  assert.match(runner.output, /boom/);
});

Deno.test("errors: without a delay or backoff, temporary and arbitrary errors sleep 60 s (as stored in the progress records)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function temp_fn() {
    throw new kopf.TemporaryError("later");
  });
  kopf.on.create("kopfexamples", { registry }, function exc_fn() {
    throw new Error("oops");
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  const obj = await env.waitFor(
    "kex",
    (o) => !!kopfAnnotations(o).temp_fn && !!kopfAnnotations(o).exc_fn,
  );
  await runner.stop();
  for (const id of ["temp_fn", "exc_fn"]) {
    const record = JSON.parse(kopfAnnotations(obj)[id]!);
    const sleep = (Date.parse(record.delayed) - Date.parse(record.started)) / 1000;
    assert.ok(sleep > 59 && sleep < 61, `${id} sleeps ${sleep}s`);
    assert.equal(record.retries, 1);
    assert.equal(record.success, false);
    assert.equal(record.failure, false);
  }
  assert.equal(JSON.parse(kopfAnnotations(obj).temp_fn!).message, "later");
  assert.equal(JSON.parse(kopfAnnotations(obj).exc_fn!).message, "oops");
  assert.equal(annotations(obj)[LAST_HANDLED], undefined, "creation is not finished");
});

Deno.test("errors: settings.execution.defaultBackoff replaces the 60 s for handlers without backoff", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const times: number[] = [];
  const t = clocked();
  kopf.on.create("kopfexamples", { registry }, function create_fn({ retry }) {
    times.push(t.clock.now());
    if (retry === 0) throw new Error("boom");
  });
  const settings = new kopf.OperatorSettings();
  settings.execution.defaultBackoff = 0.4;
  const runner = await env.operator(registry, settings, { clock: t.clock });
  await env.create("kex");
  await t.until(() => runner.output.includes(SUCCEEDED), "the creation handled");
  await t.stop(runner);
  assert.equal(times.length, 2);
  assert.ok(gaps(times)[0]! >= 0.4 && gaps(times)[0]! < 0.45, `gap ${gaps(times)[0]}s`);
});

Deno.test("errors: errors='permanent' and PermanentError stop the handler, errors='ignored' goes on; the cycle completes", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: string[] = [];
  kopf.on.create(
    "kopfexamples",
    { registry, errors: "permanent", backoff: 0.1 },
    function perm_fn() {
      calls.push("perm_fn");
      throw new Error("broken");
    },
  );
  kopf.on.create("kopfexamples", { registry, backoff: 0.1 }, function fatal_fn() {
    calls.push("fatal_fn");
    throw new kopf.PermanentError("nope");
  });
  kopf.on.create("kopfexamples", { registry, errors: "ignored", backoff: 0.1 }, function ign_fn() {
    calls.push("ign_fn");
    throw new Error("whatever");
  });
  kopf.on.create("kopfexamples", { registry }, function next_fn() {
    calls.push("next_fn");
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] Creation is processed: 2 succeeded; 2 failed.");
  const obj = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(calls, ["perm_fn", "fatal_fn", "ign_fn", "next_fn"]);
  assert.match(
    runner.output,
    /\[default\/kex\] Handler 'perm_fn' failed with an exception\. Will stop\./,
  );
  assert.match(runner.output, /\[default\/kex\] Handler 'fatal_fn' failed permanently: nope/);
  assert.match(
    runner.output,
    /\[default\/kex\] Handler 'ign_fn' failed with an exception\. Will ignore\./,
  );
  assert.deepEqual(Object.keys(kopfAnnotations(obj)), ["last-handled-configuration"]);
});

Deno.test("errors: retries=N fails the handler with HandlerRetriesError after N attempts", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const retries: number[] = [];
  kopf.on.create(
    "kopfexamples",
    { registry, retries: 3, backoff: 0.1 },
    function create_fn({ retry }) {
      retries.push(retry);
      throw new Error("again");
    },
  );
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] Creation is processed: 0 succeeded; 1 failed.");
  await runner.stop();
  assert.deepEqual(retries, [0, 1, 2]);
  assert.match(
    runner.output,
    /\[default\/kex\] Handler 'create_fn' failed permanently: Handler 'create_fn' has exceeded 3 retries\./,
  );
});

Deno.test("errors: timeout fails the handler with HandlerTimeoutError once its runtime is over", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const runtimes: number[] = [];
  const t = clocked();
  kopf.on.create("kopfexamples", { registry, timeout: 0.6 }, function create_fn({ runtime }) {
    runtimes.push(runtime);
    throw new kopf.TemporaryError("slow", { delay: 0.25 });
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  const failed = "[default/kex] Creation is processed: 0 succeeded; 1 failed.";
  await t.until(() => runner.output.includes(failed), "the creation failed");
  await t.stop(runner);
  assert.ok(runtimes.length >= 2 && runtimes.length <= 4, `attempts: ${runtimes}`);
  assert.ok(runtimes.every((r) => r <= 0.6), `runtimes: ${runtimes}`);
  assert.match(
    runner.output,
    /\[default\/kex\] Handler 'create_fn' failed permanently: Handler 'create_fn' has timed out after 0\.\d+s\./,
  );
});

Deno.test("errors: unexpected errors of the framework throttle the object by settings.batching.errorDelays; other objects go on", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const handled: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn({ name }) {
    handled.push(name);
  });
  const settings = new kopf.OperatorSettings();
  settings.batching.errorDelays = [0.3, 0.6];
  // A malformed progress record: the framework cannot read the state, the handler never runs.
  await env.create("bad", {}, { annotations: { "kopf.zalando.org/create_fn": "{not json" } });
  const t = clocked();
  const runner = await env.operator(registry, settings, { clock: t.clock });
  const why =
    "due to an unexpected error: SyntaxError: The progress annotation kopf.zalando.org/create_fn is not valid JSON; fix or remove it.";
  const said = (text: string) => () => runner.output.includes(text);
  await t.until(said(`[default/bad] Throttling for 0.3 seconds ${why}`), "the first delay");
  const first = t.clock.now();
  await t.until(said(`[default/bad] Throttling for 0.6 seconds ${why}`), "the second delay");
  const second = t.clock.now();
  // The sequence is exhausted: its last delay repeats.
  await t.until(() => /(Throttling for 0\.6 seconds[^]*){2}/.test(runner.output), "the last again");
  const third = t.clock.now();
  // Each next one after the delay before it (to within a few steps: the retry reads again).
  assert.ok(second - first >= 300 && second - first < 350, `after ${second - first} ms`);
  assert.ok(third - second >= 600 && third - second < 650, `after ${third - second} ms`);
  await env.create("good");
  await t.until(said("[default/good] All handlers succeeded for creation."), "good handled");
  await env.patch("bad", { metadata: { annotations: { "kopf.zalando.org/create_fn": null } } });
  await t.until(said("[default/bad] All handlers succeeded for creation."), "bad handled");
  await t.stop(runner);
  assert.deepEqual(handled, ["good", "bad"]);
});
