/**
 * What a write does per kind once it is admitted: a Secret's type, a Pod's
 * and a workload's created status, a Service's cluster IP and node ports, a
 * Namespace's finalizer, label and phase, a CRD's finalizer and status — and,
 * once a CRD is stored, serving its resources.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import type { Writer } from "./write_types.ts";
import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { defaultedService } from "../builtins/builtin_strategies.ts";
import { createdPod, updatedPod } from "../builtins/pod_strategy.ts";
import { createdWorkload } from "../builtins/workload_defaults.ts";
import { crdStatus, validateStoredVersions } from "./crd_strategy.ts";

const CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io";
const CRDS = "customresourcedefinitions.apiextensions.k8s.io";

/** Per-kind defaults on create (namespaces, CRDs). */
export function onCreate(w: Writer, def: ResourceDef, draft: KObject): KObject {
  const key = storageKey(def);
  if (key === "secrets" && !draft.type) return { ...draft, type: "Opaque" };
  if (key === "pods") return createdPod(draft, w.now());
  if (def.builtin) draft = createdWorkload(def.group, def.kind, draft, w.now());
  if (key === "services") return defaultedService(draft, undefined, services(w));
  if (key === "namespaces") {
    return {
      ...draft,
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" },
      metadata: {
        ...draft.metadata,
        labels: { ...draft.metadata.labels, "kubernetes.io/metadata.name": draft.metadata.name! },
      },
    };
  }
  if (key === "customresourcedefinitions.apiextensions.k8s.io") {
    const finalizers = [...(draft.metadata.finalizers ?? [])];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) finalizers.push(CRD_CLEANUP_FINALIZER);
    return {
      ...draft,
      metadata: { ...draft.metadata, finalizers },
      status: crdStatus(draft, w.now(), undefined, true, w.store.list(CRDS)),
    };
  }
  return draft;
}

/** Per-kind changes on update (services, pods, namespaces, CRDs). */
export function onUpdate(w: Writer, def: ResourceDef, draft: KObject, current: KObject): KObject {
  const key = storageKey(def);
  if (key === "services") return defaultedService(draft, current, services(w, current));
  if (key === "pods") return updatedPod(draft, current);
  if (key === "namespaces") {
    const labels = {
      ...draft.metadata.labels,
      "kubernetes.io/metadata.name": draft.metadata.name!,
    };
    const out: KObject = { ...draft, metadata: { ...draft.metadata, labels } };
    if (current.metadata.deletionTimestamp) {
      out.status = { ...(out.status as object), phase: "Terminating" };
    }
    return out;
  }
  if (
    key === "customresourcedefinitions.apiextensions.k8s.io" &&
    !current.metadata.deletionTimestamp
  ) {
    // A status write brings its own storedVersions (the step that ends a storage migration).
    // (A spec write keeps the stored status: the status subresource changed it if it differs.)
    const statusWrite = !deepEqual(draft.status, current.status);
    const previous = draft.status ?? current.status;
    const others = w.store.list(CRDS);
    const status = crdStatus(draft, w.now(), previous, !statusWrite, others);
    const causes = validateStoredVersions(draft, status.storedVersions as string[]);
    if (causes.length) {
      throw ApiError.invalid(def.kind, def.group, draft.metadata.name!, causes);
    }
    return { ...draft, status };
  }
  return draft;
}

/** The cluster IPs and node ports the stored services hold (but `except`). */
function services(
  w: Writer,
  except?: KObject,
): { taken: () => { ips: Set<string>; nodePorts: Set<number> } } {
  return {
    taken: () => {
      const ips = new Set<string>();
      const nodePorts = new Set<number>();
      for (const svc of w.store.list("services")) {
        if (except && svc.metadata.uid === except.metadata.uid) continue;
        const spec = (svc.spec ?? {}) as {
          clusterIPs?: unknown;
          clusterIP?: unknown;
          ports?: Array<{ nodePort?: unknown }>;
        };
        const list = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP];
        for (const ip of list) if (typeof ip === "string" && ip !== "None") ips.add(ip);
        for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
          if (typeof p?.nodePort === "number") nodePorts.add(p.nodePort);
        }
      }
      return { ips, nodePorts };
    },
  };
}

/** After a CRD is stored: serve its resources (synchronously, before anyone hears of it). */
export function afterWrite(w: Writer, def: ResourceDef, stored: KObject): void {
  if (
    storageKey(def) === "customresourcedefinitions.apiextensions.k8s.io" &&
    !stored.metadata.deletionTimestamp
  ) {
    w.registry.applyCrd(stored);
  }
}
