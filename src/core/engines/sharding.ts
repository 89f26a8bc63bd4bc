/**
 * Sharding: the objects of the served resources are split among the live
 * replicas of a shard group, each object (by uid) belonging to exactly one of
 * them by rendezvous hashing (cogs/structs/rendezvous.ts). This module is the
 * per-object gate of one replica — pure state, no I/O; the member Leases that
 * feed it and publish it are reactor/sharding.ts.
 *
 * The hand-off protocol. Every member publishes, in its member Lease:
 * - its **incarnation**: a fresh token each time it (re)joins (a restart, or
 *   after it lost its Lease), so that what others acknowledged of an older
 *   incarnation never counts for a newer one;
 * - its **view**: the members it sees live, each with its incarnation — the
 *   member claims the objects that the view gives it, and no others;
 * - what it is **releasing**: objects that the view does not give it but
 *   that it may still touch (a cycle in flight, daemons or timers not exited
 *   yet).
 *
 * A member adopts a new view at once when the live set changes; from that
 * moment it starts no cycle of an object the view does not give it; it
 * finishes such objects' in-flight cycles, stops their daemons and timers,
 * and removes them from its published `releasing` when they have exited.
 * It starts an object only if its view gives it the object and either
 * - it holds the object already (started it before and never released it
 *   since: every view it adopted in between gave it the object), or
 * - every other member of its view has published exactly this view, and none
 *   of them lists the object as releasing.
 *
 * Why this is safe (no object is handled by two replicas at once): another
 * member C can start an object O only under a view that gives O to C, after
 * every member of that view — us included, if we are in it — published that
 * view. We publish a view only after adopting it, and adopting it stopped our
 * cycles of O (O is C's there) and put O in our `releasing` until they
 * exited. If we are not in C's view, C has seen our Lease expire and deleted
 * it with its resourceVersion as a precondition (reactor/sharding.ts), so we
 * renewed nothing since C's last observation, and we stop everything when
 * our own renew deadline passes — before C's observed expiry. Observations
 * may be stale (watches lag): a stale view of another member only delays a
 * hand-off; it never shows an acknowledgement that was not made, and a
 * member's acknowledgements of our current incarnation are all newer than it.
 *
 * Why exact equality of views and not "a view that does not give it the
 * object": equality is cheap to publish and to compare, and with `releasing`
 * per object, a slow release (a daemon that takes a minute to exit) holds
 * only its own object, not the whole hand-off.
 *
 * The policy only: its wiring into a running operator is reactor/sharding.ts,
 * the same name one layer up (with shard_leases.ts and shard_metrics.ts here).
 *
 * @module
 */

import { type Hash64, hash64, Rendezvous } from "../../cogs/structs/rendezvous.ts";
import { type MemberState, type ShardSample, viewKey } from "./shard_members.ts";
export {
  INCARNATION_ANNOTATION,
  memberAnnotations,
  memberOf,
  type MemberState,
  RELEASING_ANNOTATION,
  SHARD_GROUP_LABEL,
  type ShardSample,
  VIEW_ANNOTATION,
  viewKey,
} from "./shard_members.ts";

/** Who can release an object this replica started: the per-object queues that hold it. */
export interface Releaser {
  /**
   * Finishes the object's in-flight cycle (if any) and stops its daemons and timers.
   *
   * @param uid The object's uid.
   * @returns When nothing of the object runs any more.
   */
  release(uid: string): Promise<void>;
}

/** The fewest late releases ended at once that make a fresh point (a relist) of their own. */
const LATE_RELIST_MIN = 8;

/**
 * The per-object ownership gate of one replica (see the module doc for the protocol).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ShardGate } from "./sharding.ts";
 * const gate = new ShardGate("a");
 * gate.observe([]); // the member Leases are listed: no one else
 * gate.join("x1"); // our Lease is written
 * assert.deepEqual(gate.admits("uid-1"), true); // — alone, everything is ours
 * gate.observe([{ id: "b", incarnation: "y1", view: new Map(), releasing: [] }]);
 * assert.deepEqual([gate.members, gate.state().view.size], [2, 2]);
 * ```
 */
