/**
 * What kube-apiserver's registry strategies do to a few built-in kinds on the
 * way to the store — the parts a user sees first:
 *
 * - **generation** is kept only by the kinds whose strategies keep one (the
 *   workloads, pods since 1.33, pod templates, endpoint slices, ingresses and
 *   their classes, network policies, disruption budgets, webhook
 *   configurations, CRDs) and by every custom resource; a ConfigMap, Secret,
 *   Namespace or Service has none.
 * - **a created Pod** is pending and unscheduled (`pod_strategy.ts`). Nothing
 *   ever moves it on: there is no scheduler and no kubelet.
 * - **a created Service** gets its defaults (`type`, `sessionAffinity`,
 *   `internalTrafficPolicy`, ports' `protocol` and `targetPort`), a cluster IP
 *   from the service range 10.96.0.0/12, unique among the services, with
 *   `clusterIPs`, `ipFamilies` and `ipFamilyPolicy` (single-stack IPv4),
 *   node ports for NodePort and LoadBalancer services, and
 *   `status.loadBalancer: {}`. An update that leaves the allocated values out
 *   keeps them, as kube does; a requested IP outside the range or taken is a
 *   422 with kube's wording.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";

/** Built-in kinds (storage keys) whose strategies set generation 1 and bump it on spec changes. */
const GENERATION_KEPT: ReadonlySet<string> = new Set([
  "pods",
  "replicationcontrollers",
  "podtemplates",
  "deployments.apps",
  "replicasets.apps",
  "statefulsets.apps",
  "daemonsets.apps",
  "jobs.batch",
  "cronjobs.batch",
  "endpointslices.discovery.k8s.io",
  "ingresses.networking.k8s.io",
  "ingressclasses.networking.k8s.io",
  "networkpolicies.networking.k8s.io",
  "poddisruptionbudgets.policy",
  "customresourcedefinitions.apiextensions.k8s.io",
  "validatingwebhookconfigurations.admissionregistration.k8s.io",
  "mutatingwebhookconfigurations.admissionregistration.k8s.io",
]);

/**
 * Whether objects of a resource carry `metadata.generation`.
 *
 * @param def The resource.
 * @returns True for custom resources and the built-ins whose kube strategies keep one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepsGeneration } from "./builtin_strategies.ts";
 * assert.equal(keepsGeneration({ group: "", plural: "configmaps", builtin: true }), false);
 * assert.equal(keepsGeneration({ group: "apps", plural: "deployments", builtin: true }), true);
 * ```
 */
export function keepsGeneration(def: Pick<ResourceDef, "group" | "plural" | "builtin">): boolean {
  if (!def.builtin) return true;
  // Asked on every write: by the def's own strings, no storage key built each time.
  let kept = KEPT_BY_GROUP.get(def.group);
  if (!kept) {
    const plurals = new Set<string>();
    for (const key of GENERATION_KEPT) {
      const dot = key.indexOf(".");
      if ((dot < 0 ? "" : key.slice(dot + 1)) === def.group) {
        plurals.add(dot < 0 ? key : key.slice(0, dot));
      }
    }
    KEPT_BY_GROUP.set(def.group, kept = plurals);
  }
  return kept.has(def.plural);
}

const KEPT_BY_GROUP = new Map<string, ReadonlySet<string>>();

/** What the Service defaults need from the store. */
export interface ServiceContext {
  /** The cluster IPs and node ports taken by other services. */
  taken: () => { ips: Set<string>; nodePorts: Set<number> };
}

/** The service CIDR: 10.96.0.0/12 (kube-apiserver's usual `--service-cluster-ip-range`). */
const SERVICE_NET = (10 << 24 | 96 << 16) >>> 0;
const SERVICE_SIZE = 1 << 20;
const SERVICE_CIDR = "10.96.0.0/12";
const NODE_PORTS: [number, number] = [30000, 32767];

function ipToNumber(ip: string): number | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    return undefined;
  }
  return parts.reduce((n, p) => (n * 256 + Number(p)) >>> 0, 0);
}

function numberToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

interface ServicePort {
  port?: unknown;
  protocol?: string;
  targetPort?: unknown;
  nodePort?: number;
}

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  sessionAffinity?: string;
  internalTrafficPolicy?: string;
  externalTrafficPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  ports?: ServicePort[];
}

