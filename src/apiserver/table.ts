/**
 * Server-side printing: `kubectl get` asks for a `meta.k8s.io/v1` Table and
 * prints what the server renders — a CRD's `additionalPrinterColumns`, or the
 * usual columns of a built-in kind, with ages rendered as Kubernetes does
 * ("5s", "3m20s", "2d").
 *
 * @module
 */

import type { PrinterColumn, ResourceDef } from "./resources.ts";
import type { KObject } from "./store.ts";

/** The media type kubectl asks for and expects back. */
export const TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io";

interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  cell: (obj: KObject, now: number) => unknown;
}

const NAME: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  priority: 0,
  cell: (o) => o.metadata.name,
};
const AGE: Column = {
  name: "Age",
  type: "string",
  format: "",
  description:
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
  priority: 0,
  cell: (o, now) => age(o.metadata.creationTimestamp, now),
};

/**
 * Whether an `Accept` header asks for a Table.
 *
 * @param accept The header.
 * @returns True for `as=Table`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { wantsTable } from "./table.ts";
 * assert.deepEqual(wantsTable("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"), true);
 * ```
 */
export function wantsTable(accept: string | null): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

/**
 * Renders objects as a Table.
 *
 * @param def The resource.
 * @param objects The objects.
 * @param resourceVersion The list's resourceVersion.
 * @param options Whether to leave out the column definitions (watch events after the first),
 *   and what to embed in rows.
 * @returns The Table object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderTable } from "./table.ts";
 * import { ResourceRegistry } from "./registry.ts";
 * const cm = new ResourceRegistry().find("", "v1", "configmaps")!;
 * const t = renderTable(cm, [{ metadata: { name: "x" }, data: { a: "1" } }], "5");
 * assert.deepEqual((t.rows as { cells: unknown[] }[])[0]?.cells.slice(0, 2), ["x", 1]);
 * ```
 */
export function renderTable(
  def: ResourceDef,
  objects: Iterable<KObject>,
  resourceVersion: string,
  options: { noHeaders?: boolean; includeObject?: string; continueToken?: string } = {},
): Record<string, unknown> {
  const columns = columnsOf(def);
  const now = Date.now();
  const rows = [];
  for (const obj of objects) {
    const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(obj, now) ?? null) };
    if (options.includeObject === "Object") row.object = obj;
    else if (options.includeObject !== "None") {
      row.object = {
        kind: "PartialObjectMetadata",
        apiVersion: "meta.k8s.io/v1",
        metadata: obj.metadata,
      };
    }
    rows.push(row);
  }
  const metadata: Record<string, unknown> = { resourceVersion };
  if (options.continueToken) metadata.continue = options.continueToken;
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata,
    columnDefinitions: options.noHeaders ? [] : columns.map(({ cell: _, ...c }) => c),
    rows,
  };
}

function columnsOf(def: ResourceDef): Column[] {
  if (def.printerColumns) {
    const cols = def.printerColumns.map(crdColumn);
    return [NAME, ...cols];
  }
  if (!def.builtin) return [NAME, AGE];
  return [NAME, ...(BUILTIN_COLUMNS[def.plural] ?? []), AGE];
}

function crdColumn(pc: PrinterColumn): Column {
  const path = parseJsonPath(pc.jsonPath);
  return {
    name: pc.name,
    type: pc.type,
    format: pc.format ?? "",
    description: pc.description ?? "",
    priority: pc.priority ?? 0,
    cell: (o, now) => {
      const v = lookup(o, path);
      if (v === undefined || v === null) return null;
      if (pc.type === "date" && typeof v === "string") return age(v, now);
      if (typeof v === "object") return JSON.stringify(v);
      return v;
    },
  };
}

function col(name: string, cell: Column["cell"], type = "string", priority = 0): Column {
  return { name, type, format: "", description: "", priority, cell };
}

