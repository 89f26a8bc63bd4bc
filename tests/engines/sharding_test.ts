/**
 * Sharding's per-object gate (engines/sharding.ts), with no API: gates exchange what they
 * publish through an in-memory "bus" standing for the member Leases. The hand-off in steps —
 * releasing before acknowledging, gains only after every member acknowledged the view, a slow
 * release holding only its own object — and a randomised run (joins, kills, fences, stale
 * observations, slow releases) that checks after every step that no object is active on two
 * live replicas at once.
 */

import assert from "node:assert/strict";
import {
  memberAnnotations,
  memberOf,
  type MemberState,
  type Releaser,
  ShardGate,
} from "../../src/core/engines/sharding.ts";

/** Lets the gates' promise callbacks run (a few microtask turns; no timers). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await null;
}

/** A releaser whose releases finish when the test says so. */
class Hands implements Releaser {
  pending = new Map<string, () => void>();
  release(uid: string): Promise<void> {
    return new Promise((resolve) => this.pending.set(uid, resolve));
  }
  finish(uid?: string): void {
    for (const [u, done] of [...this.pending]) {
      if (uid !== undefined && u !== uid) continue;
      this.pending.delete(u);
      done();
    }
  }
}

/** What a gate publishes, as its Lease carries it (through the annotations, as on the wire). */
function published(gate: ShardGate, incarnation: string): MemberState {
  const annotations = memberAnnotations({ ...gate.state(), incarnation });
  return memberOf({ metadata: { annotations }, spec: { holderIdentity: gate.identity } })!;
}

const uids = Array.from({ length: 300 }, (_, i) => `uid-${i}`);

Deno.test("ShardGate: nothing is admitted before the Leases are listed and our own is written", () => {
  const gate = new ShardGate("a");
  gate.join("x1");
  assert.equal(gate.admits("uid-1"), false, "not listed: we might not be alone");
  gate.observe([]);
  assert.equal(gate.admits("uid-1"), true);
  gate.fence();
  assert.equal(gate.admits("uid-1"), false);
  assert.equal(gate.members, 0);
});

Deno.test("ShardGate: a joining member takes its ~1/N only after the old owner released and acknowledged", async () => {
  const a = new ShardGate("a");
  const handsA = new Hands();
  a.observe([]);
  a.join("a1");
  for (const uid of uids) assert.ok(a.enter(uid, handsA));
  const changes: string[] = [];
  a.onChange(() => changes.push("a"));

  // b appears: its first write carries its incarnation and no view yet; then it joins.
  const b = new ShardGate("b");
  const handsB = new Hands();
  b.observe([published(a, "a1")]);
  const bState = published(b, "b1");
  b.join("b1");
  a.observe([bState]);
  assert.ok(changes.length > 0, "a's view changed: it publishes");
  const moving = uids.filter((u) => a.ownerOf(u) === "b");
  assert.ok(moving.length > 100 && moving.length < 200, `${moving.length} move`);
  assert.deepEqual([...a.releasing].sort(), [...moving].sort(), "a releases what goes to b");
  for (const u of moving) assert.equal(a.admits(u), false, "a starts no new cycle of them");
  const staying = uids.find((u) => a.ownerOf(u) === "a")!;
  assert.equal(a.admits(staying), true, "a keeps what stays (it holds it)");
  assert.equal(a.acknowledged, false, "b has not published the view yet");

  // b waits: a has not published its new view.
  b.observe([published(a, "a1")]);
  assert.equal(b.admits(moving[0]!), false);
  // a publishes the view while still releasing: b may take nothing that a releases.
  b.observe([published(a, "a1")]);
  const viewWhileReleasing = published(a, "a1");
  b.observe([viewWhileReleasing]);
  assert.equal(b.acknowledged, true);
  assert.equal(b.admits(moving[0]!), false, "still releasing on a");
  // One slow release holds only its own object.
  handsA.finish(moving[0]);
  await settle();
  for (const u of moving.slice(1)) handsA.finish(u);
  handsA.pending.clear();
  await settle();
  assert.equal(a.releasing.size, 0);
  b.observe([published(a, "a1")]);
  for (const u of moving) assert.ok(b.enter(u, handsB), `b takes ${u}`);
  assert.equal(b.admits(staying), false, "never a's");
  assert.equal(b.sample().owned, moving.length);
  assert.equal(a.sample().owned, uids.length - moving.length);
});

