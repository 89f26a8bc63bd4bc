/**
 * The gate in front of the queues' cycles (`QueueGate`, src/core/reactor/queue_gate.ts) on its
 * own: the pause first, then the object's shard (held from its first pass), then the take-over
 * read — remembered when it failed; the resume waited for on a fake clock.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { Rendezvous } from "../../src/cogs/structs/rendezvous.ts";
import {
  memberAnnotations,
  memberOf,
  type MemberState,
  ShardGate,
} from "../../src/core/engines/sharding.ts";
import { QueueGate } from "../../src/core/reactor/queue_gate.ts";

const releaser = { release: () => Promise.resolve() };
const pair = new Rendezvous(["a", "b"]);
const uids = Array.from({ length: 40 }, (_, i) => `uid-${i}`);
const OURS = uids.find((u) => pair.owner(u) === "a")!;
const THEIRS = uids.find((u) => pair.owner(u) === "b")!;

/** b's member state, with the view it published (if given). */
function b(view?: ShardGate): MemberState {
  const state = view?.state();
  const annotations = memberAnnotations({
    id: "b",
    incarnation: "b1",
    view: state ? new Map(state.view) : new Map(),
    releasing: [],
  });
  return memberOf({ metadata: { annotations }, spec: { holderIdentity: "b" } })!;
}

/** A gate of replica a in a group with b, the hand-over acknowledged by both. */
/** Two replicas, a's view acknowledged by b; the gate made before (its stream listed before). */
function shared(reads = true) {
  const shards = new ShardGate("a");
  const gate = new QueueGate({ shards, releaser, reads });
  shards.join("a1");
  shards.observe([b()]);
  shards.observe([b(shards)]);
  return { shards, gate };
}

Deno.test("QueueGate: with neither pause nor shards every batch goes", () => {
  const gate = new QueueGate({ releaser, reads: true });
  assert.deepEqual([gate.sharded, gate.paused, gate.admits("x")], [false, false, true]);
  assert.equal(gate.pass("x", false), "go");
});

Deno.test("QueueGate: paused — no batch goes, not even a deletion; the resume is waited for, not the clock", async () => {
  const clock = new FakeClock();
  const paused = new ToggleSet();
  const gate = new QueueGate({ paused, releaser, reads: true });
  const resumes: string[] = [];
  const unsubscribe = gate.onResume(() => resumes.push("resumed"));
  const peering = paused.make("peering", true);
  assert.deepEqual([gate.pass("x", false), gate.pass("x", true)], ["paused", "paused"]);
  assert.equal(gate.admits("x"), true, "paused events still get their queue (they wait there)");
  let resumed = false;
  gate.waitResumed().then(() => (resumed = true));
  await clock.advance(3600);
  assert.equal(resumed, false);
  peering.turnTo(false);
  await clock.advance(0);
  assert.deepEqual([resumed, resumes], [true, ["resumed"]]);
  assert.equal(gate.pass("x", false), "go");
  unsubscribe();
  peering.turnTo(true);
  peering.turnTo(false);
  assert.deepEqual(resumes, ["resumed"], "unsubscribed");
});

Deno.test("QueueGate: a pause wait is cut short by its signal (the queues close)", async () => {
  const paused = new ToggleSet();
  paused.make("peering", true);
  const gate = new QueueGate({ paused, releaser, reads: true });
  const stop = new AbortController();
  const waiting = gate.waitResumed(stop.signal);
  stop.abort();
  assert.equal(await waiting, false);
});

Deno.test("QueueGate: sharded — another replica's object is refused; ours is held from its first pass", () => {
  const { shards, gate } = shared();
  assert.equal(gate.sharded, true);
  assert.deepEqual([gate.admits(OURS), gate.admits(THEIRS)], [true, false]);
  assert.equal(gate.pass(THEIRS, false), "refused");
  assert.equal(gate.pass(OURS, false), "read", "taken over: b may have handled it last");
  assert.ok(shards.held.has(OURS), "held as ours from now on");
  gate.read(OURS, true);
  assert.equal(gate.pass(OURS, false), "go", "held: read no more");
  // A gate made after the fresh point: its stream lists after it — nothing of it is taken over.
  const later = new QueueGate({ shards, releaser, reads: true });
  shards.forget(OURS);
  assert.equal(later.pass(OURS, false), "go");
});

Deno.test("QueueGate: a failed take-over read is read again at the next pass; forgetting the object forgets that", () => {
  const { shards, gate } = shared();
  assert.equal(gate.pass(OURS, false), "read");
  gate.read(OURS, false);
  assert.equal(gate.pass(OURS, false), "read", "held by now, but not read yet");
  gate.read(OURS, false);
  gate.forget(OURS);
  assert.ok(!shards.held.has(OURS), "the shard gate forgets it too");
  gate.read(OURS, true);
  assert.equal(gate.pass(OURS, false), "read", "after a deletion: a new object, taken over anew");
});

Deno.test("QueueGate: a deletion is never read anew; without a reader taken-over objects go as watched", () => {
  assert.equal(shared().gate.pass(OURS, true), "go");
  assert.equal(shared(false).gate.pass(OURS, false), "go");
});

Deno.test("QueueGate: a replica alone reads anew what its stream listed before the first view, not what a stream started after it lists; the admit listener hears the shard gate", () => {
  const shards = new ShardGate("a");
  const gate = new QueueGate({ shards, releaser, reads: true });
  let admitted = 0;
  const unsubscribe = gate.onAdmit(() => admitted++);
  assert.equal(gate.pass(OURS, false), "refused", "no view yet: nothing is ours");
  shards.observe([]);
  shards.join("a1");
  assert.ok(admitted > 0);
  assert.deepEqual([gate.pass(OURS, false), gate.pass(THEIRS, false)], ["read", "read"]);
  const after = new QueueGate({ shards, releaser, reads: true });
  assert.deepEqual([after.pass(OURS, false), after.pass(THEIRS, false)], ["go", "go"]);
  const early = new ShardGate("a");
  const started = new QueueGate({ shards: early, releaser, reads: true });
  const asked: (() => void)[] = [];
  let relisted = 0;
  started.onAdmit(() => relisted++);
  started.relists((listed) => asked.push(listed)); // its stream starts before any view
  early.observe([]);
  early.join("a1");
  assert.deepEqual(
    [asked.length, started.pass(OURS, false)],
    [1, "refused"],
    "relist asked, not over: wait for it",
  );
  assert.equal(started.pass(OURS, true), "go", "a deletion does not wait");
  const admittedBefore = relisted;
  asked[0]!();
  assert.equal(relisted, admittedBefore + 1, "the relist's end admits what waited");
  assert.equal(started.pass(THEIRS, false), "go", "listed after the first view");
  unsubscribe();
});
