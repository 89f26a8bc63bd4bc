/**
 * The printers of the remaining built-in kinds: configuration (ConfigMaps,
 * Secrets, ServiceAccounts), the cluster (Namespaces, Nodes, Events, Leases,
 * PriorityClasses, quotas), storage (classes, volumes, claims), RBAC bindings
 * and webhook configurations.
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";
import {
  AGE,
  type Any,
  col,
  NAME,
  type Printer,
  quantity,
  since,
  spec,
  status,
  wide,
} from "./table_columns.ts";

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

/** A volume or claim's class: the beta annotation wins over `storageClassName`. */
function volumeClass(o: KObject): string {
  const beta = o.metadata.annotations?.["volume.beta.kubernetes.io/storage-class"];
  return beta ?? spec(o).storageClassName ?? "";
}

/** Terminating while deleted, else the status phase. */
const phaseOf = (o: KObject): string =>
  o.metadata.deletionTimestamp ? "Terminating" : status(o).phase ?? "";

/** A ResourceQuota's REQUEST or LIMIT cell: `name: used/hard` over `status.hard`, sorted. */
function quotaCell(o: KObject, limits: boolean): string {
  const hard = (status(o).hard ?? {}) as Record<string, unknown>;
  const used = (status(o).used ?? {}) as Record<string, unknown>;
  return Object.keys(hard).sort()
    .filter((r) => (r.split(".").length > 1 && r.split(".")[0] === "limits") === limits)
    .map((r) => `${r}: ${quantity(used[r])}/${quantity(hard[r])}`)
    .join(", ");
}

/** The configuration, cluster, storage and RBAC printers by `group/plural` (the core group as `/plural`). */
export const CLUSTER_PRINTERS: Record<string, Printer> = {
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
  "/resourcequotas": {
    columns: [
      NAME,
      AGE,
      col("Request", (o) => quotaCell(o, false)),
      col("Limit", (o) => quotaCell(o, true)),
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
