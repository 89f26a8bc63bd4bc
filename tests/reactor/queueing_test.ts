/**
 * Per-object queues on a fake clock: batching windows, serialisation per
 * object, the worker limit, idle workers, the worker's own last write (older
 * events skipped, continuing from our own body, re-reading when the watch is
 * late), and the throttling of errors — no API server, no sockets, no
 * wall-clock windows.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { ObjectQueues, type QueueSettings } from "../../src/core/reactor/queueing.ts";
import type { CycleResult, ObjectMemory, RawEvent } from "../../src/core/reactor/processing.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

function obj(uid: string, rv: number, extra: Obj = {}): Obj {
  return { metadata: { uid, name: uid, namespace: "ns", resourceVersion: String(rv) }, ...extra };
}

function ev(uid: string, rv: number, type: RawEvent["type"] = "MODIFIED"): RawEvent {
  return { type, object: obj(uid, rv) };
}

const SETTINGS: QueueSettings = {
  batchWindow: 0.1,
  idleTimeout: 5,
  workerLimit: null,
  consistencyTimeout: 5,
  errorDelays: [1, 2, 3],
};

interface Call {
  uid: string;
  rv: string;
  type: RawEvent["type"];
  at: number;
  memory: ObjectMemory;
}

/** A processor that records calls; each call's result comes from `reply` (default: {}). */
function recorder(
  clock: FakeClock,
  reply: (e: RawEvent, n: number) => CycleResult | Promise<CycleResult> = () => ({}),
) {
  const calls: Call[] = [];
  let active = 0;
  let maxActive = 0;
  const activeByObject = new Map<string, number>();
  let overlapping = false;
  const processor = async (event: RawEvent, memory: ObjectMemory) => {
    const uid = event.object.metadata.uid as string;
    active++;
    maxActive = Math.max(maxActive, active);
    const mine = (activeByObject.get(uid) ?? 0) + 1;
    if (mine > 1) overlapping = true;
    activeByObject.set(uid, mine);
    calls.push({
      uid,
      rv: event.object.metadata.resourceVersion,
      type: event.type,
      at: clock.now(),
      memory,
    });
    try {
      return await reply(event, calls.length);
    } finally {
      active--;
      activeByObject.set(uid, (activeByObject.get(uid) ?? 1) - 1);
    }
  };
  return { calls, processor, max: () => maxActive, overlapping: () => overlapping };
}

Deno.test("queues: a lone event is processed at once; a burst is batched for the window and only the latest is processed", async () => {
  const clock = new FakeClock();
  const r = recorder(clock);
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  queues.push(ev("a", 1));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.at]), [["1", 0]], "lone: at once");
  await clock.advance(1);
  queues.push(ev("a", 2));
  queues.push(ev("a", 3));
  queues.push(ev("a", 4));
  await clock.advance(0.099);
  assert.equal(r.calls.length, 1, "not before the window ends");
  await clock.advance(0.001);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1", "4"], "the latest of the burst");
  assert.equal(r.calls[1]!.at, 1100);
  await queues.close();
});

Deno.test("queues: events of one object are processed one at a time, in order; objects concurrently", async () => {
  const clock = new FakeClock();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const r = recorder(clock, async (e) => {
    if (e.object.metadata.resourceVersion === "1") await gate;
    return {};
  });
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, { clock });
  queues.push(ev("a", 1));
  queues.push(ev("b", 1));
  await clock.advance(0);
  queues.push(ev("a", 2));
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => `${c.uid}${c.rv}`), ["a1", "b1"], "a2 waits for a1");
  assert.equal(r.max(), 2, "a and b at once");
  release();
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => `${c.uid}${c.rv}`), ["a1", "b1", "a2"]);
  assert.equal(r.overlapping(), false, "never two cycles of one object at once");
  await queues.close();
});

Deno.test("queues: the worker limit bounds how many objects are processed at once", async () => {
  const clock = new FakeClock();
  const r = recorder(clock, async () => {
    await clock.sleep(1);
    return {};
  });
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, workerLimit: 2 }, { clock });
  for (const uid of ["a", "b", "c", "d", "e"]) queues.push(ev(uid, 1));
  await clock.advance(0);
  assert.equal(r.calls.length, 2);
  await clock.advance(1);
  assert.equal(r.calls.length, 4);
  await clock.advance(1);
  assert.equal(r.calls.length, 5);
  assert.equal(r.max(), 2);
  assert.deepEqual(r.calls.map((c) => c.at), [0, 0, 1000, 1000, 2000]);
  await clock.advance(1);
  await queues.close();
});

