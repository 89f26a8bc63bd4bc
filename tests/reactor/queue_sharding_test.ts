/**
 * Per-object queues behind sharding's gate, on a fake clock: objects of other replicas get no
 * worker, no cycle and no entry (nothing is kept of them; the watch reads the state anew when a
 * view may give them to us); ours, not admitted yet, keep their latest body; an object handed over to us goes through one
 * cycle with its latest body (`type: null`, as after a listing); an object handed away finishes
 * its in-flight cycle before the release hook (daemons) runs, and its memory starts afresh; a
 * deleted object of another replica is forgotten.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { Rendezvous } from "../../src/cogs/structs/rendezvous.ts";
import {
  memberAnnotations,
  memberOf,
  type MemberState,
  ShardGate,
} from "../../src/core/engines/sharding.ts";
import { ObjectQueues, type QueueSettings } from "../../src/core/reactor/queueing.ts";
import type { ObjectMemory, RawEvent } from "../../src/core/reactor/processing.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const SETTINGS: QueueSettings = {
  batchWindow: 0.1,
  idleTimeout: 5,
  workerLimit: null,
  consistencyTimeout: 5,
  errorDelays: [1],
};

const ev = (uid: string, rv: number, type: RawEvent["type"] = "MODIFIED"): RawEvent => ({
  type,
  object: { metadata: { uid, name: uid, namespace: "ns", resourceVersion: String(rv) } } as Obj,
});

/** Uids that {a, b} give to a, and to b. */
const pair = new Rendezvous(["a", "b"]);
const all = Array.from({ length: 40 }, (_, i) => `uid-${i}`);
const OURS = all.filter((u) => pair.owner(u) === "a").slice(0, 3);
const THEIRS = all.filter((u) => pair.owner(u) === "b").slice(0, 3);

/** b's member state: its incarnation, and (if given) the view it published. */
function b(view?: ShardGate, releasing: string[] = []): MemberState {
  const state = view?.state();
  const annotations = memberAnnotations({
    id: "b",
    incarnation: "b1",
    view: state ? new Map(state.view) : new Map(),
    releasing,
  });
  return memberOf({ metadata: { annotations }, spec: { holderIdentity: "b" } })!;
}

function rig(refresh?: (body: Obj) => Promise<Obj | undefined>) {
  const clock = new FakeClock();
  const gate = new ShardGate("a");
  const calls: string[] = [];
  const released: string[] = [];
  const memories = new Map<string, ObjectMemory>();
  let finish: (() => void) | undefined;
  let slow = false;
  const queues = new ObjectQueues(
    async (e: RawEvent, memory: ObjectMemory) => {
      const m = e.object.metadata;
      calls.push(`${m.uid}@${m.resourceVersion}${e.type === null ? "?" : ""}`);
      memories.set(m.uid, memory);
      memory.memo.seen = true;
      if (slow) await new Promise<void>((r) => (finish = r));
      return {};
    },
    SETTINGS,
    {
      clock,
      gate,
      refresh,
      release: (uid, memory) => {
        assert.equal(memories.get(uid), memory);
        released.push(uid);
        return Promise.resolve();
      },
    },
  );
  return {
    clock,
    gate,
    calls,
    released,
    memories,
    queues,
    slow: (on: boolean) => (slow = on),
    finish: () => finish?.(),
  };
}

