/**
 * The own-write tracker (`OwnWrites`, src/core/reactor/own_writes.ts) on its own: which events
 * are older than our own last write, the wait for that write in the object's queue on a fake
 * clock, and the one re-read policy — for a late write and for a take-over alike.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { ObjectQueue } from "../../src/core/reactor/object_queue.ts";
import { OwnWrites, type Reader } from "../../src/core/reactor/own_writes.ts";
import type { RawEvent } from "../../src/core/reactor/processing.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const body = (rv: number, extra: Obj = {}): Obj => ({
  metadata: { uid: "u", resourceVersion: String(rv), ...extra },
});
const ev = (rv: number, type: RawEvent["type"] = "MODIFIED"): RawEvent => ({
  type,
  object: body(rv),
});
const versions = (events: readonly RawEvent[] | "gone") =>
  events === "gone"
    ? "gone"
    : events.map((e) => `${e.object.metadata.resourceVersion}${e.type === null ? "?" : ""}`);

Deno.test("OwnWrites: events older than our own write stay awaited; its event ends the wait — older ones go, newer ones stay", () => {
  const writes = new OwnWrites();
  assert.equal(writes.wrote(body(5)), false);
  assert.deepEqual([writes.pending, writes.awaiting], [true, true]);
  assert.deepEqual(versions(writes.sift([ev(3), ev(4)], false)), ["3", "4"]);
  assert.equal(writes.awaiting, true, "still older than our write");
  assert.deepEqual(versions(writes.sift([ev(4), ev(5), ev(6)], false)), ["5", "6"]);
  assert.deepEqual([writes.pending, writes.awaiting], [false, false]);
  assert.deepEqual(versions(writes.sift([ev(4)], false)), ["4"], "nothing tracked: all pass");
});

Deno.test("OwnWrites: a deletion is never held back nor dropped", () => {
  const writes = new OwnWrites();
  writes.wrote(body(5));
  writes.afterRead(body(9), []);
  const batch = [ev(4), ev(6, "DELETED")];
  assert.equal(writes.sift(batch, true), batch);
  assert.equal(writes.arrived([ev(6, "DELETED")]), true, "a deletion ends the wait too");
});

Deno.test("OwnWrites: a write that let the object go (no finalizers left) is neither awaited nor read", () => {
  const writes = new OwnWrites();
  writes.wrote(body(5));
  const gone = body(6, { deletionTimestamp: "2024-01-01T00:00:00Z", finalizers: [] });
  assert.equal(writes.wrote(gone), true);
  assert.deepEqual([writes.pending, writes.own], [false, undefined]);
  const held = body(7, { deletionTimestamp: "2024-01-01T00:00:00Z", finalizers: ["x"] });
  assert.equal(writes.wrote(held), false, "a finalizer left: still there");
  assert.equal(writes.wrote(undefined), false, "no write: the awaited one stays");
  assert.equal(writes.own, held);
});

Deno.test("OwnWrites.afterRead: the watch behind — the read body alone; its late events up to that version are dropped, its echo too; newer ones pass", () => {
  const writes = new OwnWrites();
  writes.wrote(body(9));
  const fresh = body(12);
  const next = writes.afterRead(fresh, [ev(7), ev(8)]);
  assert.deepEqual(versions(next), ["12?"]);
  assert.equal((next as RawEvent[])[0]!.object, fresh);
  assert.deepEqual(
    [writes.awaiting, writes.pending],
    [false, true],
    "the read is what is tracked now",
  );
  // The read body is processed first (it is in its own batch), then the late ones come.
  assert.deepEqual(versions(writes.sift(next as RawEvent[], false)), ["12?"]);
  assert.deepEqual(versions(writes.sift([ev(10), ev(11)], false)), [], "older than the read");
  assert.deepEqual(versions(writes.sift([ev(11), ev(12)], false)), [], "its echo: processed");
  assert.equal(writes.pending, false, "caught up");
  assert.deepEqual(versions(writes.sift([ev(13)], false)), ["13"]);
});

Deno.test("OwnWrites.afterRead: a relist after a read that found the watch behind catches up (it is as new)", () => {
  const writes = new OwnWrites();
  writes.afterRead(body(12), [ev(8)]);
  assert.deepEqual(versions(writes.sift([ev(10), ev(14, null)], false)), ["14?"]);
  assert.equal(writes.pending, false);
});

Deno.test("OwnWrites.afterRead: the watch delivered the version read — the events go on from it, newer ones with it", () => {
  const writes = new OwnWrites();
  writes.wrote(body(9));
  assert.deepEqual(versions(writes.afterRead(body(9), [ev(8), ev(9), ev(10)])), ["9", "10"]);
  assert.equal(writes.pending, false, "nothing to drop later");
  // A take-over: the body the watch delivered last waits as a type-null event; read at its version.
  const handed = new OwnWrites();
  assert.deepEqual(versions(handed.afterRead(body(2), [ev(2, null)])), ["2?"]);
  assert.equal(handed.pending, false, "the watch is not behind: nothing is dropped later");
});

Deno.test("OwnWrites.afterRead: a re-check carrying our own write's body shows nothing of the watch", () => {
  const writes = new OwnWrites();
  const own = body(9);
  writes.wrote(own);
  const recheck: RawEvent = { type: null, object: own };
  const next = writes.afterRead(body(9), [ev(8), recheck]);
  assert.notEqual((next as RawEvent[])[0], recheck, "not taken for the watch's event");
  assert.deepEqual(versions(next), ["9?"]);
  assert.equal(writes.pending, true, "the watch's echo of version 9 is still to be dropped");
  assert.deepEqual(versions(writes.sift(next as RawEvent[], false)), ["9?"]);
  assert.deepEqual(versions(writes.sift([ev(9)], false)), []);
});

Deno.test("OwnWrites.afterRead: the object gone", () => {
  const writes = new OwnWrites();
  writes.wrote(body(9));
  assert.equal(writes.afterRead(undefined, [ev(8)]), "gone");
  assert.equal(writes.pending, false);
});

/** A queue of one object on a fake clock, with the events given. */
function queueOf(clock: FakeClock, ...events: RawEvent[]): ObjectQueue {
  const queue = new ObjectQueue({ clock, closing: false }, events[0]!);
  for (const e of events.slice(1)) queue.add(e);
  return queue;
}

