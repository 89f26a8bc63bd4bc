/**
 * What kube-apiserver fills in for the workload kinds and pods before it
 * validates them (their `SetDefaults_*` functions, run on every decode, and
 * for a Pod the admission plugins `Priority` and `DefaultTolerationSeconds`),
 * and the status a created workload starts with (their strategies'
 * `PrepareForCreate` drop the status sent with it).
 *
 * - Deployment: `replicas: 1`, a RollingUpdate strategy of 25%/25%,
 *   `revisionHistoryLimit: 10`, `progressDeadlineSeconds: 600`.
 * - ReplicaSet and ReplicationController: `replicas: 1`; a
 *   ReplicationController's selector and labels default to its template's
 *   labels.
 * - StatefulSet: `replicas: 1`, `podManagementPolicy: OrderedReady`, a
 *   RollingUpdate strategy with `partition: 0`, `revisionHistoryLimit: 10`,
 *   `persistentVolumeClaimRetentionPolicy` Retain/Retain, and its volume
 *   claim templates' `volumeMode: Filesystem` and `status.phase: Pending`.
 * - DaemonSet: a RollingUpdate strategy with `maxUnavailable: 1` and
 *   `maxSurge: 0`, `revisionHistoryLimit: 10`.
 * - Job: `parallelism`/`completions` 1, `backoffLimit: 6`, `completionMode:
 *   NonIndexed`, `suspend: false`, `podReplacementPolicy: TerminatingOrFailed`;
 *   on create the selector on `batch.kubernetes.io/controller-uid` and the
 *   template's `controller-uid`/`job-name` labels (legacy and
 *   `batch.kubernetes.io/`).
 * - CronJob: `concurrencyPolicy: Allow`, `suspend: false`,
 *   `successfulJobsHistoryLimit: 3`, `failedJobsHistoryLimit: 1`.
 * - every pod template and a Pod's spec: `pod_defaults.ts`.
 * - the other stored kinds: `kind_defaults.ts`.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { createdStatus, defaultedKind } from "./kind_defaults.ts";
import { admitPodSpec, defaultedPodSpec, QuantityError } from "./pod_defaults.ts";
import { admittedPodSpec, defaultedTemplateSpec } from "./pod_spec_memo.ts";
import { globalDefaultOf, type PriorityClasses } from "./priority_admission.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";

type Obj = Record<string, unknown>;

const PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io";

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** A pod template (`{metadata, spec}`) with its spec defaulted (`pod_spec_memo.ts`). */
function template(t: unknown): unknown {
  if (!isObj(t) || t.spec === undefined) return t;
  return { ...t, spec: defaultedTemplateSpec(t.spec) };
}

/** A spec (the object's `spec` or `{}`), copied, or undefined when it is not an object. */
function specOf(obj: KObject): Obj | undefined {
  const raw = obj.spec;
  if (raw !== undefined && !isObj(raw)) return undefined;
  return { ...(raw as Obj | undefined) };
}

function rollingUpdate(strategy: unknown, type: string, defaults: Obj | undefined): Obj {
  const out: Obj = { ...(isObj(strategy) ? strategy : {}) };
  const fresh = out.type === undefined || out.type === "";
  if (fresh) out.type = type;
  if (out.type === type && defaults) {
    out.rollingUpdate = { ...defaults, ...(isObj(out.rollingUpdate) ? out.rollingUpdate : {}) };
  }
  return out;
}

function deployment(spec: Obj): void {
  spec.replicas ??= 1;
  spec.strategy = rollingUpdate(spec.strategy, "RollingUpdate", {
    maxUnavailable: "25%",
    maxSurge: "25%",
  });
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  spec.template = template(spec.template);
}

function statefulSet(spec: Obj): void {
  if (!spec.podManagementPolicy) spec.podManagementPolicy = "OrderedReady";
  const strategy: Obj = { ...(isObj(spec.updateStrategy) ? spec.updateStrategy : {}) };
  if (!strategy.type) {
    strategy.type = "RollingUpdate";
    strategy.rollingUpdate ??= {};
  }
  if (strategy.type === "RollingUpdate" && isObj(strategy.rollingUpdate)) {
    strategy.rollingUpdate = { partition: 0, ...strategy.rollingUpdate };
    const ru = strategy.rollingUpdate as Obj;
    if (ru.partition === null) ru.partition = 0;
  }
  spec.updateStrategy = strategy;
  const retention: Obj = {
    ...(isObj(spec.persistentVolumeClaimRetentionPolicy)
      ? spec.persistentVolumeClaimRetentionPolicy
      : {}),
  };
  if (!retention.whenDeleted) retention.whenDeleted = "Retain";
  if (!retention.whenScaled) retention.whenScaled = "Retain";
  spec.persistentVolumeClaimRetentionPolicy = retention;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.template = template(spec.template);
  if (Array.isArray(spec.volumeClaimTemplates)) {
    spec.volumeClaimTemplates = spec.volumeClaimTemplates.map((pvc) => {
      if (!isObj(pvc)) return pvc;
      const out: Obj = { ...pvc };
      const pvcSpec: Obj = { ...(isObj(out.spec) ? out.spec : {}) };
      pvcSpec.volumeMode ??= "Filesystem";
      out.spec = pvcSpec;
      const status: Obj = { ...(isObj(out.status) ? out.status : {}) };
      if (!status.phase) status.phase = "Pending";
      out.status = status;
      return out;
    });
  }
}

