/**
 * "Timers", end to end against the embedded API server, on a fake clock (the operator's, as
 * `KopfRunner`'s `clock`): intervals, sharp intervals, idling after changes, initialDelay, never
 * overlapping itself, errors and backoff overriding the schedule, results delivery (and no API
 * writes for runs with nothing to write), stopping with the object.
 *
 * The schedules are on the fake clock and asserted in its time; the I/O (the watch, the
 * patches, the test's own requests) stays real. The test drives the clock with
 * `advanceUntil` (10 ms steps, a few real timer turns each, so that a step's events are in
 * before the next) or with `drive` (a real request between steps; both in `clocked()`); the bounds keep a
 * few steps of margin where a run follows I/O. timers_clock_test.ts asserts the same schedules
 * to the millisecond with no server at all.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { clocked, type Obj, removed, setup } from "../core/_handling.ts";

/** Gaps between consecutive times, in seconds. */
function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => (t - times[i]!) / 1000);
}

Deno.test("timers: interval runs repeatedly; no API writes for runs without results; stopped with the object", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function tick() {
    runs.push(t.clock.now());
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => runs.length >= 2, "two runs");
  const writes = env.patches();
  await t.until(() => runs.length >= 7, "seven runs");
  assert.equal(env.patches(), writes, "timer runs with nothing to write make no patches");
  for (const g of gaps(runs)) assert.ok(g >= 0.1 - 1e-9 && g < 0.15, `interval gap ${g}`);
  await removed(env, t, "kex");
  const after = runs.length;
  await t.clock.advance(1);
  assert.equal(runs.length, after, "no runs after the deletion");
  await t.stop(runner);
  assert.match(runner.output, /\[default\/kex\] Timer 'tick' succeeded\./);
});

Deno.test("timers: results land in the status under the handler's id", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  let n = 0;
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function counter() {
    return ++n;
  });
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function patcher({ patch }) {
    patch.spec.touched = true;
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  let obj: Obj | undefined;
  await t.drive(async () => {
    obj = await env.get("kex");
    return obj?.status?.counter >= 3 && obj?.spec?.touched;
  }, "the counter ≥ 3 and the patch in the object");
  assert.ok(obj!.status.counter >= 3);
  await t.stop(runner);
});

Deno.test("timers: a slow timer never overlaps itself; non-sharp intervals count from the end", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  let active = 0;
  let maxActive = 0;
  const starts: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, async function slow({ signal }) {
    starts.push(t.clock.now());
    active++;
    maxActive = Math.max(maxActive, active);
    await kopf.sleep(0.25, signal);
    active--;
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => starts.length >= 4, "four starts of the slow timer");
  await t.stop(runner);
  assert.equal(maxActive, 1);
  for (const g of gaps(starts)) {
    assert.ok(g >= 0.35 - 1e-9 && g < 0.4, `duration + interval between starts: ${g}`);
  }
});

Deno.test("timers: sharp intervals fire on the grid whatever the handler takes", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  const starts: number[] = [];
  kopf.timer(
    "kopfexamples",
    { registry, interval: 0.3, sharp: true },
    async function sharp({ signal }) {
      starts.push(t.clock.now());
      await kopf.sleep(0.15, signal);
    },
  );
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => starts.length >= 5, "five starts of the sharp timer");
  await t.stop(runner);
  const first = starts[0]!;
  starts.forEach((time, i) => {
    const drift = (time - first) / 1000 - i * 0.3;
    // Sharp: on the grid (a non-sharp timer would drift by the 0.15 s each run takes).
    assert.ok(Math.abs(drift) < 0.001, `run ${i} is off the grid by ${drift}s`);
  });
});

