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
 * @module
 */

import { isObject, type JsonObject } from "../cogs/structs/_json.ts";
import {
  type Body,
  buildOwnerReference as buildMetaOwnerReference,
  type ObjectReference,
  type OwnerReference as MetaOwnerReference,
  type OwnerReferenceOptions,
} from "../cogs/structs/bodies.ts";
import { handledBody, splitOptions } from "./_handled.ts";
import {
  checkMetadata,
  collectObjects,
  describe,
  ensureMetaArray,
  ensureMetadata,
  ensureMetaObject,
  isSet,
  type NestedFieldPath,
  parseNested,
  peekMeta,
  resolveNested,
  type Target,
} from "./_objects.ts";

export type { NestedFieldPath } from "./_objects.ts";
export type { ObjectReference, OwnerReferenceOptions };

/**
 * One Kubernetes object, or any nesting of arrays/iterables of them: plain
 * objects (`{ kind: "Job", spec: {…} }`) or client-node models (`new V1Pod()`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type KubernetesObjects, label } from "@kopf/kopf";
 *
 * // A stand-in for a client-node model class such as `V1Pod`.
 * class Pod {
 *   metadata?: { labels?: Record<string, string> };
 * }
 * const pod = new Pod();
 * const job = { kind: "Job" };
 * const objs: KubernetesObjects = [pod, [job]];
 * label(objs, { app: "web" });
 * assert.ok(pod instanceof Pod);
 * assert.deepEqual(pod.metadata?.labels, { app: "web" });
 * assert.deepEqual(job, { kind: "Job", metadata: { labels: { app: "web" } } });
 * ```
 */
export type KubernetesObjects = object | Iterable<KubernetesObjects>;

/**
 * The owner (parent) object, as a handler's `body` or a client-node model read
 * from the API. Only these fields are read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type OwnerBody, buildObjectReference } from "@kopf/kopf";
 *
 * const owner: OwnerBody = { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns", uid: "u" } };
 * assert.deepEqual(buildObjectReference(owner), { apiVersion: "v1", kind: "Namespace", name: "ns", uid: "u" });
 * ```
 */
export type OwnerBody = {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  metadata?: {
    name?: string | undefined;
    uid?: string | undefined;
    namespace?: string | undefined;
    labels?: { [key: string]: string } | undefined;
  } | undefined;
} | Readonly<Record<string, unknown>>;

/**
 * An owner reference as this kit builds it: the one Kubernetes stores in a
 * child's `metadata.ownerReferences` ({@link MetaOwnerReference}), with the
 * four identifying fields always present (the kit refuses owners without them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildOwnerReference, type OwnerReference } from "@kopf/kopf";
 *
 * const owner = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", uid: "u1" } };
 * const ref: OwnerReference = buildOwnerReference(owner, { blockOwnerDeletion: null });
 * assert.equal(ref.uid, "u1"); // a string, never undefined
 * assert.equal(ref.blockOwnerDeletion, undefined);
 * ```
 */
export type OwnerReference =
  & MetaOwnerReference
  & Required<Pick<MetaOwnerReference, "apiVersion" | "kind" | "name" | "uid">>;

/** Options of {@link harmonizeNaming}. */
export interface NamingOptions {
  /** Rename children that already have a `name` or `generateName`. Default: `false`. */
  forced?: boolean;
  /** Use the name as is (`metadata.name`), not as a prefix (`metadata.generateName`). Default: `false`. */
  strict?: boolean;
}

/** Options of {@link adjustNamespace}. */
export interface NamespaceOptions {
  /** Overwrite a namespace that the children already have. Default: `false`. */
  forced?: boolean;
}

/** Options of {@link label}. */
export interface LabelOptions {
  /** Overwrite labels that the children already have. Default: `false`. */
  forced?: boolean;
  /**
   * Fields inside each child that are labelled too, as if they were objects
   * of their own (e.g. `"spec.template"` for the pods of a Job/Deployment):
   * one path, or a list of paths; a path is dotted or an array of keys.
   * Paths absent in a child are skipped.
   */
  nested?: NestedFieldPath | Iterable<NestedFieldPath>;
}