Deno.test("queues: an idle worker is destroyed after the idle timeout; the object's memory stays until DELETED", async () => {
  const clock = new FakeClock();
  const r = recorder(clock);
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  queues.push(ev("a", 1));
  await clock.advance(4.9);
  assert.equal(queues.size, 1);
  await clock.advance(0.1);
  assert.equal(queues.size, 0, "destroyed when idle");
  assert.equal(queues.known, 1, "the object stays in the inventory without a worker");
  queues.push(ev("a", 2));
  await clock.advance(0);
  assert.equal(r.calls[1]!.memory, r.calls[0]!.memory, "the same memory for the next worker");
  queues.push(ev("a", 3, "DELETED"));
  await clock.advance(0.1);
  assert.equal(queues.size, 0, "a deletion ends the worker at once");
  assert.equal(queues.known, 0, "and forgets the object");
  queues.push(ev("a", 4, "ADDED"));
  await clock.advance(0);
  assert.notEqual(r.calls[3]!.memory, r.calls[0]!.memory, "a fresh memory after DELETED");
  await queues.close();
});

Deno.test("queues: idle queues wait on one shared timer, not one per object; an event wakes one as before", async () => {
  const clock = new FakeClock();
  const r = recorder(clock);
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  for (let i = 0; i < 100; i++) queues.push(ev(`o${i}`, 1));
  await clock.advance(1);
  assert.equal(r.calls.length, 100);
  assert.equal(queues.size, 100, "idle queues count until their idle timeout");
  assert.equal(clock.pending, 1, "one timer for all the idle queues");
  queues.push(ev("o7", 2));
  queues.push(ev("o7", 3)); // a burst on a parked queue: batched, as on a waiting worker
  await clock.advance(0.1);
  assert.deepEqual(r.calls.slice(100).map((c) => `${c.uid}:${c.rv}@${c.at}`), ["o7:3@1100"]);
  assert.equal(r.calls[100]!.memory, r.calls[7]!.memory);
  await clock.advance(3.9);
  assert.equal(queues.size, 1, "the others destroyed after exactly the idle timeout");
  await clock.advance(1.1);
  assert.equal(queues.size, 0, "the woken one after its own idle timeout");
  assert.equal(queues.known, 100);
  assert.equal(clock.pending, 0);
  await queues.close();
});

Deno.test("queues: events older than our own write are skipped until its version arrives", async () => {
  const clock = new FakeClock();
  const r = recorder(
    clock,
    (e) => (e.object.metadata.resourceVersion === "2" ? { patched: obj("a", 5) } : {}),
  );
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, { clock });
  queues.push(ev("a", 2));
  await clock.advance(0);
  queues.push(ev("a", 3));
  await clock.advance(0.5);
  queues.push(ev("a", 4));
  await clock.advance(0.5);
  assert.deepEqual(r.calls.map((c) => c.rv), ["2"], "3 and 4 are older than our write (5)");
  queues.push(ev("a", 5));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.rv), ["2", "5"]);
  queues.push(ev("a", 6));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.rv), ["2", "5", "6"], "newer ones pass again");
  await queues.close();
});

Deno.test("queues: the echoes of our own writes are no burst to batch: our write's event is processed as it comes; others' bursts still wait the window", async () => {
  const clock = new FakeClock();
  const r = recorder(
    clock,
    (e) => (e.object.metadata.resourceVersion === "1" ? { patched: obj("a", 4) } : {}),
  );
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  queues.push(ev("a", 1, "ADDED"));
  await clock.advance(0.01);
  // The cycle's writes come back one after another: 2 and 3 (older than ours), then 4 (ours).
  queues.push(ev("a", 2));
  queues.push(ev("a", 3));
  await clock.advance(0.01);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1"], "older than our write: not processed");
  queues.push(ev("a", 4));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.at]), [["1", 0], ["4", 20]], "at once, no window");
  // Someone else's burst right after: batched for the window as before.
  queues.push(ev("a", 5));
  queues.push(ev("a", 6));
  await clock.advance(0.099);
  assert.equal(r.calls.length, 2, "not before the window ends");
  await clock.advance(0.001);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.at]).slice(2), [["6", 120]]);
  await queues.close();
});

