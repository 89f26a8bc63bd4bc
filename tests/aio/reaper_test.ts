/**
 * The reaper on a fake clock: items expire exactly after their idle timeout, on one timer for
 * all of them; an item taken back never expires; one added again starts its timeout afresh;
 * `expireAll()` expires what waits and leaves no timer; with `coalesce`, a steady trickle of
 * items expires in groups, none early, none later than `coalesce` after its time.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import { Reaper } from "../../src/cogs/aio/reaper.ts";

Deno.test("Reaper: items expire exactly after their timeout, on one timer for all", async () => {
  const clock = new FakeClock();
  const expired: Array<[string, number]> = [];
  const reaper = new Reaper<string>((item) => void expired.push([item, clock.now()]), clock);
  for (let i = 0; i < 1000; i++) reaper.add(`a${i}`, 5);
  await clock.advance(1);
  reaper.add("b", 5);
  assert.equal(clock.pending, 1, "one timer, however many items");
  await clock.advance(3.999);
  assert.equal(expired.length, 0, "not before the timeout");
  await clock.advance(0.001);
  assert.equal(expired.length, 1000);
  assert.ok(expired.every(([, at]) => at === 5000));
  assert.equal(reaper.size, 1);
  await clock.advance(1);
  assert.deepEqual(expired.at(-1), ["b", 6000]);
  assert.equal(clock.pending, 0, "no timer when nothing waits");
});

Deno.test("Reaper: an item taken back never expires; one added again starts afresh", async () => {
  const clock = new FakeClock();
  const expired: Array<[string, number]> = [];
  const reaper = new Reaper<string>((item) => void expired.push([item, clock.now()]), clock);
  reaper.add("a", 2);
  reaper.add("b", 2);
  reaper.add("c", 2);
  await clock.advance(1);
  assert.equal(reaper.delete("a"), true);
  assert.equal(reaper.delete("a"), false);
  reaper.add("b", 2);
  assert.equal(reaper.has("b"), true);
  await clock.advance(1);
  assert.deepEqual(expired, [["c", 2000]]);
  await clock.advance(1);
  assert.deepEqual(expired, [["c", 2000], ["b", 3000]]);
  assert.equal(reaper.has("a"), false);
});

Deno.test("Reaper: expireAll() expires everything at once and stops the timer", async () => {
  const clock = new FakeClock();
  const expired: string[] = [];
  const reaper = new Reaper<string>((item) => void expired.push(item), clock);
  reaper.add("a", 5);
  reaper.add("b", 10);
  reaper.expireAll();
  assert.deepEqual(expired, ["a", "b"]);
  assert.equal(clock.pending, 0);
  await clock.advance(20);
  assert.deepEqual(expired, ["a", "b"]);
});

Deno.test("Reaper: with coalesce, a trickle expires in groups — never early, at most that late; the first one on time", async () => {
  const clock = new FakeClock();
  const expired: Array<[number, number]> = [];
  const dueAt = new Map<number, number>();
  const reaper = new Reaper<number>(
    (item) => void expired.push([item, clock.now()]),
    clock,
    { coalesce: 1 },
  );
  for (let i = 0; i < 300; i++) {
    dueAt.set(i, clock.now() + 5000);
    reaper.add(i, 5);
    await clock.advance(0.01); // 100 items a second, for 3 s
  }
  await clock.advance(10);
  assert.equal(expired.length, 300);
  assert.deepEqual(expired[0], [0, 5000], "the first one exactly on time");
  for (const [item, at] of expired) {
    assert.ok(at >= dueAt.get(item)!, `item ${item} early`);
    assert.ok(at <= dueAt.get(item)! + 1000, `item ${item} ${at - dueAt.get(item)!} ms late`);
  }
  const sweeps = new Set(expired.map(([, at]) => at)).size;
  assert.ok(sweeps <= 5, `${sweeps} sweeps for 300 items over 3 s`);
});