/** Options of {@link adopt}: `forced`, `strict` and `nested` are passed on to every step. */
export interface AdoptOptions extends NamingOptions, LabelOptions {}

// ---------------------------------------------------------------------------
// Reading the owner.

function ownerString(fn: string, owner: JsonObject, field: "apiVersion" | "kind"): string {
  const value = owner[field];
  if (!isSet(value)) {
    throw new TypeError(
      `${fn}(): the owner has no ${field}; set owner.apiVersion and owner.kind ` +
        `(items of a list response from the API omit them).`,
    );
  }
  return value as string;
}

function ownerMeta(fn: string, owner: JsonObject, field: "name" | "uid"): string {
  const value = peekMeta(owner, field);
  if (!isSet(value)) {
    throw new TypeError(
      `${fn}(): the owner has no metadata.${field}; pass the owner as read from the API ` +
        `(e.g. the handler's body), not a manifest that was never created.`,
    );
  }
  return value as string;
}

function checkOwner(fn: string, owner: unknown): JsonObject {
  if (!isObject(owner)) {
    throw new TypeError(
      `${fn}(): the owner is ${describe(owner)}; pass the parent object (e.g. the handler's body).`,
    );
  }
  const meta = owner.metadata;
  if (meta !== undefined && meta !== null && !isObject(meta)) {
    throw new TypeError(
      `${fn}(): the owner's metadata is ${
        describe(meta)
      }; pass the parent object as read from the API.`,
    );
  }
  return owner;
}

function makeOwnerReference(
  fn: string,
  owner: unknown,
  options: OwnerReferenceOptions = {},
): OwnerReference {
  const body = checkOwner(fn, owner) as Body; // an object, with metadata that is an object or absent
  // The structs build the reference (options, Kopf's key order); the kit insists on the four fields.
  return {
    ...buildMetaOwnerReference(body, options),
    apiVersion: ownerString(fn, body, "apiVersion"),
    kind: ownerString(fn, body, "kind"),
    name: ownerMeta(fn, body, "name"),
    uid: ownerMeta(fn, body, "uid"),
  };
}

function ownerLabels(fn: string, owner: JsonObject): Record<string, string> {
  const labels = peekMeta(owner, "labels");
  if (labels === undefined || labels === null) return {};
  return checkLabels(fn, labels, "the owner's metadata.labels");
}

function checkLabels(fn: string, labels: unknown, what: string): Record<string, string> {
  if (!isObject(labels)) {
    throw new TypeError(
      `${fn}(): ${what} is ${describe(labels)}; pass labels as an object of strings.`,
    );
  }
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value !== "string") {
      throw new TypeError(
        `${fn}(): ${what} has ${describe(value)} for "${key}"; label values must be strings.`,
      );
    }
  }
  return labels as Record<string, string>;
}

// ---------------------------------------------------------------------------
// The steps, on already collected and validated targets.

function applyOwnerReference(targets: Target[], ref: OwnerReference): void {
  for (const { obj } of targets) {
    const refs = ensureMetaArray(obj, "ownerReferences");
    if (!refs.some((r) => isObject(r) && r.uid === ref.uid)) refs.push({ ...ref });
  }
}

function applyNaming(targets: Target[], name: string, forced: boolean, strict: boolean): void {
  for (const { obj } of targets) {
    const meta = isObject(obj.metadata) ? obj.metadata : undefined;
    const named = meta !== undefined && (isSet(meta.name) || isSet(meta.generateName));
    if (named && !forced) continue;
    const target = ensureMetadata(obj);
    if (strict) {
      target.name = name;
      delete target.generateName;
    } else {
      target.generateName = `${name}-`;
      delete target.name;
    }
  }
}

function applyNamespace(targets: Target[], namespace: string | undefined, forced: boolean): void {
  for (const { obj } of targets) {
    if (!forced && isSet(peekMeta(obj, "namespace"))) continue;
    if (namespace !== undefined) {
      ensureMetadata(obj).namespace = namespace;
    } else if (forced && isObject(obj.metadata)) {
      delete obj.metadata.namespace;
    }
  }
}