Deno.test("sharded queues: another replica's objects get no worker and nothing kept; ours, handed over, get one cycle with the latest body", async () => {
  const { clock, gate, calls, queues } = rig();
  gate.join("a1");
  gate.observe([b()]); // b is there but has not acknowledged our view: nothing is ours to gain
  for (const uid of [...OURS, ...THEIRS]) queues.push(ev(uid, 1, "ADDED"));
  await clock.advance(1);
  for (const uid of [...OURS, ...THEIRS]) queues.push(ev(uid, 2));
  await clock.advance(1);
  assert.deepEqual(calls, [], "not acknowledged yet: not even ours are started");
  assert.equal(queues.size, 0, "no workers for objects that are not admitted");
  assert.equal(queues.known, 3, "ours are known (their latest body kept), theirs not at all");
  assert.deepEqual(THEIRS.map((u) => queues.skips(u)), [true, true, true], "theirs: skipped");
  assert.deepEqual(OURS.map((u) => queues.skips(u)), [false, false, false]);

  gate.observe([b(gate)]); // b publishes the same view: ours are admitted now
  await clock.advance(1);
  assert.deepEqual(calls.sort(), OURS.map((u) => `${u}@2?`).sort(), "once, latest, as listed");
  calls.length = 0;
  for (const uid of [...OURS, ...THEIRS]) queues.push(ev(uid, 3));
  await clock.advance(1);
  assert.deepEqual(calls.sort(), OURS.map((u) => `${u}@3`).sort(), "theirs stay theirs");

  // A deleted object of b's: nothing to forget here (b handles its deletion).
  queues.push(ev(THEIRS[0]!, 4, "DELETED"));
  await clock.advance(1);
  assert.equal(queues.known, 3);
  await queues.close();
});

Deno.test("sharded queues: an object handed away finishes its cycle in flight, then is released afresh", async () => {
  const { clock, gate, calls, released, memories, queues, slow, finish } = rig();
  gate.observe([]);
  gate.join("a1");
  for (const uid of [...OURS, ...THEIRS]) queues.push(ev(uid, 1, "ADDED"));
  await clock.advance(1);
  assert.equal(calls.length, 6, "alone: all are ours");
  assert.equal(gate.sample().owned, 6);

  slow(true);
  const leaving = THEIRS[0]!;
  queues.push(ev(leaving, 2));
  await clock.advance(0.5);
  assert.equal(calls.at(-1), `${leaving}@2`, "in flight");
  gate.observe([b()]); // b joins: THEIRS go to b
  assert.deepEqual([...gate.releasing].sort(), [...THEIRS].sort());
  await clock.advance(1);
  assert.deepEqual(
    released.sort(),
    THEIRS.filter((u) => u !== leaving).sort(),
    "the idle ones are released at once; the one in flight is not yet",
  );
  queues.push(ev(leaving, 3));
  finish();
  await clock.advance(1);
  assert.ok(released.includes(leaving), "released once its cycle ended");
  assert.equal(gate.releasing.size, 0);
  assert.deepEqual(memories.get(leaving)!.memo, {}, "its memory starts afresh");
  assert.ok(!calls.includes(`${leaving}@3`), "no cycle after the hand-off");
  assert.equal(gate.sample().owned, 3);
  assert.equal(queues.known, 3, "nothing is kept of the objects handed away");
  assert.deepEqual(THEIRS.map((u) => queues.skips(u)), [true, true, true]);
  await queues.close();
});

Deno.test("sharded queues: what was kept before the first view (every object) goes for others' objects once the view forms", async () => {
  const { clock, gate, calls, queues } = rig();
  gate.join("a1"); // no view until the Leases are listed: nothing is another's yet
  for (const uid of [...OURS, ...THEIRS]) queues.push(ev(uid, 1, "ADDED"));
  await clock.advance(1);
  assert.deepEqual([calls, queues.known], [[], 6], "kept, not started (no view)");
  assert.deepEqual([...OURS, ...THEIRS].map((u) => queues.skips(u)), Array(6).fill(false));
  gate.observe([b()]); // {a, b}: THEIRS are b's
  assert.equal(queues.known, 3, "b's objects are not kept");
  gate.observe([b(gate)]);
  await clock.advance(1);
  assert.deepEqual(calls.sort(), OURS.map((u) => `${u}@1?`).sort());
  await queues.close();
});

/** A re-read that answers each object at version 5 (as after the other replica's last write). */
function readsAt5(reads: string[]) {
  return (body: Obj) => {
    reads.push(body.metadata.uid);
    return Promise.resolve(ev(body.metadata.uid, 5).object);
  };
}

