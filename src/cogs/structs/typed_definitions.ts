/**
 * What a developer writes to define a typed resource (`kopf.resource({ … })`):
 * the TypeBox schemas of `spec` and `status` (a {@link Schema} and the type it
 * describes, {@link Static}), printer columns, and the definition of one version
 * or of several.
 *
 * @module
 */

/**
 * A schema of a typed resource: what `kopf.Type.*` builds — a TypeBox schema, which is the JSON
 * Schema object itself, with the TypeScript type it describes attached at the type level. This
 * is the part of TypeBox's `TSchema` that kopf relies on; every TypeBox schema is one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const size = kopf.Type.String({ pattern: "^[0-9]+Gi$" });
 * const schema: kopf.Schema = size; // every TypeBox schema is one
 * assert.equal(size.type, "string"); // the JSON Schema object itself
 * assert.equal(schema, size);
 * ```
 */
export interface Schema {
  /** The TypeScript type the schema describes (type-level only: never set at run time). */
  static: unknown;
  /** The type parameters of generic schemas (type-level only). */
  params: unknown[];
}

/**
 * The TypeScript type a schema describes, as TypeBox's `Static`: `kopf.Static<typeof spec>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const spec = kopf.Type.Object({ size: kopf.Type.String(), replicas: kopf.Type.Integer() });
 * const value: kopf.Static<typeof spec> = { size: "1Gi", replicas: 2 };
 * assert.equal(value.replicas, 2);
 * ```
 */
export type Static<T extends Schema> = (T & { params: [] })["static"];

/** A column of `kubectl get` for a custom resource (`additionalPrinterColumns`). */
export interface PrinterColumn {
  /** The column's header. */
  name: string;
  /** How the value is shown. */
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** The JSON path of the value, e.g. `.spec.size`. */
  jsonPath: string;
  /** What the column means (`kubectl explain`). */
  description?: string;
  /** A format of the type, e.g. `int32`, `byte`. */
  format?: string;
  /** 0 shows it always; more only with `-o wide`. */
  priority?: number;
}

/** What `kopf.resource()` takes: the names, the scope, the schemas and the CRD's extras. */
export interface ResourceDefinition<Spec extends Schema, Status extends Schema> {
  /** The API group, e.g. `kopf.dev`. */
  group: string;
  /** The version, e.g. `v1`. */
  version: string;
  /** The kind, e.g. `EphemeralVolumeClaim`. */
  kind: string;
  /** The plural name (the URL's), e.g. `ephemeralvolumeclaims`. */
  plural: string;
  /** The singular name; defaults to the lowercased kind. */
  singular?: string;
  /** Short names for kubectl, e.g. `["evc"]`. */
  shortNames?: string[];
  /** Namespaced or cluster-wide objects. */
  scope: "Namespaced" | "Cluster";
  /** The schema of `spec` (a TypeBox object schema). */
  spec: Spec;
  /** The schema of `status`; when given, the CRD has the status subresource. */
  status?: Status;
  /** Columns of `kubectl get`. */
  printerColumns?: PrinterColumn[];
  /** Categories, e.g. `["all"]` for `kubectl get all`. */
  categories?: string[];
}

/**
 * One version of a resource with several versions (`versions` of `kopf.resource()`): its
 * schemas and the CRD's per-version fields.
 */
export interface VersionDefinition<
  Spec extends Schema = Schema,
  Status extends Schema = Schema,
> {
  /** The schema of `spec` at this version. */
  spec: Spec;
  /** The schema of `status` at this version; when given, the version has the status subresource. */
  status?: Status;
  /** Columns of `kubectl get` at this version. */
  printerColumns?: PrinterColumn[];
  /** Whether the API serves this version (default true). */
  served?: boolean;
  /** Whether this version is deprecated (the API server warns its clients). */
  deprecated?: boolean;
  /** The warning of a deprecated version (else Kubernetes' default one); at most 256 characters. */
  deprecationWarning?: string;
}

/** What `kopf.resource()` takes for several versions: the names, the scope, and the versions. */
export interface VersionedDefinition<V extends Record<string, VersionDefinition>> {
  /** The API group, e.g. `kopf.dev`. */
  group: string;
  /** The kind, e.g. `EphemeralVolumeClaim`. */
  kind: string;
  /** The plural name (the URL's), e.g. `ephemeralvolumeclaims`. */
  plural: string;
  /** The singular name; defaults to the lowercased kind. */
  singular?: string;
  /** Short names for kubectl, e.g. `["evc"]`. */
  shortNames?: string[];
  /** Namespaced or cluster-wide objects. */
  scope: "Namespaced" | "Cluster";
  /** Categories, e.g. `["all"]` for `kubectl get all`. */
  categories?: string[];
  /**
   * The versions by name (`v1`, `v2beta1`, … — Kubernetes' form, which Kopf's resource names
   * recognise), in the order the CRD lists them.
   */
  versions: V;
  /** The version objects are stored at; may be left out when there is one version. */
  storage?: NoInfer<keyof V & string>;
}
