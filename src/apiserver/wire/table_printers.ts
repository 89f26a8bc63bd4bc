/**
 * The columns kube-apiserver prints for built-in kinds (its
 * `pkg/printers/internalversion` handlers, always rendered wide: columns of
 * priority 1 are what `kubectl get -o wide` adds), and the default table of
 * kinds without a printer (NAME, CREATED AT). Ages are
 * {@link humanDuration}; absent values print as kube prints them
 * (`<none>`, `<unknown>`, `<unset>`).
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";

/** A column and how one object fills its cell. */
export interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  cell: (obj: KObject, now: number) => unknown;
}

/** What a Table row needs besides its cells. */
export interface Printer {
  columns: Column[];
  /** `Completed` conditions of a row (Pods that succeeded or failed). */
  conditions?: (obj: KObject) => Array<Record<string, string>> | undefined;
}

const NAME_DESC =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATED_DESC =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/** The Name column every table starts with. */
export const NAME: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: NAME_DESC,
  priority: 0,
  cell: (o) => o.metadata.name,
};

/** The Age column of built-in printers. */
export const AGE: Column = {
  ...col("Age", (o, now) => since(o.metadata.creationTimestamp, now)),
  description: CREATED_DESC,
};

/** The default table's second column: the creation time in RFC 3339. */
const CREATED_AT: Column = {
  name: "Created At",
  type: "date",
  format: "",
  description: CREATED_DESC,
  priority: 0,
  cell: (o) => rfc3339(o.metadata.creationTimestamp),
};

function col(name: string, cell: Column["cell"], type = "string", priority = 0): Column {
  return { name, type, format: "", description: "", priority, cell };
}
function wide(name: string, cell: Column["cell"]): Column {
  return col(name, cell, "string", 1);
}

/**
 * Kubernetes' `duration.HumanDuration` of the time since a timestamp.
 *
 * @param ms The elapsed milliseconds.
 * @returns "5s", "3m20s", "2d3h", "3y40d", "<invalid>" for the future.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { humanDuration } from "./table_printers.ts";
 * assert.deepEqual(humanDuration(200_000), "3m20s");
 * assert.deepEqual(humanDuration(-5_000), "<invalid>");
 * ```
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 ? `${minutes}m${seconds % 60}s` : `${minutes}m`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 ? `${hours}h${minutes % 60}m` : `${hours}h`;
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return hours % 24 ? `${days}d${hours % 24}h` : `${days}d`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 ? `${years}y${days % 365}d` : `${years}y`;
  return `${years}y`;
}

/**
 * The age of a timestamp as kube's printers show it: `<unknown>` when unset.
 *
 * @param timestamp An RFC 3339 time.
 * @param now The current time in ms.
 * @returns The human duration since then.
 */
export function since(timestamp: unknown, now: number): string {
  if (typeof timestamp !== "string" || !timestamp) return "<unknown>";
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? "<unknown>" : humanDuration(now - t);
}

function rfc3339(timestamp: unknown): string {
  const t = typeof timestamp === "string" ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(t)) return "0001-01-01T00:00:00Z";
  return new Date(t).toISOString().replace(/\.\d+Z$/, "Z");
}

// deno-lint-ignore no-explicit-any
type Any = any;
const spec = (o: KObject): Any => (o.spec ?? {}) as Any;
const status = (o: KObject): Any => (o.status ?? {}) as Any;

/** `labels.FormatLabels`: `k=v` sorted by key, `<none>` when empty. */
function formatLabels(m: unknown): string {
  const entries = Object.entries((m ?? {}) as Record<string, string>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  );
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "<none>";
}

/** A LabelSelector as `labels.Selector.String()`: requirements sorted by key. */
function selectorString(sel: Any): string {
  if (!sel) return "";
  const reqs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries((sel.matchLabels ?? {}) as Record<string, string>)) {
    reqs.push([k, `${k}=${v}`]);
  }
  for (const e of (sel.matchExpressions ?? []) as Any[]) {
    const vals = [...((e.values ?? []) as string[])].sort().join(",");
    const text = e.operator === "In"
      ? `${e.key} in (${vals})`
      : e.operator === "NotIn"
      ? `${e.key} notin (${vals})`
      : e.operator === "Exists"
      ? `${e.key}`
      : e.operator === "DoesNotExist"
      ? `!${e.key}`
      : undefined;
    if (text === undefined) return "<invalid>";
    reqs.push([e.key, text]);
  }
  reqs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return reqs.map(([, t]) => t).join(",");
}

