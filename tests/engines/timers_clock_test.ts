/**
 * Timers' schedules on a fake clock, exactly: `interval` (the first run at
 * once, then every interval counted from the end of a run), `sharp` (on the
 * grid of the first run whatever a run takes), `idle` (only after so long
 * without a change; a change resets it), `initialDelay`, and the error
 * protocol's outcomes overriding the schedule. No API server, no wall clock.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { Rig } from "./_spawning.ts";

Deno.test("timers: `interval` — the first run at once, then every interval", async () => {
  const rig = new Rig();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 10 }, function tick() {
    runs.push(rig.now());
  });
  rig.observe();
  assert.deepEqual(runs, [0], "the first run is at the spawn, not after an interval");
  await rig.clock.advance(9.999);
  assert.deepEqual(runs, [0]);
  await rig.clock.advance(0.001);
  assert.deepEqual(runs, [0, 10]);
  await rig.clock.advance(25);
  assert.deepEqual(runs, [0, 10, 20, 30]);
  assert.ok(rig.lines.includes("Timer 'tick' succeeded."));
  assert.equal(rig.patches.length, 0, "runs with nothing to write make no API calls");
  await rig.close();
});

Deno.test("timers: a non-sharp interval counts from the end of a run; a run never overlaps itself", async () => {
  const rig = new Rig();
  const starts: number[] = [];
  let active = 0;
  let most = 0;
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 10 }, async function slow() {
    starts.push(rig.now());
    most = Math.max(most, ++active);
    await rig.clock.sleep(3);
    active--;
  });
  rig.observe();
  await rig.clock.advance(40);
  assert.deepEqual(starts, [0, 13, 26, 39]);
  assert.equal(most, 1);
  await rig.close();
});

Deno.test("timers: `sharp` — on the grid of the first run, even when a run takes time", async () => {
  const rig = new Rig();
  const starts: number[] = [];
  const took = [3, 3, 12, 1, 1];
  kopf.timer(
    "kopfexamples",
    { registry: rig.registry, interval: 10, sharp: true },
    async function sharp() {
      starts.push(rig.now());
      await rig.clock.sleep(took[starts.length - 1] ?? 1);
    },
  );
  await rig.clock.advance(5);
  rig.observe(); // the grid starts at the first run, not at the clock's zero
  await rig.clock.advance(60);
  // The third run (at 25) takes 12 s: the grid point 35 is missed, the next is 45.
  assert.deepEqual(starts, [5, 15, 25, 45, 55, 65]);
  await rig.close();
});

Deno.test("timers: `idle` — only after so long without a change; a change resets it", async () => {
  const rig = new Rig();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry: rig.registry, idle: 5, interval: 1 }, function quiet() {
    runs.push(rig.now());
  });
  rig.observe();
  for (let i = 1; i <= 4; i++) {
    await rig.clock.advance(3);
    rig.observe({ spec: { i } }); // a change every 3 s: never idle for 5 s
  }
  assert.deepEqual(runs, [], "no runs while the changes keep coming");
  assert.equal(rig.now(), 12);
  await rig.clock.advance(4.999);
  assert.deepEqual(runs, []);
  await rig.clock.advance(0.001);
  assert.deepEqual(runs, [17], "5 s after the last change");
  await rig.clock.advance(2);
  assert.deepEqual(runs, [17, 18, 19], "then every interval while idle");
  rig.observe(); // the same resourceVersion: not a change
  await rig.clock.advance(1);
  assert.deepEqual(runs, [17, 18, 19, 20]);
  rig.observe({ spec: { i: 5 } });
  await rig.clock.advance(4.999);
  assert.deepEqual(runs, [17, 18, 19, 20], "the change resets the idle time");
  await rig.clock.advance(0.001);
  assert.deepEqual(runs, [17, 18, 19, 20, 25], "5 s after the change at 20");
  await rig.close();
});

Deno.test("timers: `idle` without an interval — once per quiet period", async () => {
  const rig = new Rig();
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry: rig.registry, idle: 5 }, function once() {
    runs.push(rig.now());
  });
  rig.observe();
  await rig.clock.advance(30);
  assert.deepEqual(runs, [5]);
  rig.observe({ spec: { x: 1 } });
  await rig.clock.advance(30);
  assert.deepEqual(runs, [5, 35]);
  await rig.close();
});

Deno.test("timers: `initialDelay` postpones the first run; the interval counts from it", async () => {
  const rig = new Rig();
  const runs: number[] = [];
  kopf.timer(
    "kopfexamples",
    { registry: rig.registry, interval: 10, initialDelay: 3 },
    function late() {
      runs.push(rig.now());
    },
  );
  rig.observe();
  await rig.clock.advance(2.999);
  assert.deepEqual(runs, []);
  await rig.clock.advance(20.001);
  assert.deepEqual(runs, [3, 13, 23]);
  await rig.close();
});

Deno.test("timers: errors — a TemporaryError's delay and the backoff override the interval; a PermanentError stops it", async () => {
  const rig = new Rig();
  const calls: Array<[number, number]> = [];
  kopf.timer(
    "kopfexamples",
    { registry: rig.registry, interval: 60, backoff: 4 },
    function flaky({ retry }) {
      calls.push([rig.now(), retry]);
      if (calls.length === 1) throw new Error("boom");
      if (calls.length === 2) throw new kopf.TemporaryError("wait", { delay: 7 });
      if (calls.length === 4) throw new kopf.PermanentError("enough");
    },
  );
  rig.observe();
  await rig.clock.advance(200);
  assert.deepEqual(calls, [[0, 0], [4, 1], [11, 2], [71, 0]]);
  assert.ok(rig.lines.includes("Timer 'flaky' failed with an exception. Will retry."));
  assert.ok(rig.lines.includes("Timer 'flaky' failed temporarily: wait"));
  assert.ok(rig.lines.includes("Timer 'flaky' failed permanently: enough"));
  assert.ok(rig.lines.includes("Timer 'flaky' has stopped after a permanent failure."));
  assert.equal(rig.running, 0);
  rig.observe({ spec: { x: 1 } });
  await rig.clock.advance(100);
  assert.equal(calls.length, 4, "not re-spawned for the object");
  await rig.close();
});

Deno.test("timers: without its own backoff, an error retries after settings.execution.defaultBackoff", async () => {
  const rig = new Rig();
  rig.settings.execution.defaultBackoff = 25;
  const runs: number[] = [];
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 100 }, function failing() {
    runs.push(rig.now());
    if (runs.length === 1) throw new Error("once");
  });
  rig.observe();
  await rig.clock.advance(150);
  assert.deepEqual(runs, [0, 25, 125]);
  await rig.close();
});

Deno.test("timers: exhausted retries fail the timer for good", async () => {
  const rig = new Rig();
  const runs: number[] = [];
  kopf.timer(
    "kopfexamples",
    { registry: rig.registry, interval: 10, retries: 3, backoff: 1 },
    function limited() {
      runs.push(rig.now());
      throw new Error("again");
    },
  );
  rig.observe();
  await rig.clock.advance(30);
  assert.deepEqual(runs, [0, 1, 2]);
  assert.ok(
    rig.lines.includes(
      "Timer 'limited' failed permanently: Timer 'limited' has exceeded 3 retries.",
    ),
  );
  assert.equal(rig.running, 0);
  await rig.close();
});

Deno.test("timers: a result lands in status.<id> with one patch per run; an unstorable one fails the timer", async () => {
  const rig = new Rig();
  let n = 0;
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 10 }, function counter() {
    return ++n;
  });
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 10 }, function huge() {
    return 10n; // a BigInt cannot be stored as JSON
  });
  rig.observe();
  await rig.clock.advance(20);
  assert.deepEqual(rig.patches, [
    { at: 0, patch: { status: { counter: 1 } } },
    { at: 10, patch: { status: { counter: 2 } } },
    { at: 20, patch: { status: { counter: 3 } } },
  ]);
  assert.equal(rig.body.status.counter, 3);
  assert.ok(
    rig.lines.some((l) => l.startsWith("Timer 'huge' failed permanently: Timer 'huge' returned")),
    rig.lines.join("\n"),
  );
  assert.equal(rig.running, 1, "only the counter runs on");
  await rig.close();
});

Deno.test("timers: stopped with the object — no run after the stop; the context's signal aborts", async () => {
  const rig = new Rig();
  const runs: number[] = [];
  let signal: AbortSignal | undefined;
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 10 }, function tick(ctx) {
    runs.push(rig.now());
    signal = ctx.signal;
  });
  rig.observe();
  await rig.clock.advance(15);
  rig.stop();
  assert.equal(signal?.aborted, true);
  assert.equal(signal?.reason, "resource deleted");
  assert.equal(await rig.daemons.waitObject(rig.state!), true);
  await rig.clock.advance(100);
  assert.deepEqual(runs, [0, 10]);
  assert.equal(rig.running, 0);
});
