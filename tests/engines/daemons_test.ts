/**
 * "Daemons", end to end against the embedded API server: spawning for each
 * matching object, the stop-flag and signal, stopping on deletion (the
 * finalizer waits for the daemon; a daemon that ignores its signal is
 * abandoned after its cancellation timeout), on filter mismatch (re-spawned
 * when it matches again) and at exit; initialDelay; restarting per the error
 * protocol; results delivery; the live view of the body.
 *
 * The operator runs on a fake clock (`clocked()` in tests/core/_handling.ts: the daemons'
 * sleeps, delays, backoffs and cancellation waits are on it; the I/O stays real), and the
 * durations are asserted in its time. daemons_clock_test.ts asserts the same protocol to the
 * millisecond with no server at all.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { clocked, FINALIZER, removed, setup } from "../core/_handling.ts";

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
  const t = clocked();
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex", { field: 1 });
  await t.drive(
    async () => (await env.get("kex"))?.metadata.finalizers?.includes(FINALIZER),
    "the finalizer",
  );
  const added = "[default/kex] Adding the finalizer, thus preventing the actual deletion.";
  await t.until(() => runner.output.includes(added), "the finalizer's line");
  await t.until(() => seen.includes(1), "the daemon sees field 1");
  await env.patch("kex", { spec: { field: 2 } });
  await t.until(() => seen.includes(2), "the daemon sees field 2");
  assert.ok(seen.includes(1) && seen.includes(2), `live spec: ${JSON.stringify(seen)}`);
  await removed(env, t, "kex");
  await t.stop(runner);
  assert.deepEqual(reasons, ["resource deleted"]);
  assert.match(runner.output, /\[default\/kex\] Daemon 'monitor' succeeded\./);
  assert.match(runner.output, /\[default\/kex\] Daemon 'monitor' has exited gracefully\./);
  assert.match(runner.output, /Removing the finalizer, thus allowing the actual deletion\./);
});

Deno.test("daemons: one registered after the operator started is spawned (its engine loads at the first cycle that needs it)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function created() {});
  const t = clocked();
  // No daemons or timers yet: no engine loaded.
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  let started = 0;
  kopf.daemon("kopfexamples", { registry }, async function late({ stopped }) {
    started++;
    await stopped.wait();
  });
  await env.create("kex");
  await t.drive(
    async () => (await env.get("kex"))?.metadata.finalizers?.includes(FINALIZER),
    "the finalizer",
  );
  await t.until(() => started > 0, "the late daemon's start");
  assert.equal(started, 1, runner.output);
  await removed(env, t, "kex");
  await t.stop(runner);
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
  const t = clocked();
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => started > 0, "the daemon's start");
  // Quiet for a second of the operator's time (its timers: batches, idle queues) and real turns.
  await t.clock.advanceUntil(() => false, 1);
  const obj = (await env.get("kex"))!;
  assert.ok(obj.metadata.finalizers?.includes(FINALIZER), "the finalizer");
  assert.equal(started, 1);
  assert.equal(
    obj.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"],
    undefined,
  );
  assert.equal(env.patches(), 1, "only the finalizer was written");
  await removed(env, t, "kex");
  await t.stop(runner);
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
  const t = clocked();
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.drive(
    async () => (await env.get("kex"))?.metadata.finalizers?.includes(FINALIZER),
    "the finalizer",
  );
  const t0 = t.clock.now();
  await env.remove("kex");
  await t.clock.advanceUntil(() => false, 0.2);
  assert.ok((await env.get("kex"))?.metadata.deletionTimestamp, "blocked while it runs");
  await t.drive(async () => (await env.get("kex")) === undefined, "kex gone");
  const took = (t.clock.now() - t0) / 1000;
  // Blocked for the backoff and the timeout (plus the deletion's I/O: a few steps), no longer.
  assert.ok(took >= 0.5 && took < 0.7, `backoff + timeout elapsed before the release (${took}s)`);
  assert.ok(
    runner.output.includes(
      "[default/kex] Daemon 'stubborn' did not exit in time. Leaving it orphaned.",
    ),
  );
  release();
  await t.stop(runner);
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
  const t = clocked();
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex", {}, { labels: { watched: "yes" } });
  const until = (n: number) => t.until(() => events.length >= n, `${n} events: ${events}`);
  await until(1);
  assert.deepEqual(events, ["start"]);
  await env.patch("kex", { metadata: { labels: { watched: "no" } } });
  await until(2);
  assert.deepEqual(events, ["start", "stop:filters mismatching"]);
  await t.clock.advance(0.1);
  await env.patch("kex", { metadata: { labels: { watched: "yes" } } });
  await until(3);
  assert.deepEqual(events, ["start", "stop:filters mismatching", "start"]);
  await t.stop(runner);
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
  const t = clocked();
  kopf.daemon("kopfexamples", { registry, initialDelay: 0.5 }, function oneshot() {
    starts.push(t.clock.now() - t0);
    return { finished: true };
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  const t0 = t.clock.now();
  await env.create("kex");
  await t.drive(
    async () => (await env.get("kex"))?.status?.oneshot?.finished === true,
    "the result in the status",
  );
  const exited = "[default/kex] Daemon 'oneshot' has exited on its own.";
  await t.until(() => runner.output.includes(exited), "the exit's line");
  await env.patch("kex", { spec: { x: 1 } });
  await t.clock.advanceUntil(() => false, 1); // the change processed: no restart
  await t.stop(runner);
  assert.equal(starts.length, 1, "not restarted");
  // The creation processed (its I/O: a few steps), then the delay.
  assert.ok(starts[0]! >= 500 && starts[0]! < 600, `postponed: started after ${starts[0]}ms`);
});

Deno.test("daemons: errors — TemporaryError restarts after its delay, arbitrary errors after backoff, PermanentError stops", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const retries: number[] = [];
  const at: number[] = [];
  const t = clocked();
  kopf.daemon("kopfexamples", { registry, backoff: 0.3 }, function flaky({ retry }) {
    retries.push(retry);
    at.push(t.clock.now());
    if (retry < 2) throw new kopf.TemporaryError("I'll be back!", { delay: 0.1 });
    if (retry < 3) throw new Error("Something happened!");
    throw new kopf.PermanentError("Bye-bye!");
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  const failed = "[default/kex] Daemon 'flaky' failed permanently: Bye-bye!";
  await t.until(() => runner.output.includes(failed), "the permanent failure");
  await t.clock.advanceUntil(() => false, 1); // no restart after it
  await removed(env, t, "kex");
  await t.stop(runner);
  assert.deepEqual(retries, [0, 1, 2, 3]);
  // The TemporaryError's delay twice, then the backoff (each after the previous attempt's
  // outcome is written: I/O, a few steps).
  const gaps = at.slice(1).map((time, i) => (time - at[i]!) / 1000);
  for (const [g, want] of [[gaps[0]!, 0.1], [gaps[1]!, 0.1], [gaps[2]!, 0.3]]) {
    assert.ok(g! >= want! && g! < want! + 0.1, `gaps ${gaps}`);
  }
  assert.match(runner.output, /Daemon 'flaky' failed temporarily: I'll be back!/);
  assert.match(runner.output, /Daemon 'flaky' failed with an exception\. Will retry\./);
});

Deno.test('daemons: TemporaryError with delay null restarts at once (the docs\' "Restarting")', async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  const t = clocked();
  kopf.daemon("kopfexamples", { registry }, async function restarting({ stopped }) {
    runs.push(t.clock.now());
    if (runs.length < 3) throw new kopf.TemporaryError("Need to restart.", { delay: null });
    await stopped.wait();
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => runs.length >= 3, "restarted twice");
  assert.equal(runs.length, 3);
  // At once, not after the default 60 s: within the steps the restarts' writes take.
  assert.ok(runs[2]! - runs[0]! < 200, `restarted after ${runs[2]! - runs[0]!} ms`);
  await removed(env, t, "kex");
  await t.stop(runner);
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
  const t = clocked();
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  const exceeded = "Daemon 'limited' has exceeded 2 retries.";
  await t.until(() => runner.output.includes(exceeded), "the retries exceeded");
  await t.clock.advanceUntil(() => false, 1); // no more runs of either
  await t.stop(runner);
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
  const t = clocked();
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => calls.length >= 3, "three calls");
  await t.stop(runner);
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
