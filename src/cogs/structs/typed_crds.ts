/**
 * The CustomResourceDefinition of a typed resource: its names and scope, and
 * one entry of `spec.versions` per version — the structural form of its schemas
 * (`structural.ts`), the status subresource, printer columns, deprecation.
 *
 * @module
 */

import { toStructural } from "./structural.ts";
import type { PrinterColumn, Schema } from "./typed_definitions.ts";

/** The names and scope of a CRD, as both kinds of typed resources have them. */
export interface CrdNames {
  group: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  scope: "Namespaced" | "Cluster";
}

/** What the CRD says of one version: what a `TypedResource` holds of its version. */
export interface CrdVersion {
  readonly version: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning: string | undefined;
  readonly specSchema: Schema;
  readonly statusSchema: Schema | undefined;
  readonly printerColumns: readonly PrinterColumn[];
}

/** The CRD of these versions. */
export function crdOf(names: CrdNames, versions: readonly CrdVersion[]): Record<string, unknown> {
  const crdNames: Record<string, unknown> = {
    kind: names.kind,
    listKind: `${names.kind}List`,
    plural: names.plural,
    singular: names.singular,
  };
  if (names.shortNames.length) crdNames.shortNames = [...names.shortNames];
  if (names.categories.length) crdNames.categories = [...names.categories];
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.${names.group}` },
    spec: {
      group: names.group,
      names: crdNames,
      scope: names.scope,
      versions: versions.map(crdVersion),
    },
  };
}

/** One version's entry in the CRD's `spec.versions`. */
export function crdVersion(r: CrdVersion): Record<string, unknown> {
  const spec = toStructural(r.specSchema, "spec");
  const status = r.statusSchema ? toStructural(r.statusSchema, "status") : { type: "object" };
  status["x-kubernetes-preserve-unknown-fields"] = true;
  const root: Record<string, unknown> = {
    type: "object",
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec,
      status,
    },
  };
  // Required fields in spec make spec itself required: then `spec` is never absent.
  if (Array.isArray(spec.required) && spec.required.length) root.required = ["spec"];
  const version: Record<string, unknown> = {
    name: r.version,
    served: r.served,
    storage: r.storage,
  };
  if (r.deprecated) version.deprecated = true;
  if (r.deprecationWarning !== undefined) version.deprecationWarning = r.deprecationWarning;
  version.schema = { openAPIV3Schema: root };
  if (r.statusSchema) version.subresources = { status: {} };
  if (r.printerColumns.length) {
    version.additionalPrinterColumns = r.printerColumns.map((c) => ({ ...c }));
  }
  return version;
}
