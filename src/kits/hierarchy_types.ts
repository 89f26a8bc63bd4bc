/**
 * The shapes the hierarchy helpers take and give: the children
 * ({@link KubernetesObjects}), the owner ({@link OwnerBody}), the owner
 * reference they build, and the options of each helper.
 *
 * @module
 */

import type { OwnerReference as MetaOwnerReference } from "../cogs/structs/bodies.ts";
import type { NestedFieldPath } from "./_objects.ts";

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

/** Options of `harmonizeNaming()`. */
export interface NamingOptions {
  /** Rename children that already have a `name` or `generateName`. Default: `false`. */
  forced?: boolean;
  /** Use the name as is (`metadata.name`), not as a prefix (`metadata.generateName`). Default: `false`. */
  strict?: boolean;
}

/** Options of `adjustNamespace()`. */
export interface NamespaceOptions {
  /** Overwrite a namespace that the children already have. Default: `false`. */
  forced?: boolean;
}

/** Options of `label()`. */
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

/** Options of `adopt()`: `forced`, `strict` and `nested` are passed on to every step. */
export interface AdoptOptions extends NamingOptions, LabelOptions {}