Deno.test("ShardGate: fresh points — a replica that listed after one takes nothing over, but what others still released then", async () => {
  const a = new ShardGate("a");
  const handsA = new Hands();
  const pointsA: number[] = [];
  a.onFresh((p) => pointsA.push(p));
  a.observe([]);
  a.join("a1");
  assert.deepEqual(
    [pointsA, a.freshPoint],
    [[1], 1],
    "the first view, alone: a fresh point at once",
  );
  assert.equal(
    a.takesOver(uids[0]!),
    true,
    "listed before it: a member gone may have written since",
  );
  assert.equal(a.takesOver(uids[0]!, 1), false, "listed after it: nobody else handled it since");
  for (const uid of uids) assert.ok(a.enter(uid, handsA));

  // b joins: a only loses objects (each it keeps was its own all along): no new point for a.
  const b = new ShardGate("b");
  const pointsB: number[] = [];
  b.onFresh((p) => pointsB.push(p));
  b.observe([published(a, "a1")]);
  b.join("b1");
  a.observe([published(b, "b1")]);
  assert.deepEqual([pointsA, a.freshPoint], [[1], 1]);
  const created = Array.from({ length: 50 }, (_, i) => `new-${i}`);
  const ofA = created.find((u) => a.ownerOf(u) === "a")!;
  assert.equal(a.takesOver(ofA, 1), false, "a's stream listed after its first view: still fresh");
  // b's first view has others: stale until a acknowledged it (while a still releases).
  assert.equal(b.freshPoint, undefined);
  const moving = uids.filter((u) => b.ownerOf(u) === "b");
  const slow = moving[0]!;
  b.observe([published(a, "a1")]);
  assert.deepEqual(pointsB, [1], "acknowledged by a: the first fresh point");
  assert.equal(b.freshPoint, 1);
  const ofB = created.find((u) => b.ownerOf(u) === "b")!;
  assert.equal(b.takesOver(ofB, 0), true, "listed before the point: read");
  assert.equal(b.takesOver(ofB, undefined), true);
  assert.equal(b.takesOver(ofB, 1), false, "listed after it: nobody else handled it since");
  assert.equal(b.takesOver(slow, 1), true, "a still releases it at the point: read");
  b.observe([published(a, "a1")]);
  assert.deepEqual(pointsB, [1], "a's Lease again, the same releases: no new point");
  handsA.finish();
  await settle();
  b.observe([published(a, "a1")]);
  assert.deepEqual(pointsB, [1, 2], "a's releases are over: a fresh point for them");
  assert.equal(b.takesOver(slow, 1), true);
  assert.equal(
    b.takesOver(slow, 2),
    false,
    "listed after a's release ended: newer than its writes",
  );
  assert.ok(b.enter(ofB, new Hands()));
  assert.equal(b.takesOver(ofB, 0), false, "held: never read anew");
  b.observe([published(a, "a1")]);
  assert.deepEqual(pointsB, [1, 2], "nothing released: no new point");

  // a is gone: b may gain a's objects — stale, then (alone: acknowledged at once) point 3.
  b.observe([]);
  assert.deepEqual(pointsB, [1, 2, 3]);
  const gained = uids.find((u) => !moving.includes(u))!;
  assert.equal(b.takesOver(gained, 2), true, "listed before a went: read");
  assert.equal(b.takesOver(gained, 3), false);
  // A fence: others may handle b's objects meanwhile; the rejoin is a change to list after.
  b.fence();
  assert.equal(b.freshPoint, undefined);
  b.join("b2");
  assert.deepEqual(pointsB, [1, 2, 3, 4]);
  assert.equal(b.takesOver(gained, 3), true);
  assert.equal(b.takesOver(gained, 4), false);
});

Deno.test("ShardGate: a new incarnation of a member needs fresh acknowledgements", () => {
  const a = new ShardGate("a");
  const b = new ShardGate("b");
  a.observe([]);
  a.join("a1");
  b.observe([published(a, "a1")]);
  b.join("b1");
  a.observe([published(b, "b1")]);
  b.observe([published(a, "a1")]);
  const bs = uids.filter((u) => b.ownerOf(u) === "b");
  assert.equal(b.admits(bs[0]!), true);
  // b is fenced (lost its Lease) and rejoins as b2: a's acknowledgement of b1 counts no more.
  b.fence();
  b.join("b2");
  assert.equal(b.admits(bs[0]!), false);
  b.observe([published(a, "a1")]);
  assert.equal(b.admits(bs[0]!), false, "a acknowledged b1, not b2");
  a.observe([published(b, "b2")]);
  b.observe([published(a, "a1")]);
  assert.equal(b.admits(bs[0]!), true);
});

Deno.test("ShardGate: malformed annotations acknowledge nothing; Leases without holder or incarnation are no members", () => {
  assert.equal(memberOf({ spec: { holderIdentity: "a" } }), undefined);
  assert.equal(
    memberOf({ metadata: { annotations: { "kopf.dev/shard-incarnation": "x" } } }),
    undefined,
  );
  const m = memberOf({
    metadata: {
      annotations: {
        "kopf.dev/shard-incarnation": "x",
        "kopf.dev/shard-view": "{not json",
        "kopf.dev/shard-releasing": '"nope"',
      },
    },
    spec: { holderIdentity: "a" },
  });
  assert.deepEqual(m && { view: m.view.size, releasing: m.releasing }, { view: 0, releasing: [] });
});

/** A small deterministic PRNG (mulberry32), so that a failing run can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One simulated replica: a gate, its hands, its incarnation, its cursor in the bus's history. */
interface Replica {
  id: string;
  gate: ShardGate;
  hands: Hands;
  incarnation: string;
  /** Fenced and not rejoined yet. */
  fenced: boolean;
  /** Index into the history of Lease snapshots: what its watch has delivered so far. */
  cursor: number;
}