/**
 * A Service with kube's defaults and its allocated values (cluster IP, node ports).
 *
 * @param service The Service as sent.
 * @param current The stored Service on update (its allocated values are kept when left out).
 * @param ctx Where the taken IPs and ports come from.
 * @returns The Service to store.
 * @throws {ApiError} 422 for a requested cluster IP or node port that is taken or out of range.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedService } from "./builtin_strategies.ts";
 * const taken = () => ({ ips: new Set<string>(), nodePorts: new Set<number>() });
 * const svc = defaultedService({ metadata: { name: "s" }, spec: { ports: [{ port: 80 }] } }, undefined, { taken });
 * const spec = svc.spec as { type: string; clusterIP: string; ports: unknown[] };
 * assert.equal(spec.type, "ClusterIP");
 * assert.match(spec.clusterIP, /^10\.(9[6-9]|10\d|11[01])\./);
 * assert.deepEqual(spec.ports, [{ port: 80, protocol: "TCP", targetPort: 80 }]);
 * assert.deepEqual(svc.status, { loadBalancer: {} });
 * ```
 */
export function defaultedService(
  service: KObject,
  current: KObject | undefined,
  ctx: ServiceContext,
): KObject {
  if (service.spec !== undefined && (typeof service.spec !== "object" || service.spec === null)) {
    return service; // not a Service's shape: left to the other checks
  }
  const spec = structuredClone((service.spec ?? {}) as ServiceSpec);
  const old = (current?.spec ?? {}) as ServiceSpec;
  const name = service.metadata.name ?? "";
  spec.type ??= "ClusterIP";
  spec.sessionAffinity ??= "None";
  const external = spec.type === "ExternalName";
  if (!external) spec.internalTrafficPolicy ??= "Cluster";
  if (Array.isArray(spec.ports)) {
    spec.ports = spec.ports.map((p) => {
      if (!p || typeof p !== "object") return p;
      const out = { ...p };
      out.protocol ??= "TCP";
      if (out.targetPort === undefined && out.port !== undefined) out.targetPort = out.port;
      return out;
    });
  }
  if (!external) {
    // An update that leaves the allocated values out keeps them (kube's PatchAllocatedValues).
    if (spec.clusterIP === undefined && spec.clusterIPs === undefined && old.clusterIP) {
      spec.clusterIP = old.clusterIP;
      if (old.clusterIPs) spec.clusterIPs = old.clusterIPs;
    }
    if (spec.clusterIP === undefined && spec.clusterIPs?.[0] !== undefined) {
      spec.clusterIP = spec.clusterIPs[0];
    }
    if (current) checkClusterIpsKept(name, spec, old);
    const changed = spec.clusterIP !== old.clusterIP;
    if (spec.clusterIP === undefined || spec.clusterIP === "") {
      spec.clusterIP = allocateIp(ctx.taken().ips);
    } else if (spec.clusterIP !== "None" && changed) {
      checkRequestedIp(name, spec.clusterIP, ctx.taken().ips);
    }
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= old.ipFamilies ?? ["IPv4"];
    spec.ipFamilyPolicy ??= old.ipFamilyPolicy ?? "SingleStack";
    if (spec.type === "NodePort" || spec.type === "LoadBalancer") {
      spec.externalTrafficPolicy ??= "Cluster";
      if (spec.type === "LoadBalancer") spec.allocateLoadBalancerNodePorts ??= true;
      if (spec.type === "NodePort" || spec.allocateLoadBalancerNodePorts !== false) {
        allocateNodePorts(name, spec, old, ctx);
      }
    }
  }
  const status = current ? current.status : { loadBalancer: {} };
  const out: KObject = { ...service, spec };
  if (status === undefined) delete out.status;
  else out.status = status;
  return out;
}

function allocateIp(taken: Set<string>): string {
  // Offsets 0 (the network) and 1 (kube reserves the first address for the `kubernetes` service).
  for (let tries = 0; tries < 64; tries++) {
    const offset = 2 + Math.floor(Math.random() * (SERVICE_SIZE - 3));
    const ip = numberToIp((SERVICE_NET + offset) >>> 0);
    if (!taken.has(ip)) return ip;
  }
  for (let offset = 2; offset < SERVICE_SIZE - 1; offset++) {
    const ip = numberToIp((SERVICE_NET + offset) >>> 0);
    if (!taken.has(ip)) return ip;
  }
  throw new ApiError(500, "InternalError", "Internal error occurred: range is full");
}

