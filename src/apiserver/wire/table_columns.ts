/**
 * What every table printer is made of: the {@link Column} and {@link Printer}
 * shapes, the NAME, AGE and CREATED AT columns, Kubernetes' human durations,
 * and the cell helpers the per-group printers share (labels and selectors as
 * kube formats them, `<none>` for absent strings). Kept apart so that each
 * group of printers (`table_printers_*.ts`) imports one small bottom module.
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
export const CREATED_AT: Column = {
  name: "Created At",
  type: "date",
  format: "",
  description: CREATED_DESC,
  priority: 0,
  cell: (o) => rfc3339(o.metadata.creationTimestamp),
};

/** A column of priority 0 (or the given one) with no description. */
export function col(name: string, cell: Column["cell"], type = "string", priority = 0): Column {
  return { name, type, format: "", description: "", priority, cell };
}
/** A column `kubectl get -o wide` adds (priority 1). */
export function wide(name: string, cell: Column["cell"]): Column {
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

/** Cells read untyped bodies. */
// deno-lint-ignore no-explicit-any
export type Any = any;
/** The object's `spec`, untyped. */
export const spec = (o: KObject): Any => (o.spec ?? {}) as Any;
/** The object's `status`, untyped. */
export const status = (o: KObject): Any => (o.status ?? {}) as Any;

/** `labels.FormatLabels`: `k=v` sorted by key, `<none>` when empty. */
export function formatLabels(m: unknown): string {
  const entries = Object.entries((m ?? {}) as Record<string, string>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  );
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "<none>";
}

/** A LabelSelector as `labels.Selector.String()`: requirements sorted by key. */
export function selectorString(sel: Any): string {
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
export function formatSelector(sel: Any): string {
  const s = selectorString(sel);
  return s === "<invalid>" ? "<error>" : s || "<none>";
}

/** The string itself, or `<none>` when it is absent or empty. */
export const orNone = (v: unknown): string => (typeof v === "string" && v ? v : "<none>");

/** A resource quantity as stored (kube prints its canonical form; quantities are kept as sent). */
export const quantity = (
  q: unknown,
): string => (q === undefined || q === null || q === "" ? "0" : String(q));
