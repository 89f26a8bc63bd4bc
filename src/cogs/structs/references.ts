/**
 * References to Kubernetes resources and the operator's scopes: a
 * {@link Resource} is one concrete API endpoint (group, version, plural) as
 * found by cluster discovery (`resource.ts`); a {@link Selector} is what a
 * developer writes in a handler (`"kopfexamples"`, `"kopf.dev/v1", "kopfexamples"`,
 * an object, or {@link EVERYTHING}) and is matched against the discovered
 * resources later, because only the cluster knows which names, versions and
 * groups exist (`selector.ts`; the forms and their parsing: `selector_specs.ts`).
 * Namespace patterns (`-n 'ns-*'`, `-n '!kube-*'`) are matched in
 * `namespace_patterns.ts`. This file holds the selectors of the resources the
 * framework itself uses, and re-exports the rest.
 *
 * Why selectors are not resources: one selector can match many resources
 * (every preferred version of "deployments" in several groups, a category, a
 * callable filter), and the same selector can match different resources in
 * different clusters. The framework keeps selectors in its registry and
 * resolves them every time the cluster's discovery changes.
 *
 * @module
 */

import { Selector } from "./selector.ts";

export {
  matchNamespace,
  type NamespacePattern,
  selectSpecificNamespaces,
} from "./namespace_patterns.ts";
export { type QueryParams, Resource, type ResourceInit } from "./resource.ts";
export { Selector } from "./selector.ts";
export {
  EVERYTHING,
  type Everything,
  type ResourceFilter,
  ResourceSelectorError,
  type SelectorFields,
  type SelectorSpec,
} from "./selector_specs.ts";

/** Custom resource definitions (any served version). */
export const CRDS: Selector = new Selector("apiextensions.k8s.io", "customresourcedefinitions");
/** Core v1 events. */
export const EVENTS: Selector = new Selector("v1", "events");
/** Core v1 namespaces. */
export const NAMESPACES: Selector = new Selector("v1", "namespaces");
/** Kopf's cluster-scoped peering objects. */
export const CLUSTER_PEERINGS: Selector = new Selector("kopf.dev/v1", "clusterkopfpeerings");
/** Kopf's namespaced peering objects. */
export const NAMESPACED_PEERINGS: Selector = new Selector("kopf.dev/v1", "kopfpeerings");
/** Kopf's cluster-scoped peering objects of the legacy group (kopf<1.29). */
export const CLUSTER_PEERINGS_LEGACY: Selector = new Selector(
  "zalando.org/v1",
  "clusterkopfpeerings",
);
/** Kopf's namespaced peering objects of the legacy group (kopf<1.29). */
export const NAMESPACED_PEERINGS_LEGACY: Selector = new Selector("zalando.org/v1", "kopfpeerings");
/** Mutating admission webhook configurations. */
export const MUTATING_WEBHOOK: Selector = new Selector(
  "admissionregistration.k8s.io",
  "mutatingwebhookconfigurations",
);
/** Validating admission webhook configurations. */
export const VALIDATING_WEBHOOK: Selector = new Selector(
  "admissionregistration.k8s.io",
  "validatingwebhookconfigurations",
);
