/**
 * The defaults kube-apiserver gives every pod spec — a Pod's and every pod
 * template's (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
 * ReplicationController, PodTemplate) — when it decodes a request, and the two
 * mutating admission plugins on by default that touch a Pod: `Priority`
 * (`priority: 0`, `preemptionPolicy: PreemptLowerPriority`) and
 * `DefaultTolerationSeconds` (tolerate `not-ready` and `unreachable` for 300s).
 *
 * From kube's `SetDefaults_PodSpec`: `restartPolicy: Always`, `dnsPolicy:
 * ClusterFirst`, `schedulerName: default-scheduler`,
 * `terminationGracePeriodSeconds: 30`, `securityContext: {}`; per container
 * `terminationMessagePath: /dev/termination-log`, `terminationMessagePolicy:
 * File`, `imagePullPolicy` (`Always` for `:latest` or no tag, else
 * `IfNotPresent`), ports' `protocol: TCP`, probes' timings and an HTTP
 * probe's `path`/`scheme`, a `fieldRef`'s `apiVersion: v1`; a volume without
 * a source becomes an `emptyDir`, and secret, configMap, downwardAPI and
 * projected volumes get `defaultMode: 420`. Requests and limits are stored in
 * their canonical form (`quantity.ts`). A Pod alone (kube's `SetDefaults_Pod`)
 * gets `enableServiceLinks: true`, requests defaulted to its limits, and with
 * `hostNetwork` its ports' `hostPort`.
 *
 * Cost: objects on the path to a defaulted field are copied shallowly (the
 * spec, each container, each probe); nothing is deep-cloned, and subtrees with
 * nothing to default are shared with the request.
 *
 * @module
 */

import { admitPriority, type PriorityClasses } from "./priority_admission.ts";
import { canonicalQuantity, parseQuantity } from "./quantity.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const unset = (v: unknown) => v === undefined || v === null || v === "";

/** A quantity in requests or limits that is not one: the request cannot be decoded (kube: 400). */
export class QuantityError extends Error {
  override name = "QuantityError";
}

/**
 * A pod spec with kube's defaults.
 *
 * @param spec The spec as sent; never mutated.
 * @param pod Whether it is a Pod's own spec (not a template's): then the Pod-only defaults apply.
 * @returns The defaulted spec (a shallow copy), or the value itself when it is not an object.
 * @throws {QuantityError} When a request or limit is not a quantity.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedPodSpec } from "./pod_defaults.ts";
 * const spec = defaultedPodSpec({ containers: [{ name: "c", image: "nginx" }] }, true) as Record<string, unknown>;
 * assert.deepEqual([spec.restartPolicy, spec.dnsPolicy, spec.enableServiceLinks], ["Always", "ClusterFirst", true]);
 * assert.equal((spec.containers as Array<Record<string, unknown>>)[0]?.imagePullPolicy, "Always");
 * ```
 */
export function defaultedPodSpec(spec: unknown, pod: boolean): unknown {
  if (!isObj(spec)) return spec;
  const out: Obj = { ...spec };
  if (unset(out.dnsPolicy)) out.dnsPolicy = "ClusterFirst";
  if (unset(out.restartPolicy)) out.restartPolicy = "Always";
  if (out.securityContext === undefined || out.securityContext === null) out.securityContext = {};
  if (
    out.terminationGracePeriodSeconds === undefined || out.terminationGracePeriodSeconds === null
  ) {
    out.terminationGracePeriodSeconds = 30;
  }
  if (unset(out.schedulerName)) out.schedulerName = "default-scheduler";
  const hostNetwork = pod && out.hostNetwork === true;
  for (const key of CONTAINER_LISTS) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map((c) => defaultedContainer(c, pod, hostNetwork));
  }
  if (Array.isArray(out.volumes)) out.volumes = out.volumes.map(defaultedVolume);
  if (pod && (out.enableServiceLinks === undefined || out.enableServiceLinks === null)) {
    out.enableServiceLinks = true;
  }
  return out;
}

const CONTAINER_LISTS = ["containers", "initContainers", "ephemeralContainers"];
const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"];
const HOOKS = ["postStart", "preStop"];

