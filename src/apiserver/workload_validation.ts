/**
 * The rules of kube-apiserver's validation for built-in kinds that users hit
 * first, with kube's 422 causes: a workload's `replicas` not negative, its
 * `selector` required, not empty and matching its pod template's labels; a
 * pod (or pod template) with containers, each named (a DNS-1123 label,
 * unique) and with an image; and the fields kube keeps immutable on update
 * (a workload's selector in apps/v1, a Job's selector and template, a
 * Secret's `type`, the data of an immutable ConfigMap or Secret).
 *
 * Values in messages are rendered as kube's `field.Error` renders them:
 * numbers bare, strings quoted, anything else as JSON.
 *
 * @module
 */

import type { StatusCause } from "./errors.ts";
import { validateName } from "./metadata_validation.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** A value as kube's `field.Error` prints it. */
function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v === undefined ? null : v);
}

const required = (field: string): StatusCause => ({
  reason: "FieldValueRequired",
  message: "Required value",
  field,
});
const invalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: "FieldValueInvalid",
  message: `Invalid value: ${shown(value)}: ${detail}`,
  field,
});
const forbidden = (field: string, detail: string): StatusCause => ({
  reason: "FieldValueForbidden",
  message: `Forbidden: ${detail}`,
  field,
});

/** Whether a label selector (`matchLabels`, `matchExpressions`) selects these labels. */
function selects(selector: Obj, labels: Record<string, unknown>): boolean {
  const match = isObj(selector.matchLabels) ? selector.matchLabels : {};
  for (const [k, v] of Object.entries(match)) if (labels[k] !== v) return false;
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  for (const e of exprs) {
    if (!isObj(e)) continue;
    const key = String(e.key);
    const has = Object.hasOwn(labels, key);
    const values = Array.isArray(e.values) ? e.values : [];
    switch (e.operator) {
      case "In":
        if (!has || !values.includes(labels[key])) return false;
        break;
      case "NotIn":
        if (has && values.includes(labels[key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
    }
  }
  return true;
}

const emptySelector = (s: Obj) =>
  !(isObj(s.matchLabels) && Object.keys(s.matchLabels).length) &&
  !(Array.isArray(s.matchExpressions) && s.matchExpressions.length);

/** A `LabelSelector` as Go's encoder writes it (fields in declaration order, empty ones left out). */
function selectorJson(s: unknown): unknown {
  if (!isObj(s)) return s;
  const out: Obj = {};
  if (isObj(s.matchLabels) && Object.keys(s.matchLabels).length) {
    out.matchLabels = Object.fromEntries(Object.entries(s.matchLabels).sort());
  }
  if (Array.isArray(s.matchExpressions) && s.matchExpressions.length) {
    out.matchExpressions = s.matchExpressions;
  }
  return out;
}

/** Containers of a pod spec at `path` (`spec`, `spec.template.spec`). */
function podSpecCauses(spec: unknown, path: string): StatusCause[] {
  const s = isObj(spec) ? spec : {};
  const containers = s.containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    return [required(`${path}.containers`)];
  }
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  const initContainers = Array.isArray(s.initContainers) ? s.initContainers : [];
  for (const c of initContainers) if (isObj(c) && typeof c.name === "string") seen.add(c.name);
  containers.forEach((c, i) => {
    const at = `${path}.containers[${i}]`;
    const ctr = isObj(c) ? c : {};
    if (typeof ctr.name !== "string" || ctr.name === "") causes.push(required(`${at}.name`));
    else {
      causes.push(...validateName(ctr.name, { field: `${at}.name`, dns1123Label: true }));
      if (seen.has(ctr.name)) {
        causes.push({
          reason: "FieldValueDuplicate",
          message: `Duplicate value: ${shown(ctr.name)}`,
          field: `${at}.name`,
        });
      }
      seen.add(ctr.name);
    }
    if (typeof ctr.image !== "string" || ctr.image === "") causes.push(required(`${at}.image`));
  });
  return causes;
}

const nonNegative = (value: unknown, field: string): StatusCause[] =>
  typeof value === "number" && value < 0
    ? [invalid(field, value, "must be greater than or equal to 0")]
    : [];

/** `spec.replicas`, `spec.selector` and `spec.template` of an apps/v1 workload. */
function workloadCauses(spec: Obj, what: string, replicas: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (replicas) causes.push(...nonNegative(spec.replicas, "spec.replicas"));
  const selector = spec.selector;
  let everything = false;
  if (!isObj(selector)) causes.push(required("spec.selector"));
  else if (emptySelector(selector)) {
    everything = true;
    causes.push(
      invalid("spec.selector", selectorJson(selector), `empty selector is invalid for ${what}`),
    );
  }
  const template = isObj(spec.template) ? spec.template : {};
  const meta = isObj(template.metadata) ? template.metadata : {};
  const labels = isObj(meta.labels) ? meta.labels : undefined;
  if (!everything && !(isObj(selector) && selects(selector, labels ?? {}))) {
    causes.push(
      invalid(
        "spec.template.metadata.labels",
        labels ?? null,
        "`selector` does not match template `labels`",
      ),
    );
  }
  causes.push(...podSpecCauses(template.spec, "spec.template.spec"));
  return causes;
}

/**
 * The causes of a built-in object's 422, or none.
 *
 * @param group The API group (`""` for core).
 * @param kind The kind.
 * @param obj The object as it will be stored.
 * @param old The stored object on update, else `undefined`.
 * @returns kube's causes, in kube's order; empty when the object is valid or
 * its kind has no rules here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { builtinCauses } from "./workload_validation.ts";
 *
 * const causes = builtinCauses("apps", "Deployment", { spec: { replicas: -1 } }, undefined);
 * assert.deepEqual(causes[0], {
 *   reason: "FieldValueInvalid",
 *   message: "Invalid value: -1: must be greater than or equal to 0",
 *   field: "spec.replicas",
 * });
 * ```
 */
export function builtinCauses(
  group: string,
  kind: string,
  obj: Obj,
  old: Obj | undefined,
): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const oldSpec = old && isObj(old.spec) ? old.spec : {};
  const causes: StatusCause[] = [];
  const immutableSelector = () => {
    if (
      old &&
      JSON.stringify(selectorJson(spec.selector)) !== JSON.stringify(selectorJson(oldSpec.selector))
    ) {
      causes.push(
        invalid("spec.selector", selectorJson(spec.selector) ?? null, "field is immutable"),
      );
    }
  };
  switch (`${group}/${kind}`) {
    case "/Pod":
      if (!old) causes.push(...podSpecCauses(obj.spec, "spec"));
      break;
    case "/PodTemplate": {
      const template = isObj(obj.template) ? obj.template : {};
      causes.push(...podSpecCauses(template.spec, "template.spec"));
      break;
    }
    case "apps/Deployment":
      causes.push(...workloadCauses(spec, "deployment", true));
      immutableSelector();
      break;
    case "apps/ReplicaSet":
      causes.push(...workloadCauses(spec, "deployment", true));
      immutableSelector();
      break;
    case "apps/StatefulSet":
      causes.push(...workloadCauses(spec, "statefulset", true));
      break;
    case "apps/DaemonSet":
      causes.push(...workloadCauses(spec, "daemonset", false));
      immutableSelector();
      break;
    case "batch/Job": {
      for (const f of ["parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"]) {
        causes.push(...nonNegative(spec[f], `spec.${f}`));
      }
      const template = isObj(spec.template) ? spec.template : {};
      causes.push(...podSpecCauses(template.spec, "spec.template.spec"));
      if (
        old && oldSpec.suspend !== true &&
        JSON.stringify(spec.template) !== JSON.stringify(oldSpec.template)
      ) {
        causes.push(invalid("spec.template", spec.template ?? null, "field is immutable"));
      }
      break;
    }
    case "batch/CronJob": {
      const jobTemplate = isObj(spec.jobTemplate) ? spec.jobTemplate : {};
      const jobSpec = isObj(jobTemplate.spec) ? jobTemplate.spec : {};
      const template = isObj(jobSpec.template) ? jobSpec.template : {};
      causes.push(...podSpecCauses(template.spec, "spec.jobTemplate.spec.template.spec"));
      break;
    }
    case "/Secret":
      if (old && (obj.type ?? "Opaque") !== (old.type ?? "Opaque")) {
        causes.push(invalid("type", obj.type ?? "", "field is immutable"));
      }
      causes.push(...immutableData(obj, old, ["data"]));
      break;
    case "/ConfigMap":
      causes.push(...immutableData(obj, old, ["data", "binaryData"]));
      break;
  }
  return causes;
}

/** An immutable ConfigMap's or Secret's data, and the flag itself, stay as they are. */
function immutableData(obj: Obj, old: Obj | undefined, fields: string[]): StatusCause[] {
  if (!old || old.immutable !== true) return [];
  const causes: StatusCause[] = [];
  const detail = "field is immutable when `immutable` is set";
  if (obj.immutable !== true) causes.push(forbidden("immutable", detail));
  for (const f of fields) {
    if (JSON.stringify(sorted(obj[f])) !== JSON.stringify(sorted(old[f]))) {
      causes.push(forbidden(f, detail));
    }
  }
  return causes;
}

function sorted(v: unknown): unknown {
  if (!isObj(v) || !Object.keys(v).length) return undefined;
  return Object.fromEntries(Object.entries(v).sort());
}
