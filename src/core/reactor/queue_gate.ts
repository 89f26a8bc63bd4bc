/**
 * The gate in front of the per-object queues' cycles (queueing.ts): whether a cycle of an object
 * may run now, asked once per batch, right before the cycle.
 *
 * - **Pause** (`paused`: peering now, other reasons later): while it is on, no cycle starts; the
 *   batch waits in its queue with the events coming meanwhile, so that on resume only the latest
 *   body of each object is processed, once. The watch, the indices and the own-write bookkeeping
 *   go on. On resume, the queues give objects whose daemons and timers the pause stopped a cycle
 *   ({@link QueueGate.onResume}).
 * - **Shard ownership** (`shards`, engines/sharding.ts): the pause made per object. An object the
 *   shard gate does not admit (another replica's, or one not handed over yet) gets no cycle and
 *   no worker; its latest body waits in the queues' inventory until the gate admits it
 *   ({@link QueueGate.onAdmit}).
 * - **Take-over**: an object admitted that another replica may have handled last is read anew
 *   before its first cycle here — that replica's last write may still be on its way through our
 *   watch, while its release came through the Leases. Not once the watch stream has read the
 *   state anew after sharding's last fresh point ({@link QueueGate.relists}): its bodies are newer
 *   than every other replica's writes then, but of the objects they were still releasing (the
 *   end of those releases is a fresh point of its own). While that relist runs, such an object
 *   waits for it instead (refused: its latest body is kept, and the relist's end admits it) — the
 *   relist brings every object anew anyway, one request for all rather than one read each. A
 *   failed read is remembered, so that the next pass reads again
 *   (the object is held by then, and no longer looks taken over).
 *
 * Pure state over the pause toggles and the shard gate: no clock, no I/O of its own; the queue
 * waits and reads.
 *
 * @module
 */

