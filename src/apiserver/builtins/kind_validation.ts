/**
 * The validation of built-in kinds that are neither workloads nor pods (those are
 * `workload_validation.ts`'s), one entry per kind: webhook configurations
 * (`webhook_config_validation.ts`), Ingresses (`ingress_validation.ts`) and PriorityClasses
 * (`priority_classes.ts`). A write whose validated part is unchanged (a status or metadata
 * write) is not validated again: it was when stored.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import { ingressCauses } from "./ingress_validation.ts";
import { priorityClassCauses } from "./priority_classes.ts";
import { webhookConfigurationCauses } from "./webhook_config_validation.ts";

type Obj = Record<string, unknown>;

const RULES: Record<string, (obj: Obj, old: Obj | undefined) => StatusCause[]> = {
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": (o, old) =>
    old && same(o.webhooks, old.webhooks) ? [] : webhookConfigurationCauses(o, false, old),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": (o, old) =>
    old && same(o.webhooks, old.webhooks) ? [] : webhookConfigurationCauses(o, true, old),
  "networking.k8s.io/Ingress": (o, old) =>
    old && same(o.spec, old.spec) ? [] : ingressCauses(o, old),
  "scheduling.k8s.io/PriorityClass": (o, old) => priorityClassCauses(o, old),
};

function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The 422 causes of a built-in object of a kind listed here.
 *
 * @param group The kind's group.
 * @param kind The kind.
 * @param obj The object, defaulted.
 * @param old The stored object on update.
 * @returns The causes; empty when valid or when the kind has no rules here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kindCauses } from "./kind_validation.ts";
 * const ing = { spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } } };
 * assert.deepEqual(kindCauses("networking.k8s.io", "Ingress", ing, undefined), []);
 * assert.deepEqual(kindCauses("", "ConfigMap", {}, undefined), []);
 * ```
 */
export function kindCauses(
  group: string,
  kind: string,
  obj: Obj,
  old: Obj | undefined,
): StatusCause[] {
  const rule = RULES[`${group}/${kind}`];
  return rule ? rule(obj, old) : [];
}
