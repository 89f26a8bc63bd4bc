/**
 * The defaults kube-apiserver fills in for the stored built-in kinds that are
 * neither workloads nor pods (those are `workload_defaults.ts`'s): their
 * `SetDefaults_*` functions, run on every decode, and the status their
 * strategies' `PrepareForCreate` leave on a created object. What a user sees
 * in `kubectl get -o yaml` right after a create:
 *
 * - PersistentVolumeClaim: `volumeMode: Filesystem`; created `Pending`.
 * - PersistentVolume: `persistentVolumeReclaimPolicy: Retain`, `volumeMode:
 *   Filesystem`, a hostPath's `type: ""`; created `Pending` with its
 *   `lastPhaseTransitionTime`.
 * - Endpoints' and EndpointSlices' ports: `protocol: TCP` (a slice's port
 *   also `name: ""`).
 * - LimitRange: a Container item's `default` from its `max`, its
 *   `defaultRequest` from its `default`, else its `min`.
 * - Node: `status.allocatable` from `status.capacity`.
 * - Secret: `type: Opaque`.
 * - HorizontalPodAutoscaler (v2): `minReplicas: 1`, the CPU 80% utilization
 *   metric when none is given, a given `behavior`'s missing rules and fields
 *   from kube's scale-up and scale-down rules; created with
 *   `desiredReplicas: 0`.
 * - NetworkPolicy: `policyTypes` (`Ingress`, and `Egress` with egress rules),
 *   ports' `protocol: TCP`. IngressClass: parameters' `scope: Cluster`.
 *   Ingress: created with `status.loadBalancer: {}`.
 * - PodDisruptionBudget: created with its zero counts.
 * - ResourceQuota: created with `status: {}`.
 * - StorageClass: `reclaimPolicy: Delete`, `volumeBindingMode: Immediate`.
 *   PriorityClass: `preemptionPolicy: PreemptLowerPriority`.
 * - RoleBinding and ClusterRoleBinding: `roleRef.apiGroup` and subjects'
 *   `apiGroup` (`rbac.authorization.k8s.io` for users and groups).
 * - Webhook configurations: each webhook's `failurePolicy: Fail`,
 *   `matchPolicy: Equivalent`, empty `namespaceSelector` and
 *   `objectSelector`, `timeoutSeconds: 10` (a mutating one's
 *   `reinvocationPolicy: Never`), rules' `scope: "*"`, a service's
 *   `port: 443`.
 * - CustomResourceDefinition: `names.singular`, `names.listKind`,
 *   `conversion.strategy: None`, a conversion service's `port: 443`.
 *   APIService: its service's `port: 443`.
 *
 * Only the parts that change are copied; an object with nothing to default
 * is returned as it is.
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const unset = (v: unknown) => v === undefined || v === null || v === "";
const RBAC = "rbac.authorization.k8s.io";

/** A list with `fn` applied to each object item; the same list when nothing changed. */
function mapItems(list: unknown, fn: (item: Obj) => Obj): unknown {
  if (!Array.isArray(list)) return list;
  let out: unknown[] | undefined;
  list.forEach((item, i) => {
    if (!isObj(item)) return;
    const next = fn(item);
    if (next !== item) (out ??= [...list])[i] = next;
  });
  return out ?? list;
}

/** `obj` with `values` set where absent (unset); the same object when none was. */
function withDefaults(obj: Obj, values: Obj): Obj {
  let out: Obj | undefined;
  for (const [key, value] of Object.entries(values)) {
    if (obj[key] === undefined || obj[key] === null) (out ??= { ...obj })[key] = value;
  }
  return out ?? obj;
}

/** `obj` with `key` replaced by `fn(obj[key])` when that is a different value. */
function at(obj: Obj, key: string, fn: (v: unknown) => unknown): Obj {
  const next = fn(obj[key]);
  return next === obj[key] ? obj : { ...obj, [key]: next };
}

const portTcp = (port: Obj) => withDefaults(port, { protocol: "TCP" });

/** A service reference's `port: 443`. */
const servicePort = (client: unknown) =>
  isObj(client)
    ? at(client, "service", (s) => isObj(s) ? withDefaults(s, { port: 443 }) : s)
    : client;