Deno.test("sharded queues: an object taken over from another replica is read anew before its first cycle here; the watch's late events up to that version are dropped", async () => {
  const reads: string[] = [];
  const { clock, gate, calls, queues } = rig(readsAt5(reads));
  gate.join("a1");
  gate.observe([b()]); // b is there (it handled everything so far), not acknowledged yet
  for (const uid of OURS) queues.push(ev(uid, 1, "ADDED"));
  await clock.advance(1);
  gate.observe([b(gate)]); // acknowledged: ours are taken over from b
  await clock.advance(1);
  assert.deepEqual(reads.sort(), [...OURS].sort(), "each read once");
  assert.deepEqual(
    calls.sort(),
    OURS.map((u) => `${u}@5?`).sort(),
    "the body read, not the watch's older one (b's last write had not reached our watch)",
  );
  calls.length = 0;
  // b's last write (version 5) and one before it come late through our watch: not newer.
  for (const uid of OURS) {
    queues.push(ev(uid, 4));
    queues.push(ev(uid, 5));
  }
  await clock.advance(1);
  assert.deepEqual(calls, [], "the late events are dropped");
  for (const uid of OURS) queues.push(ev(uid, 6));
  await clock.advance(1);
  assert.deepEqual(calls.sort(), OURS.map((u) => `${u}@6`).sort(), "held now: newer events go on");
  assert.equal(reads.length, OURS.length, "no read for an object held already");
  await queues.close();
});

Deno.test("sharded queues: an object gained while the stream reads the state anew waits for that listing (no read); once it is over, the objects it shows go on — a stream not asked to relist reads them", async () => {
  const reads: string[] = [];
  const { clock, gate, calls, queues } = rig(readsAt5(reads));
  const listings: (() => void)[] = [];
  const unsubscribe = queues.relists((listed) => listings.push(listed));
  gate.join("a1");
  gate.observe([b()]); // b is there: it may have handled objects ours now
  assert.equal(listings.length, 0, "not acknowledged yet: no relist asked for");
  gate.observe([b(gate)]); // acknowledged: a fresh point
  assert.equal(listings.length, 1, "the stream is asked to read the state anew");
  const [early, late, later] = OURS as [string, string, string];
  queues.push(ev(early, 1, "ADDED")); // the relist is not over: the watch may still be behind
  await clock.advance(1);
  assert.deepEqual([reads, calls], [[], []], "it waits for the listing, unread");
  queues.push(ev(early, 6, null)); // the listing brings it anew
  await clock.advance(1);
  assert.deepEqual(calls, [], "still waiting: the listing is not over");
  listings[0]!(); // the relist is over: every body from here on is newer than b's writes
  queues.push(ev(late, 1, null));
  queues.push(ev(later, 2, "ADDED"));
  await clock.advance(1);
  assert.deepEqual(reads, [], "no read of what the relist and the watch after it bring");
  assert.deepEqual(calls.sort(), [`${early}@6?`, `${late}@1?`, `${later}@2`].sort());
  unsubscribe();
  gate.observe([]); // b is gone: a new point, but this stream no longer listens
  assert.equal(listings.length, 1);
  await queues.close();

  // The same without a relist asked for (a stream that does not relist): read anew.
  const other = rig(readsAt5(reads));
  other.gate.join("a1");
  other.gate.observe([b()]);
  other.gate.observe([b(other.gate)]);
  other.queues.push(ev(early, 1, "ADDED"));
  await other.clock.advance(1);
  assert.deepEqual([reads, other.calls], [[early], [`${early}@5?`]]);
  await other.queues.close();
});

Deno.test("sharded queues: objects another replica still released at the fresh point wait, once released at once, for the relist that their releases' end asks for — no read; one released alone is read", async () => {
  const reads: string[] = [];
  const { clock, gate, calls, queues } = rig(readsAt5(reads));
  const listings: (() => void)[] = [];
  const unsubscribe = queues.relists((listed) => listings.push(listed));
  const many = Array.from({ length: 60 }, (_, i) => `late-${i}`)
    .filter((u) => pair.owner(u) === "a").slice(0, 9);
  const [alone, ...slow] = many as [string, ...string[]];
  const [other] = OURS as [string];
  gate.join("a1");
  gate.observe([b()]);
  gate.observe([b(gate, many)]); // acknowledged while b still releases them: point 1
  assert.equal(listings.length, 1);
  listings[0]!();
  for (const uid of [...many, other]) queues.push(ev(uid, 1, "ADDED"));
  await clock.advance(1);
  assert.deepEqual(calls, [`${other}@1`], "the late ones wait for b's releases");
  gate.observe([b(gate, slow)]); // one released alone: not worth a relist — read anew
  assert.equal(listings.length, 1);
  await clock.advance(1);
  assert.deepEqual([reads, calls.slice(1)], [[alone], [`${alone}@5?`]]);
  gate.observe([b(gate)]); // the rest released at once (8 of them): point 2, a relist
  assert.equal(listings.length, 2, "their releases' end asks for a relist");
  await clock.advance(1);
  assert.deepEqual([reads.length, calls.length], [1, 2], "they wait for the relist, unread");
  for (const uid of slow) queues.push(ev(uid, 6, null)); // the relist brings them anew
  listings[1]!();
  await clock.advance(1);
  assert.deepEqual(reads, [alone]);
  assert.deepEqual(calls.slice(2).sort(), slow.map((u) => `${u}@6?`).sort());
  unsubscribe();
  await queues.close();
});

