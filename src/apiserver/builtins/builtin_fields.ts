/**
 * The field names of the built-in kinds, for `fieldValidation=Strict|Warn|Ignore`
 * as kube-apiserver applies it to its own types: a field the Go type does not
 * declare is refused (`Strict`: 400 `strict decoding error: unknown field
 * "spec.template.spec.containers[0].foo"`), dropped with a warning (`Warn`,
 * the server's default) or dropped silently (`Ignore`).
 *
 * Why a table of names and not schemas: strict decoding only asks "does the
 * type declare this key?", so one small record of names per Go type is all
 * it needs, and walking it costs a key lookup per field. A field whose value
 * is a map (labels, data) or a type not modelled here (probes, volumes,
 * affinity, every `status`) is a leaf: its content is kept as sent. Kinds
 * without a table (e.g. Node, PersistentVolume) are stored as sent.
 *
 * @module
 */

import { MEMO_SIZE, specKey } from "./pod_spec_memo.ts";

/** One field: `0` a leaf, a type name, or `[type name]` for a list of that type. */
type Field = 0 | string | [string];
type Fields = Readonly<Record<string, Field>>;

const names = (list: string, extra: Record<string, Field> = {}): Fields => {
  const out: Record<string, Field> = {};
  for (const n of list.split(" ")) if (n) out[n] = 0;
  return Object.assign(out, extra);
};

/** Go types by name: the fields each declares. */
const TYPES: Record<string, Fields> = {
  ObjectMeta: names(
    "name generateName namespace selfLink uid resourceVersion generation creationTimestamp " +
      "deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences " +
      "finalizers managedFields",
  ),
  PodTemplateSpec: { metadata: "ObjectMeta", spec: "PodSpec" },
  PodSpec: names(
    "volumes ephemeralContainers restartPolicy terminationGracePeriodSeconds " +
      "activeDeadlineSeconds dnsPolicy nodeSelector serviceAccountName serviceAccount " +
      "automountServiceAccountToken nodeName hostNetwork hostPID hostIPC shareProcessNamespace " +
      "securityContext imagePullSecrets hostname subdomain affinity schedulerName tolerations " +
      "hostAliases priorityClassName priority dnsConfig readinessGates runtimeClassName " +
      "enableServiceLinks preemptionPolicy overhead topologySpreadConstraints setHostnameAsFQDN " +
      "os hostUsers schedulingGates resourceClaims resources hostnameOverride",
    { containers: ["Container"], initContainers: ["Container"] },
  ),
  Container: names(
    "name image command args workingDir envFrom resources resizePolicy restartPolicy " +
      "restartPolicyRules volumeMounts volumeDevices livenessProbe readinessProbe startupProbe " +
      "lifecycle terminationMessagePath terminationMessagePolicy imagePullPolicy " +
      "securityContext stdin stdinOnce tty",
    { ports: ["ContainerPort"], env: ["EnvVar"] },
  ),
  ContainerPort: names("name hostPort containerPort protocol hostIP"),
  EnvVar: names("name value valueFrom"),
  ServiceSpec: names(
    "selector clusterIP clusterIPs type externalIPs sessionAffinity loadBalancerIP " +
      "loadBalancerSourceRanges externalName externalTrafficPolicy healthCheckNodePort " +
      "publishNotReadyAddresses sessionAffinityConfig ipFamilies ipFamilyPolicy " +
      "allocateLoadBalancerNodePorts loadBalancerClass internalTrafficPolicy trafficDistribution",
    { ports: ["ServicePort"] },
  ),
  ServicePort: names("name protocol appProtocol port targetPort nodePort"),
  DeploymentSpec: names(
    "replicas selector strategy minReadySeconds revisionHistoryLimit paused " +
      "progressDeadlineSeconds",
    { template: "PodTemplateSpec" },
  ),
  ReplicaSetSpec: names("replicas minReadySeconds selector", { template: "PodTemplateSpec" }),
  StatefulSetSpec: names(
    "replicas selector volumeClaimTemplates serviceName podManagementPolicy updateStrategy " +
      "revisionHistoryLimit minReadySeconds persistentVolumeClaimRetentionPolicy ordinals",
    { template: "PodTemplateSpec" },
  ),
  DaemonSetSpec: names("selector updateStrategy minReadySeconds revisionHistoryLimit", {
    template: "PodTemplateSpec",
  }),
  JobSpec: names(
    "parallelism completions activeDeadlineSeconds podFailurePolicy successPolicy backoffLimit " +
      "backoffLimitPerIndex maxFailedIndexes selector manualSelector ttlSecondsAfterFinished " +
      "completionMode suspend podReplacementPolicy managedBy",
    { template: "PodTemplateSpec" },
  ),
  JobTemplateSpec: { metadata: "ObjectMeta", spec: "JobSpec" },
  CronJobSpec: names(
    "schedule timeZone startingDeadlineSeconds concurrencyPolicy suspend " +
      "successfulJobsHistoryLimit failedJobsHistoryLimit",
    { jobTemplate: "JobTemplateSpec" },
  ),
  PolicyRule: names("verbs apiGroups resources resourceNames nonResourceURLs"),
  LeaseSpec: names(
    "holderIdentity leaseDurationSeconds acquireTime renewTime leaseTransitions strategy " +
      "preferredHolder",
  ),
};