const BUILTIN_COLUMNS: Record<string, Column[]> = {
  namespaces: [col("Status", (o) => (o.status as { phase?: string })?.phase ?? "")],
  pods: [
    col("Ready", (o) => {
      const cs =
        ((o.status as { containerStatuses?: Array<{ ready?: boolean }> })?.containerStatuses) ?? [];
      const total = ((o.spec as { containers?: unknown[] })?.containers ?? []).length;
      return `${cs.filter((c) => c.ready).length}/${total}`;
    }),
    col(
      "Status",
      (o) =>
        o.metadata.deletionTimestamp
          ? "Terminating"
          : (o.status as { phase?: string })?.phase ?? "Pending",
    ),
    col("Restarts", () => 0, "integer"),
  ],
  configmaps: [
    col("Data", (o) =>
      Object.keys((o.data as object) ?? {}).length +
      Object.keys((o.binaryData as object) ?? {}).length, "integer"),
  ],
  secrets: [
    col("Type", (o) => (o.type as string) ?? "Opaque"),
    col("Data", (o) => Object.keys((o.data as object) ?? {}).length, "integer"),
  ],
  deployments: [
    col("Ready", (o) => {
      const s = (o.status ?? {}) as { readyReplicas?: number };
      return `${s.readyReplicas ?? 0}/${(o.spec as { replicas?: number })?.replicas ?? 1}`;
    }),
    col(
      "Up-to-date",
      (o) => (o.status as { updatedReplicas?: number })?.updatedReplicas ?? 0,
      "integer",
    ),
    col(
      "Available",
      (o) => (o.status as { availableReplicas?: number })?.availableReplicas ?? 0,
      "integer",
    ),
  ],
  services: [
    col("Type", (o) => (o.spec as { type?: string })?.type ?? "ClusterIP"),
    col("Cluster-IP", (o) => (o.spec as { clusterIP?: string })?.clusterIP ?? "<none>"),
  ],
  leases: [col("Holder", (o) => (o.spec as { holderIdentity?: string })?.holderIdentity ?? "")],
  events: [
    col("Type", (o) => o.type ?? ""),
    col("Reason", (o) => o.reason ?? ""),
    col("Object", (o) => {
      const io = (o.involvedObject ?? (o as { regarding?: unknown }).regarding ?? {}) as {
        kind?: string;
        name?: string;
      };
      return `${(io.kind ?? "").toLowerCase()}/${io.name ?? ""}`;
    }),
    col("Message", (o) => o.message ?? o.note ?? ""),
  ],
  customresourcedefinitions: [
    {
      name: "Created At",
      type: "date",
      format: "",
      description: "",
      priority: 0,
      cell: (o) => o.metadata.creationTimestamp,
    },
  ],
};

/**
 * Parses the simple JSONPath of printer columns: `.spec.size`, `.status.conditions[0].type`.
 *
 * @param path The JSONPath.
 * @returns Path segments.
 */
function parseJsonPath(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[['"]([^'"]+)['"]\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path.replace(/^\{|\}$/g, "")))) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[3] !== undefined) out.push(m[3]);
  }
  return out;
}

function lookup(obj: unknown, path: Array<string | number>): unknown {
  let cur = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/**
 * Renders an age like Kubernetes' `HumanDuration`.
 *
 * @param timestamp An RFC 3339 time.
 * @param now The current time in ms.
 * @returns "5s", "3m20s", "2d3h", or "<unknown>".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { age } from "./table.ts";
 * assert.deepEqual(age("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:03:20Z")), "3m20s");
 * ```
 */
export function age(timestamp: string | undefined, now: number): string {
  if (!timestamp) return "<unknown>";
  const secs = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (secs < 120) return `${secs}s`;
  const mins = Math.floor(secs / 60);
  if (mins < 10) return secs % 60 ? `${mins}m${secs % 60}s` : `${mins}m`;
  if (mins < 180) return `${mins}m`;
  const hours = Math.floor(mins / 60);
  if (hours < 8) return mins % 60 ? `${hours}h${mins % 60}m` : `${hours}h`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return hours % 24 ? `${days}d${hours % 24}h` : `${days}d`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}