Deno.test("queues: sleeping handlers wake after exactly the delay, continuing from our own write's body", async () => {
  const clock = new FakeClock();
  const r = recorder(clock, (_e, n) => (n === 1 ? { delay: 2, patched: obj("a", 7) } : {}));
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  queues.push(ev("a", 6));
  await clock.advance(1.999);
  assert.equal(r.calls.length, 1);
  await clock.advance(0.001);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.type, c.at]), [["6", "MODIFIED", 0], [
    "7",
    null,
    2000,
  ]]);
  await queues.close();
});

Deno.test("queues: when our own write does not come back in time, the object is read anew", async () => {
  const clock = new FakeClock();
  const reads: string[] = [];
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: obj("a", 9) } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, {
    clock,
    refresh: (body) => {
      reads.push(body.metadata.resourceVersion);
      return Promise.resolve(obj("a", 12));
    },
  });
  queues.push(ev("a", 8));
  await clock.advance(0);
  queues.push(ev("a", 8)); // a late duplicate of an older version: stale
  await clock.advance(4.999);
  assert.deepEqual(r.calls.map((c) => c.rv), ["8"]);
  assert.deepEqual(reads, []);
  await clock.advance(0.001);
  assert.deepEqual(reads, ["9"], "re-read after the consistency timeout");
  assert.deepEqual(r.calls.map((c) => c.rv), ["8", "12"], "the fresh body, not the stale event");
  await queues.close();
});

Deno.test("queues: when our write and a newer one come during the re-read, the newest is processed, not the read", async () => {
  const clock = new FakeClock();
  let answer!: (body: ReturnType<typeof obj>) => void;
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: obj("a", 9) } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, {
    clock,
    refresh: () => new Promise((resolve) => (answer = resolve)),
  });
  queues.push(ev("a", 8));
  await clock.advance(0);
  queues.push(ev("a", 8)); // a late duplicate: older than our write (9), which does not come back
  await clock.advance(5);
  assert.ok(answer, "read anew after the consistency timeout");
  queues.push(ev("a", 9)); // during the read: our write comes back, and someone else's after it
  queues.push(ev("a", 10));
  answer(obj("a", 9)); // the read saw our write only
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.rv), ["8", "10"], "the newest, not the read's older body");
  await queues.close();
});

Deno.test("queues: a re-read that finds the object gone processes nothing", async () => {
  const clock = new FakeClock();
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: obj("a", 9) } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, {
    clock,
    refresh: () => Promise.resolve(undefined),
  });
  queues.push(ev("a", 8));
  await clock.advance(0);
  queues.push(ev("a", 8));
  await clock.advance(10);
  assert.deepEqual(r.calls.map((c) => c.rv), ["8"]);
  await queues.close();
});

Deno.test("queues: errors are throttled by errorDelays (the last repeats); a success resets the sequence", async () => {
  const clock = new FakeClock();
  const delays: Array<number | undefined> = [];
  let failing = true;
  const r = recorder(clock, () => {
    if (failing) throw new Error("boom");
    return {};
  });
  const queues = new ObjectQueues(r.processor, SETTINGS, {
    clock,
    onError: (_e, _event, delay) => delays.push(delay),
  });
  queues.push(ev("a", 1));
  await clock.advance(0 + 1 + 2 + 3 + 3);
  assert.deepEqual(r.calls.map((c) => c.at), [0, 1000, 3000, 6000, 9000]);
  assert.deepEqual(delays, [1, 2, 3, 3, 3]);
  failing = false;
  await clock.advance(3);
  assert.equal(r.calls.length, 6, "retried after the delay, succeeded");
  failing = true;
  queues.push(ev("a", 2));
  await clock.advance(0);
  assert.deepEqual(delays.slice(-1), [1], "a fresh sequence after the success");
  await clock.advance(10);
  await queues.close();
});