/** The image's tag as kube's `ParseImageName` finds it (`latest` when neither tag nor digest). */
function imageTag(image: unknown): string {
  if (typeof image !== "string" || image === "") return "";
  const at = image.indexOf("@");
  const name = at >= 0 ? image.slice(0, at) : image;
  const last = name.slice(name.lastIndexOf("/") + 1);
  const colon = last.indexOf(":");
  if (colon >= 0) return last.slice(colon + 1);
  return at >= 0 ? "" : "latest";
}

function defaultedContainer(c: unknown, pod: boolean, hostNetwork: boolean): unknown {
  if (!isObj(c)) return c;
  const out: Obj = { ...c };
  if (unset(out.imagePullPolicy)) {
    out.imagePullPolicy = imageTag(out.image) === "latest" ? "Always" : "IfNotPresent";
  }
  if (unset(out.terminationMessagePath)) out.terminationMessagePath = "/dev/termination-log";
  if (unset(out.terminationMessagePolicy)) out.terminationMessagePolicy = "File";
  if (Array.isArray(out.ports)) {
    out.ports = out.ports.map((p) => {
      if (!isObj(p)) return p;
      const port: Obj = { ...p };
      if (unset(port.protocol)) port.protocol = "TCP";
      if (hostNetwork && (port.hostPort === undefined || port.hostPort === 0)) {
        port.hostPort = port.containerPort;
      }
      return port;
    });
  }
  if (Array.isArray(out.env)) {
    out.env = out.env.map((e) => {
      const ref = isObj(e) && isObj(e.valueFrom) ? e.valueFrom.fieldRef : undefined;
      if (!isObj(ref) || !unset(ref.apiVersion)) return e;
      return {
        ...e,
        valueFrom: { ...(e as Obj).valueFrom as Obj, fieldRef: { ...ref, apiVersion: "v1" } },
      };
    });
  }
  if (isObj(out.resources)) out.resources = defaultedResources(out.resources, pod);
  for (const probe of PROBES) {
    if (isObj(out[probe])) out[probe] = defaultedProbe(out[probe] as Obj);
  }
  if (isObj(out.lifecycle)) {
    const lifecycle: Obj = { ...out.lifecycle };
    for (const hook of HOOKS) {
      const h = lifecycle[hook];
      if (isObj(h) && isObj(h.httpGet)) {
        lifecycle[hook] = { ...h, httpGet: defaultedHttpGet(h.httpGet) };
      }
    }
    out.lifecycle = lifecycle;
  }
  return out;
}

function defaultedHttpGet(get: Obj): Obj {
  const out: Obj = { ...get };
  if (unset(out.path)) out.path = "/";
  if (unset(out.scheme)) out.scheme = "HTTP";
  return out;
}

function defaultedProbe(probe: Obj): Obj {
  const out: Obj = { ...probe };
  const zero = (v: unknown) => v === undefined || v === null || v === 0;
  if (zero(out.timeoutSeconds)) out.timeoutSeconds = 1;
  if (zero(out.periodSeconds)) out.periodSeconds = 10;
  if (zero(out.successThreshold)) out.successThreshold = 1;
  if (zero(out.failureThreshold)) out.failureThreshold = 3;
  if (isObj(out.httpGet)) out.httpGet = defaultedHttpGet(out.httpGet);
  return out;
}

/** A resource list in canonical form (the list itself when it is already). */
function canonicalList(list: unknown): unknown {
  if (!isObj(list)) return list;
  let out: Obj | undefined;
  for (const name in list) {
    if (!Object.hasOwn(list, name)) continue;
    const value = list[name];
    const text = canonicalOf(value);
    if (!out && text !== value) {
      out = {};
      for (const before in list) {
        if (before === name) break;
        if (Object.hasOwn(list, before)) out[before] = list[before];
      }
    }
    if (out) out[name] = text;
  }
  return out ?? list;
}

/** Canonical forms by the text sent: the same few ("100m", "64Mi") come in every pod spec. */
const CANONICAL = new Map<string, string>();
const CANONICAL_CAP = 1024;

function canonicalOf(value: unknown): string {
  const known = typeof value === "string" ? CANONICAL.get(value) : undefined;
  if (known !== undefined) return known;
  const q = parseQuantity(value);
  if (typeof q === "string") throw new QuantityError(q);
  const text = canonicalQuantity(q);
  if (typeof value === "string") {
    if (CANONICAL.size >= CANONICAL_CAP) CANONICAL.clear();
    CANONICAL.set(value, text);
  }
  return text;
}

