/**
 * "Timers", end to end against the embedded API server: intervals, sharp
 * intervals, idling after changes, initialDelay, never overlapping itself,
 * errors and backoff overriding the schedule, results delivery (and no API
 * writes for runs with nothing to write), stopping with the object.
 *
 * The exact schedules (to the millisecond) are asserted on a fake clock in
 * timers_clock_test.ts; here the windows are wide, only to show that the
 * real clock and the real server give the same behaviour.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { setup, sleep } from "../core/_handling.ts";

/** Gaps between consecutive times, in seconds. */
function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => (t - times[i]!) / 1000);
}

/** Waits until `check()` holds; fails the test, saying what it waited for, if not within `seconds`. */
async function until(check: () => boolean, what: string, seconds = 5): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!check()) {
    if (Date.now() >= deadline) throw new Error(`not within ${seconds} s: ${what}`);
    await sleep(0.02);
  }
}

Deno.test("timers: interval runs repeatedly; no API writes for runs without results; stopped with the object", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function tick() {
    runs.push(Date.now());
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await until(() => runs.length >= 2, "two runs");
  const writes = env.patches();
  await until(() => runs.length >= 7, "seven runs");
  assert.equal(env.patches(), writes, "timer runs with nothing to write make no patches");
  for (const g of gaps(runs)) assert.ok(g >= 0.09 && g < 0.6, `interval gap ${g}`);
  await env.remove("kex");
  await env.waitGone("kex");
  const after = runs.length;
  await sleep(0.3);
  assert.equal(runs.length, after, "no runs after the deletion");
  await runner.stop();
  assert.match(runner.output, /\[default\/kex\] Timer 'tick' succeeded\./);
});

Deno.test("timers: results land in the status under the handler's id", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let n = 0;
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function counter() {
    return ++n;
  });
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function patcher({ patch }) {
    patch.spec.touched = true;
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  const obj = await env.waitFor("kex", (o) => o.status?.counter >= 3 && o.spec?.touched);
  assert.ok(obj.status.counter >= 3);
  await runner.stop();
});

Deno.test("timers: a slow timer never overlaps itself; non-sharp intervals count from the end", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let active = 0;
  let maxActive = 0;
  const starts: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, async function slow() {
    starts.push(Date.now());
    active++;
    maxActive = Math.max(maxActive, active);
    await sleep(0.25);
    active--;
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await until(() => starts.length >= 4, "four starts of the slow timer");
  await runner.stop();
  assert.equal(maxActive, 1);
  for (const g of gaps(starts)) assert.ok(g >= 0.34, `duration + interval between starts: ${g}`);
});

Deno.test("timers: sharp intervals fire on the grid whatever the handler takes", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const starts: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.3, sharp: true }, async function sharp() {
    starts.push(Date.now());
    await sleep(0.15);
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await until(() => starts.length >= 5, "five starts of the sharp timer");
  await runner.stop();
  const first = starts[0]!;
  starts.forEach((t, i) => {
    const drift = (t - first) / 1000 - i * 0.3;
    // Sharp: on the grid (a non-sharp timer would drift by the 0.15 s each run takes).
    assert.ok(Math.abs(drift) < 0.12, `run ${i} is off the grid by ${drift}s`);
  });
});

Deno.test("timers: idle — no runs while changes keep coming within the idle time; runs after", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry, idle: 0.5, interval: 0.1 }, function quiet() {
    runs.push(Date.now());
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  // Keep changing it for 1.2 s, every 0.15 s: never idle for 0.5 s.
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < 1200; i++) {
    await env.patch("kex", { spec: { i } });
    await sleep(0.15);
  }
  assert.equal(runs.length, 0, "no runs during the changes");
  const lastChange = Date.now();
  await until(() => runs.length >= 3, "three runs after the changes");
  await runner.stop();
  const firstDelay = (runs[0]! - lastChange) / 1000;
  assert.ok(firstDelay >= 0.3 && firstDelay < 1.2, `first run after the changes: ${firstDelay}s`);
  for (const g of gaps(runs)) assert.ok(g < 0.6, `interval while idle: ${g}`);
});

Deno.test("timers: initialDelay postpones the first run", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.1, initialDelay: 0.6 }, function late() {
    runs.push(Date.now());
  });
  const runner = await env.operator(registry);
  const t0 = Date.now();
  await env.create("kex");
  await until(() => runs.length >= 2, "two runs after the initial delay");
  await runner.stop();
  assert.ok((runs[0]! - t0) / 1000 >= 0.55, `first run after ${(runs[0]! - t0) / 1000}s`);
});

Deno.test("timers: errors — backoff and TemporaryError delays override the interval; PermanentError stops", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: Array<{ retry: number; at: number }> = [];
  kopf.timer(
    "kopfexamples",
    { registry, interval: 0.6, backoff: 0.1 },
    function flaky({ retry }) {
      calls.push({ retry, at: Date.now() });
      if (calls.length === 1) throw new Error("boom");
      if (calls.length === 2) throw new kopf.TemporaryError("wait", { delay: 0.2 });
      if (calls.length === 4) throw new kopf.PermanentError("enough");
    },
  );
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] Timer 'flaky' failed permanently: enough");
  await sleep(0.8);
  await runner.stop();
  assert.deepEqual(calls.map((c) => c.retry), [0, 1, 2, 0]);
  const g = gaps(calls.map((c) => c.at));
  assert.ok(g[0]! >= 0.09 && g[0]! < 0.35, `backoff: ${g[0]}`);
  assert.ok(g[1]! >= 0.19 && g[1]! < 0.45, `temporary delay: ${g[1]}`);
  assert.ok(g[2]! >= 0.55, `interval after the success: ${g[2]}`);
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
  const seen: Array<[boolean, boolean]> = [];
  kopf.on.timer("kopfexamples", { registry, interval: 0.1 }, function ctx({ signal, stopped }) {
    seen.push([signal.aborted, stopped.isSet()]);
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await until(() => seen.length >= 1, "a run");
  await runner.stop();
  assert.deepEqual(seen[0], [false, false]);
});
