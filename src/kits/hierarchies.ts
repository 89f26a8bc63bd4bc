/**
 * Hierarchies: helpers that connect the children an operator creates to the
 * object it is handling — owner references (so Kubernetes garbage-collects
 * the children with their parent), names derived from the parent's, the
 * parent's namespace, and the parent's labels (also inside pod templates).
 * `adopt()` does all four at once.
 *
 * Why it exists: nearly every operator builds children; doing these steps by
 * hand is repetitive and easy to get subtly wrong (duplicate owner
 * references, a fixed name that collides, a pod template without labels).
 * This is Kopf's `kopf._kits.hierarchies`, with the same semantics:
 * - `objs` is one object, an array, or any iterable of objects (nested lists
 *   are flattened). The objects are edited in place and nothing is returned.
 * - Objects are plain JSON-like objects or `@kubernetes/client-node` model
 *   instances (`new k8s.V1Pod()`): their properties carry the JSON names, so
 *   both are edited alike; a missing `metadata`, `labels` or `ownerReferences`
 *   is created as a plain object or array (structurally the model type, and
 *   serialized by client-node like one); a model stays an instance of its class.
 * - Existing values win unless `forced`: labels, names and namespaces already
 *   present are kept. Owner references are never duplicated (matched by uid).
 *
 * - The owner (or the name, namespace, labels) may be omitted inside a
 *   handler: it defaults to the object being handled (its body, name,
 *   namespace, labels), as Kopf's context variable does — `kopf.adopt(data)`.
 *   Options may then come second: `adopt(objs, { strict: true })`. Outside of
 *   a handler, omitting it is a `TypeError` saying what to pass.
 *
 * Differences from Kopf, on purpose:
 * - Everything is validated before anything is changed, so a bad element at
 *   the end of a list leaves the earlier ones untouched; a generator passed as
 *   `objs` is consumed once, even by `adopt()`.
 * - An owner without `metadata.uid`/`metadata.name`/`apiVersion`/`kind`, and
 *   anything in `objs` that is not an object, is a `TypeError` that says what
 *   to fix (Kopf would build an incomplete reference that the API rejects).
 * - `null`/`undefined` in `objs` is an error rather than silently skipped.
 * - `removeOwnerReference()` creates no empty `metadata.ownerReferences` on
 *   objects that had none.
 *
 * Where the pieces live: the types in `hierarchy_types.ts`, owner references in
 * `owner_references.ts`, the checks and steps they share in `_hierarchy_steps.ts`;
 * naming, namespaces, labels and `adopt()` here.
 *
 * @module
 */

import type { JsonObject } from "../cogs/structs/_json.ts";
import { handledBody, splitOptions } from "./_handled.ts";
import { checkMetadata, collectObjects, peekMeta } from "./_objects.ts";
import type {
  AdoptOptions,
  KubernetesObjects,
  LabelOptions,
  NamespaceOptions,
  NamingOptions,
  OwnerBody,
} from "./hierarchy_types.ts";
import {
  applyLabels,
  applyNamespace,
  applyNaming,
  applyOwnerReference,
  checkLabels,
  checkName,
  checkNamespace,
  labelTargets,
  makeOwnerReference,
  ownerLabels,
} from "./_hierarchy_steps.ts";

export type { NestedFieldPath } from "./_objects.ts";
export type { ObjectReference, OwnerReferenceOptions } from "../cogs/structs/bodies.ts";
export type * from "./hierarchy_types.ts";
export {
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  removeOwnerReference,
} from "./owner_references.ts";

// ---------------------------------------------------------------------------
// The public functions.
//
// The owner (or name/namespace/labels) defaults to the object being handled
// (_handled.ts); options may then come second.

const NAMING_KEYS = ["forced", "strict"] as const;
const LABEL_KEYS = ["forced", "nested"] as const;
const ADOPT_KEYS = ["forced", "strict", "nested"] as const;