/** `metav1.FormatLabelSelector`: `<none>` for an empty selector. */
function formatSelector(sel: Any): string {
  const s = selectorString(sel);
  return s === "<invalid>" ? "<error>" : s || "<none>";
}

function containerCells(podSpec: Any): [string, string] {
  const cs = (podSpec?.containers ?? []) as Any[];
  return [cs.map((c) => c.name ?? "").join(","), cs.map((c) => c.image ?? "").join(",")];
}
const templateContainers = (path: (o: KObject) => Any) => [
  wide("Containers", (o) => containerCells(path(o))[0]),
  wide("Images", (o) => containerCells(path(o))[1]),
];

/** The columns of ReplicaSets and ReplicationControllers: they differ in how the selector prints. */
function replicaColumns(selector: Column["cell"]): Column[] {
  return [
    NAME,
    col("Desired", (o) => spec(o).replicas ?? 1, "integer"),
    col("Current", (o) => status(o).replicas ?? 0, "integer"),
    col("Ready", (o) => status(o).readyReplicas ?? 0, "integer"),
    AGE,
    ...templateContainers(podTemplate),
    wide("Selector", selector),
  ];
}

function hasCondition(conds: unknown, type: string): boolean {
  const c = ((conds ?? []) as Any[]).find((c) => c.type === type);
  return c?.status === "True";
}