import type { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { Releaser, ShardGate } from "../engines/sharding.ts";

/** What the gate says to a batch ({@link QueueGate.pass}). */
export type Passage =
  /** The cycle may run. */
  | "go"
  /** The cycle may run, on a fresh read of the object (taken over from another replica). */
  | "read"
  /** The operator is paused: the batch waits for the resume. */
  | "paused"
  /** Not this replica's object (or not yet): no cycle; the latest body waits for the gate. */
  | "refused";

/** What the gate is made of. */
export interface QueueGateOptions {
  /** The operator's pause: while it is on, no cycle starts. */
  paused?: ToggleSet | undefined;
  /** Sharding's per-object gate: only the objects it admits are processed. */
  shards?: ShardGate | undefined;
  /** Who releases an object when it goes to another replica (the queues). */
  releaser: Releaser;
  /** Whether objects can be read anew (without it, taken-over objects go on as watched). */
  reads: boolean;
}

/**
 * The gate in front of the cycles of one watched resource's queues.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToggleSet } from "../../cogs/aio/toggles.ts";
 * import { QueueGate } from "./queue_gate.ts";
 * const paused = new ToggleSet();
 * const gate = new QueueGate({ paused, releaser: { release: () => Promise.resolve() }, reads: true });
 * const peering = paused.make("peering", true);
 * assert.deepEqual(gate.pass("uid-1", false), "paused");
 * peering.turnTo(false);
 * assert.deepEqual(gate.pass("uid-1", false), "go");
 * ```
 */
export class QueueGate {
  readonly #paused: ToggleSet | undefined;
  readonly #shards: ShardGate | undefined;
  readonly #releaser: Releaser;
  readonly #reads: boolean;
  /** Objects taken over whose read failed: read again at their next pass. */
  readonly #unread = new Set<string>();
  /** The last fresh point after which the watch stream read the state anew (ShardGate.onFresh). */
  #listed: number | undefined;
  /** The fresh point whose relist was asked for and is not over yet. */
  #awaited: number | undefined;
  /** The admit listeners: the end of a relist admits what waited for it. */
  readonly #admits = new Set<() => void>();

  /** @param options The pause, the shard gate, the releaser, whether objects can be read. */
  constructor(options: QueueGateOptions) {
    this.#paused = options.paused;
    this.#shards = options.shards;
    this.#releaser = options.releaser;
    this.#reads = options.reads;
    // The stream lists after this: after the last fresh point, if no change waits for another.
    this.#listed = options.shards?.freshPoint;
  }

  /** Whether objects are sharded: the queues keep every object's latest body for the gate. */
  get sharded(): boolean {
    return this.#shards !== undefined;
  }

  /** Whether the operator is paused now. */
  get paused(): boolean {
    return this.#paused?.on ?? false;
  }

  /**
   * Whether an object with no worker gets one for a new event: it is this replica's (or there
   * is no sharding). The pause does not count here: paused events wait in their queues.
   *
   * @param uid The object's uid.
   * @returns True if so.
   */
  admits(uid: string): boolean {
    return this.#shards?.admits(uid) ?? true;
  }

  /**
   * Before a cycle: whether it may run — the pause first, then the object's shard (which holds
   * the object as this replica's from now on until it is released), then the take-over.
   *
   * @param uid The object's uid.
   * @param deleted Whether the batch is the object's deletion (never read anew: it is gone).
   * @returns What the batch does.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ShardGate } from "../engines/sharding.ts";
   * import { QueueGate } from "./queue_gate.ts";
   * const shards = new ShardGate("a");
   * const gate = new QueueGate({ shards, releaser: { release: () => Promise.resolve() }, reads: true });
   * assert.deepEqual(gate.pass("uid-1", false), "refused"); // no view yet: nothing is ours
   * shards.observe([]);
   * shards.join("a1"); // the first view (fresh point 1): the stream listed before it
   * assert.deepEqual(gate.pass("uid-1", false), "read"); // a member gone meanwhile may have written
   * ```
   */
  pass(uid: string, deleted: boolean): Passage {
    if (this.#paused?.on) return "paused";
    const shards = this.#shards;
    if (!shards) return "go";
    const taking = !deleted && (this.#unread.has(uid) || shards.takesOver(uid, this.#listed));
    // The relist of the last fresh point runs: it brings the object anew (not held till then).
    const awaited = this.#awaited;
    if (taking && awaited !== undefined && !this.#unread.has(uid)) {
      if (!shards.takesOver(uid, awaited)) return "refused";
    }
    if (!shards.enter(uid, this.#releaser)) {
      this.#unread.delete(uid);
      return "refused";
    }
    return taking && this.#reads ? "read" : "go";
  }

  /**
   * The take-over read of an object has ended: when it failed, the next pass reads again.
   *
   * @param uid The object's uid.
   * @param ok Whether the object was read (or found gone).
   */
  read(uid: string, ok: boolean): void {
    if (ok) this.#unread.delete(uid);
    else this.#unread.add(uid);
  }

  /**
   * The object is deleted: the shard gate forgets it, and so does this gate.
   *
   * @param uid The object's uid.
   */
  forget(uid: string): void {
    this.#unread.delete(uid);
    this.#shards?.forget(uid);
  }

  /**
   * Waits until the pause is over.
   *
   * @param signal Cuts the wait short (the queues close).
   * @returns True when resumed, false when cut short.
   */
  waitResumed(signal?: AbortSignal): Promise<boolean> {
    return this.#paused?.waitFor(false, signal) ?? Promise.resolve(true);
  }

  /**
   * Calls `listener` when the pause is over.
   *
   * @param listener Called synchronously.
   * @returns Unsubscribes.
   */
  onResume(listener: () => void): () => void {
    return this.#paused?.subscribe((on) => on || listener()) ?? NOOP;
  }

  /**
   * Whether the shard view gives the object to another replica (false without sharding).
   *
   * @param uid The object's uid.
   * @returns True if so.
   */
  foreign(uid: string): boolean {
    return this.#shards?.foreign(uid) ?? false;
  }

  /**
   * Whether sharding holds the object here or is releasing it.
   *
   * @param uid The object's uid.
   * @returns True if so.
   */
  keeps(uid: string): boolean {
    return this.#shards?.keeps(uid) ?? false;
  }

  /**
   * Calls `listener` when the shard view changes (ShardGate.onView).
   *
   * @param listener Called synchronously, with whether objects may be gained.
   * @returns Unsubscribes.
   */
  onView(listener: (gains: boolean) => void): () => void {
    return this.#shards?.onView(listener) ?? NOOP;
  }

  /**
   * Has the watch stream read the state anew at each of sharding's fresh points (ShardGate.onFresh:
   * the first view, a member gone, a rejoin — each acknowledged by the others): the listing brings
   * the objects this replica gains, and once it is over, the objects it shows need no take-over
   * read. Subscribed as the stream starts, before its first listing: if a fresh point is there
   * then, that listing is after it (a sharded operator's watchers wait for the first one).
   *
   * @param request Asks the stream to read the state anew; calls `listed` once a listing that
   *   started after the request is over and its events are queued.
   * @returns Unsubscribes.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ShardGate } from "../engines/sharding.ts";
   * import { QueueGate } from "./queue_gate.ts";
   * const shards = new ShardGate("a");
   * const gate = new QueueGate({ shards, releaser: { release: () => Promise.resolve() }, reads: true });
   * gate.relists((listed) => listed()); // a stream that lists at once
   * shards.observe([{ id: "b", incarnation: "y1", view: new Map([["a", "x1"], ["b", "y1"]]), releasing: [] }]);
   * shards.join("x1"); // {a, b}, acknowledged by b: a fresh point
   * const ours = ["u1", "u2", "u3", "u4"].find((uid) => shards.ownerOf(uid) === "a")!;
   * assert.deepEqual(gate.pass(ours, false), "go"); // listed since: no take-over read
   * ```
   */
  relists(request: (listed: () => void) => void): () => void {
    const shards = this.#shards;
    if (!shards) return NOOP;
    // Subscribed as the stream starts, before its first listing: that listing comes after the
    // last fresh point, if one is there now (the watchers of a sharded operator wait for the first).
    const point = shards.freshPoint;
    if (point !== undefined) this.#listed = Math.max(this.#listed ?? 0, point);
    return shards.onFresh((point) => {
      this.#awaited = point;
      request(() => {
        const listed = this.#listed = Math.max(this.#listed ?? 0, point);
        if (this.#awaited === undefined || listed < this.#awaited) return;
        this.#awaited = undefined;
        for (const listener of [...this.#admits]) listener();
      });
    });
  }

  /**
   * Calls `listener` when the shard gate may admit objects it did not before, and when a relist
   * that objects waited for is over.
   *
   * @param listener Called synchronously.
   * @returns Unsubscribes.
   */
  onAdmit(listener: () => void): () => void {
    if (!this.#shards) return NOOP;
    this.#admits.add(listener);
    const unsubscribe = this.#shards.onAdmit(listener);
    return () => {
      unsubscribe();
      this.#admits.delete(listener);
    };
  }
}

const NOOP = (): void => {};