function daemonSet(spec: Obj): void {
  spec.updateStrategy = rollingUpdate(spec.updateStrategy, "RollingUpdate", {
    maxUnavailable: 1,
    maxSurge: 0,
  });
  spec.revisionHistoryLimit ??= 10;
  spec.template = template(spec.template);
}

function job(spec: Obj, obj: KObject, creating: boolean): void {
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= "NonIndexed";
  spec.suspend ??= false;
  if (spec.podFailurePolicy === undefined) spec.podReplacementPolicy ??= "TerminatingOrFailed";
  const uid = obj.metadata.uid;
  if (creating && uid && spec.manualSelector !== true && spec.selector === undefined) {
    const name = obj.metadata.name ?? "";
    spec.selector = { matchLabels: { "batch.kubernetes.io/controller-uid": uid } };
    const t = { ...(spec.template as Obj | undefined) };
    const meta = { ...(t.metadata as Obj | undefined) };
    meta.labels = {
      "batch.kubernetes.io/controller-uid": uid,
      "batch.kubernetes.io/job-name": name,
      "controller-uid": uid,
      "job-name": name,
      ...(meta.labels as Record<string, string> | undefined),
    };
    t.metadata = meta;
    spec.template = t;
  }
  spec.template = template(spec.template);
}

function cronJob(spec: Obj): void {
  if (!spec.concurrencyPolicy) spec.concurrencyPolicy = "Allow";
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  const jt = spec.jobTemplate;
  if (isObj(jt) && isObj(jt.spec)) {
    spec.jobTemplate = { ...jt, spec: { ...jt.spec, template: template(jt.spec.template) } };
  }
}

/**
 * A built-in object with the defaults kube-apiserver gives it before
 * validation (see the module doc); kinds without defaults here are returned
 * as they are.
 *
 * @param group The API group.
 * @param kind The kind.
 * @param obj The object (its `metadata.uid` set on create); never mutated.
 * @param current The stored object on update, else `undefined`.
 * @param store The store, for a created Pod's PriorityClass (none when omitted).
 * @returns The defaulted object (the input itself when its kind has no defaults here).
 * @throws {ApiError} 400 when a container's request or limit is not a quantity (kube cannot decode
 *   it); 403 from the Priority admission plugin (`priority_admission.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedWorkload } from "./workload_defaults.ts";
 * const d = defaultedWorkload("apps", "StatefulSet", { metadata: {}, spec: {} }, undefined);
 * assert.deepEqual((d.spec as Record<string, unknown>).podManagementPolicy, "OrderedReady");
 * ```
 */
export function defaultedWorkload(
  group: string,
  kind: string,
  obj: KObject,
  current: KObject | undefined,
  store?: DefaultsStore,
): KObject {
  try {
    return defaulted(`${group}/${kind}`, obj, current, store);
  } catch (e) {
    if (!(e instanceof QuantityError)) throw e;
    // Every kind here is served at v1 alone.
    throw ApiError.badRequest(
      `${kind} in version "v1" cannot be handled as a ${kind}: ${e.message}`,
    );
  }
}

/** A store's PriorityClasses as the Priority plugin reads them, one view per store. */
const CLASSES = new WeakMap<object, PriorityClasses>();

/**
 * The PriorityClasses of a store; its global default class is found again only when a
 * PriorityClass was written since (`Store.revisionOf`), not for every Pod.
 */
function priorityClasses(store: DefaultsStore): PriorityClasses {
  let classes = CLASSES.get(store);
  if (classes) return classes;
  const revisionOf = store.revisionOf?.bind(store);
  let revision = -1;
  let chosen: KObject | undefined;
  classes = {
    get: (name) => store.get(PRIORITY_CLASSES, "", name),
    list: () => store.list(PRIORITY_CLASSES),
    ...(revisionOf
      ? {
        globalDefault: () => {
          const now = revisionOf(PRIORITY_CLASSES);
          if (now !== revision) {
            chosen = globalDefaultOf(store.list(PRIORITY_CLASSES));
            revision = now;
          }
          return chosen;
        },
      }
      : {}),
  };
  CLASSES.set(store, classes);
  return classes;
}

