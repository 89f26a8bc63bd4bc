/**
 * Owner references: building one to an owner (what makes Kubernetes delete
 * the children with their parent), an object reference to it, and adding it to
 * or removing it from the children — never twice, matched by uid.
 *
 * @module
 */

import { isObject } from "../cogs/structs/_json.ts";
import type { ObjectReference, OwnerReferenceOptions } from "../cogs/structs/bodies.ts";
import { handledBody, splitOptions } from "./_handled.ts";
import { checkMetadata, collectObjects, isSet, peekMeta } from "./_objects.ts";
import type { KubernetesObjects, OwnerBody, OwnerReference } from "./hierarchy_types.ts";
import {
  applyOwnerReference,
  checkOwner,
  makeOwnerReference,
  ownerMeta,
} from "./_hierarchy_steps.ts";

const OWNER_REFERENCE_KEYS = ["controller", "blockOwnerDeletion"] as const;

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
