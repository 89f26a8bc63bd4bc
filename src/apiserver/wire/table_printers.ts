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

import { AGE, CREATED_AT, NAME, type Printer } from "./table_columns.ts";
import { CLUSTER_PRINTERS } from "./table_printers_cluster.ts";
import { NETWORK_PRINTERS } from "./table_printers_network.ts";
import { WORKLOAD_PRINTERS } from "./table_printers_workloads.ts";

export { AGE, type Column, humanDuration, NAME, type Printer, since } from "./table_columns.ts";

/** Printers by `group/plural` (the core group as `/plural`). */
const PRINTERS: Record<string, Printer> = {
  ...WORKLOAD_PRINTERS,
  ...NETWORK_PRINTERS,
  ...CLUSTER_PRINTERS,
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
