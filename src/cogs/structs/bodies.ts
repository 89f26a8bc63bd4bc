/**
 * The shapes of Kubernetes objects as the framework passes them around: a
 * body (`apiVersion`, `kind`, `metadata`, `spec`, `status`, anything else),
 * its parts, the "essence" kept for change detection, and the references that
 * point at an object (for events) or make it an owner (for children).
 *
 * The types are loose on purpose: operators handle any resource, and their
 * fields are whatever the resource's schema says. Only the fields the
 * framework itself reads are named.
 *
 * @module
 */

import { isObject, type JsonObject } from "./_json.ts";

export type { JsonObject };

/** Labels of an object. */
export type Labels = Record<string, string>;

/** Annotations of an object. */
export type Annotations = Record<string, string>;

/**
 * An owner reference as Kubernetes stores it in `metadata.ownerReferences`.
 * Every field is optional here because bodies are read as they come; the API
 * requires the first four, and the hierarchies kit's references always have them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { MetaOwnerReference } from "@kopf/kopf";
 * const ref: MetaOwnerReference = { apiVersion: "v1", kind: "ConfigMap", name: "cm", uid: "u1", controller: true };
 * assert.deepEqual(ref.uid, "u1");
 * ```
 */
export interface OwnerReference {
  /** The owner's API version, e.g. `"kopf.dev/v1"`. */
  apiVersion?: string;
  /** The owner's kind, e.g. `"KopfExample"`. */
  kind?: string;
  /** The owner's name. */
  name?: string;
  /** The owner's UID. */
  uid?: string;
  /** Whether the owner is the managing controller (at most one owner may be). */
  controller?: boolean;
  /** Whether the owner's foreground deletion waits for this object. */
  blockOwnerDeletion?: boolean;
}

/** The `metadata` of an object; the fields the framework reads are named. */
export interface Meta extends JsonObject {
  /** The object's name. */
  name?: string;
  /** A prefix from which the API server generates a name when `name` is absent. */
  generateName?: string;
  /** The namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** The unique id, set by the API server. */
  uid?: string;
  /** The version of this state of the object, an opaque string for optimistic concurrency and watches. */
  resourceVersion?: string;
  /** The sequence number of changes to the desired state (usually `spec`), set by the API server. */
  generation?: number;
  /** When the object was created (RFC 3339, UTC). */
  creationTimestamp?: string;
  /** When the deletion was requested (RFC 3339, UTC); the object lives on until its finalizers are gone. */
  deletionTimestamp?: string;
  /** The labels. */
  labels?: Labels;
  /** The annotations. */
  annotations?: Annotations;
  /** The finalizers that block the deletion until removed. */
  finalizers?: string[];
  /** The objects this one belongs to. */
  ownerReferences?: OwnerReference[];
}

/** The `spec` of an object: free-form. */
export type Spec = JsonObject;

/** The `status` of an object: free-form. */
export type Status = JsonObject;

/**
 * A whole object as the API returns it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Body } from "@kopf/kopf";
 * const body: Body = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [] } };
 * assert.deepEqual(body.metadata?.name, "p");
 * ```
 */
export interface Body extends JsonObject {
  /** The group and version, e.g. `"v1"` or `"kopf.dev/v1"`. */
  apiVersion?: string;
  /** The kind, e.g. `"Pod"`. */
  kind?: string;
  /** The metadata. */
  metadata?: Meta;
  /** The desired state. */
  spec?: Spec;
  /** The observed state. */
  status?: Status;
}

/**
 * The essence of an object: what is left for change detection after the
 * system fields are gone (see `configs/diffbase.ts`): usually `spec`, other
 * top-level payload, and `metadata.labels`/`metadata.annotations` only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type BodyEssence } from "@kopf/kopf";
 * const essence: BodyEssence = { spec: { a: 1 }, metadata: { labels: { app: "x" } } };
 * assert.deepEqual(essence.metadata?.labels?.app, "x");
 * ```
 */
export interface BodyEssence extends JsonObject {
  /** Only the labels and annotations (without the framework's own ones). */
  metadata?: { labels?: Labels; annotations?: Annotations };
  /** The desired state. */
  spec?: Spec;
  /** Usually absent (the status is not part of the essence), unless kept as an extra field. */
  status?: Status;
}

/**
 * A reference to an object, as used in events' `involvedObject`. Fields that
 * the object lacks (the namespace of a cluster-scoped object) are absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ObjectReference } from "@kopf/kopf";
 * const ref: ObjectReference = { apiVersion: "v1", kind: "Node", name: "n1", uid: "u1" };
 * assert.deepEqual(ref.namespace, undefined);
 * ```
 */