const kind = (fields: string, extra: Record<string, Field> = {}): Fields =>
  names(`apiVersion kind ${fields}`, { metadata: "ObjectMeta", ...extra });

/** The kinds covered, by `group/Kind` (`/Kind` for the core group). */
const KINDS: Record<string, Fields> = {
  "/ConfigMap": kind("data binaryData immutable"),
  "/Secret": kind("data stringData type immutable"),
  "/Namespace": kind("spec status"),
  "/ServiceAccount": kind("secrets imagePullSecrets automountServiceAccountToken"),
  "/Service": kind("status", { spec: "ServiceSpec" }),
  "/Pod": kind("status", { spec: "PodSpec" }),
  "/PodTemplate": kind("", { template: "PodTemplateSpec" }),
  "/ReplicationController": kind("status", { spec: "ReplicaSetSpec" }),
  "/Event": kind(
    "involvedObject reason message source firstTimestamp lastTimestamp count type eventTime " +
      "series action related reportingComponent reportingInstance",
  ),
  "apps/Deployment": kind("status", { spec: "DeploymentSpec" }),
  "apps/ReplicaSet": kind("status", { spec: "ReplicaSetSpec" }),
  "apps/StatefulSet": kind("status", { spec: "StatefulSetSpec" }),
  "apps/DaemonSet": kind("status", { spec: "DaemonSetSpec" }),
  "batch/Job": kind("status", { spec: "JobSpec" }),
  "batch/CronJob": kind("status", { spec: "CronJobSpec" }),
  "rbac.authorization.k8s.io/Role": kind("", { rules: ["PolicyRule"] }),
  "rbac.authorization.k8s.io/ClusterRole": kind("aggregationRule", { rules: ["PolicyRule"] }),
  "rbac.authorization.k8s.io/RoleBinding": kind("subjects roleRef"),
  "rbac.authorization.k8s.io/ClusterRoleBinding": kind("subjects roleRef"),
  "coordination.k8s.io/Lease": kind("", { spec: "LeaseSpec" }),
};

/**
 * The kinds whose unknown fields are found (for the docs and tests).
 *
 * @returns `group/Kind` keys, `/Kind` for the core group.
 */
export function kindsWithKnownFields(): string[] {
  return Object.keys(KINDS);
}

/**
 * Removes the fields a built-in kind's Go type does not declare, as
 * kube-apiserver's decoder drops them.
 *
 * @param group The API group (`""` for core).
 * @param kindName The kind.
 * @param obj The object as sent; never mutated.
 * @param stored The stored object on update: a subtree of `obj` that is the very subtree stored
 * there (a patch leaves those shared) was pruned when it was written, and is not walked again.
 * @returns `value`: the object itself when nothing was unknown, otherwise a
 * copy without the unknown fields (unchanged subtrees shared); `pruned`: the
 * paths removed in document order, as kube names them
 * (`spec.template.spec.containers[0].foo`); `undefined` for a kind not covered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pruneBuiltinFields } from "./builtin_fields.ts";
 *
 * const r = pruneBuiltinFields("", "ConfigMap", {
 *   apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: {}, foo: 1,
 * });
 * assert.deepEqual(r?.pruned, ["foo"]);
 * assert.equal("foo" in (r?.value as object), false);
 * ```
 */
export function pruneBuiltinFields(
  group: string,
  kindName: string,
  obj: Record<string, unknown>,
  stored?: Record<string, unknown>,
): { value: Record<string, unknown>; pruned: string[] } | undefined {
  const fields = compiledKinds().get(group)?.get(kindName);
  if (!fields) return undefined;
  const pruned: string[] = [];
  const value = walk(fields, obj, [], pruned, stored) as Record<string, unknown>;
  return { value, pruned };
}

/** A type as the walk reads it: a field's type resolved, a list's item type in a one-item array. */
type Node = 0 | Compiled | [Compiled];
type Compiled = ReadonlyMap<string, Node>;

let compiled: Map<string, Map<string, Compiled>> | undefined;
/** The compiled `PodSpec`: a pod spec's walk is skipped when its text was walked clean before. */
let podSpecType: Compiled | undefined;

