/**
 * What the per-object queues (queueing.ts) tell from the bodies of our own writes: whether a
 * write deleted the object (its last finalizer went), and where the watch catches up with a
 * body that was re-read because our write did not come back in time.
 *
 * Why this matters: under load the watch may deliver our own writes seconds late. Events older
 * than what we already processed must not be processed again (a handler would run twice), and
 * nothing waits for — or re-reads — an object that our own write has let go.
 *
 * @module
 */

import type { AnyObject } from "../actions/invocation.ts";
import type { RawEvent } from "./processing.ts";

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
