/**
 * Cause detection: from a watch event, the object, the last handled state
 * (the diff base) and the finalizers, decide what happened to the object —
 * created, updated, deleted, resumed, or nothing of interest — exactly as
 * Kopf decides it, so that an operator built with this module takes over
 * objects that Python Kopf handled (and the other way round) without
 * re-running finished work.
 *
 * @module
 */

import type { Diff } from "../../cogs/structs/diffs.ts";
import type { AnyObject, Reason } from "./handlers.ts";

/** The inputs of cause detection. */
export interface CauseInputs {
  /** The watch event type: ADDED, MODIFIED, DELETED, or null for a listing. */
  eventType: string | null;
  body: AnyObject;
  /** The finalizer this operator uses. */
  finalizer: string;
  /** The diff base (last handled essence), or undefined if never handled. */
  old: unknown;
  /** The current essence. */
  new: unknown;
  /** The diff between them. */
  diff: Diff;
  /** True while an object noticed by the initial listing has not been fully handled once by this process. */
  initial: boolean;
}

/** A detected cause: the reason, and whether resume handlers join in. */
export interface ChangingCause {
  reason: Reason;
  /** Resume handlers are mixed in ("initial" cycle of this process). */
  initial: boolean;
}

/**
 * Whether the object is marked for deletion.
 *
 * @param body The object.
 * @returns True when `metadata.deletionTimestamp` is set.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isDeletionOngoing } from "./causes.ts";
 * assert.deepEqual(isDeletionOngoing({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }), true);
 * ```
 */
export function isDeletionOngoing(body: AnyObject): boolean {
  return !!body.metadata?.deletionTimestamp;
}

/**
 * Whether the object carries our finalizer.
 *
 * @param body The object.
 * @param finalizer The finalizer name.
 * @returns True when present.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isDeletionBlocked } from "./causes.ts";
 * assert.deepEqual(isDeletionBlocked({ metadata: { finalizers: ["a"] } }, "a"), true);
 * ```
 */
export function isDeletionBlocked(body: AnyObject, finalizer: string): boolean {
  const finalizers: unknown = body.metadata?.finalizers;
  return Array.isArray(finalizers) && finalizers.includes(finalizer);
}

/**
 * Detects why the resource-changing handlers should run (Kopf's rules):
 * DELETED events are `gone`; a deleting object without our finalizer is
 * `free`; with it, `delete`; an object without a diff base is `create`; no
 * changes in the first cycle of this process is `resume`; no changes
 * otherwise is `noop`; anything else is `update`.
 *
 * @param inputs The event, object, essences, diff and flags.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectChangingCause } from "./causes.ts";
 * const cause = detectChangingCause({
 *   eventType: "ADDED", body: { metadata: {} }, finalizer: "f", old: undefined, new: {}, diff: [], initial: true,
 * });
 * assert.deepEqual([cause.reason, cause.initial], ["create", true]);
 * ```
 */
export function detectChangingCause(inputs: CauseInputs): ChangingCause {
  const { eventType, body, finalizer, old, diff, initial } = inputs;
  if (eventType === "DELETED") return { reason: "gone", initial };
  if (isDeletionOngoing(body)) {
    return { reason: isDeletionBlocked(body, finalizer) ? "delete" : "free", initial };
  }
  // An object created while the operator was down is both created and resumed:
  // resume handlers join its creation when it was noticed by the initial listing.
  if (old === undefined || old === null) return { reason: "create", initial };
  if (diff.length === 0) return { reason: initial ? "resume" : "noop", initial };
  return { reason: "update", initial };
}

/** Human titles of reasons, as the log lines use them. */
export const REASON_TITLES: Readonly<Record<Reason, string>> = {
  create: "creation",
  update: "update",
  delete: "deletion",
  resume: "resuming",
  noop: "no-op",
  free: "freeing",
  gone: "disappearance",
};

/** Present participles of reasons, for "Creation is in progress" style lines. */
export const REASON_PROGRESS: Readonly<Record<Reason, string>> = {
  create: "Creation",
  update: "Updating",
  delete: "Deletion",
  resume: "Resuming",
  noop: "Nothing",
  free: "Freeing",
  gone: "Disappearance",
};
