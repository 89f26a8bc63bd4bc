/**
 * The real clock's timers: timers of one duration share one `setTimeout` (see clock.ts), so
 * what is checked is what a caller relies on — each fires once, never before its delay, in the
 * order added; a cancelled one never fires; the rest of its list still does; cancelled timers
 * hold no process alive (a long list's timer lingers unreferenced), a pending one does.
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

Deno.test("real clock: cancelled timers hold no process alive; a pending one does, in a list that lingered", async () => {
  // In a process of its own: what keeps a process alive is only seen at its exit. A long list
  // emptied by cancelling keeps its timer unreferenced; a timer added to it references it again.
  const clock = new URL("../../src/cogs/aio/clock.ts", import.meta.url).href;
  const script = `
    import { realClock } from "${clock}";
    for (const cancel of Array.from({ length: 100 }, () => realClock.timer(60_000, () => {}))) cancel();
    realClock.timer(10, () => {})();
    realClock.timer(1_000, () => {})();
    realClock.timer(1_000, () => console.log("fired"));
  `;
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", script],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const out = await child.output();
  clearTimeout(kill);
  const seconds = (performance.now() - started) / 1000;
  assert.equal(
    new TextDecoder().decode(out.stdout).trim(),
    "fired",
    new TextDecoder().decode(out.stderr),
  );
  assert.ok(seconds < 20, `the process lived ${seconds} s: a cancelled 60 s timer held it`);
});

Deno.test("real clock: a long list emptied and used again fires its new timer on time, once", async () => {
  const fired: number[] = [];
  realClock.timer(1_000, () => fired.push(-1))(); // cancelled: the list lingers
  await wait(300);
  const added = performance.now();
  realClock.timer(1_000, () => fired.push(performance.now() - added));
  await wait(1_500);
  assert.equal(fired.length, 1);
  assert.ok(fired[0]! >= 1_000, `fired after ${fired[0]} ms`);
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