function applyLabels(targets: Target[], labels: Record<string, string>, forced: boolean): void {
  for (const { obj } of targets) {
    const existing = ensureMetaObject(obj, "labels");
    for (const [key, value] of Object.entries(labels)) {
      if (forced || existing[key] === undefined || existing[key] === null) existing[key] = value;
    }
  }
}

/** The objects plus their nested sub-objects, validated for labelling. */
function labelTargets(
  fn: string,
  targets: Target[],
  nested: NestedFieldPath | Iterable<NestedFieldPath> | undefined,
): Target[] {
  const paths = parseNested(fn, nested);
  const all: Target[] = [];
  for (const target of targets) {
    all.push(target);
    for (const path of paths) {
      const sub = resolveNested(fn, target, path);
      if (sub !== undefined) all.push(sub);
    }
  }
  for (const target of all) checkMetadata(fn, target, ["labels", "object"]);
  return all;
}

function checkName(fn: string, name: unknown): string {
  if (!isSet(name)) {
    throw new TypeError(
      `${fn}(): the name is ${describe(name)}${name === "" ? " (empty)" : ""}; ` +
        `pass a non-empty string (e.g. the owner's metadata.name).`,
    );
  }
  return name as string;
}

function checkNamespace(fn: string, namespace: unknown): string | undefined {
  if (namespace === undefined || namespace === null || namespace === "") return undefined;
  if (typeof namespace !== "string") {
    throw new TypeError(
      `${fn}(): the namespace is ${describe(namespace)}; pass a string, or null for none.`,
    );
  }
  return namespace;
}

// ---------------------------------------------------------------------------
// The public functions.
//
// The owner (or name/namespace/labels) defaults to the object being handled
// (_handled.ts); options may then come second.

const OWNER_REFERENCE_KEYS = ["controller", "blockOwnerDeletion"] as const;
const NAMING_KEYS = ["forced", "strict"] as const;
const LABEL_KEYS = ["forced", "nested"] as const;
const ADOPT_KEYS = ["forced", "strict", "nested"] as const;

/**
 * Builds an owner reference to `owner`, to put into a child's
 * `metadata.ownerReferences` — what makes Kubernetes delete the child
 * together with its owner.
 *
 * @param owner The parent object: a handler's body or a client-node model read from the API.
 * @param options `controller` and `blockOwnerDeletion`, both `true` by default.
 * @returns A new owner reference object.
 * @throws {TypeError} If the owner lacks `apiVersion`, `kind`, `metadata.name` or `metadata.uid`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildOwnerReference } from "@kopf/kopf";
 *
 * const owner = {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   metadata: { name: "kopf-example-1", uid: "6b931859", namespace: "default" },
 * };
 * assert.deepEqual(buildOwnerReference(owner), {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   name: "kopf-example-1",
 *   uid: "6b931859",
 *   controller: true,
 *   blockOwnerDeletion: true,
 * });
 * assert.equal(buildOwnerReference(owner, { controller: false }).controller, false);
 * assert.throws(() => buildOwnerReference({ kind: "X" }), TypeError);
 * ```
 */
export function buildOwnerReference(
  owner: OwnerBody,
  options: OwnerReferenceOptions = {},
): OwnerReference {
  return makeOwnerReference("buildOwnerReference", owner, options);
}

/**
 * Builds a reference to an object, as used for the `involvedObject` of
 * events. Fields that the object does not have (e.g. the namespace of a
 * cluster-scoped object) are left out rather than set empty.
 *
 * @param body The object: a handler's body or a client-node model.
 * @returns A new object reference with `apiVersion`, `kind`, `name`, `uid`, `namespace` where known.
 * @throws {TypeError} If `body` is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildObjectReference } from "@kopf/kopf";
 *
 * const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "u1" } };
 * assert.deepEqual(buildObjectReference(node), {
 *   apiVersion: "v1",
 *   kind: "Node",
 *   name: "n1",
 *   uid: "u1",
 * });
 * ```
 */
