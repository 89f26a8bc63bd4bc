/**
 * The PriorityClasses every cluster has and kube-apiserver's rules for them:
 * `system-cluster-critical` (2000000000) and `system-node-critical`
 * (2000001000) are created at start (kube's post-start hook; here when the
 * server starts, again after a data directory is loaded if they were deleted
 * since, never twice); deleting one by name is a 403 (`REST.Delete`), though a
 * collection delete removes them as kube's does. `ValidatePriorityClass`: a
 * name starting `system-` is reserved for those two with their values and
 * `globalDefault: false`; any other class's value is at most 1000000000;
 * `preemptionPolicy` is `Never` or `PreemptLowerPriority`; an update changes
 * neither `value` nor `preemptionPolicy`.
 *
 * @module
 */

import { ApiError, type StatusCause } from "../shared/errors.ts";
import { forbidden, invalid, notSupported } from "../schemas/field_errors.ts";

type Obj = Record<string, unknown>;

const GROUP = "scheduling.k8s.io";
const HIGHEST_USER_DEFINABLE = 1000000000;
const POLICIES = ["Never", "PreemptLowerPriority"];

/** kube's `SystemPriorityClasses()`: name, value and description. */
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<
  { name: string; value: number; description: string }
> = [
  {
    name: "system-node-critical",
    value: 2000001000,
    description: "Used for system critical pods that must not be moved from their current node.",
  },
  {
    name: "system-cluster-critical",
    value: 2000000000,
    description:
      "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
  },
];

/**
 * Refuses the deletion of a system PriorityClass by name, as kube's `REST.Delete` does.
 *
 * @param plural The resource's plural.
 * @param group The resource's group.
 * @param name The object's name.
 * @throws {ApiError} 403 for `system-cluster-critical` and `system-node-critical`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseSystemPriorityClassDelete } from "./priority_classes.ts";
 * assert.throws(
 *   () => refuseSystemPriorityClassDelete("priorityclasses", "scheduling.k8s.io", "system-node-critical"),
 *   /is forbidden: this is a system priority class and cannot be deleted/,
 * );
 * refuseSystemPriorityClassDelete("priorityclasses", "scheduling.k8s.io", "high");
 * ```
 */
export function refuseSystemPriorityClassDelete(
  plural: string,
  group: string,
  name: string,
): void {
  if (plural !== "priorityclasses" || group !== GROUP) return;
  if (!SYSTEM_PRIORITY_CLASSES.some((pc) => pc.name === name)) return;
  throw new ApiError(
    403,
    "Forbidden",
    `priorityclasses.${GROUP} "${name}" is forbidden: this is a system priority class and cannot be deleted`,
    { name, group: GROUP, kind: "priorityclasses" },
  );
}

/**
 * The 422 causes of a PriorityClass (`ValidatePriorityClass`, `ValidatePriorityClassUpdate`).
 *
 * @param pc The PriorityClass, defaulted.
 * @param old The stored one on update.
 * @returns The causes; empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { priorityClassCauses } from "./priority_classes.ts";
 * const [cause] = priorityClassCauses({ metadata: { name: "high" }, value: 1000000001 });
 * assert.equal(cause?.message, "Forbidden: maximum allowed value of a user defined priority is 1000000000");
 * ```
 */
export function priorityClassCauses(pc: Obj, old?: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const meta = (pc.metadata ?? {}) as { name?: string };
  const name = meta.name ?? "";
  const value = typeof pc.value === "number" ? pc.value : 0;
  // kube's ValidateUpdate runs ValidatePriorityClass too, then the update's own rules.
  if (name.startsWith("system-")) {
    const problem = systemClassProblem(name, value, pc.globalDefault === true);
    if (problem) {
      causes.push(
        forbidden(
          "metadata.name",
          `priority class names with 'system-' prefix are reserved for system use only. error: ${problem}`,
        ),
      );
    }
  } else if (value > HIGHEST_USER_DEFINABLE) {
    causes.push(
      forbidden(
        "value",
        `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE}`,
      ),
    );
  }
  if (pc.preemptionPolicy !== undefined && !POLICIES.includes(pc.preemptionPolicy as string)) {
    causes.push(notSupported("preemptionPolicy", pc.preemptionPolicy, POLICIES));
  }
  if (old) {
    const before = typeof old.value === "number" ? old.value : 0;
    if (value !== before) causes.push(forbidden("value", "may not be changed in an update."));
    if (pc.preemptionPolicy !== old.preemptionPolicy) {
      causes.push(invalid("preemptionPolicy", pc.preemptionPolicy ?? null, "field is immutable"));
    }
  }
  return causes;
}

/** kube's `IsKnownSystemPriorityClass`: why it is not one, or undefined. */
function systemClassProblem(
  name: string,
  value: number,
  globalDefault: boolean,
): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((pc) => pc.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}
