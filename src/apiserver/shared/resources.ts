/**
 * What the API server knows about a resource type: the facts discovery
 * publishes (names, scope, verbs, short names, categories), the subresources,
 * and for custom resources the schema and printer columns of each version.
 *
 * Objects are stored per group and plural ("storage key"), not per version:
 * a custom resource served in several versions is one set of objects whose
 * `apiVersion` is rewritten on the way out (conversion strategy `None`).
 *
 * @module
 */

import type { JsonSchema } from "./types.ts";

/** A column of `kubectl get` as a CRD's `additionalPrinterColumns` declares it. */
export interface PrinterColumn {
  /** The column's header, e.g. `"Age"`. */
  name: string;
  /** The value type: `"string"`, `"integer"`, `"number"`, `"boolean"` or `"date"`. */
  type: string;
  /** Where the value is in the object, e.g. `".spec.size"`. */
  jsonPath: string;
  /** An OpenAPI format that refines the type, e.g. `"int32"`. */
  format?: string;
  /** What the column shows (in the column definitions of Table answers). */
  description?: string;
  /** 0 shows it always; above 0 only with `-o wide`. */
  priority?: number;
}

/** One served group-version-resource. */
export interface ResourceDef {
  /** API group; "" for the core group. */
  group: string;
  /** The version, e.g. `"v1"`. */
  version: string;
  /** The plural name, as in URLs, e.g. `"deployments"`. */
  plural: string;
  /** The singular name, e.g. `"deployment"`. */
  singular: string;
  /** The kind, e.g. `"Deployment"`. */
  kind: string;
  /** Whether objects live in namespaces. */
  namespaced: boolean;
  /** Short names for `kubectl`, e.g. `["deploy"]`. */
  shortNames: string[];
  /** Categories for `kubectl get <category>`, e.g. `["all"]`. */
  categories: string[];
  /** The verbs discovery lists, e.g. `["get", "list", "watch", "create"]`. */
  verbs: string[];
  /** Whether `<plural>/status` is served (and the main endpoint ignores status). */
  statusSubresource: boolean;
  /** Built-ins accept strategic merge patches; custom resources answer 415. */
  builtin: boolean;
  /** The CRD's schema of this version, if any. */
  schema?: JsonSchema;
  /** The CRD's printer columns of this version, if any. */
  printerColumns?: PrinterColumn[];
  /** Whether this version is the storage version (for `/apis/<g>` preferredVersion). */
  storage: boolean;
}

/** The verbs of an ordinary resource. */
export const ALL_VERBS: readonly string[] = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

/**
 * The storage key of a resource: group and plural, version-independent.
 *
 * @param def The resource (or any object with group and plural).
 * @returns `plural.group`, or `plural` for the core group.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { storageKey } from "./resources.ts";
 * assert.deepEqual(storageKey({ group: "apps", plural: "deployments" }), "deployments.apps");
 * ```
 */
export function storageKey(def: { group: string; plural: string }): string {
  return def.group ? `${def.plural}.${def.group}` : def.plural;
}

/**
 * The `apiVersion` string of a resource: `group/version`, or `version` for core.
 *
 * @param def The resource.
 * @returns The apiVersion.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { apiVersionOf } from "./resources.ts";
 * assert.deepEqual(apiVersionOf({ group: "", version: "v1" }), "v1");
 * ```
 */
export function apiVersionOf(def: { group: string; version: string }): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
