/**
 * What kube-apiserver's Pod strategy does to a Pod on the way to the store: a created Pod is
 * pending and unscheduled (`status.phase: Pending`, a `PodScheduled` condition that says no
 * scheduler runs here), with its `qosClass` computed from its containers' requests and limits as
 * kube computes it; an update keeps the status. Its spec's defaults are `pod_defaults.ts`'s.
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";
import { isKeptSpec } from "./pod_spec_memo.ts";
import { keepJson } from "../storage/known_json.ts";

/**
 * The created status of each kept spec (`pod_spec_memo.ts`: shared, never changed), with the
 * time it was made for: the Pods created from one spec within one second share one status (a
 * stored object is never changed, so its parts may be shared, as its spec is).
 */
const STATUSES = new WeakMap<object, { now: string; status: Record<string, unknown> }>();

/**
 * The status of a Pod as created: pending, unscheduled, with its QoS class.
 * Its spec has kube's defaults already (`pod_defaults.ts`: requests default to limits there).
 *
 * @param pod The pod, defaulted; never mutated.
 * @param now The timestamp for the condition.
 * @returns The pod to store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createdPod } from "./pod_strategy.ts";
 * const pod = createdPod({ metadata: { name: "p" }, spec: { containers: [{ name: "c" }] } }, "2026-01-01T00:00:00Z");
 * assert.deepEqual([pod.status?.phase, pod.status?.qosClass], ["Pending", "BestEffort"]);
 * ```
 */
export function createdPod(
  pod: KObject,
  now: string,
): KObject & { status: Record<string, unknown> } {
  const spec = (pod.spec ?? {}) as PodSpec;
  const kept = isKeptSpec(spec) ? STATUSES.get(spec) : undefined;
  if (kept?.now === now) return { ...pod, status: kept.status };
  const status = createdStatus(spec, now);
  // Shared by the Pods of this spec and second: kept with its text (storage/known_json.ts).
  if (isKeptSpec(spec)) STATUSES.set(spec, { now, status: keepJson(status) });
  return { ...pod, status };
}

function createdStatus(spec: PodSpec, now: string): Record<string, unknown> {
  const status: Record<string, unknown> = { phase: "Pending", qosClass: qosClass(spec) };
  const gated = Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0;
  if (gated) {
    status.conditions = [{
      type: "PodScheduled",
      status: "False",
      lastProbeTime: null,
      lastTransitionTime: now,
      reason: "SchedulingGated",
      message: "Scheduling is blocked due to non-empty scheduling gates",
    }];
  } else if (!spec.nodeName) {
    status.conditions = [{
      type: "PodScheduled",
      status: "False",
      lastProbeTime: null,
      lastTransitionTime: now,
      reason: "Unschedulable",
      message: "no scheduler runs in the embedded API server: the pod stays Pending",
    }];
  }
  return status;
}

/**
 * A Pod on update: its QoS class is fixed at creation, so a status write that leaves it out keeps it
 * (as kube backfills it for old kubelets).
 *
 * @param pod The pod to store.
 * @param current The stored pod.
 * @returns The pod to store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { updatedPod } from "./pod_strategy.ts";
 * const current = { metadata: {}, status: { phase: "Pending", qosClass: "Burstable" } };
 * const pod = updatedPod({ metadata: {}, status: { phase: "Running" } }, current);
 * assert.deepEqual(pod.status, { phase: "Running", qosClass: "Burstable" });
 * ```
 */
export function updatedPod(pod: KObject, current: KObject): KObject {
  const status = pod.status as Record<string, unknown> | undefined;
  const before = (current.status as Record<string, unknown> | undefined)?.qosClass;
  if (!status || typeof status !== "object" || status.qosClass || before === undefined) return pod;
  return { ...pod, status: { ...status, qosClass: before } };
}

interface Container {
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  nodeName?: string;
  schedulingGates?: unknown[];
}

/**
 * A pod's QoS class by kube's rules: BestEffort without CPU or memory
 * requests and limits; Guaranteed when every container limits both and the
 * pod's summed requests equal its summed limits; Burstable otherwise.
 */
function qosClass(spec: PodSpec): string {
  // Summed per resource (cpu, memory) over the containers; undefined until one is set.
  let cpuRequests: number | undefined, memoryRequests: number | undefined;
  let cpuLimits: number | undefined, memoryLimits: number | undefined;
  let guaranteed = true;
  for (let l = 0; l < 2; l++) {
    const list = l === 0 ? spec.containers : spec.initContainers;
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const res = c && typeof c === "object" ? c.resources : undefined;
      const requests = res?.requests;
      const limits = res?.limits;
      const cpuRequest = quantity(requests?.cpu);
      if (cpuRequest !== undefined && cpuRequest !== 0) {
        cpuRequests = (cpuRequests ?? 0) + cpuRequest;
      }
      const memoryRequest = quantity(requests?.memory);
      if (memoryRequest !== undefined && memoryRequest !== 0) {
        memoryRequests = (memoryRequests ?? 0) + memoryRequest;
      }
      const cpuLimit = quantity(limits?.cpu);
      const cpuLimited = cpuLimit !== undefined && cpuLimit !== 0;
      if (cpuLimited) cpuLimits = (cpuLimits ?? 0) + cpuLimit;
      const memoryLimit = quantity(limits?.memory);
      const memoryLimited = memoryLimit !== undefined && memoryLimit !== 0;
      if (memoryLimited) memoryLimits = (memoryLimits ?? 0) + memoryLimit;
      if (!cpuLimited || !memoryLimited) guaranteed = false;
    }
  }
  const requested = (cpuRequests !== undefined ? 1 : 0) + (memoryRequests !== undefined ? 1 : 0);
  const limited = (cpuLimits !== undefined ? 1 : 0) + (memoryLimits !== undefined ? 1 : 0);
  if (requested === 0 && limited === 0) return "BestEffort";
  if (guaranteed) {
    if (cpuRequests !== undefined && !sameQuantity(cpuLimits, cpuRequests)) guaranteed = false;
    if (memoryRequests !== undefined && !sameQuantity(memoryLimits, memoryRequests)) {
      guaranteed = false;
    }
  }
  return guaranteed && requested === limited ? "Guaranteed" : "Burstable";
}

function sameQuantity(a: number | undefined, b: number): boolean {
  return a !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource quantity ("100m", "1Gi", "1e3", 2) as a number; undefined if unreadable. */
function quantity(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value !== "string") return undefined;
  // The same few quantities come in every pod: read once each (a bounded cache).
  if (QUANTITIES.has(value)) return QUANTITIES.get(value);
  if (QUANTITIES.size >= QUANTITIES_CAP) QUANTITIES.clear();
  const n = readQuantity(value);
  QUANTITIES.set(value, n);
  return n;
}

const QUANTITIES_CAP = 1024;
const QUANTITIES = new Map<string, number | undefined>();

function readQuantity(value: string): number | undefined {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(
    value.trim(),
  );
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  return base * SUFFIXES[m[3] ?? ""]!;
}
