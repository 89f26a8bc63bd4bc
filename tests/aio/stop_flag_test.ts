/**
 * `StopFlag` on a fake clock: `wait(seconds)` sleeps exactly that long or
 * until the flag is set; `wait()` until it is set; reasons accumulate; the
 * signal is made only when read, aborted with the first reason; all flags of
 * a clock sleep on one armed timer.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import { LazySignal } from "../../src/cogs/aio/signals.ts";
import { StopFlag } from "../../src/cogs/aio/stop_flag.ts";
import * as kopf from "../../mod.ts";

Deno.test("`StopFlag.wait(seconds)` returns false after exactly that time, unless set", async () => {
  const clock = new FakeClock();
  const flag = new StopFlag(clock);
  let result: boolean | undefined;
  void flag.wait(3).then((r) => (result = r));
  await clock.advance(2.999);
  assert.equal(result, undefined);
  await clock.advance(0.001);
  assert.equal(result, false);
  assert.equal(await flag.wait(0), false, "zero: at once");
});

Deno.test("`StopFlag.set()` wakes every waiter at once, with or without a time limit", async () => {
  const clock = new FakeClock();
  const flag = new StopFlag(clock);
  const woke: Array<[string, boolean, number]> = [];
  void flag.wait(10).then((r) => woke.push(["limited", r, clock.now()]));
  void flag.wait().then((r) => woke.push(["forever", r, clock.now()]));
  await clock.advance(4);
  assert.deepEqual(woke, []);
  flag.set("operator exiting");
  await clock.advance(0);
  assert.deepEqual(woke, [["limited", true, 4000], ["forever", true, 4000]]);
  assert.equal(clock.pending, 0, "the limited waiter's sleep is cancelled");
  assert.equal(await flag.wait(5), true, "set already: at once");
});

Deno.test("`StopFlag`: waits that ran out are gone from the flag; a later set() wakes the others in the order they began", async () => {
  const clock = new FakeClock();
  const flag = new StopFlag(clock);
  const woke: Array<[string, boolean, number]> = [];
  const wait = (name: string, seconds?: number) =>
    void flag.wait(seconds).then((r) => woke.push([name, r, clock.now()]));
  wait("1 s", 1);
  wait("3 s", 3);
  wait("forever");
  wait("2 s", 2);
  wait("again 1 s", 1);
  await clock.advance(2.5);
  assert.deepEqual(woke, [["1 s", false, 1000], ["again 1 s", false, 1000], ["2 s", false, 2000]]);
  flag.set("operator exiting");
  await clock.advance(0);
  assert.deepEqual(woke.slice(3), [["3 s", true, 2500], ["forever", true, 2500]]);
  assert.equal(clock.pending, 0);
});

Deno.test("`StopFlag`: reasons accumulate in order, without repeats; `reason` is the first", () => {
  const flag = new StopFlag();
  assert.equal(flag.isSet(), false);
  assert.equal(flag.reason, undefined);
  flag.set("resource deleted");
  flag.set("daemon cancelled");
  flag.set("resource deleted");
  assert.equal(flag.isSet(), true);
  assert.equal(flag.reason, "resource deleted");
  assert.deepEqual(flag.reasons, ["resource deleted", "daemon cancelled"]);
});

Deno.test("`StopFlag.signal` aborts with the first reason, also when read after the flag is set", () => {
  const before = new StopFlag();
  const signal = before.signal;
  assert.equal(signal.aborted, false);
  assert.equal(before.signal, signal, "one signal per flag");
  before.set("filters mismatching");
  before.set("operator exiting");
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, "filters mismatching");
  const after = new StopFlag();
  after.set("done");
  assert.equal(after.signal.aborted, true);
  assert.equal(after.signal.reason, "done");
});

Deno.test("`StopFlag`: the flags of one clock sleep on one armed timer", async () => {
  const clock = new FakeClock();
  const flags = Array.from({ length: 20 }, () => new StopFlag(clock));
  const results = flags.map((flag, i) => flag.wait(1 + i / 20));
  assert.equal(clock.pending, 1);
  flags[0]!.set("done");
  await clock.advance(2);
  const done = await Promise.all(results);
  assert.equal(done[0], true);
  assert.ok(done.slice(1).every((r) => r === false));
  assert.equal(clock.pending, 0);
});

Deno.test("`StopFlag` is the public `kopf.StopFlag`", () => {
  assert.equal(kopf.StopFlag, StopFlag);
});

Deno.test("`StopFlag` as a `LazySignal`'s source: the flag's signal is read only when the lazy one is", () => {
  const flag = new StopFlag();
  let reads = 0;
  const owner = {
    get signal() {
      reads++;
      return flag.signal;
    },
  };
  const lazy = new LazySignal(owner);
  flag.set("done");
  assert.equal(reads, 0, "not read while nobody asks for the signal");
  assert.equal(lazy.signal.aborted, true);
  assert.equal(lazy.signal.reason, "done");
  assert.equal(reads, 1);
  const direct = new LazySignal(new StopFlag());
  assert.equal(direct.signal.aborted, false);
});
