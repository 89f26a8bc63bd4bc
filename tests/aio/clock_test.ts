/**
 * The real clock's timers: timers of one duration share one `setTimeout` (see clock.ts), so
 * what is checked is what a caller relies on — each fires once, never before its delay, in the
 * order added; a cancelled one never fires; the rest of its list still does; a list emptied by
 * cancelling leaves no timer behind (the test's sanitizer fails on a leaked one).
 */
import assert from "node:assert/strict";
import { realClock, realTimerOf } from "../../src/cogs/aio/clock.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("real clock: timers of one duration fire once each, in order, never early", async () => {
  const fired: Array<[number, number]> = [];
  const started: number[] = [];
  for (let i = 0; i < 5; i++) {
    started.push(performance.now());
    realClock.timer(20, () => fired.push([i, performance.now()]));
    await wait(3);
  }
  await wait(60);
  assert.deepEqual(fired.map(([i]) => i), [0, 1, 2, 3, 4]);
  for (const [i, at] of fired) assert.ok(at - started[i]! >= 20, `timer ${i} fired early`);
});

Deno.test("real clock: a cancelled timer never fires; the others of its list still do", async () => {
  const fired: string[] = [];
  const cancelA = realClock.timer(15, () => fired.push("a"));
  realClock.timer(15, () => fired.push("b"));
  const cancelC = realClock.timer(15, () => fired.push("c"));
  realClock.timer(15, () => fired.push("d"));
  cancelA(); // the head: the list's timer fires for it and re-arms for "b"
  cancelC();
  cancelC(); // idempotent
  await wait(50);
  assert.deepEqual(fired, ["b", "d"]);
});

Deno.test("real clock: cancelling every timer of a list leaves no timer running", () => {
  // No await: if a setTimeout were left armed, Deno's op sanitizer would fail this test.
  const cancels = Array.from({ length: 100 }, () => realClock.timer(60_000, () => {}));
  for (const cancel of cancels) cancel();
});

Deno.test("real clock: a timer added while its list fires is kept for its own time", async () => {
  const fired: string[] = [];
  realClock.timer(10, () => {
    fired.push("first");
    realClock.timer(10, () => fired.push("second"));
  });
  await wait(15);
  assert.deepEqual(fired, ["first"]);
  await wait(30);
  assert.deepEqual(fired, ["first", "second"]);
});

Deno.test("real clock: zero and negative delays fire later, never synchronously", async () => {
  const fired: number[] = [];
  realClock.timer(0, () => fired.push(0));
  realClock.timer(-5, () => fired.push(-5));
  assert.deepEqual(fired, []);
  await wait(10);
  assert.deepEqual(fired.sort(), [-5, 0]);
});

Deno.test("realTimerOf() calls its target when due, never early; cancel() stops it", async () => {
  const fired: number[] = [];
  const timer = realTimerOf(20, { onTimer: () => fired.push(performance.now()) });
  const cancelled = realTimerOf(20, { onTimer: () => fired.push(-1) });
  cancelled.cancel();
  cancelled.cancel(); // idempotent
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(fired.length, 1);
  assert.ok(fired[0]! >= timer.due);
  timer.cancel(); // after it fired: nothing
});
