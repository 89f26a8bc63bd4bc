/**
 * `Scheduler` on a fake clock: entries fire in time order, each exactly at its
 * time; one timer of the clock is armed for all of them; cancelled entries
 * never fire and, once nothing is live, nothing stays armed.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import { Scheduler, schedulerFor } from "../../src/cogs/aio/scheduler.ts";

Deno.test("`Scheduler` fires entries in time order (then in scheduling order), each at its time", async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler(clock);
  const fired: Array<[string, number]> = [];
  for (const [name, at] of [["c", 3000], ["a", 1000], ["d", 3000], ["b", 2000]] as const) {
    scheduler.at(at, () => fired.push([name, clock.now()]));
  }
  await clock.advance(0.999);
  assert.deepEqual(fired, []);
  await clock.advance(0.001);
  assert.deepEqual(fired, [["a", 1000]]);
  await clock.advance(5);
  assert.deepEqual(fired, [["a", 1000], ["b", 2000], ["c", 3000], ["d", 3000]]);
  assert.equal(scheduler.size, 0);
});

Deno.test("`Scheduler` arms one clock timer for any number of entries", async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler(clock);
  let fired = 0;
  for (let i = 100; i > 0; i--) scheduler.after(i, () => fired++);
  assert.equal(scheduler.size, 100);
  assert.equal(clock.pending, 1, "one armed timer");
  assert.equal(clock.nextIn, 1000, "for the earliest entry");
  scheduler.after(0.5, () => fired++);
  assert.equal(clock.pending, 1, "re-armed for an earlier entry, not a second timer");
  assert.equal(clock.nextIn, 500);
  await clock.advance(100);
  assert.equal(fired, 101);
  assert.equal(clock.pending, 0, "nothing armed when nothing is due");
});

Deno.test("`Scheduler.cancel()`: a cancelled entry never fires; with none live, no timer stays armed", async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler(clock);
  const fired: string[] = [];
  const first = scheduler.after(1, () => fired.push("first"));
  const second = scheduler.after(2, () => fired.push("second"));
  scheduler.cancel(first);
  scheduler.cancel(first); // idempotent
  assert.equal(scheduler.size, 1);
  await clock.advance(1.5);
  assert.deepEqual(fired, []);
  assert.equal(clock.nextIn, 500, "armed for the next live entry");
  scheduler.cancel(second);
  assert.equal(scheduler.size, 0);
  assert.equal(clock.pending, 0, "disarmed: nothing holds the process");
  await clock.advance(10);
  assert.deepEqual(fired, []);
  scheduler.cancel(second); // after the fact: nothing happens
  assert.equal(scheduler.size, 0);
});

Deno.test("`Scheduler`: entries added while others fire are scheduled, also those already due", async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler(clock);
  const fired: Array<[string, number]> = [];
  scheduler.after(1, () => {
    fired.push(["outer", clock.now()]);
    scheduler.after(0, () => fired.push(["due at once", clock.now()]));
    scheduler.after(2, () => fired.push(["later", clock.now()]));
  });
  await clock.advance(5);
  assert.deepEqual(fired, [["outer", 1000], ["due at once", 1000], ["later", 3000]]);
});

Deno.test("`schedulerFor()` gives one scheduler per clock", () => {
  const one = new FakeClock();
  const two = new FakeClock();
  assert.equal(schedulerFor(one), schedulerFor(one));
  assert.notEqual(schedulerFor(one), schedulerFor(two));
  assert.equal(schedulerFor(one).clock, one);
});