function limitRangeItem(item: Obj): Obj {
  if (item.type !== "Container") return item;
  const def: Obj = { ...(isObj(item.default) ? item.default : {}) };
  const req: Obj = { ...(isObj(item.defaultRequest) ? item.defaultRequest : {}) };
  for (const [k, v] of Object.entries(isObj(item.max) ? item.max : {})) def[k] ??= v;
  for (const [k, v] of Object.entries(def)) req[k] ??= v;
  for (const [k, v] of Object.entries(isObj(item.min) ? item.min : {})) req[k] ??= v;
  const same = (a: Obj, b: unknown) =>
    Object.keys(a).length === (isObj(b) ? Object.keys(b).length : 0);
  if (same(def, item.default) && same(req, item.defaultRequest)) return item;
  const out = { ...item };
  // An empty map is left out, as Go's omitempty leaves it.
  if (Object.keys(def).length) out.default = def;
  if (Object.keys(req).length) out.defaultRequest = req;
  return out;
}

const SCALE_UP = {
  stabilizationWindowSeconds: 0,
  selectPolicy: "Max",
  policies: [
    { type: "Pods", value: 4, periodSeconds: 15 },
    { type: "Percent", value: 100, periodSeconds: 15 },
  ],
};
const SCALE_DOWN = {
  selectPolicy: "Max",
  policies: [{ type: "Percent", value: 100, periodSeconds: 15 }],
};

/** Kube's GenerateHPAScale{Up,Down}Rules: the given rules' fields over the defaults. */
function scalingRules(rules: unknown, defaults: Obj): Obj {
  const out: Obj = structuredClone(defaults);
  if (!isObj(rules)) return out;
  for (const key of ["stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"]) {
    if (rules[key] !== undefined && rules[key] !== null) out[key] = rules[key];
  }
  return out;
}

function hpaSpec(spec: Obj): Obj {
  let out = withDefaults(spec, { minReplicas: 1 });
  if (!Array.isArray(out.metrics) || !out.metrics.length) {
    out = {
      ...out,
      metrics: [{
        type: "Resource",
        resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
      }],
    };
  }
  if (isObj(out.behavior)) {
    const b = out.behavior;
    out = {
      ...out,
      behavior: {
        ...b,
        scaleUp: scalingRules(b.scaleUp, SCALE_UP),
        scaleDown: scalingRules(b.scaleDown, SCALE_DOWN),
      },
    };
  }
  return out;
}

function networkPolicySpec(spec: Obj): Obj {
  const rules = (list: unknown) =>
    mapItems(list, (r) => at(r, "ports", (p) => mapItems(p, portTcp)));
  let out = at(at(spec, "ingress", rules), "egress", rules);
  if (!Array.isArray(out.policyTypes) || !out.policyTypes.length) {
    const egress = Array.isArray(out.egress) && out.egress.length > 0;
    out = { ...out, policyTypes: egress ? ["Ingress", "Egress"] : ["Ingress"] };
  }
  return out;
}

function webhook(mutating: boolean) {
  return (hook: Obj): Obj => {
    let out = withDefaults(hook, {
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      ...(mutating ? { reinvocationPolicy: "Never" } : {}),
    });
    out = at(out, "rules", (rules) => mapItems(rules, (r) => withDefaults(r, { scope: "*" })));
    return at(out, "clientConfig", servicePort);
  };
}

function subject(s: Obj): Obj {
  if (!unset(s.apiGroup)) return s;
  // A ServiceAccount's default is "", which Go leaves out of the JSON.
  return s.kind === "User" || s.kind === "Group" ? { ...s, apiGroup: RBAC } : s;
}

function binding(obj: Obj): Obj {
  const out = at(
    obj,
    "roleRef",
    (r) => isObj(r) && unset(r.apiGroup) ? { ...r, apiGroup: RBAC } : r,
  );
  return at(out, "subjects", (list) => mapItems(list, subject));
}

function crdSpec(spec: Obj): Obj {
  let out = at(spec, "names", (n) => {
    if (!isObj(n) || typeof n.kind !== "string" || !n.kind) return n;
    let names = n;
    if (unset(n.singular)) names = { ...names, singular: n.kind.toLowerCase() };
    if (unset(n.listKind)) names = { ...names, listKind: `${n.kind}List` };
    return names;
  });
  out = withDefaults(out, { conversion: { strategy: "None" } });
  return at(
    out,
    "conversion",
    (c) =>
      isObj(c) && isObj(c.webhook)
        ? at(c, "webhook", (w) => at(w as Obj, "clientConfig", servicePort))
        : c,
  );
}

