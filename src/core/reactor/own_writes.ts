/**
 * Our own writes, as the per-object queues (queueing.ts) must remember them: never process a body
 * older than our own last write, and — when the watch does not bring that write back in time, or
 * when another replica's may still be on its way — one policy for a fresh read of the object.
 *
 * Why this matters: under load the watch may deliver our own writes seconds late. Events older
 * than what we already processed must not be processed again (a handler would run twice), and
 * nothing waits for — or re-reads — an object that our own write has let go.
 *
 * One tracker per worker, as Kopf's worker alone keeps `expected_version`. It says which events
 * are late, waits for our write in the object's queue, and how the queue goes on after a read:
 *
 * - {@link OwnWrites.wrote}: a cycle's write; its version is awaited from then on.
 * - {@link OwnWrites.sift}: the late events of a batch go; our write's event, once it comes,
 *   ends the wait (what came before it is older; what came after, newer).
 * - {@link OwnWrites.afterRead}: the one re-read policy. The object gone: only its DELETED event
 *   is processed. The watch has delivered the version read: the events go on from it (newer ones
 *   may follow it, which the read body would hide). Otherwise the watch is behind: the read body
 *   alone is processed, and the watch's events up to its version — queued or still to come —
 *   are older and dropped when they arrive.
 *
 * @module
 */

import type { AnyObject } from "../actions/invocation.ts";
import type { ObjectQueue } from "./object_queue.ts";
import type { RawEvent } from "./processing.ts";

/**
 * Reads an object anew: its body, undefined when it is gone, null when the read failed (and was
 * reported).
 */
export type Reader = (body: AnyObject) => Promise<AnyObject | undefined | null>;

/** How the queue goes on after a fresh read of the object ({@link OwnWrites.afterRead}). */
export type AfterRead =
  /** The object is gone: only its DELETED event is still processed. */
  | "gone"
  /** The events to process, in order (the queue's events replaced by these). */
  | RawEvent[];

/**
 * What one worker knows of its own writes: the body its last write returned, until the watch
 * delivers that version; and a body read anew, until the watch catches up with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OwnWrites } from "./own_writes.ts";
 * const at = (rv: string) => ({ type: "MODIFIED" as const, object: { metadata: { resourceVersion: rv } } });
 * const writes = new OwnWrites();
 * writes.wrote({ metadata: { resourceVersion: "5" } });
 * assert.deepEqual(writes.sift([at("3"), at("4")], false).length, 2); // older: still awaited
 * assert.deepEqual(writes.awaiting, true);
 * assert.deepEqual(writes.sift([at("4"), at("5"), at("6")], false).map((e) => e.object.metadata.resourceVersion), ["5", "6"]);
 * assert.deepEqual(writes.pending, false); // back: nothing to wait for any more
 * ```
 */
export class OwnWrites {
  /** The object as our own last write returned it, until the watch delivers that version. */
  #own: AnyObject | undefined;
  /**
   * After a read that found the watch behind: the body read (processed as a `type: null` event);
   * the watch's events up to its version are older, and dropped when they come late.
   */
  #reread: AnyObject | undefined;

