/**
 * Per-object queues behind the pause gate, on a fake clock: while paused, events keep coming
 * and wait; on resume each object is processed once, with its latest body; a cycle in flight
 * finishes; closing while paused drops what waits; after the resume, objects whose daemons the
 * pause stopped go through a cycle (with their live body) unless a newer event waits anyway.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { ObjectQueues, type QueueSettings } from "../../src/core/reactor/queueing.ts";
import type { ObjectMemory, RawEvent } from "../../src/core/reactor/processing.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const SETTINGS: QueueSettings = {
  batchWindow: 0.1,
  idleTimeout: 5,
  workerLimit: 1,
  consistencyTimeout: 5,
  errorDelays: [1],
};

const obj = (uid: string, rv: number): Obj => ({
  metadata: { uid, name: uid, namespace: "ns", resourceVersion: String(rv) },
});
const ev = (uid: string, rv: number, type: RawEvent["type"] = "MODIFIED"): RawEvent => ({
  type,
  object: obj(uid, rv),
});

function rig(options: { slow?: boolean } = {}) {
  const clock = new FakeClock();
  const paused = new ToggleSet();
  const calls: string[] = [];
  const memories = new Map<string, ObjectMemory>();
  let release: (() => void) | undefined;
  const queues = new ObjectQueues(
    async (e: RawEvent, memory: ObjectMemory) => {
      const m = e.object.metadata;
      calls.push(`${m.uid}@${m.resourceVersion}${e.type === null ? "?" : ""}`);
      memories.set(m.uid, memory);
      if (options.slow) await new Promise<void>((r) => (release = r));
      return {};
    },
    SETTINGS,
    { clock, paused },
  );
  return { clock, paused, calls, memories, queues, release: () => release?.() };
}

Deno.test("queues: paused — events wait; on resume each object once, with its latest body", async () => {
  const { clock, paused, calls, queues } = rig();
  const peering = paused.make("peering", true);
  queues.push(ev("a", 1, "ADDED"));
  queues.push(ev("b", 1, "ADDED"));
  await clock.advance(1);
  queues.push(ev("a", 2));
  await clock.advance(30);
  queues.push(ev("a", 3));
  queues.push(ev("b", 2));
  await clock.advance(30);
  assert.deepEqual(calls, [], "nothing processed while paused (idle timeouts do not drop them)");
  assert.equal(queues.depth, 5);
  peering.turnTo(false);
  await clock.advance(1);
  assert.deepEqual(calls.sort(), ["a@3", "b@2"]);
  await clock.advance(10);
  assert.equal(calls.length, 2, "nothing handled twice");
  await queues.close();
});

Deno.test("queues: a cycle in flight at the pause finishes; the next waits for the resume", async () => {
  const { clock, paused, calls, queues, release } = rig({ slow: true });
  queues.push(ev("a", 1, "ADDED"));
  await clock.advance(0);
  assert.deepEqual(calls, ["a@1"]);
  const peering = paused.make("peering");
  peering.turnTo(true);
  queues.push(ev("a", 2));
  release();
  await clock.advance(5);
  assert.deepEqual(calls, ["a@1"]);
  peering.turnTo(false);
  await clock.advance(1);
  assert.deepEqual(calls, ["a@1", "a@2"]);
  release();
  await queues.close();
});

Deno.test("queues: closing while paused ends the workers without processing what waits", async () => {
  const { clock, paused, calls, queues } = rig();
  paused.make("peering", true);
  queues.push(ev("a", 1, "ADDED"));
  queues.push(ev("b", 1, "DELETED"));
  await clock.advance(1);
  let closed = false;
  const closing = queues.close().then(() => (closed = true));
  await clock.advance(0);
  assert.equal(closed, true);
  await closing;
  assert.deepEqual(calls, []);
});

Deno.test("queues: after the resume, objects whose daemons were paused get a cycle with their live body", async () => {
  const { clock, paused, calls, memories, queues } = rig();
  queues.push(ev("a", 1, "ADDED"));
  queues.push(ev("b", 1, "ADDED"));
  queues.push(ev("c", 1, "ADDED"));
  await clock.advance(10); // processed; workers idle out
  const live = (uid: string, rv: number, extra: Obj = {}) => (memories.get(uid)!.spawned = {
    paused: true,
    deleting: false,
    body: obj(uid, rv),
    ...extra,
  } as never);
  const peering = paused.make("peering", true);
  live("a", 1); // paused daemons, no news: a re-check with its live body
  live("b", 1); // paused daemons, but a newer event waits: that one goes instead
  live("c", 1, { deleting: true }); // being deleted: nothing to respawn
  queues.push(ev("b", 2));
  await clock.advance(1);
  calls.length = 0;
  peering.turnTo(false);
  await clock.advance(1);
  assert.deepEqual(calls.sort(), ["a@1?", "b@2"]);
  await queues.close();
});
