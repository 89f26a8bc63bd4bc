/**
 * Which admission webhooks a request reaches, as kube-apiserver decides it:
 * a webhook's `rules` (apiGroups, apiVersions, resources with `x/status`,
 * `x/*`, `*` and `*\/*`, operations, scope) against the request's resource —
 * or, with `matchPolicy: Equivalent` (the default), against another served
 * version of it — and its `objectSelector`/`namespaceSelector` against the
 * objects. The calls themselves are in `admission.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleMatches } from "./admission_matching.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * const pods = new ResourceRegistry().find("", "v1", "pods")!;
 * const rule = { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] };
 * assert.deepEqual(ruleMatches(rule, "CREATE", pods, undefined), true);
 * assert.deepEqual(ruleMatches(rule, "CREATE", pods, "status"), false); // pods/status is not listed
 * ```
 *
 * @module
 */

import {
  labelSelectorFromObject,
  type LabelSelectorObject,
  matchesLabels,
} from "../../cogs/structs/label_selector.ts";
import type { AdmissionRequestInfo } from "./admission_types.ts";
import { type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";

/** Where the MutatingWebhookConfigurations are stored. */
export const MUTATING = "mutatingwebhookconfigurations.admissionregistration.k8s.io";
/** Where the ValidatingWebhookConfigurations are stored. */
export const VALIDATING = "validatingwebhookconfigurations.admissionregistration.k8s.io";

/** One rule of a webhook: what requests it is for. */
export interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

/** One webhook of a Mutating/ValidatingWebhookConfiguration, as stored. */
export interface Webhook {
  name: string;
  clientConfig?: {
    url?: string;
    caBundle?: string;
    service?: { namespace?: string; name?: string; path?: string; port?: number };
  };
  rules?: Rule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  sideEffects?: string;
  timeoutSeconds?: number;
  reinvocationPolicy?: string;
}

/** Whether a resource is one of the webhook configurations (never admitted themselves). */
export function isWebhookConfiguration(def: ResourceDef): boolean {
  const key = storageKey(def);
  return key === MUTATING || key === VALIDATING;
}

/**
 * The resource a webhook is called for: the request's when a rule matches it;
 * else, unless `matchPolicy: Exact`, the first other served version of it
 * that a rule matches (rules in order, each tried against every version).
 */
export function matchedResource(
  hook: Webhook,
  operation: string,
  info: AdmissionRequestInfo,
  others: () => ResourceDef[],
): ResourceDef | undefined {
  const rules = hook.rules ?? [];
  if (rules.some((r) => ruleMatches(r, operation, info.def, info.subresource))) return info.def;
  if (hook.matchPolicy === "Exact") return undefined;
  for (const rule of rules) {
    for (const def of others()) if (ruleMatches(rule, operation, def, info.subresource)) return def;
  }
  return undefined;
}

/** Whether one rule takes an operation on a resource (and subresource). */
export function ruleMatches(
  rule: Rule,
  operation: string,
  def: ResourceDef,
  subresource: string | undefined,
): boolean {
  const has = (list: string[] | undefined, value: string) =>
    (list ?? []).includes("*") || (list ?? []).includes(value);
  if (!has(rule.operations, operation)) return false;
  if (!has(rule.apiGroups, def.group)) return false;
  if (!has(rule.apiVersions, def.version)) return false;
  const scope = rule.scope ?? "*";
  if (scope === "Cluster" && def.namespaced) return false;
  if (scope === "Namespaced" && !def.namespaced) return false;
  return (rule.resources ?? []).some((r) => {
    const [res, sub] = r.split("/", 2) as [string, string | undefined];
    if (res !== "*" && res !== def.plural) return false;
    if (sub === undefined) return !subresource;
    return sub === "*" || sub === subresource;
  });
}

/** Whether a label selector takes any of the objects (a selector that does not parse takes none). */
export function selectorMatchesAny(selector: LabelSelectorObject, objects: KObject[]): boolean {
  let parsed;
  try {
    parsed = labelSelectorFromObject(selector);
  } catch {
    return false;
  }
  return objects.some((o) => matchesLabels(parsed, o.metadata?.labels));
}
