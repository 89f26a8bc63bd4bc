/**
 * Daemons on a fake clock, exactly: the cancellation escalation (the flag,
 * `cancellationBackoff`, "cancelled", `cancellationTimeout`, abandoned), a
 * daemon that exits on its own, the protocol's outcomes (a TemporaryError's
 * delay, the backoff, a PermanentError, exhausted retries), a `timeout` that
 * abandons a daemon ignoring its signal, and the waits at deletion and exit.
 * No API server, no wall clock.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { gate, Rig } from "./_spawning.ts";

Deno.test("daemons: cancellation escalates — signal, cancellationBackoff, cancelled, cancellationTimeout, orphaned", async () => {
  const rig = new Rig();
  const stuck = gate();
  let stopped: kopf.DaemonStopped | undefined;
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, cancellationBackoff: 2, cancellationTimeout: 3 },
    async function stubborn(ctx) {
      stopped = ctx.stopped;
      await stuck.promise; // ignores its signal
    },
  );
  rig.observe();
  await rig.clock.advance(10);
  rig.stop();
  let waited: boolean | undefined;
  void rig.daemons.waitObject(rig.state!).then((all) => (waited = all));
  assert.deepEqual(stopped?.reasons, ["resource deleted"]);
  assert.ok(rig.lines.includes("Daemon 'stubborn' is signalled to exit (resource deleted)."));
  await rig.clock.advance(1.999);
  assert.deepEqual(stopped?.reasons, ["resource deleted"], "graceful for the backoff");
  await rig.clock.advance(0.001);
  assert.deepEqual(stopped?.reasons, ["resource deleted", "daemon cancelled"]);
  assert.ok(rig.lines.includes("Daemon 'stubborn' is cancelled. Will wait for its exit for 3s."));
  await rig.clock.advance(2.999);
  assert.equal(waited, undefined, "the deletion still waits");
  assert.equal(rig.running, 1);
  await rig.clock.advance(0.001);
  assert.deepEqual(stopped?.reasons, ["resource deleted", "daemon cancelled", "daemon abandoned"]);
  assert.ok(rig.lines.includes("Daemon 'stubborn' did not exit in time. Leaving it orphaned."));
  assert.equal(rig.running, 0);
  assert.equal(waited, true, "the deletion goes on at 15 s");
  stuck.open();
  await rig.clock.advance(0);
});

Deno.test("daemons: one that exits within its cancellationBackoff is never cancelled", async () => {
  const rig = new Rig();
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, cancellationBackoff: 5, cancellationTimeout: 5 },
    async function polite({ stopped }) {
      await stopped.wait();
      await rig.clock.sleep(1); // cleans up for a second
    },
  );
  rig.observe();
  rig.stop();
  let waited: boolean | undefined;
  void rig.daemons.waitObject(rig.state!).then((all) => (waited = all));
  await rig.clock.advance(0.999);
  assert.equal(waited, undefined);
  await rig.clock.advance(0.001);
  assert.equal(waited, true);
  assert.ok(rig.lines.includes("Daemon 'polite' has exited gracefully."));
  assert.ok(!rig.lines.some((l) => l.includes("is cancelled")));
  await rig.clock.advance(20);
  assert.ok(!rig.lines.some((l) => l.includes("orphaned")));
});

Deno.test("daemons: without a cancellationTimeout, the deletion re-checks every cancellationPolling seconds", async () => {
  const rig = new Rig();
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, cancellationPolling: 4 },
    async function slow({ stopped }) {
      await stopped.wait();
      await rig.clock.sleep(10);
    },
  );
  rig.observe();
  rig.stop();
  const checks: Array<[number, boolean]> = [];
  for (let i = 0; i < 3; i++) {
    let all: boolean | undefined;
    const waiting = rig.daemons.waitObject(rig.state!).then((a) => (all = a));
    assert.ok(
      await rig.clock.advanceUntil(() => all !== undefined, 60),
      "a check within 60 fake s",
    );
    await waiting;
    checks.push([rig.now(), all!]);
  }
  assert.deepEqual(checks, [[4, false], [8, false], [10, true]]);
  assert.ok(rig.lines.includes("Daemon 'slow' is still exiting. The next check is in 4 seconds."));
});

Deno.test("daemons: a daemon that returns exits on its own; its result lands in the status; never restarted", async () => {
  const rig = new Rig();
  const starts: number[] = [];
  kopf.daemon("kopfexamples", { registry: rig.registry, initialDelay: 3 }, function oneshot() {
    starts.push(rig.now());
    return { finished: true };
  });
  rig.observe();
  await rig.clock.advance(2.999);
  assert.deepEqual(starts, []);
  await rig.clock.advance(0.001);
  assert.deepEqual(starts, [3]);
  assert.deepEqual(rig.patches, [{ at: 3, patch: { status: { oneshot: { finished: true } } } }]);
  assert.ok(rig.lines.includes("Daemon 'oneshot' succeeded."));
  assert.ok(rig.lines.includes("Daemon 'oneshot' has exited on its own."));
  assert.equal(rig.running, 0);
  rig.observe({ spec: { x: 1 } });
  await rig.clock.advance(60);
  assert.deepEqual(starts, [3], "not restarted by later events");
});

Deno.test("daemons: the protocol — a TemporaryError re-runs after exactly its delay, an error after the backoff, a PermanentError stops", async () => {
  const rig = new Rig();
  const calls: Array<[number, number]> = [];
  kopf.daemon("kopfexamples", { registry: rig.registry, backoff: 4 }, function flaky({ retry }) {
    calls.push([rig.now(), retry]);
    if (calls.length === 1) throw new kopf.TemporaryError("I'll be back!", { delay: 7 });
    if (calls.length === 2) throw new kopf.TemporaryError("At once.", { delay: null });
    if (calls.length === 3) throw new Error("Something happened!");
    throw new kopf.PermanentError("Bye-bye!");
  });
  rig.observe();
  await rig.clock.advance(100);
  assert.deepEqual(calls, [[0, 0], [7, 1], [7.001, 2], [11.001, 3]]);
  assert.ok(rig.lines.includes("Daemon 'flaky' failed temporarily: I'll be back!"));
  assert.ok(rig.lines.includes("Daemon 'flaky' failed with an exception. Will retry."));
  assert.ok(rig.lines.includes("Daemon 'flaky' failed permanently: Bye-bye!"));
  assert.ok(rig.lines.includes("Daemon 'flaky' has exited after a permanent failure."));
  assert.equal(rig.running, 0);
  rig.observe({ spec: { x: 1 } });
  await rig.clock.advance(100);
  assert.equal(calls.length, 4, "not re-spawned after a permanent failure");
});

Deno.test("daemons: without their own backoff, errors retry after settings.execution.defaultBackoff", async () => {
  const rig = new Rig();
  rig.settings.execution.defaultBackoff = 30;
  const runs: number[] = [];
  kopf.daemon("kopfexamples", { registry: rig.registry }, async function failing({ stopped }) {
    runs.push(rig.now());
    if (runs.length < 3) throw new Error("not yet");
    await stopped.wait();
  });
  rig.observe();
  await rig.clock.advance(100);
  assert.deepEqual(runs, [0, 30, 60]);
  await rig.close();
  assert.ok(rig.lines.includes("Daemon 'failing' has exited gracefully."));
});

Deno.test("daemons: exhausted retries end the daemon; errors 'ignored' end it at the first error", async () => {
  const rig = new Rig();
  const limited: number[] = [];
  let ignored = 0;
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, retries: 3, backoff: 2 },
    function limitedFn() {
      limited.push(rig.now());
      throw new Error("again");
    },
  );
  kopf.daemon("kopfexamples", { registry: rig.registry, errors: "ignored" }, function ignoring() {
    ignored++;
    throw new Error("oops");
  });
  rig.observe();
  await rig.clock.advance(60);
  assert.deepEqual(limited, [0, 2, 4]);
  assert.ok(
    rig.lines.includes(
      "Daemon 'limitedFn' failed permanently: Daemon 'limitedFn' has exceeded 3 retries.",
    ),
  );
  assert.equal(ignored, 1);
  assert.ok(rig.lines.includes("Daemon 'ignoring' failed with an exception. Will ignore."));
  assert.equal(rig.running, 0);
});

Deno.test("daemons: `timeout: 1` abandons a daemon that ignores its signal at 1 s, with HandlerTimeoutError", async () => {
  const rig = new Rig();
  const stuck = gate();
  let signal: AbortSignal | undefined;
  let stopped: kopf.DaemonStopped | undefined;
  let calls = 0;
  kopf.daemon("kopfexamples", { registry: rig.registry, timeout: 1 }, async function slow(ctx) {
    calls++;
    signal = ctx.signal;
    stopped = ctx.stopped;
    await stuck.promise; // ignores its signal
  });
  rig.observe();
  await rig.clock.advance(0.999);
  assert.equal(signal?.aborted, false);
  assert.equal(stopped?.isSet(), false);
  await rig.clock.advance(0.001);
  assert.equal(signal?.aborted, true);
  assert.ok(signal?.reason instanceof kopf.HandlerTimeoutError);
  assert.ok(
    rig.lines.includes("Daemon 'slow' failed permanently: Daemon 'slow' has timed out after 1s."),
    rig.lines.join("\n"),
  );
  assert.ok(rig.lines.includes("Daemon 'slow' has exited after a permanent failure."));
  // The signal aborted with the timeout; the flag only says that the daemon's run is over.
  assert.deepEqual(stopped?.reasons, ["done"]);
  assert.equal(rig.running, 0, "no longer waited for");
  stuck.open();
  await rig.clock.advance(60);
  assert.ok(rig.lines.includes("Daemon 'slow' has finished after its timeout; ignored."));
  assert.equal(calls, 1);
});

Deno.test("daemons: the context's signal follows the stop-flag (with and without a timeout); `stopped` is the flag", async () => {
  const rig = new Rig();
  const seen = new Map<string, { signal: AbortSignal; stopped: kopf.DaemonStopped }>();
  for (const [id, timeout] of [["untimed", undefined], ["timed", 100]] as const) {
    kopf.daemon("kopfexamples", { registry: rig.registry, id, timeout }, async (ctx) => {
      seen.set(id, { signal: ctx.signal, stopped: ctx.stopped });
      await ctx.stopped.wait();
    });
  }
  rig.observe();
  await rig.clock.advance(1);
  for (const { signal } of seen.values()) assert.equal(signal.aborted, false);
  rig.stop();
  for (const [id, { signal, stopped }] of seen) {
    assert.equal(signal.aborted, true, id);
    assert.equal(signal.reason, "resource deleted", id);
    assert.equal(stopped.reason, "resource deleted", id);
  }
  assert.equal(await rig.daemons.waitObject(rig.state!), true);
});

Deno.test("daemons: stopped when the filters stop matching, re-spawned once exited and matching again", async () => {
  const rig = new Rig();
  const events: string[] = [];
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, labels: { watched: "yes" } },
    async function labelled({ stopped }) {
      events.push(`start@${rig.now()}`);
      await stopped.wait();
      events.push(`stop:${stopped.reason}@${rig.now()}`);
    },
  );
  rig.observe({ metadata: { labels: { watched: "yes" } } });
  await rig.clock.advance(5);
  rig.observe({ metadata: { labels: { watched: "no" } } });
  await rig.clock.advance(5);
  rig.observe({ metadata: { labels: { watched: "yes" } } });
  await rig.clock.advance(1);
  assert.deepEqual(events, ["start@0", "stop:filters mismatching@5", "start@10"]);
  await rig.close();
  assert.deepEqual(events.slice(3), ["stop:operator exiting@11"]);
});

Deno.test("daemons: at the operator's exit, one ignoring its signal (no cancellationTimeout) is left after 5 s", async () => {
  const rig = new Rig();
  const stuck = gate();
  kopf.daemon("kopfexamples", { registry: rig.registry }, async function deaf() {
    await stuck.promise;
  });
  rig.observe();
  let closed = false;
  void rig.daemons.close().then(() => (closed = true));
  await rig.clock.advance(4.999);
  assert.equal(closed, false);
  await rig.clock.advance(0.001);
  assert.equal(closed, true);
  assert.ok(
    rig.lines.includes("Daemon 'deaf' did not exit at the operator's exit. Leaving it orphaned."),
  );
  rig.observe({ spec: { x: 1 } });
  assert.equal(rig.daemons.size, 1, "nothing new is spawned after the close");
  stuck.open();
  await rig.clock.advance(0);
  assert.equal(rig.daemons.size, 0);
});

// Issue 24: a daemon ignoring its stop request kept the finalizer with no line at info level.
Deno.test("daemons: a deletion waiting for a stuck daemon says so at info — what, since when, until when, what to do", async () => {
  const rig = new Rig();
  const stuck = gate();
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, cancellationPolling: 4 },
    async function stubborn() {
      await stuck.promise; // ignores `stopped` and its signal
    },
  );
  rig.observe();
  await rig.clock.advance(1);
  rig.stop();
  const infos = () =>
    rig.records.filter((r) => r.level === "info" && r.message.startsWith("The deletion waits"));
  const poll = async () => {
    let all: boolean | undefined;
    const waiting = rig.daemons.waitObject(rig.state!).then((a) => (all = a));
    assert.ok(
      await rig.clock.advanceUntil(() => all !== undefined, 60),
      "a check within 60 fake s",
    );
    await waiting;
    return all;
  };
  assert.equal(await poll(), false);
  assert.deepEqual(infos().map((r) => [r.prefix, r.message]), [[
    "[default/kex] ",
    "The deletion waits for Daemon 'stubborn', asked to exit 4s ago (resource deleted), before " +
    "the finalizer is released: with no time limit (it has no cancellationTimeout; re-checked " +
    "every 4s); to stop sooner, make it return when its `stopped` flag is set or its `signal` " +
    "aborts (e.g. `await stopped.wait(...)`, `kopf.sleep(..., signal)`), or give it a " +
    "cancellationTimeout to abandon it after that long.",
  ]]);
  // Not at every re-check: at debug level, and again at info level after 10 minutes.
  assert.equal(await poll(), false);
  assert.equal(infos().length, 1);
  assert.ok(
    rig.lines.includes("Daemon 'stubborn' is still exiting. The next check is in 4 seconds."),
  );
  for (let i = 0; i < 149; i++) await poll(); // 8 s + 149 × 4 s = 604 s since the request
  assert.equal(infos().length, 2);
  assert.match(infos()[1]!.message, /asked to exit 604s ago/);
  stuck.open();
  assert.equal(await poll(), true);
});

Deno.test("daemons: with a cancellation timeout, the info line says when it is cancelled and abandoned", async () => {
  const rig = new Rig();
  const stuck = gate();
  kopf.daemon(
    "kopfexamples",
    {
      registry: rig.registry,
      cancellationPolling: 10,
      cancellationBackoff: 15,
      cancellationTimeout: 30,
    },
    async function stubborn() {
      await stuck.promise;
    },
  );
  rig.observe();
  rig.stop();
  const poll = async () => {
    let all: boolean | undefined;
    const waiting = rig.daemons.waitObject(rig.state!).then((a) => (all = a));
    assert.ok(
      await rig.clock.advanceUntil(() => all !== undefined, 60),
      "a check within 60 fake s",
    );
    await waiting;
    return all;
  };
  assert.equal(await poll(), false);
  const infos = () => rig.records.filter((r) => r.level === "info").map((r) => r.message);
  assert.match(
    infos().at(-1)!,
    /^The deletion waits for Daemon 'stubborn', asked to exit 10s ago \(resource deleted\), before the finalizer is released: it is cancelled 5s from now \(cancellationBackoff 15s\) and abandoned 35s from now \(cancellationTimeout 30s\); to stop sooner, make it return when its `stopped` flag is set/,
  );
  assert.equal(await poll(), false); // 20 s: cancelled at 15 s; no info line again so soon
  assert.equal(infos().length, 1);
  rig.state!.running.get("stubborn")!.toldAt = undefined; // as if 10 minutes had passed
  assert.equal(await poll(), false); // 30 s
  assert.match(
    infos().at(-1)!,
    /asked to exit 30s ago \(resource deleted\), before the finalizer is released: cancelled 15s ago, it is abandoned 15s from now \(cancellationTimeout 30s\); to stop sooner/,
  );
  stuck.open();
  await rig.clock.advance(0);
});
