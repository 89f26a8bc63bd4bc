/**
 * The timing of reconcilers on a fake clock, exactly: a burst of changes is one run after the
 * quiet period; steady churn still runs every `maxWait`; runs never overlap and a change during
 * a run makes exactly one more; retries and resyncs without changes; the readiness wait serves
 * the changes that came meanwhile in one run; a close aborts the run and stops everything.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import { Coalescer, type CoalescerOptions } from "../../src/cogs/aio/coalescer.ts";

/** A coalescer whose runs take `took` seconds of fake time and are recorded. */
function rig(options: Partial<CoalescerOptions> = {}, took = 0) {
  const clock = new FakeClock();
  const starts: number[] = [];
  let active = 0;
  let most = 0;
  let again: number | undefined;
  const signals: AbortSignal[] = [];
  const work = new Coalescer(async (signal) => {
    starts.push(clock.now() / 1000);
    signals.push(signal);
    most = Math.max(most, ++active);
    if (took) await clock.sleep(took, signal);
    active--;
    return again;
  }, { debounce: 0.2, clock, ...options });
  return {
    clock,
    work,
    starts,
    signals,
    get most() {
      return most;
    },
    retryAfter(seconds: number | undefined) {
      again = seconds;
    },
  };
}

Deno.test("Coalescer: a burst of changes is one run, a quiet period after the last change", async () => {
  const r = rig();
  for (let i = 0; i < 10; i++) {
    r.work.trigger();
    await r.clock.advance(0.05);
  }
  assert.deepEqual(r.starts, [], "no run while the changes keep coming");
  await r.clock.advance(0.149);
  assert.deepEqual(r.starts, []);
  await r.clock.advance(0.001);
  assert.deepEqual(r.starts, [0.65], "0.2 s after the last change (at 0.45)");
  await r.clock.advance(10);
  assert.deepEqual(r.starts, [0.65], "and nothing more without changes");
  await r.work.close();
});

Deno.test("Coalescer: steady churn still runs, every maxWait since the first change not served", async () => {
  const r = rig({ maxWait: 1 });
  for (let i = 0; i < 50; i++) {
    r.work.trigger();
    await r.clock.advance(0.1); // always within the 0.2 s debounce: a plain debounce never runs
  }
  // The first change (at 0) waits 1 s at most; the next first change not served comes right
  // after that run (at 1.0), and so on.
  assert.deepEqual(r.starts, [1, 2, 3, 4, 5]);
  await r.work.close();
});

Deno.test("Coalescer: runs never overlap; changes during a run make exactly one more run after it", async () => {
  const r = rig({ debounce: 0 }, 3);
  r.work.trigger();
  await r.clock.advance(0.5);
  assert.deepEqual(r.starts, [0]);
  for (let i = 0; i < 20; i++) {
    r.work.trigger();
    await r.clock.advance(0.1);
  }
  assert.equal(r.work.pending, true);
  await r.clock.advance(10);
  assert.deepEqual(r.starts, [0, 3], "one more run, right after the first ends");
  assert.equal(r.most, 1, "never two at once");
  assert.equal(r.work.pending, false);
  await r.work.close();
});

Deno.test("Coalescer: a change long before the end of a run waits no debounce after it", async () => {
  const r = rig({ debounce: 0.5 }, 2);
  r.work.trigger();
  await r.clock.advance(0.5); // the run starts at 0.5 and takes 2 s
  r.work.trigger(); // at 0.5: its quiet period is over long before the run ends at 2.5
  await r.clock.advance(2);
  assert.deepEqual(r.starts, [0.5, 2.5]);
  await r.clock.advance(5);
  r.work.trigger(); // while idle: after the quiet period again
  await r.clock.advance(0.499);
  assert.equal(r.starts.length, 2);
  await r.clock.advance(0.001);
  assert.deepEqual(r.starts, [0.5, 2.5, 8]);
  await r.work.close();
});

Deno.test("Coalescer: a run may ask to run again after a delay (a retry), without changes", async () => {
  const r = rig({ debounce: 0 });
  r.retryAfter(5);
  r.work.trigger();
  await r.clock.advance(12);
  assert.deepEqual(r.starts, [0, 5, 10]);
  r.retryAfter(undefined);
  await r.clock.advance(20);
  assert.deepEqual(r.starts, [0, 5, 10, 15], "the run at 15 asked for nothing more");
  await r.work.close();
});

Deno.test("Coalescer: a change during a retry's wait runs after the debounce, not after the retry delay", async () => {
  const r = rig({ debounce: 0.2 });
  r.retryAfter(60);
  r.work.trigger();
  await r.clock.advance(1);
  assert.deepEqual(r.starts, [0.2]);
  r.retryAfter(undefined);
  r.work.trigger();
  await r.clock.advance(1);
  assert.deepEqual(r.starts, [0.2, 1.2], "0.2 s after the change at 1.0, not at 60.2");
  await r.clock.advance(120);
  assert.deepEqual(r.starts, [0.2, 1.2], "the retry was served by that run");
  await r.work.close();
});

Deno.test("Coalescer: resync — a run every so often after the last one, with no changes", async () => {
  const r = rig({ debounce: 0.1, resync: 10 }, 1);
  r.work.trigger();
  await r.clock.advance(35);
  // Runs start at 0.1, take 1 s; the next is 10 s after the end of the previous.
  assert.deepEqual(r.starts, [0.1, 11.1, 22.1, 33.1]);
  r.work.trigger(); // at 35: a change is served at once (after its debounce) …
  await r.clock.advance(0.1);
  assert.deepEqual(r.starts.at(-1), 35.1);
  await r.clock.advance(10.999); // … and the resync counts from the end of that run (36.1)
  assert.equal(r.starts.length, 5);
  await r.clock.advance(0.001);
  assert.deepEqual(r.starts.at(-1), 46.1);
  await r.work.close();
});

Deno.test("Coalescer: changes while the run waits for readiness are served by that one run", async () => {
  const clock = new FakeClock();
  let open!: () => void;
  let ready = false;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const starts: number[] = [];
  const work = new Coalescer(() => Promise.resolve(void starts.push(clock.now() / 1000)), {
    debounce: 0.1,
    clock,
    ready: () => ready ? undefined : gate,
  });
  work.trigger();
  await clock.advance(1);
  for (let i = 0; i < 5; i++) {
    work.trigger();
    await clock.advance(0.5);
  }
  assert.deepEqual(starts, []);
  assert.equal(work.running, true, "the run waits");
  ready = true;
  open();
  await clock.advance(0);
  await clock.advance(5);
  assert.deepEqual(starts, [3.5], "one run for all the changes before the gate opened");
  await work.close();
});

Deno.test("Coalescer: close() aborts the running run's signal and stops every later run", async () => {
  const r = rig({ debounce: 0, resync: 1 }, 10);
  r.work.trigger();
  await r.clock.advance(0.5);
  let closed = false;
  const closing = r.work.close("parent deleted").then(() => (closed = true));
  await r.clock.advance(0);
  assert.equal(closed, true, "the run saw its signal abort and ended");
  await closing;
  assert.equal(r.signals[0]!.aborted, true);
  assert.equal(r.signals[0]!.reason, "parent deleted");
  r.work.trigger();
  await r.clock.advance(60);
  assert.deepEqual(r.starts, [0], "no runs after the close: no trigger, no resync");
  assert.equal(r.clock.pending, 0, "no timer left behind");
});
