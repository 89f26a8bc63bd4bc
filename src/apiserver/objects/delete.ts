/**
 * The delete verb (kube-apiserver's `rest.BeforeDelete` and the generic
 * store's `Delete`): the preconditions hold, the propagation policy's
 * finalizer is added, and the object goes at once or is marked with its
 * deletion timestamp while finalizers remain; a CRD's removal stops serving
 * its resources and frees its names.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import type { DeleteOptions, Writer } from "./write_types.ts";
import { getObject } from "./admit.ts";
import { withCondition } from "./crd_strategy.ts";

const CRDS = "customresourcedefinitions.apiextensions.k8s.io";

/** Deletes or marks an object (see `Objects.delete`). */
export function deleteObject(
  w: Writer,
  def: ResourceDef,
  namespace: string,
  name: string,
  options: DeleteOptions = {},
): KObject {
  const current = getObject(w, def, namespace, name);
  // kube's BeforeDelete: a precondition given (even "") must hold, the uid's first; the
  // conflict names the kind (`Kind.group`), not the plural, as kube-apiserver's does.
  const pre = options.preconditions;
  if (typeof pre?.uid === "string" && pre.uid !== current.metadata.uid) {
    throw ApiError.conflict(
      def.kind,
      def.group,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata.uid}). The object might have been deleted and then recreated`,
    );
  }
  const rv = pre?.resourceVersion;
  if (typeof rv === "string" && rv !== current.metadata.resourceVersion) {
    throw ApiError.conflict(
      def.kind,
      def.group,
      name,
      `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${current.metadata.resourceVersion}). The object might have been modified`,
    );
  }
  const finalizers = [...(current.metadata.finalizers ?? [])];
  const policy = options.propagationPolicy;
  if (policy === "Foreground" && !finalizers.includes("foregroundDeletion")) {
    finalizers.push("foregroundDeletion");
  }
  if (policy === "Orphan" && !finalizers.includes("orphan")) finalizers.push("orphan");
  const key = storageKey(def);
  const isNamespace = key === "namespaces";
  const isCrd = key === "customresourcedefinitions.apiextensions.k8s.io";
  const nsFinalizers = isNamespace
    ? ((current.spec as { finalizers?: string[] })?.finalizers ?? [])
    : [];
  if (finalizers.length === 0 && nsFinalizers.length === 0) {
    if (options.dryRun) return current;
    return removeObject(w, def, current);
  }
  if (current.metadata.deletionTimestamp) {
    // Already deleting: only a new propagation finalizer may be added.
    if (finalizers.length === (current.metadata.finalizers ?? []).length) return current;
  }
  const draft: KObject = {
    ...current,
    metadata: {
      ...current.metadata,
      finalizers,
      deletionTimestamp: current.metadata.deletionTimestamp ?? w.now(),
      deletionGracePeriodSeconds: 0,
    },
  };
  // Graceful deletion bumps the generation of the objects that keep one (kube's BeforeDelete).
  if (current.metadata.generation) {
    draft.metadata.generation = current.metadata.generation +
      (current.metadata.deletionTimestamp ? 0 : 1);
  }
  if (isNamespace) draft.status = { ...(current.status as object), phase: "Terminating" };
  if (isCrd) {
    draft.status = withCondition(draft.status, {
      type: "Terminating",
      status: "True",
      reason: "InstanceDeletionInProgress",
      message: "CustomResource deletion is in progress",
    }, w.now());
  }
  if (options.dryRun) return draft;
  return w.store.commit("MODIFIED", key, draft);
}

/**
 * Removes an object for good (its last finalizer is gone): the DELETED event.
 *
 * @param w The write path.
 * @param def The resource.
 * @param current The stored object.
 * @returns The object with the deletion's resourceVersion.
 */
export function removeObject(w: Writer, def: ResourceDef, current: KObject): KObject {
  const key = storageKey(def);
  const gone = w.store.commit("DELETED", key, current);
  if (key === CRDS) {
    w.registry.removeCrd(current.metadata.name!);
    // Its names are free: the group's CRDs that wanted them are judged again (crd_names.ts).
    const group = (current.spec as { group?: string } | undefined)?.group;
    for (const other of [...w.store.list(CRDS)]) {
      const names = (other.status as { conditions?: Array<{ type: string; status: string }> })
        ?.conditions?.find((c) => c.type === "NamesAccepted");
      if ((other.spec as { group?: string })?.group !== group || names?.status !== "False") {
        continue;
      }
      w.systemUpdate(CRDS, other, (o) => structuredClone(o));
    }
  }
  return gone;
}
