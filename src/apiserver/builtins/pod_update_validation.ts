/**
 * What an update may change, as kube-apiserver's update validation says it: a
 * Pod's spec only in the fields kube lets change (images, the active deadline,
 * added tolerations, a negative grace period set to 1), compared the way kube's
 * `Semantic.DeepEqual` compares, and a StatefulSet's spec only in its updatable
 * fields.
 *
 * @module
 */

import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import type { StatusCause } from "../shared/errors.ts";
import { forbidden, invalid, required } from "../schemas/field_errors.ts";
import { isObj, list, type Obj, text } from "./pod_validation.ts";

/** The fields kube lets a Pod's spec change, as its message lists them. */
const UPDATABLE = [
  "`spec.containers[*].image`",
  "`spec.initContainers[*].image`",
  "`spec.activeDeadlineSeconds`",
  "`spec.tolerations` (only additions to existing tolerations)",
  "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
].join(",");

/** Equality as kube's `Semantic.DeepEqual` sees it here: a missing list or map equals an empty one. */
function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) =>
    v === undefined || v === null || (Array.isArray(v) && v.length === 0);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!semanticEqual(a[k], b[k])) return false;
    }
    return true;
  }
  return deepEqual(a, b);
}

/**
 * What a Pod's update may change in its spec (kube's `ValidatePodUpdate`):
 * containers' and init containers' images, `activeDeadlineSeconds` (set, or
 * lowered), tolerations (only added to; their `tolerationSeconds` may
 * change), scheduling gates (only removed), `terminationGracePeriodSeconds`
 * from negative to 1. Anything else is kube's `Forbidden: pod updates may not
 * change fields other than …`; the lines after that first one name the
 * changed fields (kube prints a Go diff there).
 *
 * @param spec The new spec, defaulted.
 * @param old The stored spec.
 * @returns kube's causes, or none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { podUpdateCauses } from "./pod_update_validation.ts";
 * const old = { containers: [{ name: "c", image: "a" }], dnsPolicy: "ClusterFirst" };
 * assert.deepEqual(podUpdateCauses({ ...old, containers: [{ name: "c", image: "b" }] }, old), []);
 * const [cause] = podUpdateCauses({ ...old, dnsPolicy: "Default" }, old);
 * assert.match(cause?.message ?? "", /^Forbidden: pod updates may not change fields other than/);
 * ```
 */
export function podUpdateCauses(spec: Obj, old: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of ["containers", "initContainers"]) {
    const now = list(spec[key]);
    const before = list(old[key]);
    if (now.length !== before.length) {
      return [forbidden(`spec.${key}`, "pod updates may not add or remove containers")];
    }
    now.forEach((c, i) => {
      const image = isObj(c) ? c.image : undefined;
      if (!text(image)) causes.push(required(`spec.${key}[${i}].image`));
      else if (text(image).trim() !== image) {
        causes.push(
          invalid(`spec.${key}[${i}].image`, image, "must not have leading or trailing whitespace"),
        );
      }
    });
  }
  const deadline = spec.activeDeadlineSeconds;
  const oldDeadline = old.activeDeadlineSeconds;
  if (deadline !== undefined && deadline !== null) {
    if (typeof deadline === "number" && (deadline < 0 || deadline > 2147483647)) {
      return [
        ...causes,
        invalid(
          "spec.activeDeadlineSeconds",
          deadline,
          "must be between 0 and 2147483647, inclusive",
        ),
      ];
    }
    if (typeof oldDeadline === "number" && typeof deadline === "number" && oldDeadline < deadline) {
      return [
        ...causes,
        invalid(
          "spec.activeDeadlineSeconds",
          deadline,
          "must be less than or equal to previous value",
        ),
      ];
    }
  } else if (oldDeadline !== undefined && oldDeadline !== null) {
    causes.push(
      invalid(
        "spec.activeDeadlineSeconds",
        null,
        "must not update from a positive integer to nil value",
      ),
    );
  }
  const tolerations = list(spec.tolerations);
  for (const t of list(old.tolerations)) {
    const kept = tolerations.some((n) =>
      isObj(n) && isObj(t) &&
      semanticEqual({ ...t, tolerationSeconds: n.tolerationSeconds }, n)
    );
    if (!kept) {
      causes.push(
        forbidden(
          "spec.tolerations",
          "existing toleration can not be modified except its tolerationSeconds",
        ),
      );
      break;
    }
  }
  const oldGates = new Set(list(old.schedulingGates).map((g) => (isObj(g) ? g.name : undefined)));
  list(spec.schedulingGates).forEach((g, i) => {
    const name = isObj(g) ? g.name : undefined;
    if (!oldGates.has(name)) {
      causes.push(
        forbidden(
          `spec.schedulingGates[${i}].name`,
          `only deletion is allowed, but found new scheduling gate '${name}'`,
        ),
      );
    }
  });
  if (semanticEqual(spec, old)) return causes;
  const munged: Obj = { ...spec };
  for (const key of ["containers", "initContainers"]) {
    const before = list(old[key]);
    if (Array.isArray(spec[key])) {
      munged[key] = list(spec[key]).map((c, i) => {
        const was = before[i];
        return isObj(c) && isObj(was) ? { ...c, image: was.image } : c;
      });
    }
  }
  munged.activeDeadlineSeconds = old.activeDeadlineSeconds;
  munged.schedulingGates = old.schedulingGates;
  munged.tolerations = old.tolerations;
  const grace = old.terminationGracePeriodSeconds;
  if (typeof grace === "number" && grace < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = grace;
  }
  if (semanticEqual(munged, old)) return causes;
  const changed = [...new Set([...Object.keys(old), ...Object.keys(munged)])]
    .filter((k) => !semanticEqual(old[k], munged[k]))
    .sort();
  const diff = changed.map((k) =>
    `-\t${k}: ${JSON.stringify(old[k] ?? null)}\n+\t${k}: ${JSON.stringify(munged[k] ?? null)}`
  );
  causes.push(
    forbidden(
      "spec",
      `pod updates may not change fields other than ${UPDATABLE}\n${diff.join("\n")}`,
    ),
  );
  return causes;
}

/** The StatefulSet spec fields kube lets an update change. */
const STATEFULSET_UPDATABLE = [
  "replicas",
  "ordinals",
  "template",
  "updateStrategy",
  "revisionHistoryLimit",
  "persistentVolumeClaimRetentionPolicy",
  "minReadySeconds",
];

/**
 * What a StatefulSet's update may change (kube's `ValidateStatefulSetUpdate`):
 * only `replicas`, `ordinals`, `template`, `updateStrategy`,
 * `revisionHistoryLimit`, `persistentVolumeClaimRetentionPolicy` and
 * `minReadySeconds`; anything else (its selector, service name, volume claim
 * templates, pod management policy) is kube's 422.
 *
 * @param spec The new spec, defaulted.
 * @param old The stored spec.
 * @returns kube's cause, or none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statefulSetUpdateCauses } from "./pod_update_validation.ts";
 * assert.deepEqual(statefulSetUpdateCauses({ replicas: 3, serviceName: "a" }, { replicas: 1, serviceName: "a" }), []);
 * assert.equal(statefulSetUpdateCauses({ serviceName: "b" }, { serviceName: "a" })[0]?.field, "spec");
 * ```
 */
export function statefulSetUpdateCauses(spec: Obj, old: Obj): StatusCause[] {
  const keys = new Set([...Object.keys(spec), ...Object.keys(old)]);
  for (const k of keys) {
    if (STATEFULSET_UPDATABLE.includes(k) || semanticEqual(spec[k], old[k])) continue;
    return [
      forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    ];
  }
  return [];
}