/**
 * Names the objects after `name`: by default as a prefix, with Kubernetes
 * adding a random suffix (`metadata.generateName: "<name>-"`); with `strict`,
 * exactly (`metadata.name: "<name>"`). Objects that already have a `name` or
 * `generateName` keep it, unless `forced`; setting one removes the other.
 *
 * @param objs An object, or an array/iterable of objects (plain or client-node models).
 * @param name The name or prefix, usually the owner's `metadata.name`; omitted (or `undefined`)
 *   inside a handler: the handled object's name. Options may come second when it is omitted.
 * @param options `forced` and `strict`, both `false` by default.
 * @throws {TypeError} If `name` is not a non-empty string or is omitted outside of a handler, or
 *   `objs` holds something that is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { harmonizeNaming } from "@kopf/kopf";
 *
 * const job: { kind: string; metadata?: object } = { kind: "Job" };
 * const pod = { kind: "Pod", metadata: { name: "own-name" } };
 * harmonizeNaming([job, pod], "kopf-example-1");
 * assert.deepEqual(job, { kind: "Job", metadata: { generateName: "kopf-example-1-" } });
 * assert.deepEqual(pod.metadata, { name: "own-name" });
 *
 * harmonizeNaming([job, pod], "kopf-example-1", { strict: true, forced: true });
 * assert.deepEqual(job.metadata, { name: "kopf-example-1" });
 * assert.deepEqual(pod.metadata, { name: "kopf-example-1" });
 * ```
 */
export function harmonizeNaming(
  objs: KubernetesObjects,
  name?: string | NamingOptions,
  options?: NamingOptions,
): void {
  const fn = "harmonizeNaming";
  const [given, { forced = false, strict = false }] = splitOptions(name, options, NAMING_KEYS);
  const checked = checkName(
    fn,
    given === undefined
      ? peekMeta(handledBody(fn, "the name", "harmonizeNaming(objs, name)"), "name")
      : given,
  );
  const targets = collectObjects(fn, objs);
  for (const target of targets) checkMetadata(fn, target);
  applyNaming(targets, checked, forced, strict);
}

/**
 * Puts the objects into `namespace`, unless they already have one (or even
 * then, if `forced`). Children usually belong in their owner's namespace.
 * A `null`/`undefined` namespace (a cluster-scoped owner) sets nothing; with
 * `forced`, it removes the objects' namespaces.
 *
 * @param objs An object, or an array/iterable of objects (plain or client-node models).
 * @param namespace The namespace, usually the owner's `metadata.namespace`; omitted (or
 *   `undefined`) inside a handler: the handled object's namespace; `null` for none. Options may
 *   come second when it is omitted.
 * @param options `forced`, `false` by default.
 * @throws {TypeError} If `namespace` is not a string (or null) or is omitted outside of a
 *   handler, or `objs` holds something that is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { adjustNamespace } from "@kopf/kopf";
 *
 * const objs = [{ kind: "Job" }, { kind: "Pod", metadata: { namespace: "other" } }];
 * adjustNamespace(objs, "default");
 * assert.deepEqual(objs, [
 *   { kind: "Job", metadata: { namespace: "default" } },
 *   { kind: "Pod", metadata: { namespace: "other" } },
 * ]);
 * adjustNamespace(objs, "default", { forced: true });
 * assert.equal(objs[1]?.metadata?.namespace, "default");
 * ```
 */
export function adjustNamespace(
  objs: KubernetesObjects,
  namespace?: string | null | NamespaceOptions,
  options?: NamespaceOptions,
): void {
  const fn = "adjustNamespace";
  const [given, { forced = false }] = splitOptions(namespace, options, ["forced"]);
  const checked = checkNamespace(
    fn,
    given === undefined
      ? peekMeta(handledBody(fn, "the namespace", "adjustNamespace(objs, namespace)"), "namespace")
      : given,
  );
  const targets = collectObjects(fn, objs);
  for (const target of targets) checkMetadata(fn, target);
  applyNamespace(targets, checked, forced);
}

/**
 * Applies `labels` to the objects — and, with `nested`, to sub-objects such as
 * the pod template of a Job or Deployment (`"spec.template"`), which get their
 * own `metadata.labels`. Labels the objects already have are kept, unless
 * `forced`. An empty `labels` object changes nothing.
 *
 * @param objs An object, or an array/iterable of objects (plain or client-node models).
 * @param labels The labels, usually the owner's `metadata.labels`; omitted (or `undefined`)
 *   inside a handler: the handled object's labels. Options may come second when it is omitted
 *   (an object with only the keys `forced`/`nested` is taken as the options).
 * @param options `forced` (`false` by default) and `nested` paths.
 * @throws {TypeError} If `labels` is not an object of strings or is omitted outside of a
 *   handler, a nested path leads to a non-object, or `objs` holds something that is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { label } from "@kopf/kopf";
 *
 * const objs = [
 *   { kind: "Job", metadata: { labels: { app: "mine" } } },
 *   { kind: "Deployment", spec: { template: {} } },
 * ];
 * label(objs, { app: "web", tier: "fe" }, { nested: "spec.template" });
 * assert.deepEqual(objs, [
 *   { kind: "Job", metadata: { labels: { app: "mine", tier: "fe" } } },
 *   {
 *     kind: "Deployment",
 *     metadata: { labels: { app: "web", tier: "fe" } },
 *     spec: { template: { metadata: { labels: { app: "web", tier: "fe" } } } },
 *   },
 * ]);
 * ```
 */