Deno.test("timers: idle — no runs while changes keep coming within the idle time; runs after", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry, idle: 0.5, interval: 0.1 }, function quiet() {
    runs.push(t.clock.now());
  });
  // What the operator has seen of the changes (an event handler writes nothing).
  let seen: number | undefined;
  kopf.on.event("kopfexamples", { registry }, function see({ spec }) {
    seen = spec?.i;
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  // Keep changing it for 1.2 s, every 0.15 s: never idle for 0.5 s.
  const t0 = t.clock.now();
  let lastChange = t0;
  for (let i = 0; t.clock.now() - t0 < 1200; i++) {
    lastChange = t.clock.now();
    await env.patch("kex", { spec: { i } });
    await t.until(() => seen === i, `the change ${i} seen`, 0.15);
    await t.clock.advance((lastChange + 150 - t.clock.now()) / 1000);
  }
  assert.equal(runs.length, 0, "no runs during the changes");
  await t.until(() => runs.length >= 3, "three runs after the changes");
  await t.stop(runner);
  const firstDelay = (runs[0]! - lastChange) / 1000;
  assert.ok(firstDelay >= 0.5 && firstDelay < 0.65, `first run after the changes: ${firstDelay}s`);
  for (const g of gaps(runs)) assert.ok(g >= 0.1 - 1e-9 && g < 0.15, `interval while idle: ${g}`);
});

Deno.test("timers: initialDelay postpones the first run", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.1, initialDelay: 0.6 }, function late() {
    runs.push(t.clock.now());
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  const t0 = t.clock.now();
  await env.create("kex");
  await t.until(() => runs.length >= 2, "two runs after the initial delay");
  await t.stop(runner);
  const first = (runs[0]! - t0) / 1000;
  assert.ok(first >= 0.6 && first < 0.75, `first run after ${first}s`);
});

Deno.test("timers: errors — backoff and TemporaryError delays override the interval; PermanentError stops", async () => {
  await using env = await setup();
  const t = clocked();
  const registry = new kopf.OperatorRegistry();
  const calls: Array<{ retry: number; at: number }> = [];
  kopf.timer(
    "kopfexamples",
    { registry, interval: 0.6, backoff: 0.1 },
    function flaky({ retry }) {
      calls.push({ retry, at: t.clock.now() });
      if (calls.length === 1) throw new Error("boom");
      if (calls.length === 2) throw new kopf.TemporaryError("wait", { delay: 0.2 });
      if (calls.length === 4) throw new kopf.PermanentError("enough");
    },
  );
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  const failed = "[default/kex] Timer 'flaky' failed permanently: enough";
  await t.until(() => runner.output.includes(failed), "the permanent failure");
  await t.clock.advance(2); // more than three intervals: no more calls
  await t.stop(runner);
  assert.deepEqual(calls.map((c) => c.retry), [0, 1, 2, 0]);
  const g = gaps(calls.map((c) => c.at));
  // Each after the previous call's outcome is written (a patch: real I/O, a few steps).
  assert.ok(g[0]! >= 0.1 && g[0]! < 0.2, `backoff: ${g[0]}`);
  assert.ok(g[1]! >= 0.2 && g[1]! < 0.3, `temporary delay: ${g[1]}`);
  assert.ok(g[2]! >= 0.6 && g[2]! < 0.7, `interval after the success: ${g[2]}`);
  assert.equal(calls.length, 4, "stopped after the permanent error");
});

Deno.test("timers: the context has the signal and stop-flag; registration needs an interval or idle", async () => {
  const registry = new kopf.OperatorRegistry();
  assert.throws(
    () => kopf.timer("kopfexamples", { registry }, () => {}),
    /needs an interval or idle time/,
  );
  assert.throws(
    () => kopf.timer("kopfexamples", { registry, idle: 1, sharp: true }, () => {}),
    /sharp needs an interval/,
  );
  assert.throws(
    () => kopf.timer("kopfexamples", { registry, cancellationTimeout: 1 } as never, () => {}),
    /not for timers/,
  );
  await using env = await setup();
  const t = clocked();
  const seen: Array<[boolean, boolean]> = [];
  kopf.on.timer("kopfexamples", { registry, interval: 0.1 }, function ctx({ signal, stopped }) {
    seen.push([signal.aborted, stopped.isSet()]);
  });
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  await t.until(() => seen.length >= 1, "a run");
  await t.stop(runner);
  assert.deepEqual(seen[0], [false, false]);
});
