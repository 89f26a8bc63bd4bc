/**
 * The shapes of one object's processing cycle — the operator-wide parts a
 * cycle needs, the object's memory between cycles, the event it is handed
 * and what it gives back — apart from the cycle itself (`processing.ts`), so
 * its stages (`changing.ts`, the queue's) can speak them without importing
 * the cycle that calls them.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { PatchMemory } from "../actions/application.ts";
import type { HandlerMetrics, Lifecycle, RunningAttempt } from "../actions/execution.ts";
import type { EventPoster, LogSink } from "../actions/loggers.ts";
import type { AnyObject } from "../intents/handlers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import type { OperatorIndexers } from "../engines/indexing.ts";
import type { Daemons, SpawnedObject } from "../engines/daemons.ts";
import type { Reconcilers } from "../engines/reconciling.ts";
import type { ShardGate } from "../engines/sharding.ts";
import { MEMO_MADE } from "../engines/memos.ts";

/** What the operator keeps in memory about one object between cycles. */
export interface ObjectMemory extends PatchMemory {
  /** All changing handlers ran to the end at least once in this process (no more resume handlers). */
  fullyHandledOnce: boolean;
  /** The object was first seen in a listing (it existed when the watch started), not as a change. */
  noticedByListing: boolean | undefined;
  /** The per-object memo: handlers' `memo`, a shallow copy of the operator's (engines/memos.ts). */
  memo: AnyObject;
  /** Daemons and timers of the object (engines/daemons.ts), while any were spawned. */
  spawned?: SpawnedObject | undefined;
  /** Whether {@link memo} was made from the operator's memo yet (engines/memos.ts). */
  [MEMO_MADE]?: boolean | undefined;
}

/**
 * A fresh memory of an object.
 *
 * @returns The memory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newMemory } from "./cycle_types.ts";
 * assert.deepEqual(newMemory().fullyHandledOnce, false);
 * ```
 */
export function newMemory(): ObjectMemory {
  return {
    fullyHandledOnce: false,
    noticedByListing: undefined,
    memo: {},
    [MEMO_MADE]: false,
  };
}

/** The operator-wide parts a cycle needs. */
export interface OperatorContext {
  registry: OperatorRegistry;
  settings: OperatorSettings;
  memo: AnyObject;
  indices: AnyObject;
  sink: LogSink;
  post: EventPoster;
  lifecycle: Lifecycle;
  /** Records handler runs (metrics; daemons and timers record theirs here too), if given. */
  metrics?: HandlerMetrics | undefined;
  /** In-memory indices: no handler runs while `indexers.whenReady()` waits (indices listing). */
  indexers?: OperatorIndexers | undefined;
  /** Daemons and timers (`kopf.daemon`, `kopf.timer`), if the operator runs them. */
  daemons?: Daemons | undefined;
  /** Reconcilers of parents and their owned children (`kopf.on.reconcile`), if any. */
  reconcilers?: Reconcilers | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
  /** The operator's stop signal: handlers' `signal` aborts when the operator starts exiting. */
  exiting?: AbortSignal | undefined;
  /** The resource and event handlers' attempts in progress (what the exit waits for). */
  running?: Set<RunningAttempt> | undefined;
  /**
   * The operator's pause gate (peering; any reason may hold it): while it is on, no object is
   * processed (events wait in their queues) and daemons and timers are stopped.
   */
  paused?: ToggleSet | undefined;
  /**
   * Sharding's per-object gate (engines/sharding.ts), when the operator runs as a shard: only the
   * objects it admits are processed here; the others belong to other replicas.
   */
  shards?: ShardGate | undefined;
}

/** A watch event as the queue hands it over: type null for listings and re-checks. */
export interface RawEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | null;
  object: AnyObject;
}

/** The result of a cycle. */
export interface CycleResult {
  /** Seconds until handlers wake up and the object must be processed again. */
  delay?: number | undefined;
  /**
   * The object as the cycle's own last write returned it (absent when the cycle wrote nothing
   * that changed it): its resourceVersion is the one the queue waits for, and the body the
   * next cycle starts from if no newer event comes.
   */
  patched?: AnyObject | undefined;
  /**
   * Whether the watch's event of {@link patched}'s version, coming alone, needs a cycle at all:
   * the queue asks this instead of running one (echoes.ts). Absent: every event is a cycle.
   */
  echo?: EchoCheck | undefined;
}

/**
 * Answers, for the body of our own last write's echo, whether a cycle on it would do nothing —
 * and if so, has done what that cycle does (its debug line): the queue runs no cycle then.
 */
export type EchoCheck = (body: AnyObject) => boolean;
