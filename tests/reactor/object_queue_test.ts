/**
 * One object's queue (`ObjectQueue`, src/core/reactor/object_queue.ts) on a fake clock: waits
 * that end by time, by an event (or not, for a batching wait), by a condition, by closing; a
 * burst told from a lone event; a re-check is no arrival.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { ObjectQueue } from "../../src/core/reactor/object_queue.ts";
import type { RawEvent } from "../../src/core/reactor/processing.ts";

const ev = (rv: number): RawEvent => ({
  type: "MODIFIED",
  object: { metadata: { uid: "u", resourceVersion: String(rv) } },
});

function rig() {
  const clock = new FakeClock();
  const context = { clock, closing: false };
  return { clock, context, queue: new ObjectQueue(context, ev(1)) };
}

Deno.test("ObjectQueue: a wait ends after exactly its time, or at once by an event; its timer goes with it", async () => {
  const { clock, queue } = rig();
  let woke: boolean | undefined;
  queue.wait(2).then((w) => (woke = w));
  await clock.advance(1.999);
  assert.equal(woke, undefined);
  await clock.advance(0.001);
  assert.equal(woke, false, "expired");
  woke = undefined;
  queue.wait(2).then((w) => (woke = w));
  await clock.advance(1);
  queue.add(ev(2));
  queue.wake();
  await clock.advance(0);
  assert.equal(woke, true, "woken by the event");
  assert.equal(clock.pending, 0, "no timer left behind");
  queue.wake(); // no wait now: nothing happens
});

Deno.test("ObjectQueue: a batching wait is not ended by events, only by time or closing", async () => {
  const { clock, context, queue } = rig();
  let woke: boolean | undefined;
  queue.wait(0.1, false).then((w) => (woke = w));
  queue.add(ev(2));
  queue.wake();
  await clock.advance(0.099);
  assert.equal(woke, undefined);
  await clock.advance(0.001);
  assert.equal(woke, false);
  woke = undefined;
  queue.wait(0.1, false).then((w) => (woke = w));
  context.closing = true;
  assert.equal(queue.closing, true);
  queue.wake();
  await clock.advance(0);
  assert.equal(woke, true, "closing cuts it short");
});

Deno.test("ObjectQueue: a burst is the latest two events within the window; a re-check is no arrival", async () => {
  const { clock, queue } = rig();
  assert.equal(queue.burst(0.1), false, "a lone first event");
  await clock.advance(1);
  queue.add(ev(2));
  assert.equal(queue.burst(0.1), false, "a second event a second later");
  await clock.advance(0.05);
  queue.add(ev(3));
  assert.deepEqual([queue.burst(0.1), queue.burst(0.01)], [true, false]);
  queue.recheck(ev(3).object);
  assert.equal(queue.burst(0.1), false);
  assert.deepEqual(queue.events.map((e) => e.type), ["MODIFIED", "MODIFIED", "MODIFIED", null]);
});

Deno.test("ObjectQueue.waitFor: until the events hold what is looked for, up to a deadline", async () => {
  const { clock, queue } = rig();
  const has = (rv: string) => (events: RawEvent[]) =>
    events.some((e) => e.object.metadata?.resourceVersion === rv);
  let found: boolean | undefined;
  queue.waitFor(has("3"), 5).then((f) => (found = f));
  await clock.advance(1);
  queue.add(ev(2));
  queue.wake();
  await clock.advance(1);
  assert.equal(found, undefined, "another event does not end it");
  queue.add(ev(3));
  queue.wake();
  await clock.advance(0);
  assert.equal(found, true);
  found = undefined;
  queue.waitFor(has("9"), 5).then((f) => (found = f));
  await clock.advance(4.999);
  assert.equal(found, undefined);
  await clock.advance(0.001);
  assert.equal(found, false, "the deadline");
});

Deno.test("ObjectQueue.waitFor: other events do not wake the waiter — one wait, one timer", async () => {
  const fake = new FakeClock();
  let timers = 0;
  const clock = {
    now: () => fake.now(),
    date: () => fake.date(),
    sleep: (seconds: number, signal?: AbortSignal) => fake.sleep(seconds, signal),
    timer: (ms: number, fn: () => void) => (timers++, fake.timer(ms, fn)),
  };
  const queue = new ObjectQueue({ clock, closing: false }, ev(1));
  let found: boolean | undefined;
  queue.waitFor((events) => events.some((e) => e.object.metadata?.resourceVersion === "5"), 5)
    .then((f) => (found = f));
  for (const rv of [2, 3, 4, 5]) {
    await fake.advance(0.01);
    queue.add(ev(rv));
    queue.wake();
  }
  await fake.advance(0);
  assert.deepEqual([found, timers], [true, 1]);
});

Deno.test("ObjectQueue.waitResumed: events do not end it; closing does", async () => {
  const { clock, context, queue } = rig();
  let signal: AbortSignal | undefined;
  let resumed = false;
  queue.waitResumed((s) => {
    signal = s;
    return new Promise<void>((resolve) => s.addEventListener("abort", () => resolve()));
  }).then(() => (resumed = true));
  queue.add(ev(2));
  queue.wake();
  await clock.advance(10);
  assert.deepEqual([resumed, signal?.aborted], [false, false]);
  context.closing = true;
  queue.wake();
  await clock.advance(0);
  assert.deepEqual([resumed, signal?.aborted], [true, true]);
});
