/**
 * kube-apiserver's `Priority` admission plugin, on by default: a created Pod
 * gets its `priority` (and `preemptionPolicy`) from the PriorityClass its
 * `priorityClassName` names, from the global default class when it names
 * none (its name is filled in then), else priority 0. A class that does not
 * exist, or a `priority` or `preemptionPolicy` sent that differs from the
 * class's, is the plugin's 403. The two classes every cluster has,
 * `system-cluster-critical` and `system-node-critical`, are stored at start
 * (`priority_classes.ts`) and resolve even when not stored. The plugin also keeps one global
 * default: a second PriorityClass created with `globalDefault`, or another marked so, is its 403
 * ({@link admitPriorityClass}).
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { KObject } from "../shared/types.ts";
import { SYSTEM_PRIORITY_CLASSES } from "./priority_classes.ts";

type Obj = Record<string, unknown>;

/** The PriorityClasses the plugin reads. */
export interface PriorityClasses {
  /** The class of this name, if stored. */
  get(name: string): KObject | undefined;
  /** Every stored class. */
  list(): Iterable<KObject>;
  /** The global default class ({@linkcode globalDefaultOf} the list), when the caller keeps it. */
  globalDefault?(): KObject | undefined;
}

/**
 * The global default PriorityClass as the plugin picks it: of the classes with `globalDefault`,
 * the one of the lowest value.
 *
 * @param classes The stored classes.
 * @returns The class, if any is a global default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { globalDefaultOf } from "./priority_admission.ts";
 * const pc = (name: string, value: number, globalDefault: boolean) => ({ metadata: { name }, value, globalDefault });
 * assert.equal(globalDefaultOf([pc("a", 5, true), pc("b", 1, true), pc("c", 0, false)])?.metadata.name, "b");
 * ```
 */
export function globalDefaultOf(classes: Iterable<KObject>): KObject | undefined {
  let chosen: KObject | undefined;
  for (const pc of classes) {
    if (pc.globalDefault !== true) continue;
    if (!chosen || Number(chosen.value) > Number(pc.value)) chosen = pc;
  }
  return chosen;
}

/** The classes kube-apiserver creates at start. */
const SYSTEM: Record<string, number> = Object.fromEntries(
  SYSTEM_PRIORITY_CLASSES.map((pc) => [pc.name, pc.value]),
);

const NO_CLASSES: PriorityClasses = { get: () => undefined, list: () => [] };

function forbidden(name: string, message: string): ApiError {
  return new ApiError(403, "Forbidden", `pods "${name}" is forbidden: ${message}`, {
    name,
    kind: "pods",
  });
}

/**
 * Sets a created pod's priority as the `Priority` admission plugin does.
 *
 * @param spec The pod's defaulted spec; mutated.
 * @param podName The pod's name (its `generateName` when it has none), for the 403.
 * @param classes The stored PriorityClasses (none when omitted).
 * @throws {ApiError} 403 for an unknown class, or a priority or policy that differs from it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { admitPriority } from "./priority_admission.ts";
 * const spec: Record<string, unknown> = { priorityClassName: "system-node-critical" };
 * admitPriority(spec, "p");
 * assert.deepEqual([spec.priority, spec.preemptionPolicy], [2000001000, "PreemptLowerPriority"]);
 * ```
 */
export function admitPriority(spec: Obj, podName: string, classes = NO_CLASSES): void {
  const named = typeof spec.priorityClassName === "string" ? spec.priorityClassName : "";
  let priority = 0;
  let policy: unknown = "PreemptLowerPriority";
  if (!named) {
    const chosen = classes.globalDefault
      ? classes.globalDefault()
      : globalDefaultOf(classes.list());
    if (chosen) {
      spec.priorityClassName = chosen.metadata.name;
      priority = Number(chosen.value ?? 0);
      policy = chosen.preemptionPolicy;
    }
  } else {
    const pc = classes.get(named);
    if (pc) {
      priority = Number(pc.value ?? 0);
      policy = pc.preemptionPolicy;
    } else if (SYSTEM[named] !== undefined) {
      priority = SYSTEM[named];
    } else {
      throw forbidden(podName, `no PriorityClass with name ${named} was found`);
    }
  }
  if (typeof spec.priority === "number" && spec.priority !== priority) {
    throw forbidden(
      podName,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  }
  spec.priority = priority;
  if (typeof policy === "string" && policy) {
    if (typeof spec.preemptionPolicy === "string" && spec.preemptionPolicy !== policy) {
      throw forbidden(
        podName,
        `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
      );
    }
    spec.preemptionPolicy = policy;
  }
}

/**
 * The `Priority` plugin's rule for PriorityClasses: one marked `globalDefault` may be written only
 * while no other is — creating a second default, or marking another class as default, is its 403
 * (the plugin validates after the class's own 422 checks).
 *
 * @param pc The class written, defaulted and valid.
 * @param creating Whether it is created (else updated).
 * @param classes The stored classes.
 * @throws {ApiError} 403 when another class is the global default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { admitPriorityClass } from "./priority_admission.ts";
 * const first = { metadata: { name: "first" }, value: 10, globalDefault: true };
 * admitPriorityClass({ ...first, description: "again" }, false, [first]); // the default itself
 * assert.throws(
 *   () => admitPriorityClass({ metadata: { name: "second" }, value: 5, globalDefault: true }, true, [first]),
 *   /"second" is forbidden: PriorityClass first is already marked as default\. Only one default can exist/,
 * );
 * ```
 */
export function admitPriorityClass(
  pc: KObject,
  creating: boolean,
  classes: Iterable<KObject>,
): void {
  if (pc.globalDefault !== true) return;
  const current = globalDefaultOf(classes);
  const name = pc.metadata.name;
  if (!current || (!creating && current.metadata.name === name)) return;
  throw new ApiError(
    403,
    "Forbidden",
    `priorityclasses.scheduling.k8s.io "${name}" is forbidden: PriorityClass ${current.metadata.name} is already marked as default. Only one default can exist`,
    { name, group: "scheduling.k8s.io", kind: "priorityclasses" },
  );
}
