/**
 * "Daemons", end to end against the embedded API server: spawning for each
 * matching object, the stop-flag and signal, stopping on deletion (the
 * finalizer waits for the daemon; a daemon that ignores its signal is
 * abandoned after its cancellation timeout), on filter mismatch (re-spawned
 * when it matches again) and at exit; initialDelay; restarting per the error
 * protocol; results delivery; the live view of the body.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FINALIZER, setup, sleep } from "../core/_handling.ts";

Deno.test("daemons: spawned per object with a live body; stopped on deletion, which waits for it", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const seen: unknown[] = [];
  const reasons: unknown[] = [];
  kopf.daemon("kopfexamples", { registry }, async function monitor({ signal, stopped, spec }) {
    // `spec` is read once here on purpose: the body itself must be live, not this variable.
    void spec;
    while (!signal.aborted) await kopf.sleep(0.05, signal);
    reasons.push(stopped.reason);
  });
  kopf.daemon("kopfexamples", { registry }, async function watcher(ctx) {
    while (!ctx.stopped.isSet()) {
      seen.push(ctx.spec.field);
      await ctx.stopped.wait(0.05);
    }
  });
  const runner = await env.operator(registry);
  await env.create("kex", { field: 1 });
  await env.waitFor("kex", (o) => o.metadata.finalizers?.includes(FINALIZER));
  await runner.waitFor("[default/kex] Adding the finalizer, thus preventing the actual deletion.");
  await sleep(0.2);
  await env.patch("kex", { spec: { field: 2 } });
  const deadline = Date.now() + 5000;
  while (!seen.includes(2) && Date.now() < deadline) await sleep(0.05);
  assert.ok(seen.includes(1) && seen.includes(2), `live spec: ${JSON.stringify(seen)}`);
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
  assert.deepEqual(reasons, ["resource deleted"]);
  assert.match(runner.output, /\[default\/kex\] Daemon 'monitor' succeeded\./);
  assert.match(runner.output, /\[default\/kex\] Daemon 'monitor' has exited gracefully\./);
  assert.match(runner.output, /Removing the finalizer, thus allowing the actual deletion\./);
});

Deno.test("daemons: one registered after the operator started is spawned (its engine loads at the first cycle that needs it)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function created() {});
  const runner = await env.operator(registry); // no daemons or timers yet: no engine loaded
  let started = 0;
  kopf.daemon("kopfexamples", { registry }, async function late({ stopped }) {
    started++;
    await stopped.wait();
  });
  await env.create("kex");
  await env.waitFor("kex", (o) => o.metadata.finalizers?.includes(FINALIZER));
  const deadline = Date.now() + 5000;
  while (!started && Date.now() < deadline) await sleep(0.02);
  assert.equal(started, 1, runner.output);
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
  assert.match(runner.output, /\[default\/kex\] Daemon 'late' has exited gracefully\./);
});

Deno.test("daemons alone: one write per object (the finalizer), no diff-base annotation (as in Kopf)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let started = 0;
  kopf.daemon("kopfexamples", { registry }, async function watcher({ stopped }) {
    started++;
    await stopped.wait();
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  const obj = await env.waitFor("kex", (o) => o.metadata.finalizers?.includes(FINALIZER));
  for (let i = 0; i < 50 && !started; i++) await sleep(0.02);
  await sleep(0.3);
  assert.equal(started, 1);
  assert.equal(
    obj.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"],
    undefined,
  );
  assert.equal(env.patches(), 1, "only the finalizer was written");
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
});

Deno.test("daemons: one that ignores its signal is abandoned after cancellationTimeout; the finalizer is released", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let release!: () => void;
  const ignored = new Promise<void>((r) => (release = r));
  kopf.daemon(
    "kopfexamples",
    { registry, cancellationBackoff: 0.2, cancellationTimeout: 0.3 },
    async function stubborn() {
      await ignored; // never looks at its signal
    },
  );
  const runner = await env.operator(registry);
  await env.create("kex");
  await env.waitFor("kex", (o) => o.metadata.finalizers?.includes(FINALIZER));
  const t0 = Date.now();
  await env.remove("kex");
  await sleep(0.2);
  assert.ok((await env.get("kex"))?.metadata.deletionTimestamp, "blocked while it runs");
  await env.waitGone("kex");
  const took = (Date.now() - t0) / 1000;
  assert.ok(took >= 0.5, `backoff + timeout elapsed before the release (${took}s)`);
  await runner.waitFor(
    "[default/kex] Daemon 'stubborn' did not exit in time. Leaving it orphaned.",
  );
  release();
  await runner.stop();
  assert.match(
    runner.output,
    /Daemon 'stubborn' is cancelled\. Will wait for its exit for 0\.3s\./,
  );
});

Deno.test("daemons: stopped when the labels stop matching, re-spawned when they match again", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const events: string[] = [];
  kopf.daemon(
    "kopfexamples",
    { registry, labels: { watched: "yes" } },
    async function labelled({ signal, stopped }) {
      events.push("start");
      while (!signal.aborted) await kopf.sleep(1, signal);
      events.push(`stop:${stopped.reason}`);
    },
  );
  const runner = await env.operator(registry);
  await env.create("kex", {}, { labels: { watched: "yes" } });
  const until = async (n: number) => {
    const deadline = Date.now() + 5000;
    while (events.length < n) {
      if (Date.now() >= deadline) throw new Error(`not ${n} events within 5 s: ${events}`);
      await sleep(0.02);
    }
  };
  await until(1);
  assert.deepEqual(events, ["start"]);
  await env.patch("kex", { metadata: { labels: { watched: "no" } } });
  await until(2);
  assert.deepEqual(events, ["start", "stop:filters mismatching"]);
  await sleep(0.1);
  await env.patch("kex", { metadata: { labels: { watched: "yes" } } });
  await until(3);
  assert.deepEqual(events, ["start", "stop:filters mismatching", "start"]);
  await runner.stop();
  assert.deepEqual(events, [
    "start",
    "stop:filters mismatching",
    "start",
    "stop:operator exiting",
  ]);
});

Deno.test("daemons: initialDelay postpones the start; a daemon that returns is not restarted, its result lands in the status", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const starts: number[] = [];
  let t0 = 0;
  kopf.daemon("kopfexamples", { registry, initialDelay: 0.5 }, function oneshot() {
    starts.push(Date.now() - t0);
    return { finished: true };
  });
  const runner = await env.operator(registry);
  t0 = Date.now();
  await env.create("kex");
  const obj = await env.waitFor("kex", (o) => o.status?.oneshot?.finished === true);
  assert.equal(obj.status.oneshot.finished, true);
  await runner.waitFor("[default/kex] Daemon 'oneshot' has exited on its own.");
  await env.patch("kex", { spec: { x: 1 } });
  await sleep(0.3);
  await runner.stop();
  assert.equal(starts.length, 1, "not restarted");
  assert.ok(starts[0]! >= 450, `postponed: started after ${starts[0]}ms`);
});

Deno.test("daemons: errors — TemporaryError restarts after its delay, arbitrary errors after backoff, PermanentError stops", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const retries: number[] = [];
  kopf.daemon("kopfexamples", { registry, backoff: 0.1 }, function flaky({ retry }) {
    retries.push(retry);
    if (retry < 2) throw new kopf.TemporaryError("I'll be back!", { delay: 0.1 });
    if (retry < 3) throw new Error("Something happened!");
    throw new kopf.PermanentError("Bye-bye!");
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] Daemon 'flaky' failed permanently: Bye-bye!");
  await sleep(0.3);
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
  assert.deepEqual(retries, [0, 1, 2, 3]);
  assert.match(runner.output, /Daemon 'flaky' failed temporarily: I'll be back!/);
  assert.match(runner.output, /Daemon 'flaky' failed with an exception\. Will retry\./);
});

Deno.test('daemons: TemporaryError with delay null restarts at once (the docs\' "Restarting")', async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.daemon("kopfexamples", { registry }, async function restarting({ stopped }) {
    runs.push(performance.now());
    if (runs.length < 3) throw new kopf.TemporaryError("Need to restart.", { delay: null });
    await stopped.wait();
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  for (let i = 0; i < 100 && runs.length < 3; i++) await sleep(0.05);
  assert.equal(runs.length, 3, "restarted twice within 5 s");
  assert.ok(runs[2]! - runs[0]! < 2000, `restarted at once, not after the default 60 s`);
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
  assert.match(runner.output, /Daemon 'restarting' failed temporarily: Need to restart\./);
});

Deno.test("daemons: errors: 'ignored' and retries bound the restarts", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let ignoredRuns = 0;
  let limitedRuns = 0;
  kopf.daemon("kopfexamples", { registry, errors: "ignored" }, function ignoring() {
    ignoredRuns++;
    throw new Error("oops");
  });
  kopf.daemon("kopfexamples", { registry, retries: 2, backoff: 0.05 }, function limited() {
    limitedRuns++;
    throw new Error("again");
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("Daemon 'limited' has exceeded 2 retries.");
  await sleep(0.2);
  await runner.stop();
  assert.equal(ignoredRuns, 1);
  assert.equal(limitedRuns, 2);
  assert.match(runner.output, /Daemon 'ignoring' failed with an exception\. Will ignore\./);
});

Deno.test("daemons: a sync daemon checks stopped.isSet() and is re-invoked through TemporaryError; stopped at exit", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: boolean[] = [];
  kopf.daemon("kopfexamples", { registry }, function syncd({ stopped }) {
    calls.push(stopped.isSet());
    if (!stopped.isSet()) throw new kopf.TemporaryError("next step", { delay: 0.05 });
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  const deadline = Date.now() + 5000;
  while (calls.length < 3 && Date.now() < deadline) await sleep(0.02);
  await runner.stop();
  assert.ok(calls.length >= 3, `called ${calls.length} times`);
  assert.ok(calls.every((c) => c === false));
  assert.match(runner.output, /\[default\/kex\] Daemon 'syncd' has exited gracefully\./);
});

Deno.test("daemons: registration checks the options", () => {
  const registry = new kopf.OperatorRegistry();
  assert.throws(
    () => kopf.daemon("kopfexamples", { registry, interval: 1 } as never, () => {}),
    /the option "interval" is not for daemons/,
  );
  assert.throws(
    () => kopf.daemon("kopfexamples", { registry, cancellationTimeout: -1 }, () => {}),
    /cancellationTimeout must be a number of 0 or more/,
  );
  kopf.on.daemon("kopfexamples", { registry, id: "d" }, () => {});
  assert.throws(
    () => kopf.daemon("kopfexamples", { registry, id: "d" }, () => {}),
    kopf.DuplicateHandlerError,
  );
});