/** A Pod's READY, STATUS and RESTARTS as kube's `printPod` computes them. */
function podState(o: KObject, now: number): { ready: string; reason: string; restarts: string } {
  const s = status(o);
  const initSpecs = new Map<string, Any>(
    ((spec(o).initContainers ?? []) as Any[]).map((c) => [c.name, c]),
  );
  const restartable = (name: string) => initSpecs.get(name)?.restartPolicy === "Always";
  let total = (spec(o).containers ?? []).length as number;
  for (const c of initSpecs.values()) if (c.restartPolicy === "Always") total++;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;
  let reason: string = s.phase ?? "";
  if (s.reason) reason = s.reason;
  for (const c of (s.conditions ?? []) as Any[]) {
    if (c.type === "PodScheduled" && c.reason === "SchedulingGated") reason = "SchedulingGated";
  }
  const finished = (c: Any) => Date.parse(c.lastState?.terminated?.finishedAt ?? "") || 0;
  let initializing = false;
  const inits = (s.initContainerStatuses ?? []) as Any[];
  for (let i = 0; i < inits.length; i++) {
    const c = inits[i];
    restarts += c.restartCount ?? 0;
    lastRestart = Math.max(lastRestart, finished(c));
    if (restartable(c.name)) {
      sidecarRestarts += c.restartCount ?? 0;
      lastSidecarRestart = Math.max(lastSidecarRestart, finished(c));
    }
    const term = c.state?.terminated;
    const wait = c.state?.waiting;
    if (term && (term.exitCode ?? 0) === 0) continue;
    if (restartable(c.name) && c.started === true) {
      if (c.ready) ready++;
      continue;
    }
    if (term) {
      reason = term.reason
        ? `Init:${term.reason}`
        : term.signal
        ? `Init:Signal:${term.signal}`
        : `Init:ExitCode:${term.exitCode ?? 0}`;
    } else if (wait?.reason && wait.reason !== "PodInitializing") reason = `Init:${wait.reason}`;
    else reason = `Init:${i}/${initSpecs.size}`;
    initializing = true;
    break;
  }
  if (!initializing || hasCondition(s.conditions, "Initialized")) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let running = false;
    const cs = (s.containerStatuses ?? []) as Any[];
    for (let i = cs.length - 1; i >= 0; i--) {
      const c = cs[i];
      restarts += c.restartCount ?? 0;
      lastRestart = Math.max(lastRestart, finished(c));
      const term = c.state?.terminated;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (term?.reason) reason = term.reason;
      else if (term) {
        reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode ?? 0}`;
      } else if (c.ready && c.state?.running) {
        running = true;
        ready++;
      }
    }
    if (reason === "Completed" && running) {
      reason = hasCondition(s.conditions, "Ready") ? "Running" : "NotReady";
    }
  }
  const deleting = !!o.metadata.deletionTimestamp;
  if (deleting && s.reason === "NodeLost") reason = "Unknown";
  else if (deleting && s.phase !== "Succeeded" && s.phase !== "Failed") reason = "Terminating";
  const restartsText = restarts !== 0 && lastRestart
    ? `${restarts} (${humanDuration(now - lastRestart)} ago)`
    : String(restarts);
  return { ready: `${ready}/${total}`, reason, restarts: restartsText };
}

function readinessGates(o: KObject): string {
  const gates = (spec(o).readinessGates ?? []) as Any[];
  if (!gates.length) return "<none>";
  const conds = (status(o).conditions ?? []) as Any[];
  const ok = gates.filter((g) => conds.find((c) => c.type === g.conditionType)?.status === "True");
  return `${ok.length}/${gates.length}`;
}

const orNone = (v: unknown): string => (typeof v === "string" && v ? v : "<none>");

function serviceExternalIP(o: KObject): string {
  const sp = spec(o);
  const ext = (sp.externalIPs ?? []) as string[];
  switch (sp.type ?? "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return ext.length ? ext.join(",") : "<none>";
    case "LoadBalancer": {
      const lb = ((status(o).loadBalancer?.ingress ?? []) as Any[])
        .flatMap((i) => [i.ip, i.hostname].filter((x) => x)) as string[];
      if (ext.length) return [...lb, ...ext].join(",");
      return lb.length ? lb.join(",") : "<pending>";
    }
    case "ExternalName":
      return sp.externalName ?? "";
  }
  return "<unknown>";
}

function servicePorts(o: KObject): string {
  const ports = ((spec(o).ports ?? []) as Any[]).map((p) =>
    p.nodePort > 0
      ? `${p.port}:${p.nodePort}/${p.protocol ?? "TCP"}`
      : `${p.port}/${p.protocol ?? "TCP"}`
  );
  return ports.length ? ports.join(",") : "<none>";
}

function jobStatus(o: KObject): string {
  const c = status(o).conditions;
  if (hasCondition(c, "Complete")) return "Complete";
  if (hasCondition(c, "Failed")) return "Failed";
  if (o.metadata.deletionTimestamp) return "Terminating";
  if (hasCondition(c, "Suspended")) return "Suspended";
  if (hasCondition(c, "FailureTarget")) return "FailureTarget";
  if (hasCondition(c, "SuccessCriteriaMet")) return "SuccessCriteriaMet";
  return "Running";
}

function jobCompletions(o: KObject): string {
  const succeeded = status(o).succeeded ?? 0;
  const sp = spec(o);
  if (typeof sp.completions === "number") return `${succeeded}/${sp.completions}`;
  const parallelism = typeof sp.parallelism === "number" ? sp.parallelism : 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(o: KObject, now: number): string {
  const start = Date.parse(status(o).startTime ?? "");
  if (Number.isNaN(start)) return "";
  const end = Date.parse(status(o).completionTime ?? "");
  return humanDuration((Number.isNaN(end) ? now : end) - start);
}

/** A core/v1 or events.k8s.io/v1 Event, read as kube's internal Event. */
function eventView(o: KObject): Any {
  const e = o as Any;
  const io = e.involvedObject ?? e.regarding ?? {};
  return {
    first: e.firstTimestamp ?? e.deprecatedFirstTimestamp,
    last: e.lastTimestamp ?? e.deprecatedLastTimestamp,
    eventTime: e.eventTime,
    count: e.count ?? e.deprecatedCount ?? 0,
    series: e.series,
    io,
    source: e.source ?? e.deprecatedSource ?? {},
    reportingController: e.reportingComponent ?? e.reportingController ?? "",
    reportingInstance: e.reportingInstance ?? "",
    message: e.message ?? e.note ?? "",
  };
}

function eventFirstSeen(o: KObject, now: number): string {
  const e = eventView(o);
  return e.first ? since(e.first, now) : since(e.eventTime, now);
}

function eventLastSeen(o: KObject, now: number): string {
  const e = eventView(o);
  if (e.series) return since(e.series.lastObservedTime, now);
  return e.last ? since(e.last, now) : eventFirstSeen(o, now);
}

function subjects(o: KObject, kind: string): string {
  return ((o as Any).subjects ?? [] as Any[])
    .filter((s: Any) => s.kind === kind)
    .map((s: Any) => (kind === "ServiceAccount" ? `${s.namespace ?? ""}/${s.name}` : s.name))
    .join(", ");
}
const bindingColumns = [
  col("Role", (o) => `${(o as Any).roleRef?.kind ?? ""}/${(o as Any).roleRef?.name ?? ""}`),
  AGE,
  wide("Users", (o) => subjects(o, "User")),
  wide("Groups", (o) => subjects(o, "Group")),
  wide("ServiceAccounts", (o) => subjects(o, "ServiceAccount")),
];

function nodeStatus(o: KObject): string {
  const ready = ((status(o).conditions ?? []) as Any[]).find((c) => c.type === "Ready");
  const out = ready ? [ready.status === "True" ? "Ready" : "NotReady"] : ["Unknown"];
  if (spec(o).unschedulable) out.push("SchedulingDisabled");
  return out.join(",");
}

function nodeRoles(o: KObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
    if (k.startsWith("node-role.kubernetes.io/")) {
      const role = k.slice("node-role.kubernetes.io/".length);
      if (role) roles.add(role);
    } else if (k === "kubernetes.io/role" && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(",") : "<none>";
}

function nodeAddress(o: KObject, type: string): string {
  const a = ((status(o).addresses ?? []) as Any[]).find((a) => a.type === type);
  return a?.address ?? "<none>";
}

const nodeInfo = (o: KObject, key: string): string => status(o).nodeInfo?.[key] || "<unknown>";

const podTemplate = (o: KObject) => spec(o).template?.spec;

/** An IntOrString as kube prints it; `N/A` when unset. */
const intOrString = (v: unknown): string =>
  typeof v === "number" || typeof v === "string" ? String(v) : "N/A";

/** `storageutil.IsDefaultAnnotation`: the GA or the beta annotation says "true". */
function isDefaultClass(o: KObject): boolean {
  const a = o.metadata.annotations ?? {};
  return a["storageclass.kubernetes.io/is-default-class"] === "true" ||
    a["storageclass.beta.kubernetes.io/is-default-class"] === "true";
}

/** `helper.GetAccessModesAsString`: the modes present, in kube's fixed order. */
function accessModes(modes: unknown): string {
  const have = new Set((modes ?? []) as string[]);
  const short: Array<[string, string]> = [
    ["ReadWriteOnce", "RWO"],
    ["ReadOnlyMany", "ROX"],
    ["ReadWriteMany", "RWX"],
    ["ReadWriteOncePod", "RWOP"],
  ];
  return short.filter(([mode]) => have.has(mode)).map(([, s]) => s).join(",");
}

/** A resource quantity as stored (kube prints its canonical form; quantities are kept as sent). */
const quantity = (
  q: unknown,
): string => (q === undefined || q === null || q === "" ? "0" : String(q));

/** A volume or claim's class: the beta annotation wins over `storageClassName`. */
function volumeClass(o: KObject): string {
  const beta = o.metadata.annotations?.["volume.beta.kubernetes.io/storage-class"];
  return beta ?? spec(o).storageClassName ?? "";
}

/** Terminating while deleted, else the status phase. */
const phaseOf = (o: KObject): string =>
  o.metadata.deletionTimestamp ? "Terminating" : status(o).phase ?? "";

/** Go's `net.JoinHostPort`: IPv6 in brackets. */
const hostPort = (ip: string, port: unknown) =>
  ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;

/** `formatEndpoints`: up to three addresses (with each port), then `+ N more...`. */
function formatEndpoints(o: KObject): string {
  const subsets = ((o as Any).subsets ?? []) as Any[];
  if (!subsets.length) return "<none>";
  const max = 3;
  const list: string[] = [];
  let more = false;
  let count = 0;
  const add = (text: string) => {
    if (list.length === max) more = true;
    else list.push(text);
  };
  for (const ss of subsets) {
    const addresses = (ss.addresses ?? []) as Any[];
    const ports = (ss.ports ?? []) as Any[];
    if (!ports.length) {
      count += addresses.length;
      for (const a of addresses) add(a.ip ?? "");
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const a of addresses) add(hostPort(a.ip ?? "", port.port ?? 0));
    }
  }
  const text = list.join(",");
  return more ? `${text} + ${count - max} more...` : text;
}

/** A ResourceQuota's REQUEST or LIMIT cell: `name: used/hard` over `status.hard`, sorted. */
function quotaCell(o: KObject, limits: boolean): string {
  const hard = (status(o).hard ?? {}) as Record<string, unknown>;
  const used = (status(o).used ?? {}) as Record<string, unknown>;
  return Object.keys(hard).sort()
    .filter((r) => (r.split(".").length > 1 && r.split(".")[0] === "limits") === limits)
    .map((r) => `${r}: ${quantity(used[r])}/${quantity(hard[r])}`)
    .join(", ");
}

/** `formatHPAMetrics`: each metric as `current/target`, two at most, then `+ N more...`. */
function hpaTargets(o: KObject): string {
  const specs = (spec(o).metrics ?? []) as Any[];
  if (!specs.length) return "<none>";
  const statuses = (status(o).currentMetrics ?? []) as Any[];
  const list = specs.map((m, i) => {
    const st = statuses[i];
    const value = (v: unknown) => (v === undefined || v === null ? "<unknown>" : String(v));
    switch (m.type) {
      case "External":
      case "Object": {
        const key = m.type === "External" ? "external" : "object";
        const target = m[key]?.target ?? {};
        const current = st?.[key]?.current;
        if (target.averageValue !== undefined) {
          return `${value(current?.averageValue)}/${quantity(target.averageValue)} (avg)`;
        }
        return `${st?.[key] ? quantity(current?.value) : "<unknown>"}/${quantity(target.value)}`;
      }
      case "Pods": {
        const current = st?.pods ? quantity(st.pods.current?.averageValue) : "<unknown>";
        return `${current}/${quantity(m.pods?.target?.averageValue)}`;
      }
      case "Resource":
      case "ContainerResource": {
        const key = m.type === "Resource" ? "resource" : "containerResource";
        const source = m[key] ?? {};
        const target = source.target ?? {};
        const current = st?.[key]?.current;
        const prefix = `${source.name ?? ""}`;
        if (target.averageValue !== undefined) {
          const now = st?.[key] ? quantity(current?.averageValue) : "<unknown>";
          return `${prefix}: ${now}/${quantity(target.averageValue)}`;
        }
        const now = typeof current?.averageUtilization === "number"
          ? `${current.averageUtilization}%`
          : "<unknown>";
        const want = typeof target.averageUtilization === "number"
          ? `${target.averageUtilization}%`
          : "<auto>";
        return `${prefix}: ${now}/${want}`;
      }
    }
    return "<unknown type>";
  });
  return list.length > 2
    ? `${list.slice(0, 2).join(", ")} + ${list.length - 2} more...`
    : list.join(", ");
}

/** `formatHosts`: up to three rule hosts, `*` when none, then `+ N more...`. */
function ingressHosts(o: KObject): string {
  const rules = (spec(o).rules ?? []) as Any[];
  const max = 3;
  const list: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (list.length === max) more = true;
    if (!more && rule.host) list.push(rule.host);
  }
  if (!list.length) return "*";
  return more ? `${list.join(",")} + ${rules.length - max} more...` : list.join(",");
}

/** An Ingress's ADDRESS: its load balancer's IPs or host names, sorted and distinct. */
function ingressAddress(o: KObject): string {
  const seen = new Set<string>();
  for (const i of (status(o).loadBalancer?.ingress ?? []) as Any[]) {
    if (i.ip) seen.add(i.ip);
    else if (i.hostname) seen.add(i.hostname);
  }
  return [...seen].sort().join(",");
}

function ingressClassParameters(o: KObject): string {
  const p = spec(o).parameters;
  if (!p) return "<none>";
  return `${p.kind ?? ""}${typeof p.apiGroup === "string" ? `.${p.apiGroup}` : ""}/${p.name ?? ""}`;
}

const COMPLETED_SUCCEEDED = [{
  type: "Completed",
  status: "True",
  reason: "Succeeded",
  message: "The pod has completed successfully.",
}];
const COMPLETED_FAILED = [{
  type: "Completed",
  status: "True",
  reason: "Failed",
  message: "The pod failed.",
}];

/** Printers by `group/plural` (the core group as `/plural`). */
const PRINTERS: Record<string, Printer> = {
  "/pods": {
    columns: [
      NAME,
      col("Ready", (o, now) => podState(o, now).ready),
      col("Status", (o, now) => podState(o, now).reason),
      col("Restarts", (o, now) => podState(o, now).restarts),
      AGE,
      wide("IP", (o) => orNone(status(o).podIPs?.[0]?.ip)),
      wide("Node", (o) => orNone(spec(o).nodeName)),
      wide("Nominated Node", (o) => orNone(status(o).nominatedNodeName)),
      wide("Readiness Gates", readinessGates),
    ],
    conditions: (o) =>
      status(o).phase === "Succeeded"
        ? COMPLETED_SUCCEEDED
        : status(o).phase === "Failed"
        ? COMPLETED_FAILED
        : undefined,
  },
  "/services": {
    columns: [
      NAME,
      col("Type", (o) => spec(o).type ?? "ClusterIP"),
      col("Cluster-IP", (o) => orNone(spec(o).clusterIPs?.[0] ?? spec(o).clusterIP)),
      col("External-IP", serviceExternalIP),
      col("Port(s)", servicePorts),
      AGE,
      wide("Selector", (o) => formatLabels(spec(o).selector)),
    ],
  },
  "apps/deployments": {
    columns: [
      NAME,
      col("Ready", (o) => `${status(o).readyReplicas ?? 0}/${spec(o).replicas ?? 1}`),
      col("Up-to-date", (o) => status(o).updatedReplicas ?? 0),
      col("Available", (o) => status(o).availableReplicas ?? 0),
      AGE,
      ...templateContainers(podTemplate),
      wide("Selector", (o) => selectorString(spec(o).selector)),
    ],
  },
  // A ReplicaSet's selector is a LabelSelector; a ReplicationController's a plain map.
  "apps/replicasets": { columns: replicaColumns((o) => formatSelector(spec(o).selector)) },
  "apps/statefulsets": {
    columns: [
      NAME,
      col("Ready", (o) => `${status(o).readyReplicas ?? 0}/${spec(o).replicas ?? 1}`),
      AGE,
      ...templateContainers(podTemplate),
    ],
  },
  "apps/daemonsets": {
    columns: [
      NAME,
      col("Desired", (o) => status(o).desiredNumberScheduled ?? 0, "integer"),
      col("Current", (o) => status(o).currentNumberScheduled ?? 0, "integer"),
      col("Ready", (o) => status(o).numberReady ?? 0, "integer"),
      col("Up-to-date", (o) => status(o).updatedNumberScheduled ?? 0, "integer"),
      col("Available", (o) => status(o).numberAvailable ?? 0, "integer"),
      col("Node Selector", (o) => formatLabels(podTemplate(o)?.nodeSelector)),
      AGE,
      ...templateContainers(podTemplate),
      wide("Selector", (o) => formatSelector(spec(o).selector)),
    ],
  },
  "batch/jobs": {
    columns: [
      NAME,
      col("Status", jobStatus),
      col("Completions", jobCompletions),
      col("Duration", jobDuration),
      AGE,
      ...templateContainers(podTemplate),
      wide("Selector", (o) => formatSelector(spec(o).selector)),
    ],
  },
  "batch/cronjobs": {
    columns: [
      NAME,
      col("Schedule", (o) => spec(o).schedule ?? ""),
      col("Timezone", (o) => spec(o).timeZone ?? "<none>"),
      col(
        "Suspend",
        (o) =>
          typeof spec(o).suspend === "boolean" ? (spec(o).suspend ? "True" : "False") : "<unset>",
        "boolean",
      ),
      col("Active", (o) => (status(o).active ?? []).length, "integer"),
      col(
        "Last Schedule",
        (o, now) => status(o).lastScheduleTime ? since(status(o).lastScheduleTime, now) : "<none>",
      ),
      AGE,
      ...templateContainers((o) => spec(o).jobTemplate?.spec?.template?.spec),
      wide("Selector", (o) => formatSelector(spec(o).jobTemplate?.spec?.selector)),
    ],
  },
  "/serviceaccounts": {
    columns: [NAME, col("Secrets", (o) => ((o as Any).secrets ?? []).length), AGE],
  },
  "/configmaps": {
    columns: [
      NAME,
      col("Data", (o) =>
        Object.keys((o.data as object) ?? {}).length +
        Object.keys((o.binaryData as object) ?? {}).length),
      AGE,
    ],
  },
  "/secrets": {
    columns: [
      NAME,
      col("Type", (o) => (o.type as string) ?? "Opaque"),
      col("Data", (o) => Object.keys((o.data as object) ?? {}).length),
      AGE,
    ],
  },
  "/namespaces": {
    columns: [NAME, col("Status", (o) => status(o).phase ?? "Active"), AGE],
  },
  "/nodes": {
    columns: [
      NAME,
      col("Status", nodeStatus),
      col("Roles", nodeRoles),
      AGE,
      col("Version", (o) => status(o).nodeInfo?.kubeletVersion ?? ""),
      wide("Internal-IP", (o) => nodeAddress(o, "InternalIP")),
      wide("External-IP", (o) => nodeAddress(o, "ExternalIP")),
      wide("OS-Image", (o) => nodeInfo(o, "osImage")),
      wide("Kernel-Version", (o) => nodeInfo(o, "kernelVersion")),
      wide("Container-Runtime", (o) => nodeInfo(o, "containerRuntimeVersion")),
    ],
  },
  "/events": {
    columns: [
      col("Last Seen", eventLastSeen),
      col("Type", (o) => (o as Any).type ?? ""),
      col("Reason", (o) => (o as Any).reason ?? ""),
      col("Object", (o) => {
        const io = eventView(o).io;
        const kind = String(io.kind ?? "").toLowerCase();
        return io.name ? `${kind}/${io.name}` : kind;
      }),
      wide("Subobject", (o) => eventView(o).io.fieldPath ?? ""),
      wide("Source", (o) => {
        const e = eventView(o);
        const component = e.source.component || e.reportingController;
        const instance = e.source.host || e.reportingInstance;
        return instance ? `${component}, ${instance}` : component;
      }),
      col("Message", (o) => String(eventView(o).message).trim()),
      wide("First Seen", eventFirstSeen),
      wide("Count", (o) => {
        const e = eventView(o);
        return e.series ? e.series.count ?? 0 : e.count || 1;
      }),
      { ...NAME, priority: 1 },
    ],
  },
  "/replicationcontrollers": { columns: replicaColumns((o) => formatLabels(spec(o).selector)) },
  "/podtemplates": {
    columns: [
      NAME,
      col("Containers", (o) => containerCells((o as Any).template?.spec)[0]),
      col("Images", (o) => containerCells((o as Any).template?.spec)[1]),
      col("Pod Labels", (o) => formatLabels((o as Any).template?.metadata?.labels)),
    ],
  },
  "policy/poddisruptionbudgets": {
    columns: [
      NAME,
      col("Min Available", (o) => intOrString(spec(o).minAvailable)),
      col("Max Unavailable", (o) => intOrString(spec(o).maxUnavailable)),
      col("Allowed Disruptions", (o) => status(o).disruptionsAllowed ?? 0, "integer"),
      AGE,
    ],
  },
  "networking.k8s.io/networkpolicies": {
    columns: [NAME, col("Pod-Selector", (o) => formatSelector(spec(o).podSelector ?? {})), AGE],
  },
  "storage.k8s.io/storageclasses": {
    columns: [
      { ...NAME, cell: (o) => o.metadata.name + (isDefaultClass(o) ? " (default)" : "") },
      col("Provisioner", (o) => (o as Any).provisioner ?? ""),
      col("ReclaimPolicy", (o) => (o as Any).reclaimPolicy ?? "Delete"),
      col("VolumeBindingMode", (o) => (o as Any).volumeBindingMode ?? "Immediate"),
      col("AllowVolumeExpansion", (o) => (o as Any).allowVolumeExpansion ?? false),
      AGE,
    ],
  },
  "/persistentvolumes": {
    columns: [
      NAME,
      col("Capacity", (o) => quantity(spec(o).capacity?.storage)),
      col("Access Modes", (o) => accessModes(spec(o).accessModes)),
      col("Reclaim Policy", (o) => spec(o).persistentVolumeReclaimPolicy ?? ""),
      col("Status", phaseOf),
      col("Claim", (o) => {
        const ref = spec(o).claimRef;
        return ref ? `${ref.namespace ?? ""}/${ref.name ?? ""}` : "";
      }),
      col("StorageClass", volumeClass),
      col("VolumeAttributesClass", (o) => spec(o).volumeAttributesClassName ?? "<unset>"),
      col("Reason", (o) => status(o).reason ?? ""),
      AGE,
      wide("VolumeMode", (o) => spec(o).volumeMode ?? "<unset>"),
    ],
  },
  "/persistentvolumeclaims": {
    columns: [
      NAME,
      col("Status", phaseOf),
      col("Volume", (o) => spec(o).volumeName ?? ""),
      // Capacity and access modes are the bound volume's: empty until bound.
      col("Capacity", (o) => (spec(o).volumeName ? quantity(status(o).capacity?.storage) : "")),
      col("Access Modes", (o) => (spec(o).volumeName ? accessModes(status(o).accessModes) : "")),
      col("StorageClass", volumeClass),
      col("VolumeAttributesClass", (o) => spec(o).volumeAttributesClassName ?? "<unset>"),
      AGE,
      wide("VolumeMode", (o) => spec(o).volumeMode ?? "<unset>"),
    ],
  },
  "/endpoints": { columns: [NAME, col("Endpoints", formatEndpoints), AGE] },
  "/resourcequotas": {
    columns: [
      NAME,
      AGE,
      col("Request", (o) => quotaCell(o, false)),
      col("Limit", (o) => quotaCell(o, true)),
    ],
  },
  "autoscaling/horizontalpodautoscalers": {
    columns: [
      NAME,
      col(
        "Reference",
        (o) => `${spec(o).scaleTargetRef?.kind ?? ""}/${spec(o).scaleTargetRef?.name ?? ""}`,
      ),
      col("Targets", hpaTargets),
      col(
        "MinPods",
        (o) => (typeof spec(o).minReplicas === "number" ? String(spec(o).minReplicas) : "<unset>"),
      ),
      col("MaxPods", (o) => spec(o).maxReplicas ?? 0),
      col("Replicas", (o) => status(o).currentReplicas ?? 0),
      AGE,
    ],
  },
  "networking.k8s.io/ingresses": {
    columns: [
      NAME,
      col("Class", (o) => spec(o).ingressClassName ?? "<none>"),
      col("Hosts", ingressHosts),
      col("Address", ingressAddress),
      col("Ports", (o) => ((spec(o).tls ?? []).length ? "80, 443" : "80")),
      AGE,
    ],
  },
  "networking.k8s.io/ingressclasses": {
    columns: [
      NAME,
      col("Controller", (o) => spec(o).controller ?? ""),
      col("Parameters", ingressClassParameters),
      AGE,
    ],
  },
  "scheduling.k8s.io/priorityclasses": {
    columns: [
      NAME,
      col("Value", (o) => (o as Any).value ?? 0, "integer"),
      col("Global-Default", (o) => (o as Any).globalDefault ?? false, "boolean"),
      col("Preemption-Policy", (o) => (o as Any).preemptionPolicy ?? "<unset>"),
      AGE,
    ],
  },
  "coordination.k8s.io/leases": {
    columns: [NAME, col("Holder", (o) => spec(o).holderIdentity ?? ""), AGE],
  },
  "rbac.authorization.k8s.io/rolebindings": { columns: [NAME, ...bindingColumns] },
  "rbac.authorization.k8s.io/clusterrolebindings": { columns: [NAME, ...bindingColumns] },
  "admissionregistration.k8s.io/validatingwebhookconfigurations": {
    columns: [NAME, col("Webhooks", (o) => ((o as Any).webhooks ?? []).length, "integer"), AGE],
  },
  "admissionregistration.k8s.io/mutatingwebhookconfigurations": {
    columns: [NAME, col("Webhooks", (o) => ((o as Any).webhooks ?? []).length, "integer"), AGE],
  },
};
PRINTERS["events.k8s.io/events"] = PRINTERS["/events"]!;

/** Kinds served by kube's default table (NAME, CREATED AT): no printer of their own. */
export const DEFAULT_TABLE: Printer = { columns: [NAME, CREATED_AT] };

/**
 * The printer of a built-in kind.
 *
 * @param group The API group ("" for core).
 * @param plural The resource's plural.
 * @returns Its printer; kinds without one print NAME and AGE.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { builtinPrinter } from "./table_printers.ts";
 * assert.deepEqual(builtinPrinter("", "secrets").columns.map((c) => c.name), ["Name", "Type", "Data", "Age"]);
 * ```
 */
export function builtinPrinter(group: string, plural: string): Printer {
  const key = `${group}/${plural}`;
  const p = PRINTERS[key];
  if (p) return p;
  if (DEFAULT_TABLE_KINDS.has(key)) return DEFAULT_TABLE;
  return { columns: [NAME, AGE] };
}

const DEFAULT_TABLE_KINDS = new Set([
  "rbac.authorization.k8s.io/roles",
  "rbac.authorization.k8s.io/clusterroles",
  "apiextensions.k8s.io/customresourcedefinitions",
  "/limitranges",
]);