export class ShardGate {
  /** This replica's identity. */
  readonly identity: string;
  /** The shard group (for metrics and log lines). */
  readonly group: string;
  #incarnation: string | undefined;
  #listed = false;
  #others = new Map<string, MemberState>();
  #view: ReadonlyMap<string, string> = new Map();
  #viewKey = "{}";
  #ring = new Rendezvous([]);
  #acked = false;
  /**
   * Whether others may have handled objects ours now since the last fresh point (onFresh). Stale
   * until the first view: a member that left before we saw it may have written after our
   * stream's listing (a rolling update of a group of one).
   */
  #stale = true;
  /** The last fresh point's number (0: none yet). */
  #epoch = 0;
  /** What others still released at the last fresh point: their writes may come after it. */
  #lateReleases: ReadonlySet<string> = new Set();
  #blocked = new Set<string>();
  readonly #held = new Map<string, Set<Releaser>>();
  readonly #releasing = new Map<string, Promise<void>>();
  readonly #hashes = new Map<string, Hash64>();
  readonly #admitListeners = new Set<() => void>();
  readonly #changeListeners = new Set<() => void>();
  readonly #viewListeners = new Set<(gains: boolean) => void>();
  readonly #freshListeners = new Set<(point: number) => void>();
  /** The members of the last view that had any (a fence empties the view; the ring stays). */
  #lastMembers: ReadonlySet<string> = new Set();

  /**
   * @param identity This replica's identity (its member Lease's holder).
   * @param group The shard group's name.
   */
  constructor(identity: string, group = "kopf") {
    this.identity = identity;
    this.group = group;
  }

  /** Whether this replica is a member now (its Lease written and renewed in time). */
  get member(): boolean {
    return this.#incarnation !== undefined;
  }

  /** How many members this replica's view has (0 while it is not a member). */
  get members(): number {
    return this.#view.size;
  }

  /** The last fresh point, or undefined while a change waits for one ({@link onFresh}). */
  get freshPoint(): number | undefined {
    return this.#stale ? undefined : this.#epoch;
  }

  /** Whether every other member of the view has published it (gains are possible). */
  get acknowledged(): boolean {
    return this.#acked;
  }