Deno.test("queues: close() waits for the current cycle and starts no new one", async () => {
  const clock = new FakeClock();
  let finished = false;
  const r = recorder(clock, async () => {
    await clock.sleep(1);
    finished = true;
    return { delay: 1 };
  });
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  queues.push(ev("a", 1));
  await clock.advance(0);
  const closing = queues.close();
  await clock.advance(1);
  await closing;
  assert.equal(finished, true);
  await clock.advance(5);
  assert.equal(r.calls.length, 1, "no re-check after close");
});

Deno.test("queues: a wake-up re-check is not batched as a burst, even right after a burst", async () => {
  const clock = new FakeClock();
  const r = recorder(clock, (_e, n) => (n === 2 ? { delay: 2, patched: obj("a", 9) } : {}));
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });
  queues.push(ev("a", 6));
  await clock.advance(1);
  queues.push(ev("a", 7));
  queues.push(ev("a", 8)); // a burst: processed after the window
  await clock.advance(0.1);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.at]), [["6", 0], ["8", 1100]]);
  await clock.advance(2);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.at]).slice(2), [["9", 3100]], "at once");
  await queues.close();
});

Deno.test("queues: after a re-read, the watch's late events up to its version are dropped; newer ones pass", async () => {
  const clock = new FakeClock();
  const reads: string[] = [];
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: obj("a", 9) } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, {
    clock,
    refresh: (body) => {
      reads.push(body.metadata.resourceVersion);
      return Promise.resolve(obj("a", 9));
    },
  });
  queues.push(ev("a", 7));
  await clock.advance(0);
  queues.push(ev("a", 8)); // the first half of our write, delivered late
  await clock.advance(5);
  assert.deepEqual(reads, ["9"]);
  assert.deepEqual(r.calls.map((c) => c.rv), ["7", "9"], "the re-read body");
  queues.push(ev("a", 8)); // later still: older than what the re-read processed
  await clock.advance(1);
  queues.push(ev("a", 9)); // the watch catches up: the same version, processed already
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["7", "9"]);
  queues.push(ev("a", 10));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.rv), ["7", "9", "10"], "newer ones pass again");
  assert.deepEqual(reads, ["9"]);
  await queues.close();
});

Deno.test("queues: a worker whose own write is not back yet outlives the idle timeout and still skips older events", async () => {
  const clock = new FakeClock();
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: obj("a", 5) } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, { clock });
  queues.push(ev("a", 3));
  await clock.advance(6); // past the idle timeout, no event at all
  assert.equal(queues.size, 1, "the worker waits on for its write");
  queues.push(ev("a", 4)); // older than our write: not processed
  await clock.advance(1);
  queues.push(ev("a", 5));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.rv), ["3", "5"]);
  await queues.close();
});

Deno.test("queues: an object our own write deleted (its last finalizer gone) is neither waited for nor re-read; only DELETED is processed", async () => {
  const clock = new FakeClock();
  let reads = 0;
  const gone = obj("a", 6);
  gone.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: gone } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, {
    clock,
    refresh: () => (reads++, Promise.resolve(undefined)),
  });
  queues.push(ev("a", 4));
  await clock.advance(0);
  queues.push(ev("a", 5)); // our cycle's earlier write, delivered late
  await clock.advance(10);
  assert.equal(reads, 0, "no re-read of an object known to be gone");
  assert.deepEqual(r.calls.map((c) => c.rv), ["4"]);
  queues.push(ev("a", 6, "DELETED"));
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.type]), [["4", "MODIFIED"], ["6", "DELETED"]]);
  assert.equal(queues.known, 0);
  await queues.close();
});

Deno.test("queues: a failed re-read is reported and retried after another timeout; no older event is processed meanwhile", async () => {
  const clock = new FakeClock();
  const errors: unknown[] = [];
  let reads = 0;
  const r = recorder(clock, (_e, n) => (n === 1 ? { patched: obj("a", 9) } : {}));
  const queues = new ObjectQueues(r.processor, { ...SETTINGS, batchWindow: 0 }, {
    clock,
    onError: (e) => void errors.push(e),
    refresh: () => ++reads === 1 ? Promise.reject(new Error("503")) : Promise.resolve(obj("a", 9)),
  });
  queues.push(ev("a", 7));
  await clock.advance(0);
  queues.push(ev("a", 8)); // older than our write
  await clock.advance(5);
  assert.equal(reads, 1);
  assert.equal(errors.length, 1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["7"], "not the older event");
  await clock.advance(5);
  assert.equal(reads, 2);
  assert.deepEqual(r.calls.map((c) => c.rv), ["7", "9"], "the re-read body");
  await queues.close();
});