Deno.test("OwnWrites.awaitWrite: our write coming back ends the wait at that moment, with no read", async () => {
  const clock = new FakeClock();
  const queue = queueOf(clock, ev(4));
  const writes = new OwnWrites();
  writes.wrote(body(5));
  let reads = 0;
  let result: unknown = "pending";
  writes.awaitWrite(queue, 5, () => (reads++, Promise.resolve(body(5)))).then((r) => (result = r));
  await clock.advance(3);
  assert.equal(result, "pending");
  queue.add(ev(5));
  queue.wake();
  await clock.advance(0);
  assert.deepEqual([result, reads, writes.awaiting], [undefined, 0, true]);
  assert.deepEqual(
    versions(writes.sift(queue.events, false)),
    ["5"],
    "the loop takes it from here",
  );
});

Deno.test("OwnWrites.awaitWrite: not back within the consistency timeout — read at exactly that moment, then the one policy", async () => {
  const clock = new FakeClock();
  const queue = queueOf(clock, ev(4));
  const writes = new OwnWrites();
  writes.wrote(body(5));
  const reads: number[] = [];
  const read: Reader = () => (reads.push(clock.now()), Promise.resolve(body(6)));
  let result: unknown = "pending";
  writes.awaitWrite(queue, 5, read).then((r) => (result = r));
  queue.add(ev(4)); // an older event does not end the wait
  queue.wake();
  await clock.advance(4.999);
  assert.deepEqual(reads, []);
  await clock.advance(0.001);
  assert.deepEqual(reads, [5000]);
  assert.deepEqual(versions(result as RawEvent[]), ["6?"]);
  assert.equal(writes.awaiting, false);
});

Deno.test("OwnWrites.awaitWrite: a failed read keeps our write awaited; with no reader (or closing) the latest event goes on", async () => {
  const clock = new FakeClock();
  const writes = new OwnWrites();
  writes.wrote(body(5));
  const failing = writes.awaitWrite(queueOf(clock, ev(4)), 5, () => Promise.resolve(null));
  await clock.advance(5);
  assert.equal(await failing, undefined);
  assert.equal(writes.awaiting, true, "tried again after another timeout");
  const none = writes.awaitWrite(queueOf(clock, ev(4)), 5, undefined);
  await clock.advance(5);
  assert.equal(await none, undefined);
  assert.equal(writes.awaiting, false, "no way to read: the wait is given up");

  const context = { clock, closing: false };
  const closing = new ObjectQueue(context, ev(4));
  writes.wrote(body(7));
  let reads = 0;
  const cut = writes.awaitWrite(closing, 5, () => (reads++, Promise.resolve(body(8))));
  await clock.advance(1);
  context.closing = true;
  closing.wake();
  await clock.advance(0);
  assert.equal(await cut, undefined);
  assert.deepEqual([reads, writes.awaiting], [0, true], "closing: no read, nothing changed");
});