  /** The objects this replica has taken on and not released (their uids). */
  get held(): ReadonlySet<string> {
    return new Set(this.#held.keys());
  }

  /** The objects this replica is releasing now (their uids). */
  get releasing(): ReadonlySet<string> {
    return new Set(this.#releasing.keys());
  }

  /** A reading for the metrics. */
  sample(): ShardSample {
    return {
      group: this.group,
      members: this.#view.size,
      owned: this.#held.size,
      releasing: this.#releasing.size,
    };
  }

  /**
   * What this replica publishes now: its incarnation, view and releasing objects.
   *
   * @returns The state (an empty view while it is not a member).
   */
  state(): MemberState {
    return {
      id: this.identity,
      incarnation: this.#incarnation ?? "",
      view: this.#view,
      releasing: [...this.#releasing.keys()],
    };
  }

  /**
   * This replica has (re)joined: its Lease carries this incarnation now.
   *
   * @param incarnation The incarnation written.
   */
  join(incarnation: string): void {
    this.#incarnation = incarnation;
    this.#recompute();
  }

  /**
   * This replica is no member (its Lease is lost or not renewed in time): it admits nothing and
   * releases everything it holds. It joins again with a new incarnation.
   */
  fence(): void {
    if (this.#incarnation === undefined) return;
    this.#incarnation = undefined;
    this.#stale = true; // others may handle our objects meanwhile
    this.#recompute();
  }

  /**
   * The live other members as the Leases show them now (all of them, each time; this replica's
   * own Lease is ignored if included). The first call also says the Leases are listed: until
   * then, this replica sees no view (it would think itself alone).
   *
   * @param others The members.
   */
  observe(others: Iterable<MemberState>): void {
    this.#listed = true;
    this.#others = new Map();
    for (const m of others) if (m.id !== this.identity) this.#others.set(m.id, m);
    this.#recompute();
  }

  /**
   * The owner of an object under the current view.
   *
   * @param uid The object's uid.
   * @returns The member's identity, or undefined with no view.
   */
  ownerOf(uid: string): string | undefined {
    return this.#ring.ownerOfHash(this.#hash(uid));
  }

  /**
   * Whether the current view gives the object to another member (false with no view: while this
   * replica is no member, every object may be its own). Nothing is kept for the question: the
   * uid is hashed anew (watch events of others' objects are told apart so, undecoded).
   *
   * @param uid The object's uid.
   * @returns True if another member owns it now.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ShardGate } from "./sharding.ts";
   * const gate = new ShardGate("a");
   * assert.deepEqual(gate.foreign("uid-1"), false); // — no view yet: nothing is another's
   * gate.observe([{ id: "b", incarnation: "y1", view: new Map(), releasing: [] }]);
   * gate.join("x1");
   * const uids = Array.from({ length: 10 }, (_, i) => `uid-${i}`);
   * assert.deepEqual(uids.filter((u) => gate.foreign(u)), uids.filter((u) => gate.ownerOf(u) === "b"));
   * ```
   */
  foreign(uid: string): boolean {
    // No view, or a view of this replica alone: nothing to hash.
    if (this.#view.size < 2) return false;
    return this.#ring.ownerOfHash(this.#hashes.get(uid) ?? hash64(uid)) !== this.identity;
  }

  /**
   * Whether this replica holds the object or is releasing it (something of it may still run).
   *
   * @param uid The object's uid.
   * @returns True if so.
   */
  keeps(uid: string): boolean {
    return this.#held.has(uid) || this.#releasing.has(uid);
  }

  /**
   * Whether a cycle of the object may start now (see the module doc).
   *
   * @param uid The object's uid.
   * @returns True if so.
   */
  admits(uid: string): boolean {
    if (!this.#view.size || this.#releasing.has(uid)) return false;
    if (this.ownerOf(uid) !== this.identity) return false;
    return this.#held.has(uid) || (this.#acked && !this.#blocked.has(uid));
  }

  /**
   * Whether starting the object now may take it over from another member: this replica does not
   * hold it, and its watch stream has not read the state anew since the last fresh point
   * ({@link onFresh}) — another member, also one gone before this replica's first view (a rolling
   * update of a group of one), may have handled it last, and the watch here may not have delivered
   * that write yet (the release reaches us through the Leases, the write through the objects'
   * watch: they lag apart). The queues read such an object anew before its first cycle here. A
   * stream that listed after the last fresh point shows no body older than the others' writes,
   * but of the objects they still released then.
   *
   * @param uid The object's uid.
   * @param listed The last fresh point after which the object's watch stream read the state
   *   anew, if any.
   * @returns True if so (false for an object held already).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ShardGate } from "./sharding.ts";
   * const gate = new ShardGate("a");
   * gate.observe([]);
   * gate.join("x1"); // the first view, of a alone: fresh point 1 at once
   * assert.deepEqual(gate.takesOver("uid-1"), true); // — listed before it: someone gone may have written since
   * assert.deepEqual(gate.takesOver("uid-1", 1), false); // — listed after it: nobody else handled it since
   * ```
   */
  takesOver(uid: string, listed?: number): boolean {
    if (this.#held.has(uid)) return false;
    return this.#stale || listed !== this.#epoch || this.#lateReleases.has(uid);
  }

  /**
   * Calls `listener` at each fresh point: the view is acknowledged by every other member after a
   * change that may give this replica objects others handled (the first view, a member gone, a
   * rejoin after a fence). Every other member's write to an object this view gives us was made
   * before its Lease acknowledged the view — except the objects it still releases; the end of
   * those releases is a fresh point too — so a listing that starts after this point is newer than
   * all of them: a watch stream that reads the state anew then, and says so with the point's
   * number ({@link takesOver}'s `listed`), shows no older body of any object but those, and
   * objects it brings need no take-over read (a burst of objects created meanwhile needs none).
   *
   * @param listener Called synchronously, with the point's number.
   * @returns Unsubscribes.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ShardGate } from "./sharding.ts";
   * const gate = new ShardGate("a");
   * const points: number[] = [];
   * gate.onFresh((point) => points.push(point));
   * gate.observe([{ id: "b", incarnation: "y1", view: new Map(), releasing: [] }]);
   * gate.join("x1"); // {a, b}: b has not acknowledged it yet
   * gate.observe([{ id: "b", incarnation: "y1", view: gate.state().view, releasing: [] }]);
   * assert.deepEqual(points, [1]);
   * assert.deepEqual([gate.takesOver("uid-1"), gate.takesOver("uid-1", 1)], [true, false]);
   * ```
   */
  onFresh(listener: (point: number) => void): () => void {
    this.#freshListeners.add(listener);
    return () => this.#freshListeners.delete(listener);
  }

  /**
   * Before a cycle: admits the object and holds it as this replica's until released.
   *
   * @param uid The object's uid.
   * @param releaser Who releases it when it goes to another member.
   * @returns Whether the cycle may run.
   */
  enter(uid: string, releaser: Releaser): boolean {
    if (!this.admits(uid)) return false;
    let releasers = this.#held.get(uid);
    if (!releasers) this.#held.set(uid, releasers = new Set());
    releasers.add(releaser);
    return true;
  }

  /**
   * The object is gone (deleted): nothing to release, nothing to remember.
   *
   * @param uid The object's uid.
   */
  forget(uid: string): void {
    this.#held.delete(uid);
    this.#hashes.delete(uid);
  }

  /**
   * Calls `listener` when objects may be admitted that were not before (a view acknowledged by
   * all, a release finished here or elsewhere): the queues then start the objects they keep.
   *
   * @param listener Called synchronously.
   * @returns Unsubscribes.
   */
  onAdmit(listener: () => void): () => void {
    this.#admitListeners.add(listener);
    return () => this.#admitListeners.delete(listener);
  }

  /**
   * Calls `listener` when what this replica publishes changes (to write its Lease).
   *
   * @param listener Called synchronously.
   * @returns Unsubscribes.
   */
  onChange(listener: () => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /**
   * Calls `listener` when this replica adopts a new view with members (after it adopted it, before
   * the admit listeners), with whether the view may give it objects that the last view with
   * members gave to others — one of those members is gone — so that what was not kept of them
   * is read anew.
   *
   * @param listener Called synchronously.
   * @returns Unsubscribes.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ShardGate } from "./sharding.ts";
   * const gate = new ShardGate("a");
   * const gains: boolean[] = [];
   * gate.onView((g) => gains.push(g));
   * const b = { id: "b", incarnation: "y1", view: new Map(), releasing: [] };
   * gate.observe([b]);
   * gate.join("x1"); // {a, b}: the first view
   * gate.observe([]); // b is gone: its objects may be ours now
   * gate.observe([b]); // b is back: nothing to gain
   * assert.deepEqual(gains, [false, true, false]);
   * ```
   */
  onView(listener: (gains: boolean) => void): () => void {
    this.#viewListeners.add(listener);
    return () => this.#viewListeners.delete(listener);
  }

  /** Waits until every release in progress has finished (for the exit and tests). */
  async settled(): Promise<void> {
    while (this.#releasing.size) await Promise.all([...this.#releasing.values()]);
  }

  #hash(uid: string): Hash64 {
    let h = this.#hashes.get(uid);
    if (!h) this.#hashes.set(uid, h = hash64(uid));
    return h;
  }

  #recompute(): void {
    const view = new Map<string, string>();
    if (this.#incarnation !== undefined && this.#listed) {
      view.set(this.identity, this.#incarnation);
      for (const m of this.#others.values()) view.set(m.id, m.incarnation);
    }
    const key = viewKey(view);
    const changed = key !== this.#viewKey;
    if (changed) {
      this.#view = view;
      this.#viewKey = key;
      this.#ring = new Rendezvous(view.keys());
      // Adopted: no cycle starts for what is not ours any more; release what we hold of it.
      for (const uid of [...this.#held.keys()]) {
        if (this.ownerOf(uid) !== this.identity) this.#release(uid);
      }
    }
    const wasAcked = this.#acked;
    const wasBlocked = this.#blocked;
    this.#acked = view.size > 0 &&
      [...this.#others.values()].every((m) => viewKey(m.view) === key);
    this.#blocked = new Set(
      this.#acked ? [...this.#others.values()].flatMap((m) => m.releasing) : [],
    );
    if (changed) this.#emit(this.#changeListeners);
    if (changed && view.size) {
      const gains = [...this.#lastMembers].some((id) => !view.has(id));
      // (The first view is stale from the start: see #stale.)
      if (gains) this.#stale = true;
      this.#lastMembers = new Set(view.keys());
      for (const listener of [...this.#viewListeners]) listener(gains);
    }
    // A fresh point: a change acknowledged, or many releases the last point left out are over
    // (the releasers wrote before: a listing from now on is newer than their writes too). A
    // relist lists every object: worth it for a tenth of them at once; a trickle is read anew.
    const ended = () =>
      [...this.#lateReleases].filter((u) => !this.#blocked.has(u) && !this.#held.has(u)).length >=
        Math.max(LATE_RELIST_MIN, this.#held.size * this.#view.size / 10);
    if (this.#acked && (this.#stale || ended())) {
      this.#stale = false;
      const ours = (uid: string) => this.ownerOf(uid) === this.identity;
      this.#lateReleases = new Set([...this.#blocked].filter(ours));
      const point = ++this.#epoch;
      for (const listener of [...this.#freshListeners]) listener(point);
    }
    const unblocked = [...wasBlocked].some((uid) => !this.#blocked.has(uid));
    if (this.#acked && (!wasAcked || changed || unblocked)) this.#emit(this.#admitListeners);
  }

  #release(uid: string): void {
    const releasers = this.#held.get(uid) ?? new Set();
    this.#held.delete(uid);
    const done = Promise.allSettled([...releasers].map((r) => r.release(uid))).then(() => {
      this.#releasing.delete(uid);
      this.#emit(this.#changeListeners);
      if (this.admits(uid)) this.#emit(this.#admitListeners);
    });
    this.#releasing.set(uid, done);
  }

  #emit(listeners: Set<() => void>): void {
    for (const listener of [...listeners]) listener();
  }
}
