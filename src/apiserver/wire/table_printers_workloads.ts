/**
 * The printers of the workload kinds: Pods and what runs them (Deployments,
 * ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers,
 * PodTemplates), their disruption budgets and autoscalers — kube's
 * `printPod`, `printDeployment` and their siblings.
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";
import {
  AGE,
  type Any,
  col,
  type Column,
  formatLabels,
  formatSelector,
  humanDuration,
  NAME,
  orNone,
  type Printer,
  quantity,
  selectorString,
  since,
  spec,
  status,
  wide,
} from "./table_columns.ts";

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

const podTemplate = (o: KObject) => spec(o).template?.spec;

/** An IntOrString as kube prints it; `N/A` when unset. */
const intOrString = (v: unknown): string =>
  typeof v === "number" || typeof v === "string" ? String(v) : "N/A";

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

/** The workload printers by `group/plural` (the core group as `/plural`). */
export const WORKLOAD_PRINTERS: Record<string, Printer> = {
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
};
