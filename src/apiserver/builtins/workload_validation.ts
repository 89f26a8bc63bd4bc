/**
 * The rules of kube-apiserver's validation for built-in kinds that users hit
 * first, with kube's 422 causes: a workload's `replicas` not negative, its
 * `selector` required, not empty and matching its pod template's labels, its
 * pods restarting as the workload allows (a Job's `OnFailure`/`Never`, the
 * others' `Always`); every pod spec as `pod_validation.ts` validates it; and
 * what kube keeps immutable on update (a workload's selector in apps/v1, a
 * Job's selector and template, a StatefulSet's spec but for a few fields, a
 * Pod's spec but for images and a few more, a Secret's `type`, the data of an
 * immutable ConfigMap or Secret).
 *
 * Values in messages are rendered as kube's `field.Error` renders them
 * (`field_errors.ts`).
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import { forbidden, invalid, required } from "../schemas/field_errors.ts";
import { podSpecCauses, templateRestartCauses } from "./pod_validation.ts";
import { podUpdateCauses, statefulSetUpdateCauses } from "./pod_update_validation.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** Whether a label selector (`matchLabels`, `matchExpressions`) selects these labels. */
function selects(selector: Obj, labels: Record<string, unknown>): boolean {
  const match = selector.matchLabels;
  if (isObj(match)) {
    for (const k in match) if (Object.hasOwn(match, k) && labels[k] !== match[k]) return false;
  }
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

/** Whether an object has an own key (`Object.keys(o).length > 0`, without the array). */
function hasKeys(o: Obj): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

const emptySelector = (s: Obj) =>
  !(isObj(s.matchLabels) && hasKeys(s.matchLabels)) &&
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

const nonNegative = (value: unknown, field: string): StatusCause[] =>
  typeof value === "number" && value < 0
    ? [invalid(field, value, "must be greater than or equal to 0")]
    : [];

/** `spec.replicas`, `spec.selector` and `spec.template` of an apps/v1 workload. */
function workloadCauses(
  spec: Obj,
  what: string,
  replicas: boolean,
  causes: StatusCause[],
): void {
  if (replicas && typeof spec.replicas === "number" && spec.replicas < 0) {
    causes.push(...nonNegative(spec.replicas, "spec.replicas"));
  }
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
  podSpecCauses(template.spec, "spec.template.spec", causes);
  for (const c of templateRestartCauses(template.spec, "spec.template.spec", ALWAYS)) {
    causes.push(c);
  }
}

const ALWAYS = ["Always"];

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
  // The stored spec itself (a patch of metadata, a status write) was validated when stored.
  const unchanged = old !== undefined && obj.spec === old.spec;
  switch (`${group}/${kind}`) {
    case "/Pod":
      if (unchanged) break;
      podSpecCauses(obj.spec, "spec", causes);
      if (old) causes.push(...podUpdateCauses(spec, oldSpec));
      break;
    case "/ReplicationController": {
      if (unchanged) break;
      const template = isObj(spec.template) ? spec.template : undefined;
      if (template) {
        podSpecCauses(template.spec, "spec.template.spec", causes);
        causes.push(...templateRestartCauses(template.spec, "spec.template.spec", ["Always"]));
      }
      break;
    }
    case "/PodTemplate": {
      if (old && obj.template === old.template) break;
      const template = isObj(obj.template) ? obj.template : {};
      podSpecCauses(template.spec, "template.spec", causes);
      break;
    }
    case "apps/Deployment":
      if (unchanged) break;
      workloadCauses(spec, "deployment", true, causes);
      immutableSelector();
      break;
    case "apps/ReplicaSet":
      if (unchanged) break;
      workloadCauses(spec, "deployment", true, causes);
      immutableSelector();
      break;
    case "apps/StatefulSet":
      if (unchanged) break;
      workloadCauses(spec, "statefulset", true, causes);
      if (old) causes.push(...statefulSetUpdateCauses(spec, oldSpec));
      break;
    case "apps/DaemonSet":
      if (unchanged) break;
      workloadCauses(spec, "daemonset", false, causes);
      immutableSelector();
      break;
    case "batch/Job": {
      if (unchanged) break;
      for (const f of ["parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"]) {
        causes.push(...nonNegative(spec[f], `spec.${f}`));
      }
      const template = isObj(spec.template) ? spec.template : {};
      podSpecCauses(template.spec, "spec.template.spec", causes);
      causes.push(
        ...templateRestartCauses(template.spec, "spec.template.spec", ["OnFailure", "Never"]),
      );
      if (
        old && oldSpec.suspend !== true &&
        JSON.stringify(spec.template) !== JSON.stringify(oldSpec.template)
      ) {
        causes.push(invalid("spec.template", spec.template ?? null, "field is immutable"));
      }
      break;
    }
    case "batch/CronJob": {
      if (unchanged) break;
      const jobTemplate = isObj(spec.jobTemplate) ? spec.jobTemplate : {};
      const jobSpec = isObj(jobTemplate.spec) ? jobTemplate.spec : {};
      const template = isObj(jobSpec.template) ? jobSpec.template : {};
      const at = "spec.jobTemplate.spec.template.spec";
      podSpecCauses(template.spec, at, causes);
      causes.push(...templateRestartCauses(template.spec, at, ["OnFailure", "Never"]));
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
