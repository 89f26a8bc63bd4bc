/**
 * The settings and collaborators of the per-object queues (./queueing.ts), the entry each object
 * has there, and the two small readings of events the queues make.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { AnyObject } from "../actions/invocation.ts";
import type { ShardGate } from "../engines/sharding.ts";
import type { ObjectMemory, RawEvent } from "./processing.ts";
import type { ObjectQueue } from "./object_queue.ts";
import type { ErrorCallback } from "./throttling.ts";

/** Timing and limits of the queues. */
export interface QueueSettings {
  /**
   * Seconds to wait for more events of the same object before processing, when its events
   * come in a burst (default 0.1); a lone event is processed at once, and so are the echoes of
   * our own writes.
   */
  batchWindow: number;
  /** Seconds an idle worker lives before it is destroyed (default 5; in groups, up to 1 s later). */
  idleTimeout: number;
  /** How many objects may be processed at once (null: unlimited). */
  workerLimit: number | null;
  /** Seconds to wait for our own write to come back before re-reading the object (default 5). */
  consistencyTimeout: number;
  /** Delays after unexpected errors of a cycle, one per consecutive error; the last repeats. */
  errorDelays: Iterable<number>;
}

/** The queues' collaborators besides the processor. */
export interface QueueOptions {
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
  /** Receives unexpected errors of a cycle, the event, and the throttling delay. */
  onError?: ErrorCallback | undefined;
  /**
   * Reads the object anew when our own write does not come back through the watch in time;
   * resolves to undefined when the object is gone. Without it, the latest event is processed.
   */
  refresh?: ((body: AnyObject, signal: AbortSignal) => Promise<AnyObject | undefined>) | undefined;
  /** The operator's pause gate: while it is on, events wait in their queues unprocessed. */
  paused?: ToggleSet | undefined;
  /** Sharding's per-object gate: only the objects it admits are processed (see the module doc). */
  gate?: ShardGate | undefined;
  /** Stops what runs of an object besides its cycles (daemons, timers) when it is released. */
  release?: ((uid: string, memory: ObjectMemory) => Promise<void>) | undefined;
}

/** What the operator knows of one object: its memory, and its queue while a worker lives. */
export interface ObjectEntry {
  readonly memory: ObjectMemory;
  queue: ObjectQueue | undefined;
  /** With a gate: the latest body, for the cycle that starts the object when it is admitted. */
  latest?: AnyObject | undefined;
  /** With a gate: settles when the object's admitted cycle has ended. */
  busy?: Promise<void> | undefined;
  /** Our own write deleted it (its last finalizer went): only its DELETED event is processed. */
  gone?: boolean;
}

/**
 * The index of the first DELETED event of a batch; -1 if none.
 *
 * @param batch The events.
 * @returns The index.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deletedAt } from "./queue_types.ts";
 * assert.equal(deletedAt([{ type: "MODIFIED", object: {} }, { type: "DELETED", object: {} }]), 1);
 * ```
 */
export function deletedAt(batch: readonly RawEvent[]): number {
  for (let i = 0; i < batch.length; i++) if (batch[i]!.type === "DELETED") return i;
  return -1;
}

/**
 * An object's key in the queues: its uid, else namespace/name.
 *
 * @param body The object.
 * @returns The key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyOf } from "./queue_types.ts";
 * assert.deepEqual([keyOf({ metadata: { uid: "u1", name: "a" } }), keyOf({ metadata: { namespace: "ns", name: "a" } })], ["u1", "ns/a"]);
 * ```
 */
export function keyOf(
  body: { metadata?: { uid?: string; namespace?: string; name?: string } },
): string {
  const m = body.metadata ?? {};
  return m.uid ?? `${m.namespace ?? ""}/${m.name ?? ""}`;
}