export function label(
  objs: KubernetesObjects,
  labels?: Readonly<Record<string, string>> | LabelOptions,
  options?: LabelOptions,
): void {
  const fn = "label";
  const [given, { forced = false, nested }] = splitOptions<
    Readonly<Record<string, string>>,
    LabelOptions
  >(labels, options, LABEL_KEYS);
  const checked = given === undefined
    ? ownerLabels(fn, handledBody(fn, "the labels", "label(objs, labels)"))
    : checkLabels(fn, given, "labels");
  const targets = labelTargets(fn, collectObjects(fn, objs), nested);
  applyLabels(targets, checked, forced);
}

/**
 * Adopts the objects as children of `owner`: appends an owner reference to it
 * (no duplicates), names them after it (a `generateName` prefix, or the exact
 * name with `strict`), puts them into its namespace, and applies its labels
 * (also to `nested` paths). `forced` overwrites existing names, namespaces
 * and labels.
 *
 * @param objs An object, or an array/iterable of objects (plain or client-node models).
 * @param owner The parent object; omitted (or `undefined`) inside a handler: the handled
 *   object, as in Kopf's `kopf.adopt(data)`. Options may come second when it is omitted.
 * @param options `forced`, `strict` (both `false` by default) and `nested` paths.
 * @throws {TypeError} If the owner is incomplete (see {@link buildOwnerReference}) or omitted
 *   outside of a handler, or `objs` holds something that is not an object. Nothing is changed then.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { adopt } from "@kopf/kopf";
 *
 * const owner = {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   metadata: {
 *     name: "kopf-example-1",
 *     uid: "4a15f2c2",
 *     namespace: "default",
 *     labels: { somelabel: "somevalue" },
 *   },
 * };
 * const job = { kind: "Job", spec: { template: {} } };
 * adopt(job, owner, { strict: true, nested: "spec.template" });
 * assert.deepEqual(job, {
 *   kind: "Job",
 *   metadata: {
 *     ownerReferences: [{
 *       apiVersion: "kopf.dev/v1",
 *       kind: "KopfExample",
 *       name: "kopf-example-1",
 *       uid: "4a15f2c2",
 *       controller: true,
 *       blockOwnerDeletion: true,
 *     }],
 *     name: "kopf-example-1",
 *     namespace: "default",
 *     labels: { somelabel: "somevalue" },
 *   },
 *   spec: { template: { metadata: { labels: { somelabel: "somevalue" } } } },
 * });
 * ```
 */
export function adopt(
  objs: KubernetesObjects,
  owner?: OwnerBody | AdoptOptions,
  options?: AdoptOptions,
): void {
  const fn = "adopt";
  const [given, { forced = false, strict = false, nested }] = splitOptions<OwnerBody, AdoptOptions>(
    owner,
    options,
    ADOPT_KEYS,
  );
  const parent = given ?? handledBody(fn, "the owner", "adopt(objs, owner)");
  // Validate everything first; walk `objs` once (it may be a one-shot iterable).
  const ref = makeOwnerReference(fn, parent);
  const body = parent as JsonObject;
  const name = ref.name;
  const namespace = checkNamespace(fn, peekMeta(body, "namespace"));
  const labels = ownerLabels(fn, body);
  const targets = collectObjects(fn, objs);
  for (const target of targets) checkMetadata(fn, target, ["ownerReferences", "array"]);
  const labelled = labelTargets(fn, targets, nested);

  applyOwnerReference(targets, ref);
  applyNaming(targets, name, forced, strict);
  applyNamespace(targets, namespace, forced);
  applyLabels(labelled, labels, forced);
}