/** What the defaults read from the store: PriorityClasses (and their revision, to keep one). */
type DefaultsStore = Pick<Store, "get" | "list"> & Partial<Pick<Store, "revisionOf">>;

function defaulted(
  key: string,
  obj: KObject,
  current: KObject | undefined,
  store: DefaultsStore | undefined,
): KObject {
  // A write that leaves the stored spec as it is (a patch of labels, a status write) has nothing
  // to default: the stored spec was defaulted when it was written.
  if (
    current && obj.spec !== undefined && obj.spec === current.spec &&
    key !== "/ReplicationController"
  ) {
    return obj;
  }
  switch (key) {
    case "/Pod": {
      const spec = obj.spec;
      if (spec !== undefined && !isObj(spec)) return obj;
      const before = current && isObj(current.spec) ? current.spec : undefined;
      const classes = store && priorityClasses(store);
      const name = obj.metadata.name ?? obj.metadata.generateName ?? "";
      if (!before) {
        const revision = store?.revisionOf ? store.revisionOf(PRIORITY_CLASSES) : undefined;
        return { ...obj, spec: admittedPodSpec(spec ?? {}, name, classes, revision) };
      }
      const out = defaultedPodSpec(spec ?? {}, true) as Obj;
      admitPodSpec(out, before, name, classes);
      return { ...obj, spec: out };
    }
    case "/PodTemplate":
      return obj.template === undefined ? obj : { ...obj, template: template(obj.template) };
    case "/ReplicationController": {
      const spec = specOf(obj);
      if (!spec) return obj;
      const t = spec.template;
      const labels = isObj(t) && isObj(t.metadata) && isObj(t.metadata.labels)
        ? t.metadata.labels
        : undefined;
      let out: KObject = obj;
      if (labels) {
        if (!isObj(spec.selector) || !Object.keys(spec.selector).length) spec.selector = labels;
        const own = obj.metadata.labels;
        if (!own || !Object.keys(own).length) {
          out = { ...obj, metadata: { ...obj.metadata, labels: labels as Record<string, string> } };
        }
      }
      spec.replicas ??= 1;
      spec.template = template(spec.template);
      return { ...out, spec };
    }
    case "apps/Deployment":
    case "apps/ReplicaSet":
    case "apps/StatefulSet":
    case "apps/DaemonSet":
    case "batch/Job":
    case "batch/CronJob": {
      const spec = specOf(obj);
      if (!spec) return obj;
      if (key === "apps/Deployment") deployment(spec);
      else if (key === "apps/ReplicaSet") {
        spec.replicas ??= 1;
        spec.template = template(spec.template);
      } else if (key === "apps/StatefulSet") statefulSet(spec);
      else if (key === "apps/DaemonSet") daemonSet(spec);
      else if (key === "batch/Job") job(spec, obj, current === undefined);
      else cronJob(spec);
      return { ...obj, spec };
    }
  }
  return defaultedKind(key, obj);
}

/** The status each workload starts with: its Go type's zero value as kube encodes it. */
const EMPTY_STATUS: Record<string, () => Obj> = {
  "apps/Deployment": () => ({}),
  "apps/ReplicaSet": () => ({ replicas: 0 }),
  "apps/StatefulSet": () => ({ replicas: 0, availableReplicas: 0 }),
  "apps/DaemonSet": () => ({
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    desiredNumberScheduled: 0,
    numberReady: 0,
  }),
  "batch/Job": () => ({}),
  "batch/CronJob": () => ({}),
  "/ReplicationController": () => ({ replicas: 0 }),
};

/**
 * A created workload (or claim, volume, autoscaler, ingress, disruption
 * budget, quota: `kind_defaults.ts`) with the status kube's strategies give
 * it, whatever status was sent (`PrepareForCreate` resets it); other kinds as
 * they are.
 *
 * @param group The API group.
 * @param kind The kind.
 * @param obj The object to create; never mutated.
 * @param now The creation time (a PersistentVolume's `lastPhaseTransitionTime`).
 * @returns The object to store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createdWorkload } from "./workload_defaults.ts";
 * const rs = createdWorkload("apps", "ReplicaSet", { metadata: {}, status: { replicas: 5 } });
 * assert.deepEqual(rs.status, { replicas: 0 });
 * ```
 */
export function createdWorkload(
  group: string,
  kind: string,
  obj: KObject,
  now = "",
): KObject {
  const key = `${group}/${kind}`;
  const status = EMPTY_STATUS[key]?.() ?? createdStatus(key, now);
  return status ? { ...obj, status } : obj;
}