/** The defaulters of the spec per kind. */
const SPEC: Record<string, (spec: Obj) => Obj> = {
  "/PersistentVolumeClaim": (s) => withDefaults(s, { volumeMode: "Filesystem" }),
  "/PersistentVolume": (s) =>
    at(
      withDefaults(s, { persistentVolumeReclaimPolicy: "Retain", volumeMode: "Filesystem" }),
      "hostPath",
      (h) => isObj(h) ? withDefaults(h, { type: "" }) : h,
    ),
  "/LimitRange": (s) => at(s, "limits", (l) => mapItems(l, limitRangeItem)),
  "autoscaling/HorizontalPodAutoscaler": hpaSpec,
  "networking.k8s.io/NetworkPolicy": networkPolicySpec,
  "networking.k8s.io/IngressClass": (s) =>
    at(s, "parameters", (p) => isObj(p) ? withDefaults(p, { scope: "Cluster" }) : p),
  "apiextensions.k8s.io/CustomResourceDefinition": crdSpec,
  "apiregistration.k8s.io/APIService": (s) => servicePort(s) as Obj,
};

/** The defaulters of the whole object per kind (kinds whose fields are not under `spec`). */
const WHOLE: Record<string, (obj: Obj) => Obj> = {
  "/Secret": (o) => unset(o.type) ? { ...o, type: "Opaque" } : o,
  "/Endpoints": (o) =>
    at(o, "subsets", (l) => mapItems(l, (s) => at(s, "ports", (p) => mapItems(p, portTcp)))),
  "discovery.k8s.io/EndpointSlice": (o) =>
    at(o, "ports", (p) => mapItems(p, (port) => withDefaults(port, { name: "", protocol: "TCP" }))),
  "/Node": (o) =>
    at(
      o,
      "status",
      (s) =>
        isObj(s) && s.capacity !== undefined && s.allocatable === undefined
          ? { ...s, allocatable: s.capacity }
          : s,
    ),
  "storage.k8s.io/StorageClass": (o) =>
    withDefaults(o, { reclaimPolicy: "Delete", volumeBindingMode: "Immediate" }),
  "scheduling.k8s.io/PriorityClass": (o) =>
    withDefaults(o, { preemptionPolicy: "PreemptLowerPriority" }),
  "rbac.authorization.k8s.io/RoleBinding": binding,
  "rbac.authorization.k8s.io/ClusterRoleBinding": binding,
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": (o) =>
    at(o, "webhooks", (l) => mapItems(l, webhook(false))),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": (o) =>
    at(o, "webhooks", (l) => mapItems(l, webhook(true))),
};

/**
 * An object of a built-in kind with kube's defaults (see the module doc);
 * kinds without defaults here are returned as they are.
 *
 * @param key `group/Kind` (`/Kind` for the core group).
 * @param obj The object; never mutated.
 * @returns The defaulted object, the input itself when nothing was defaulted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedKind } from "./kind_defaults.ts";
 * const sc = defaultedKind("storage.k8s.io/StorageClass", { metadata: {}, provisioner: "x" });
 * assert.deepEqual([sc.reclaimPolicy, sc.volumeBindingMode], ["Delete", "Immediate"]);
 * ```
 */
export function defaultedKind(key: string, obj: KObject): KObject {
  const whole = WHOLE[key];
  if (whole) return whole(obj as unknown as Obj) as unknown as KObject;
  const spec = SPEC[key];
  if (!spec || !isObj(obj.spec)) return obj;
  const out = spec(obj.spec);
  return out === obj.spec ? obj : { ...obj, spec: out };
}

/** The status kube's strategies leave on a created object, as kube encodes it. */
const CREATED_STATUS: Record<string, (now: string) => Obj> = {
  "/PersistentVolumeClaim": () => ({ phase: "Pending" }),
  "/PersistentVolume": (now) => ({ phase: "Pending", lastPhaseTransitionTime: now }),
  "/ResourceQuota": () => ({}),
  "autoscaling/HorizontalPodAutoscaler": () => ({ currentMetrics: null, desiredReplicas: 0 }),
  "networking.k8s.io/Ingress": () => ({ loadBalancer: {} }),
  "policy/PodDisruptionBudget": () => ({
    disruptionsAllowed: 0,
    currentHealthy: 0,
    desiredHealthy: 0,
    expectedPods: 0,
  }),
};

/**
 * The status a created object of these kinds starts with, whatever status was
 * sent (their strategies' `PrepareForCreate` reset it); or undefined for the
 * kinds not here.
 *
 * @param key `group/Kind` (`/Kind` for the core group).
 * @param now The creation time (kube's timestamp form).
 * @returns The new status, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createdStatus } from "./kind_defaults.ts";
 * assert.deepEqual(createdStatus("/PersistentVolumeClaim", ""), { phase: "Pending" });
 * ```
 */
export function createdStatus(key: string, now: string): Obj | undefined {
  return CREATED_STATUS[key]?.(now);
}