Deno.test("sharded queues: a replica alone reads anew what its stream listed before its first view (a member gone just before may have written since), and nothing a stream started after it lists", async () => {
  const reads: string[] = [];
  const { clock, gate, calls, queues } = rig(readsAt5(reads));
  for (const uid of OURS) queues.push(ev(uid, 1, "ADDED")); // listed before any view
  await clock.advance(1);
  gate.observe([]); // the member that held them (a rolling update) left just before: alone
  gate.join("a1");
  await clock.advance(1);
  assert.deepEqual(reads.sort(), [...OURS].sort(), "each read once");
  assert.deepEqual(
    calls.sort(),
    OURS.map((u) => `${u}@5?`).sort(),
    "the body read, not the listed one",
  );
  await queues.close();

  const later = rig(readsAt5(reads));
  later.gate.observe([]);
  later.gate.join("a1"); // the first view: a fresh point
  const unsubscribe = later.queues.relists(() => {}); // the stream starts after it, and lists
  for (const uid of OURS) later.queues.push(ev(uid, 1, "ADDED"));
  await later.clock.advance(1);
  assert.deepEqual(later.calls.sort(), OURS.map((u) => `${u}@1`).sort());
  assert.equal(reads.length, OURS.length, "no read of what a listing after the first view shows");
  unsubscribe();
  await later.queues.close();
});

Deno.test("sharded queues: a failed read of a taken-over object runs no cycle on the older body; it is read again after the error delay", async () => {
  let fail = true;
  const reads: string[] = [];
  const { clock, gate, calls, queues } = rig((body) => {
    reads.push(body.metadata.uid);
    return fail ? Promise.reject(new Error("503")) : readsAt5([])(body);
  });
  const uid = OURS[0]!;
  gate.join("a1");
  gate.observe([b()]);
  queues.push(ev(uid, 1, "ADDED"));
  await clock.advance(0.5);
  gate.observe([b(gate)]);
  await clock.advance(0.5);
  assert.deepEqual(calls, [], "no cycle on the watch's body");
  assert.equal(reads.length, 1);
  fail = false;
  await clock.advance(1); // SETTINGS.errorDelays: [1]
  assert.deepEqual(calls, [`${uid}@5?`]);
  assert.equal(reads.length, 2);
  await queues.close();
});

Deno.test("sharded queues: a taken-over object whose read finds the version the watch delivered goes on with the watch's events", async () => {
  const reads: string[] = [];
  const { clock, gate, calls, queues } = rig((body) => {
    reads.push(body.metadata.uid);
    return Promise.resolve(ev(body.metadata.uid, 2).object); // what the watch has already
  });
  gate.join("a1");
  gate.observe([b()]);
  for (const uid of OURS) queues.push(ev(uid, 2, "ADDED"));
  await clock.advance(1);
  gate.observe([b(gate)]);
  await clock.advance(1);
  assert.equal(reads.length, OURS.length);
  assert.deepEqual(calls.sort(), OURS.map((u) => `${u}@2?`).sort());
  calls.length = 0;
  for (const uid of OURS) queues.push(ev(uid, 3));
  await clock.advance(1);
  assert.deepEqual(calls.sort(), OURS.map((u) => `${u}@3`).sort(), "newer events are not dropped");
  await queues.close();
});