/**
 * The JSON texts of pod specs walked with nothing pruned (their text is `specKey()`'s: plain
 * JSON only). A spec of one of these texts has no unknown field either; at most
 * {@link MEMO_SIZE}, then the set starts over.
 */
const CLEAN_POD_SPECS = new Set<string>();

/** The tables as maps (a lookup per field), by group, then kind; built on first use. */
function compiledKinds(): Map<string, Map<string, Compiled>> {
  if (compiled) return compiled;
  const types = new Map<string, Map<string, Node>>();
  const compile = (fields: Fields): Map<string, Node> => {
    const out = new Map<string, Node>();
    for (const [key, field] of Object.entries(fields)) {
      if (field === 0) out.set(key, 0);
      else if (typeof field === "string") out.set(key, type(field));
      else out.set(key, [type(field[0])]);
    }
    return out;
  };
  const type = (name: string): Map<string, Node> => {
    let t = types.get(name);
    if (!t) {
      t = new Map();
      types.set(name, t);
      for (const [key, node] of compile(TYPES[name]!)) t.set(key, node);
    }
    return t;
  };
  podSpecType = type("PodSpec");
  compiled = new Map();
  for (const [key, fields] of Object.entries(KINDS)) {
    const slash = key.indexOf("/");
    const group = key.slice(0, slash);
    let kinds = compiled.get(group);
    if (!kinds) compiled.set(group, kinds = new Map());
    kinds.set(key.slice(slash + 1), compile(fields));
  }
  return compiled;
}

/**
 * Where the walk is: the keys (and item indices) from the object down to the field walked,
 * pushed and popped as it goes. A path (`spec.containers[0].foo`) is built from it only for a
 * field that is pruned — most writes have none, and a valid write builds no string.
 */
type Trail = Array<string | number>;

function pathOf(trail: Trail, key: string): string {
  let path = "";
  for (const k of trail) path = typeof k === "number" ? `${path}[${k}]` : path ? `${path}.${k}` : k;
  return path ? `${path}.${key}` : key;
}

function walk(fields: Compiled, v: unknown, trail: Trail, pruned: string[], old: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
  const obj = v as Record<string, unknown>;
  const before = old !== null && typeof old === "object" && !Array.isArray(old)
    ? old as Record<string, unknown>
    : undefined;
  let out: Record<string, unknown> | undefined;
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    const field = fields.get(key);
    if (field === undefined) {
      pruned.push(pathOf(trail, key));
      out ??= copyUntil(obj, key);
      continue;
    }
    const child = obj[key];
    if (field === 0 || child === null || typeof child !== "object") { // nothing below to prune
      if (out) out[key] = child;
      continue;
    }
    const was = before && Object.hasOwn(before, key) ? before[key] : undefined;
    if (child === was) {
      if (out) out[key] = child;
      continue;
    }
    let next: unknown = child;
    trail.push(key);
    if (field === podSpecType) next = walkPodSpec(field, child, trail, pruned, was);
    else if (!Array.isArray(field)) next = walk(field, child, trail, pruned, was);
    else if (Array.isArray(child)) {
      const item = field[0];
      const wasItems = Array.isArray(was) ? was : undefined;
      let items: unknown[] | undefined;
      for (let i = 0; i < child.length; i++) {
        const c = child[i];
        trail.push(i);
        const n = walk(item, c, trail, pruned, wasItems?.[i]);
        trail.pop();
        if (n !== c) (items ??= child.slice())[i] = n;
      }
      if (items) next = items;
    }
    trail.pop();
    if (next !== child) out ??= copyUntil(obj, key);
    if (out) out[key] = next;
  }
  return out ?? obj;
}

/** A pod spec's walk, skipped for a spec of a text walked clean before (the usual template). */
function walkPodSpec(
  fields: Compiled,
  spec: unknown,
  trail: Trail,
  pruned: string[],
  old: unknown,
): unknown {
  const key = specKey(spec);
  if (key !== undefined && CLEAN_POD_SPECS.has(key)) return spec;
  const before = pruned.length;
  const out = walk(fields, spec, trail, pruned, old);
  if (key !== undefined && pruned.length === before) {
    if (CLEAN_POD_SPECS.size >= MEMO_SIZE) CLEAN_POD_SPECS.clear();
    CLEAN_POD_SPECS.add(key);
  }
  return out;
}

/** A copy of the keys before `stop`. */
function copyUntil(obj: Record<string, unknown>, stop: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in obj) {
    if (key === stop) break;
    if (Object.hasOwn(obj, key)) out[key] = obj[key];
  }
  return out;
}