  /** Whether anything is still to come back through the watch (the worker must not end). */
  get pending(): boolean {
    return (this.#own ?? this.#reread) !== undefined;
  }

  /** Our own last write's body while its version is awaited: what re-checks continue from. */
  get own(): AnyObject | undefined {
    return this.#own;
  }

  /** Whether our own last write's version is still awaited. */
  get awaiting(): boolean {
    return this.#own !== undefined;
  }

  /**
   * A cycle wrote the object: its version is awaited from now on — unless the write let the
   * object go (its last finalizer removed), which is neither awaited nor read anew.
   *
   * @param patched The body the cycle's last write returned (undefined: it wrote nothing).
   * @returns True when the write let the object go: only its DELETED event is still processed.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OwnWrites } from "./own_writes.ts";
   * const writes = new OwnWrites();
   * const gone = writes.wrote({ metadata: { resourceVersion: "6", deletionTimestamp: "2024-01-01T00:00:00Z" } });
   * assert.deepEqual([gone, writes.pending], [true, false]);
   * ```
   */
  wrote(patched: AnyObject | undefined): boolean {
    if (patched) this.#own = patched;
    if (!this.#own || !isGone(this.#own)) return false;
    this.#own = undefined;
    return true;
  }

  /**
   * Drops the late events of a batch: after a read that found the watch behind, the watch's
   * events up to the read version (their copy of that version too, once the read body is
   * processed); and when our own write's event is among them, what came before it. While our
   * write is still {@link awaiting} after this, what is left is older than it: put back, it waits
   * for our write ({@link awaitWrite}).
   *
   * @param batch The events of one object, oldest first (not changed).
   * @param deleted Whether the batch holds a DELETED event (it is never dropped nor held back).
   * @returns The events left, maybe none.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OwnWrites } from "./own_writes.ts";
   * const writes = new OwnWrites();
   * const read = { metadata: { resourceVersion: "9" } };
   * const late = { type: "MODIFIED" as const, object: { metadata: { resourceVersion: "8" } } };
   * assert.deepEqual(writes.afterRead(read, [late]), [{ type: null, object: read }]);
   * assert.deepEqual(writes.sift([late], false), []); // older than the read: dropped
   * ```
   */
  sift(batch: RawEvent[], deleted: boolean): RawEvent[] {
    if (deleted) return batch;
    const reread = this.#reread;
    if (reread !== undefined) {
      const at = caughtUpAt(batch, reread);
      // Its copy of the read version goes too, unless the read body is still unprocessed.
      const processed = !batch.some((e) => e.object === reread);
      if (at >= 0) this.#reread = undefined;
      batch = at >= 0
        ? batch.slice(batch[at]!.type === null || !processed ? at : at + 1)
        : batch.filter((e) => e.type === null);
    }
    if (this.#own !== undefined && batch.length) {
      const at = lastAtVersion(batch, this.#own.metadata?.resourceVersion);
      if (at >= 0) {
        this.#own = undefined;
        batch = batch.slice(at);
      }
    }
    return batch;
  }

  /**
   * Whether our own write (its version awaited) or a deletion is among these events.
   *
   * @param events The queued events.
   * @returns True if the wait for our write is over.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OwnWrites } from "./own_writes.ts";
   * const writes = new OwnWrites();
   * writes.wrote({ metadata: { resourceVersion: "5" } });
   * assert.deepEqual(writes.arrived([{ type: "DELETED", object: { metadata: { resourceVersion: "7" } } }]), true);
   * ```
   */
  arrived(events: readonly RawEvent[]): boolean {
    const version = this.#own?.metadata?.resourceVersion;
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      if (e.type === "DELETED" || e.object.metadata?.resourceVersion === version) return true;
    }
    return false;
  }

  /**
   * Whether nothing queued is newer than our own write, still awaited: the events are its
   * echoes and what came before it — a burst of our own making (a cycle's writes coming back one
   * after another), in which no change of anyone else waits to be batched. Our write's event, if
   * not queued yet, is what comes next ({@link awaitWrite} waits for it).
   *
   * @param events The queued events, oldest first.
   * @returns True if our write is awaited and no event after its version is queued (nor a
   *   deletion).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OwnWrites } from "./own_writes.ts";
   * const at = (rv: string) => ({ type: "MODIFIED" as const, object: { metadata: { resourceVersion: rv } } });
   * const writes = new OwnWrites();
   * writes.wrote({ metadata: { resourceVersion: "5" } });
   * assert.deepEqual(writes.onlyOwn([at("3"), at("4")]), true); // older: our write comes next
   * assert.deepEqual(writes.onlyOwn([at("4"), at("5")]), true);
   * assert.deepEqual(writes.onlyOwn([at("5"), at("6")]), false); // 6 is someone else's
   * ```
   */
  onlyOwn(events: readonly RawEvent[]): boolean {
    if (this.#own === undefined) return false;
    const at = lastAtVersion(events, this.#own.metadata?.resourceVersion);
    if (at >= 0) return at === events.length - 1;
    for (let i = 0; i < events.length; i++) if (events[i]!.type === "DELETED") return false;
    return true;
  }

  /**
   * What is queued is older than our own write: waits for the write to come back, up to the
   * consistency timeout; when it does not (a stalled watch, or a newer write of someone else),
   * reads the object anew rather than act on a body older than our own write. A failed read
   * (reported by the reader) leaves our write awaited: the wait and the read are tried again.
   * With no way to read (or when the queues close), the latest event is processed.
   *
   * @param queue The object's queue, holding the events held back.
   * @param seconds The consistency timeout.
   * @param read Reads the object anew; undefined when objects cannot be read.
   * @returns How the queue goes on after a read ({@link afterRead}); undefined to go on as it is.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { FakeClock } from "../../cogs/aio/fake_clock.ts";
   * import { ObjectQueue } from "./object_queue.ts";
   * import { OwnWrites } from "./own_writes.ts";
   * const clock = new FakeClock();
   * const at = (rv: string) => ({ type: "MODIFIED" as const, object: { metadata: { resourceVersion: rv } } });
   * const queue = new ObjectQueue({ clock, closing: false }, at("4"));
   * const writes = new OwnWrites();
   * writes.wrote({ metadata: { resourceVersion: "5" } });
   * const next = writes.awaitWrite(queue, 5, () => Promise.resolve({ metadata: { resourceVersion: "6" } }));
   * await clock.advance(5); // the write did not come back in time: read anew
   * const events = await next;
   * assert.ok(Array.isArray(events));
   * assert.deepEqual(events.map((e) => [e.type, e.object.metadata?.resourceVersion]), [[null, "6"]]);
   * ```
   */
  async awaitWrite(
    queue: ObjectQueue,
    seconds: number,
    read: Reader | undefined,
  ): Promise<AfterRead | undefined> {
    const back = await queue.waitFor((events) => this.arrived(events), seconds);
    if (back || queue.closing) return undefined;
    const fresh = read ? await read(this.#own!) : null;
    if (fresh !== null) return this.afterRead(fresh, queue.events);
    if (!read || queue.closing) this.#own = undefined;
    return undefined;
  }

  /**
   * The one re-read policy, for a fresh read of the object — because our own write did not come
   * back in time, or because the object was taken over from another replica (whose last write
   * may not have reached our watch yet). See the module doc.
   *
   * @param fresh The body read, or undefined when the object is gone.
   * @param events The object's events, oldest first: those not processed yet (the batch put
   *   back) and those that came during the read.
   * @returns "gone", or the events to go on with.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OwnWrites } from "./own_writes.ts";
   * const at = (rv: string) => ({ type: "MODIFIED" as const, object: { metadata: { resourceVersion: rv } } });
   * const writes = new OwnWrites();
   * // The watch delivered the version read during the read, and a newer one: they go on.
   * const events = writes.afterRead({ metadata: { resourceVersion: "9" } }, [at("8"), at("9"), at("10")]);
   * assert.ok(Array.isArray(events));
   * assert.deepEqual(events.map((e) => e.object.metadata?.resourceVersion), ["9", "10"]);
   * assert.deepEqual(writes.afterRead(undefined, [at("8")]), "gone");
   * ```
   */
  afterRead(fresh: AnyObject | undefined, events: RawEvent[]): AfterRead {
    const own = this.#own;
    this.#own = undefined;
    if (fresh === undefined) return "gone";
    const at = deliveredAt(events, fresh.metadata?.resourceVersion, own);
    if (at >= 0) return events.slice(at);
    this.#reread = fresh;
    return [{ type: null, object: fresh }];
  }
}

/**
 * Where a batch catches up with a re-read body: the watch's event of its version (what follows
 * is newer), or a listing (type null, not the re-read body itself: a relist is as new). -1 when
 * it does not: its watch events are older than the re-read, come late.
 *
 * @param batch The events of one object, oldest first.
 * @param reread The re-read body (the queue's own type-null event carries this very object).
 * @returns The index of the catching-up event, or -1.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { caughtUpAt } from "./own_writes.ts";
 * const reread = { metadata: { resourceVersion: "3" } };
 * const late = { type: "MODIFIED" as const, object: { metadata: { resourceVersion: "2" } } };
 * const back = { type: "MODIFIED" as const, object: { metadata: { resourceVersion: "3" } } };
 * assert.deepEqual([caughtUpAt([late], reread), caughtUpAt([late, back], reread)], [-1, 1]);
 * ```
 */
export function caughtUpAt(batch: RawEvent[], reread: AnyObject): number {
  const version = reread.metadata?.resourceVersion;
  return batch.findLastIndex((e) =>
    e.type === null ? e.object !== reread : e.object.metadata?.resourceVersion === version
  );
}

/**
 * Whether a body is one the server no longer keeps: deleting, with no finalizers left (what a
 * write that removes the last finalizer returns).
 *
 * @param body The body a write returned.
 * @returns True when the object is gone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isGone } from "./own_writes.ts";
 * assert.deepEqual(isGone({ metadata: { deletionTimestamp: "2024-01-01T00:00:00Z" } }), true);
 * ```
 */
export function isGone(body: AnyObject): boolean {
  const meta = body.metadata;
  return !!meta?.deletionTimestamp && !meta.finalizers?.length;
}

/** The index of the last event of a batch with this resourceVersion; -1 if none. */
function lastAtVersion(batch: readonly RawEvent[], version: unknown): number {
  for (let i = batch.length - 1; i >= 0; i--) {
    if (batch[i]!.object.metadata?.resourceVersion === version) return i;
  }
  return -1;
}

/**
 * The index of the last event that shows the server delivered this resourceVersion: a watch
 * event, a listing's, or the watch's latest body kept for a hand-over (all `type: null`) — but
 * not a re-check carrying our own write's body, which shows nothing of the watch. -1 if none.
 */
function deliveredAt(events: readonly RawEvent[], version: unknown, own: unknown): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.object.metadata?.resourceVersion === version && (e.type !== null || e.object !== own)) {
      return i;
    }
  }
  return -1;
}