Deno.test("queues: a lifted worker limit lets the waiting cycles go on at admitWaiting(), while a slow one still holds its slot", async () => {
  const clock = new FakeClock();
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const r = recorder(clock, async (e) => {
    if (e.object.metadata.uid === "slow") await slow;
    return {};
  });
  const settings = { ...SETTINGS, batchWindow: 0 };
  let limit: number | null = 1;
  Object.defineProperty(settings, "workerLimit", { get: () => limit });
  const queues = new ObjectQueues(r.processor, settings, { clock });
  queues.push(ev("slow", 1));
  queues.push(ev("fast", 1));
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.uid), ["slow"], "fast waits for the one slot");
  limit = null; // e.g. the API's backlog is gone (orchestration.ts)
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.uid), ["slow"], "a waiter is not woken by itself");
  queues.admitWaiting();
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.uid), ["slow", "fast"], "fast goes on, slow still runs");
  release();
  await clock.advance(0);
  await queues.close();
});

Deno.test("queues: our own write's echo, alone, is asked instead of a cycle; declined, or with more events, or another version, it is a cycle", async () => {
  const clock = new FakeClock();
  const asked: string[] = [];
  let answer = true;
  const echo = (body: Obj) => (asked.push(body.metadata.resourceVersion), answer);
  // Every cycle of rv N writes rv N+10 (our write) and gives its echo check.
  const r = recorder(clock, (e) => {
    const rv = Number(e.object.metadata.resourceVersion);
    return { patched: obj(e.object.metadata.uid, rv + 10), echo };
  });
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock });

  queues.push(ev("a", 1));
  await clock.advance(0);
  queues.push(ev("a", 11)); // our write's echo, alone: the check says no cycle
  await clock.advance(0);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1"]);
  assert.deepEqual(asked, ["11"]);

  queues.push(ev("a", 12)); // a change by someone else: a cycle (nothing asked: the check is used)
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1", "12"]);
  assert.deepEqual(asked, ["11"]);

  answer = false;
  queues.push(ev("a", 22)); // the echo, but the check finds something to do: a cycle
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1", "12", "22"]);
  assert.deepEqual(asked, ["11", "22"]);

  answer = true;
  await clock.advance(1);
  queues.push(ev("a", 32)); // the echo and a newer event in one batch: the newer one's cycle
  queues.push(ev("a", 33));
  await clock.advance(0.1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1", "12", "22", "33"]);
  assert.deepEqual(asked, ["11", "22"]);

  await clock.advance(1);
  queues.push(ev("a", 43, "DELETED")); // a deletion at our write's version: processed
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => [c.rv, c.type]).at(-1), ["43", "DELETED"]);
  assert.deepEqual(asked, ["11", "22"]);
  await queues.close();
});

Deno.test("queues: a cycle with no echo check leaves its write's echo to a cycle; a failed cycle gives none, its retry does", async () => {
  const clock = new FakeClock();
  let fail = false;
  const r = recorder(clock, (e) => {
    if (fail) throw new Error("boom");
    const rv = Number(e.object.metadata.resourceVersion);
    return rv === 1 ? { patched: obj("a", 11) } : { patched: obj("a", rv + 10), echo: () => true };
  });
  const queues = new ObjectQueues(r.processor, SETTINGS, { clock, onError: () => {} });
  queues.push(ev("a", 1));
  await clock.advance(0);
  queues.push(ev("a", 11)); // no check given: a cycle, which writes 21 with one
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1", "11"]);
  fail = true;
  queues.push(ev("a", 21)); // our write's echo: skipped (no cycle to fail)
  await clock.advance(1);
  queues.push(ev("a", 31)); // someone else's change: its cycle fails, and gives no check
  await clock.advance(0);
  fail = false;
  await clock.advance(1); // the retry after the error delay (1 s) succeeds, writing 41
  queues.push(ev("a", 30)); // an older event than our write: dropped until 41 comes
  await clock.advance(1);
  queues.push(ev("a", 41)); // its echo: skipped, by the successful retry's check
  await clock.advance(1);
  assert.deepEqual(r.calls.map((c) => c.rv), ["1", "11", "31", "31"]);
  await queues.close();
});
