/**
 * Server-side printing: `kubectl get` asks for a `meta.k8s.io/v1` Table and
 * prints what the server renders — a CRD's `additionalPrinterColumns`
 * (evaluated with Kubernetes' JSONPath, see `jsonpath.ts`, and typed as
 * kube-apiserver's table convertor types them), or the columns of kube's
 * printers for a built-in kind (`table_printers.ts`), always wide: kubectl
 * shows the columns of priority above 0 only with `-o wide`.
 *
 * @module
 */

import { findResults, type JsonPath, parseJsonPath, printResult } from "./jsonpath.ts";
import type { PrinterColumn, ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import {
  AGE,
  builtinPrinter,
  type Column,
  humanDuration,
  NAME,
  type Printer,
  since,
} from "./table_printers.ts";

/** The media type kubectl asks for and expects back. */
export const TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io";

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
 * import { ResourceRegistry } from "../objects/registry.ts";
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
  const printer = printerOf(def);
  const columns = printer.columns;
  const now = Date.now();
  const rows = [];
  for (const obj of objects) {
    const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(obj, now) ?? null) };
    const conditions = printer.conditions?.(obj);
    if (conditions) row.conditions = conditions;
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

const printers = new WeakMap<PrinterColumn[], Printer>();

function printerOf(def: ResourceDef): Printer {
  if (def.builtin) return builtinPrinter(def.group, def.plural);
  if (!def.printerColumns?.length) return { columns: [NAME, { ...AGE, type: "date" }] };
  let p = printers.get(def.printerColumns);
  if (!p) printers.set(def.printerColumns, p = { columns: crdColumns(def.printerColumns) });
  return p;
}

/**
 * A CRD's columns as kube-apiserver builds them: each `jsonPath` is parsed as
 * `{<jsonPath>}`; the first that does not parse drops itself and every column
 * after it (kube logs it and serves the columns built so far).
 */
function crdColumns(pcs: PrinterColumn[]): Column[] {
  const out: Column[] = [NAME];
  for (const pc of pcs) {
    let path: JsonPath;
    try {
      path = parseJsonPath(`{${pc.jsonPath}}`);
    } catch {
      break;
    }
    out.push({
      name: pc.name,
      type: pc.type,
      format: pc.format ?? "",
      description: pc.description ||
        `Custom resource definition column (in JSONPath format): ${pc.jsonPath}`,
      priority: pc.priority ?? 0,
      cell: (o, now) => crdCell(path, pc.type, o, now),
    });
  }
  return out;
}

/**
 * One cell of a CRD column: the first result of the path, printed as JSONPath
 * prints it for `string` columns, else kept when it has the column's type
 * (integers truncated, dates as ages); anything else is an empty cell.
 */
function crdCell(path: JsonPath, type: string, obj: KObject, now: number): unknown {
  let results: unknown[][];
  try {
    results = findResults(path, obj);
  } catch {
    return null;
  }
  const first = results[0];
  if (!first?.length) return null;
  const v = first[0];
  if (type === "string") return printResult(v);
  if (v === null || v === undefined) return null;
  switch (type) {
    case "integer":
      return typeof v === "number" ? Math.trunc(v) : null;
    case "number":
      return typeof v === "number" ? v : null;
    case "boolean":
      return typeof v === "boolean" ? v : null;
    case "date":
      if (typeof v !== "string") return null;
      if (v === "" || v === "null") return "<unknown>";
      return RFC3339.test(v) && !Number.isNaN(Date.parse(v)) ? since(v, now) : "<invalid>";
  }
  return null;
}

/** Go's `time.RFC3339` layout (fractional seconds accepted, as Go's parser does). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

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
  return humanDuration(now - Date.parse(timestamp));
}
