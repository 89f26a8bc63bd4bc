/**
 * The reasons of stopping daemons and timers (Kopf's `kopf.DaemonStoppingReason`): one name for
 * the constants and their type, so that `kopf.DaemonStoppingReason` is both, as in Kopf.
 *
 * @module
 */

/**
 * The reasons of stopping daemons and timers (Kopf's `kopf.DaemonStoppingReason`): the operator
 * exits or pauses, the object is deleted, it stops matching the filters, it finished on its own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const reason: kopf.DaemonStoppingReason = kopf.DaemonStoppingReason.RESOURCE_DELETED;
 * assert.equal(reason, "resource deleted");
 * ```
 */
export const DaemonStoppingReason = {
  DONE: "done",
  FILTERS_MISMATCH: "filters mismatching",
  RESOURCE_DELETED: "resource deleted",
  OPERATOR_PAUSING: "operator pausing",
  OPERATOR_EXITING: "operator exiting",
  DAEMON_SIGNALLED: "daemon signalled",
  DAEMON_CANCELLED: "daemon cancelled",
  DAEMON_ABANDONED: "daemon abandoned",
} as const;

/**
 * Why a daemon or timer is being stopped: one of {@link DaemonStoppingReason}'s values.
 */
export type DaemonStoppingReason = typeof DaemonStoppingReason[keyof typeof DaemonStoppingReason];