Deno.test("ShardGate: randomised joins, kills, fences and stale observations never activate an object twice", async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const random = prng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    /** The Leases: identity → published state; the history of every version of the whole set. */
    let leases = new Map<string, MemberState>();
    const history: Map<string, MemberState>[] = [new Map()];
    const write = (next: Map<string, MemberState>) => {
      leases = next;
      history.push(new Map(next));
    };
    const replicas = new Map<string, Replica>();
    let serial = 0;
    const spawn = (id: string) => {
      const r: Replica = {
        id,
        gate: new ShardGate(id),
        hands: new Hands(),
        incarnation: `${id}.${++serial}`,
        fenced: false,
        cursor: history.length - 1,
      };
      r.gate.observe(history[r.cursor]!.values());
      write(new Map(leases).set(id, published(r.gate, r.incarnation)));
      r.gate.join(r.incarnation);
      replicas.set(id, r);
    };
    for (const id of ["r0", "r1", "r2"]) spawn(id);

    const check = (step: number, what: string) => {
      const active = new Map<string, string>();
      for (const r of replicas.values()) {
        for (const uid of [...r.gate.held, ...r.gate.releasing]) {
          const other = active.get(uid);
          assert.ok(!other, `seed ${seed} step ${step} (${what}): ${uid} on ${other} and ${r.id}`);
          active.set(uid, r.id);
        }
      }
    };

    for (let step = 0; step < 3000; step++) {
      const live = [...replicas.values()];
      const r = pick(live);
      const dice = random();
      let what: string;
      if (dice < 0.3) {
        what = `${r.id} publishes`;
        if (!r.fenced) write(new Map(leases).set(r.id, published(r.gate, r.incarnation)));
      } else if (dice < 0.55) {
        // Its watch delivers some more versions, in order (never an older one after a newer).
        what = `${r.id} observes`;
        r.cursor = Math.min(history.length - 1, r.cursor + 1 + Math.floor(random() * 5));
        r.gate.observe(history[r.cursor]!.values());
        // The renewer publishes soon after a change of the view, mostly before anything else.
        if (!r.fenced && random() < 0.7) {
          write(new Map(leases).set(r.id, published(r.gate, r.incarnation)));
        }
      } else if (dice < 0.85) {
        // Events come for any object; mostly for those the view gives it (the others are kept).
        what = `${r.id} enters`;
        const mine = uids.filter((u) => r.gate.ownerOf(u) === r.id);
        for (let i = 0; i < 10; i++) {
          r.gate.enter(pick(mine.length && i % 2 ? mine : uids), r.hands);
        }
      } else if (dice < 0.9) {
        what = `${r.id} finishes releases`;
        for (const uid of [...r.hands.pending.keys()]) if (random() < 0.3) r.hands.finish(uid);
      } else if (dice < 0.93 && live.length > 1) {
        // kill -9: the process is gone (nothing of it runs); its Lease expires and is deleted.
        what = `${r.id} killed`;
        replicas.delete(r.id);
        const next = new Map(leases);
        next.delete(r.id);
        write(next);
      } else if (dice < 0.95 && !r.fenced) {
        // Cannot renew: fenced at once; its Lease is deleted only after its releases ended
        // (renewDeadline < leaseDuration, the timing the protocol assumes).
        what = `${r.id} fenced`;
        r.gate.fence();
        r.fenced = true;
      } else if (dice < 0.97 && r.fenced && r.gate.releasing.size === 0) {
        what = `${r.id} rejoins`;
        if (random() < 0.5) {
          const next = new Map(leases);
          next.delete(r.id); // the others deleted its expired Lease meanwhile
          write(next);
        }
        r.incarnation = `${r.id}.${++serial}`;
        r.fenced = false;
        write(new Map(leases).set(r.id, published(r.gate, r.incarnation)));
        r.gate.join(r.incarnation);
      } else if (replicas.size < 6) {
        what = "a replica joins";
        spawn(`r${serial}`);
      } else {
        what = "nothing";
      }
      await settle();
      check(step, what);
    }

    // Quiet: everyone publishes and observes until it settles; then every uid has its owner.
    for (let round = 0; round < 6; round++) {
      for (const r of replicas.values()) {
        r.hands.finish();
        await settle();
        if (r.fenced && r.gate.releasing.size === 0) {
          r.incarnation = `${r.id}.${++serial}`;
          r.fenced = false;
          r.gate.join(r.incarnation);
        }
        write(new Map(leases).set(r.id, published(r.gate, r.incarnation)));
      }
      const dead = [...leases.keys()].filter((id) => !replicas.has(id));
      const next = new Map(leases);
      for (const id of dead) next.delete(id);
      write(next);
      for (const r of replicas.values()) {
        r.cursor = history.length - 1;
        r.gate.observe(history[r.cursor]!.values());
      }
      await settle();
    }
    for (const uid of uids) {
      const takers = [...replicas.values()].filter((r) => r.gate.enter(uid, r.hands));
      assert.equal(takers.length, 1, `seed ${seed}: ${uid} taken by ${takers.map((r) => r.id)}`);
    }
    check(-1, "settled");
  }
});