function defaultedResources(resources: Obj, pod: boolean): Obj {
  const out: Obj = { ...resources };
  if (out.limits !== undefined) out.limits = canonicalList(out.limits);
  if (out.requests !== undefined) out.requests = canonicalList(out.requests);
  const limits = out.limits;
  if (pod && isObj(limits)) {
    // A Pod's requests default to its limits (kube's SetDefaults_Pod).
    const requests: Obj = isObj(out.requests) ? { ...out.requests } : {};
    for (const name in limits) {
      if (Object.hasOwn(limits, name) && !Object.hasOwn(requests, name)) {
        requests[name] = limits[name];
      }
    }
    out.requests = requests;
  }
  return out;
}

const MODE_DEFAULTED = ["secret", "configMap", "downwardAPI", "projected"];

function defaultedVolume(v: unknown): unknown {
  if (!isObj(v)) return v;
  let source = false;
  for (const key in v) if (key !== "name" && v[key] !== undefined && v[key] !== null) source = true;
  if (!source) return { ...v, emptyDir: {} };
  let out: Obj | undefined;
  for (const key of MODE_DEFAULTED) {
    const s = v[key];
    if (isObj(s) && (s.defaultMode === undefined || s.defaultMode === null)) {
      out ??= { ...v };
      out[key] = { ...s, defaultMode: 420 };
    }
  }
  const hostPath = v.hostPath;
  if (isObj(hostPath) && (hostPath.type === undefined || hostPath.type === null)) {
    out ??= { ...v };
    out.hostPath = { ...hostPath, type: "" };
  }
  return out ?? v;
}

/** The tolerations kube's `DefaultTolerationSeconds` admission plugin adds. */
const DEFAULT_TOLERATIONS = [
  ["node.kubernetes.io/not-ready", "NoExecute"],
  ["node.kubernetes.io/unreachable", "NoExecute"],
] as const;

/**
 * A Pod's spec as the admission plugins on by default leave it: `Priority`
 * sets its priority on create (`priority_admission.ts`: from its class, the
 * global default class, else 0 and `PreemptLowerPriority`) and keeps the
 * stored one on update; `DefaultTolerationSeconds` adds tolerations of the `not-ready`
 * and `unreachable` taints for 300 seconds unless the pod tolerates them.
 *
 * @param spec The defaulted spec (from {@linkcode defaultedPodSpec}); mutated.
 * @param current The stored pod's spec on update.
 * @param podName The pod's name (or `generateName`), for the Priority plugin's 403.
 * @param classes The stored PriorityClasses.
 * @throws {ApiError} 403 from the Priority plugin (an unknown class, a priority not the class's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { admitPodSpec } from "./pod_defaults.ts";
 * const spec: Record<string, unknown> = { containers: [] };
 * admitPodSpec(spec, undefined);
 * assert.deepEqual([spec.priority, (spec.tolerations as unknown[]).length], [0, 2]);
 * ```
 */
export function admitPodSpec(
  spec: Obj,
  current: Obj | undefined,
  podName = "",
  classes?: PriorityClasses,
): void {
  if (!current) {
    admitPriority(spec, podName, classes);
  } else {
    if (spec.priority === undefined && current.priority !== undefined) {
      spec.priority = current.priority;
    }
    if (spec.preemptionPolicy === undefined && current.preemptionPolicy !== undefined) {
      spec.preemptionPolicy = current.preemptionPolicy;
    }
  }
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  let added: unknown[] | undefined;
  for (let d = 0; d < DEFAULT_TOLERATIONS.length; d++) {
    const [key, effect] = DEFAULT_TOLERATIONS[d]!;
    let tolerated = false;
    for (let i = 0; i < tolerations.length && !tolerated; i++) {
      const t = tolerations[i];
      tolerated = isObj(t) && (t.key === key || unset(t.key)) &&
        (t.effect === effect || unset(t.effect));
    }
    if (!tolerated) {
      (added ??= [...tolerations]).push({
        key,
        operator: "Exists",
        effect,
        tolerationSeconds: 300,
      });
    }
  }
  if (added) spec.tolerations = added;
}