export function buildObjectReference(body: OwnerBody): ObjectReference {
  const obj = checkOwner("buildObjectReference", body);
  const ref: ObjectReference = {};
  const fields = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: peekMeta(obj, "name"),
    uid: peekMeta(obj, "uid"),
    namespace: peekMeta(obj, "namespace"),
  };
  for (const [key, value] of Object.entries(fields)) {
    if (isSet(value)) ref[key as keyof ObjectReference] = value as string;
  }
  return ref;
}

/**
 * Appends an owner reference to `owner` to each object, unless the object
 * already has a reference with the owner's uid. The objects are edited in
 * place (they are usually children about to be created, so no patch is
 * needed).
 *
 * @param objs An object, or an array/iterable of objects (plain or client-node models).
 * @param owner The parent object; omitted (or `undefined`) inside a handler: the handled object.
 *   Options may come second when it is omitted.
 * @param options `controller` and `blockOwnerDeletion`, both `true` by default.
 * @throws {TypeError} If the owner is incomplete (see {@link buildOwnerReference}), omitted
 *   outside of a handler, or `objs` holds something that is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { appendOwnerReference } from "@kopf/kopf";
 *
 * const owner = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", uid: "u1" } };
 * const objs = [{ kind: "Job" }, { kind: "Deployment" }];
 * appendOwnerReference(objs, owner);
 * appendOwnerReference(objs, owner); // no duplicates
 * assert.deepEqual(objs[0], {
 *   kind: "Job",
 *   metadata: {
 *     ownerReferences: [{
 *       apiVersion: "v1",
 *       kind: "ConfigMap",
 *       name: "cm",
 *       uid: "u1",
 *       controller: true,
 *       blockOwnerDeletion: true,
 *     }],
 *   },
 * });
 * ```
 */
export function appendOwnerReference(
  objs: KubernetesObjects,
  owner?: OwnerBody | OwnerReferenceOptions,
  options?: OwnerReferenceOptions,
): void {
  const fn = "appendOwnerReference";
  const [given, opts] = splitOptions(owner, options, OWNER_REFERENCE_KEYS);
  const parent = given ?? handledBody(fn, "the owner", "appendOwnerReference(objs, owner)");
  const ref = makeOwnerReference(fn, parent, opts);
  const targets = collectObjects(fn, objs);
  for (const target of targets) checkMetadata(fn, target, ["ownerReferences", "array"]);
  applyOwnerReference(targets, ref);
}

/**
 * Removes the owner references to `owner` (matched by its uid) from each
 * object, if there are any. Objects without owner references are left as they
 * are.
 *
 * @param objs An object, or an array/iterable of objects (plain or client-node models).
 * @param owner The former parent object; only its `metadata.uid` is needed. Omitted inside a
 *   handler: the handled object.
 * @throws {TypeError} If the owner has no `metadata.uid` or is omitted outside of a handler, or
 *   `objs` holds something that is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { appendOwnerReference, removeOwnerReference } from "@kopf/kopf";
 *
 * const owner = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", uid: "u1" } };
 * const job = { kind: "Job", metadata: { name: "job" } };
 * appendOwnerReference(job, owner);
 * removeOwnerReference(job, owner);
 * assert.deepEqual(job, { kind: "Job", metadata: { name: "job", ownerReferences: [] } });
 * ```
 */
export function removeOwnerReference(objs: KubernetesObjects, owner?: OwnerBody): void {
  const fn = "removeOwnerReference";
  const parent = owner ?? handledBody(fn, "the owner", "removeOwnerReference(objs, owner)");
  const uid = ownerMeta(fn, checkOwner(fn, parent), "uid");
  const targets = collectObjects(fn, objs);
  for (const target of targets) checkMetadata(fn, target, ["ownerReferences", "array"]);
  for (const { obj } of targets) {
    const refs = peekMeta(obj, "ownerReferences");
    if (!Array.isArray(refs)) continue;
    // In place, so that anyone holding the array sees the change.
    for (let i = refs.length - 1; i >= 0; i--) {
      const ref: unknown = refs[i];
      if (isObject(ref) && ref.uid === uid) refs.splice(i, 1);
    }
  }
}

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
