/**
 * The update verb (kube-apiserver's `rest.BeforeUpdate` and the generic
 * store's `Update`), and the tail that update, patch and the system's own
 * writes share: the request is merged into the stored object (metadata the
 * client may not change is kept; the status endpoint changes only the
 * status), admitted, its generation bumped when anything but metadata and
 * status changed, and committed — or not at all when nothing changed, or
 * removed when its last finalizer went.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject, Meta } from "../shared/types.ts";
import type { WriteOptions, Writer, WriteResult } from "./write_types.ts";
import { keepsGeneration } from "../builtins/builtin_strategies.ts";
import { admitObject, asObject, getObject } from "./admit.ts";
import { afterWrite, onUpdate } from "./kind_hooks.ts";
import { removeObject } from "./delete.ts";

/** Replaces an object or its status (see `Objects.update`). */
export function updateObject(
  w: Writer,
  def: ResourceDef,
  namespace: string,
  name: string,
  body: unknown,
  options: WriteOptions = {},
  subresource?: string,
): WriteResult {
  const obj = asObject(body, def);
  let current = getObject(w, def, namespace, name);
  if (options.conversion) current = options.conversion.decode(current);
  requireSameVersion(def, current, obj);
  if (obj.metadata?.name && obj.metadata.name !== name) {
    throw ApiError.badRequest(
      `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
    );
  }
  return replaceObject(w, def, current, obj, options, subresource);
}

/** The shared tail of update and patch: merge the request into the stored object and commit. */
export function replaceObject(
  w: Writer,
  def: ResourceDef,
  current: KObject,
  obj: KObject,
  options: WriteOptions,
  subresource: string | undefined,
  keepManagedFields = false,
): WriteResult {
  const incoming: Meta = { ...(obj.metadata ?? {}) };
  let draft: KObject;
  if (subresource === "status") {
    // The status endpoint ignores everything but the status.
    draft = { ...current, metadata: { ...current.metadata } };
    if (obj.status === undefined) delete draft.status;
    else draft.status = obj.status;
  } else {
    // Left out rather than deleted: a deleted key slows every later read of the object.
    const generation = keepsGeneration(def) ? current.metadata.generation : undefined;
    const meta: Meta = generation === undefined
      ? {
        ...incoming,
        name: current.metadata.name,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        resourceVersion: current.metadata.resourceVersion,
      }
      : {
        ...incoming,
        name: current.metadata.name,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        generation,
        resourceVersion: current.metadata.resourceVersion,
      };
    if (generation === undefined && Object.hasOwn(meta, "generation")) delete meta.generation;
    if (current.metadata.namespace !== undefined) meta.namespace = current.metadata.namespace;
    else delete meta.namespace;
    if (current.metadata.deletionTimestamp) {
      meta.deletionTimestamp = current.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds ?? 0;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (!keepManagedFields) {
      if (current.metadata.managedFields) meta.managedFields = current.metadata.managedFields;
      else delete meta.managedFields;
      if (incoming.managedFields !== undefined && Array.isArray(incoming.managedFields)) {
        meta.managedFields = incoming.managedFields.length ? incoming.managedFields : undefined;
        if (!meta.managedFields) delete meta.managedFields;
      }
    }
    draft = { ...obj, apiVersion: apiVersionOf(def), kind: def.kind, metadata: meta };
    if (def.statusSubresource) {
      if (current.status === undefined) delete draft.status;
      else draft.status = current.status;
    }
  }
  draft.apiVersion = apiVersionOf(def);
  draft.kind = def.kind;
  const warnings: string[] = [];
  if (options.admission?.mutate) draft = options.admission.mutate(draft, current);
  draft = admitObject(w, def, draft, current, options, warnings);
  if (current.metadata.deletionTimestamp) {
    const before = new Set(current.metadata.finalizers ?? []);
    const added = (draft.metadata.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length) {
      throw ApiError.invalid(def.kind, def.group, current.metadata.name!, [{
        reason: "FieldValueForbidden",
        message:
          "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers " +
          JSON.stringify(added),
        field: "metadata.finalizers",
      }]);
    }
  }
  if (keepsGeneration(def) && changedBeyondMetadata(current, draft, def)) {
    draft.metadata.generation = (current.metadata.generation ?? 1) + 1;
  }
  draft = onUpdate(w, def, draft, current);
  if (options.admission?.validate) draft = options.admission.validate(draft, current);
  const comparable = {
    ...draft,
    metadata: { ...draft.metadata, resourceVersion: current.metadata.resourceVersion },
  };
  if (deepEqual(comparable, current) && !options.conversion?.outdated?.(current)) {
    return { object: current, warnings, created: false };
  }
  if (options.conversion) draft = options.conversion.encode(draft);
  if (options.dryRun) return { object: draft, warnings, created: false };
  const key = storageKey(def);
  if (
    draft.metadata.deletionTimestamp && (draft.metadata.finalizers ?? []).length === 0 &&
    !(key === "namespaces" &&
      ((draft.spec as { finalizers?: string[] })?.finalizers ?? []).length)
  ) {
    // The last finalizer is gone: the object goes.
    if (!draft.metadata.finalizers?.length) delete draft.metadata.finalizers;
    return { object: removeObject(w, def, draft), warnings, created: false };
  }
  const stored = w.store.commit("MODIFIED", key, draft);
  afterWrite(w, def, stored);
  return { object: stored, warnings, created: false };
}

/** Optimistic concurrency: a request carrying a resourceVersion must carry the current one. */
export function requireSameVersion(def: ResourceDef, current: KObject, obj: KObject): void {
  const rv = obj.metadata?.resourceVersion;
  if (rv && rv !== current.metadata.resourceVersion) {
    throw ApiError.conflict(
      def.plural,
      def.group,
      current.metadata.name!,
      "the object has been modified; please apply your changes to the latest version and try again",
    );
  }
}

/** Whether anything but metadata (and status, where it is a subresource) changed. */
function changedBeyondMetadata(current: KObject, draft: KObject, def: ResourceDef): boolean {
  const skipStatus = def.statusSubresource || def.builtin;
  const skipped = (k: string) =>
    k === "metadata" || k === "apiVersion" || k === "kind" || (k === "status" && skipStatus);
  // Every key of either (a key of both compared once).
  for (const k of Object.keys(current)) {
    if (!skipped(k) && !deepEqual(current[k], draft[k])) return true;
  }
  for (const k of Object.keys(draft)) {
    if (!Object.hasOwn(current, k) && !skipped(k) && !deepEqual(current[k], draft[k])) return true;
  }
  return false;
}