export interface ObjectReference {
  /** The object's API version. */
  apiVersion?: string;
  /** The object's kind. */
  kind?: string;
  /** The object's name. */
  name?: string;
  /** The object's UID. */
  uid?: string;
  /** The object's namespace; absent for cluster-scoped objects. */
  namespace?: string;
}

/**
 * Options of {@link buildOwnerReference} (and of the hierarchies kit, which builds with it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildOwnerReference, type OwnerReferenceOptions } from "@kopf/kopf";
 * const options: OwnerReferenceOptions = { controller: false, blockOwnerDeletion: null };
 * const ref = buildOwnerReference({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", uid: "u" } }, options);
 * assert.deepEqual([ref.controller, ref.blockOwnerDeletion], [false, undefined]);
 * ```
 */
export interface OwnerReferenceOptions {
  /** Whether the owner is the controller of the child (default `true`; `null` omits the field). */
  controller?: boolean | null;
  /** Whether the child blocks the owner's foreground deletion (default `true`; `null` omits it). */
  blockOwnerDeletion?: boolean | null;
}

/**
 * The object's metadata, or an empty object when it has none.
 *
 * @param body The object.
 * @returns Its metadata (the same object, not a copy), or a fresh `{}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { metaOf } from "./bodies.ts";
 * assert.deepEqual(metaOf({ metadata: { name: "x" } }).name, "x");
 * assert.deepEqual(metaOf({}).name, undefined);
 * ```
 */
export function metaOf(body: Body): Meta {
  return isObject(body.metadata) ? body.metadata : {};
}

/**
 * The object's annotations, or an empty object when it has none.
 *
 * @param body The object.
 * @returns Its annotations (the same object, not a copy), or a fresh `{}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { annotationsOf } from "./bodies.ts";
 * assert.deepEqual(annotationsOf({ metadata: { annotations: { a: "b" } } }).a, "b");
 * ```
 */
export function annotationsOf(body: Body): Annotations {
  const annotations = metaOf(body).annotations;
  return isObject(annotations) ? annotations : {};
}

/**
 * Builds a reference to the object for events (`involvedObject`): `apiVersion`,
 * `kind`, `name`, `uid`, `namespace`, each only if present and non-empty
 * (cluster-scoped objects have no namespace).
 *
 * @param body The object.
 * @returns The reference.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildObjectReference } from "./bodies.ts";
 * const ref = buildObjectReference({
 *   apiVersion: "kopf.dev/v1", kind: "KopfExample",
 *   metadata: { name: "ex1", uid: "u1", namespace: "default", labels: {} },
 * });
 * assert.deepEqual(JSON.parse(JSON.stringify(ref)), {"apiVersion":"kopf.dev/v1","kind":"KopfExample","name":"ex1","uid":"u1","namespace":"default"});
 * ```
 */
export function buildObjectReference(body: Body): ObjectReference {
  const meta = metaOf(body);
  const ref: ObjectReference = {};
  if (body.apiVersion) ref.apiVersion = body.apiVersion;
  if (body.kind) ref.kind = body.kind;
  if (meta.name) ref.name = meta.name;
  if (meta.uid) ref.uid = meta.uid;
  if (meta.namespace) ref.namespace = meta.namespace;
  return ref;
}

/**
 * Builds an owner reference that makes `body` the owner (parent) of another
 * object, so that Kubernetes deletes the child with the parent. Fields are in
 * Kopf's order; absent ones are omitted.
 *
 * @param body The owner.
 * @param options `controller` and `blockOwnerDeletion`, both `true` by default.
 * @returns The owner reference.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildOwnerReference } from "./bodies.ts";
 * const ref = buildOwnerReference({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", uid: "u" } });
 * assert.deepEqual(JSON.parse(JSON.stringify(ref)), {"controller":true,"blockOwnerDeletion":true,"apiVersion":"v1","kind":"Pod","name":"p","uid":"u"});
 * ```
 */
export function buildOwnerReference(
  body: Body,
  options: OwnerReferenceOptions = {},
): OwnerReference {
  const meta = metaOf(body);
  const ref: OwnerReference = {};
  const controller = options.controller === undefined ? true : options.controller;
  const block = options.blockOwnerDeletion === undefined ? true : options.blockOwnerDeletion;
  if (controller !== null) ref.controller = controller;
  if (block !== null) ref.blockOwnerDeletion = block;
  if (body.apiVersion !== undefined && body.apiVersion !== null) ref.apiVersion = body.apiVersion;
  if (body.kind !== undefined && body.kind !== null) ref.kind = body.kind;
  if (meta.name !== undefined && meta.name !== null) ref.name = meta.name;
  if (meta.uid !== undefined && meta.uid !== null) ref.uid = meta.uid;
  return ref;
}