/**
 * A Service's cluster IPs may not change once set (kube's
 * `validateUpgradeDowngradeClusterIPs`): a 422 per changed one, its value the
 * new list as kube renders it. Headless to headless and ExternalName either
 * way are free.
 */
function checkClusterIpsKept(name: string, spec: ServiceSpec, old: ServiceSpec): void {
  const before = Array.isArray(old.clusterIPs) ? old.clusterIPs : [];
  if (!before.length || old.type === "ExternalName") return;
  if (old.clusterIP === "None" && spec.clusterIP === "None") return;
  if (spec.clusterIP === undefined || spec.clusterIP === "") return; // allocated anew below
  const after = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP];
  const changed = before.length === after.length
    ? before.flatMap((ip, i) => (ip !== after[i] ? [i] : []))
    : after.length && after[0] !== before[0]
    ? [0]
    : [];
  if (!changed.length) return;
  throw ApiError.invalid(
    "Service",
    "",
    name,
    changed.map((i) => ({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${JSON.stringify(after)}: may not change once set`,
      field: `spec.clusterIPs[${i}]`,
    })),
  );
}

function checkRequestedIp(name: string, ip: string, taken: Set<string>): void {
  const n = ipToNumber(ip);
  const field = "spec.clusterIPs";
  const value = `[]string{${JSON.stringify(ip)}}`;
  if (n === undefined) {
    throw ApiError.invalid("Service", "", name, [{
      reason: "FieldValueInvalid",
      message: `Invalid value: ${JSON.stringify(ip)}: must be a valid IP address`,
      field: "spec.clusterIPs[0]",
    }]);
  }
  if (n < SERVICE_NET || n >= SERVICE_NET + SERVICE_SIZE) {
    throw ApiError.invalid("Service", "", name, [{
      reason: "FieldValueInvalid",
      message:
        `Invalid value: ${value}: failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`,
      field,
    }]);
  }
  if (taken.has(ip)) {
    throw ApiError.invalid("Service", "", name, [{
      reason: "FieldValueInvalid",
      message:
        `Invalid value: ${value}: failed to allocate IP ${ip}: provided IP is already allocated`,
      field,
    }]);
  }
}

function allocateNodePorts(
  name: string,
  spec: ServiceSpec,
  old: ServiceSpec,
  ctx: ServiceContext,
): void {
  if (!Array.isArray(spec.ports)) return;
  const taken = ctx.taken().nodePorts;
  const mine = new Set((old.ports ?? []).map((p) => p?.nodePort).filter((p) => p !== undefined));
  spec.ports.forEach((p, i) => {
    if (!p || typeof p !== "object") return;
    if (p.nodePort === undefined) {
      const kept = old.ports?.find((o) => o?.port === p.port && o?.protocol === p.protocol);
      if (kept?.nodePort !== undefined) {
        p.nodePort = kept.nodePort;
        return;
      }
      const size = NODE_PORTS[1] - NODE_PORTS[0] + 1;
      const start = Math.floor(Math.random() * size);
      for (let k = 0; k < size; k++) {
        const candidate = NODE_PORTS[0] + (start + k) % size;
        if (!taken.has(candidate)) {
          p.nodePort = candidate;
          taken.add(candidate);
          return;
        }
      }
      throw new ApiError(500, "InternalError", "Internal error occurred: range is full");
    }
    if (mine.has(p.nodePort)) return;
    const field = `spec.ports[${i}].nodePort`;
    if (
      typeof p.nodePort !== "number" || p.nodePort < NODE_PORTS[0] || p.nodePort > NODE_PORTS[1]
    ) {
      throw ApiError.invalid("Service", "", name, [{
        reason: "FieldValueInvalid",
        message: `Invalid value: ${
          JSON.stringify(p.nodePort)
        }: provided port is not in the valid range. The range of valid ports is ${
          NODE_PORTS.join("-")
        }`,
        field,
      }]);
    }
    if (taken.has(p.nodePort)) {
      throw ApiError.invalid("Service", "", name, [{
        reason: "FieldValueInvalid",
        message: `Invalid value: ${p.nodePort}: provided port is already allocated`,
        field,
      }]);
    }
    taken.add(p.nodePort);
  });
}
