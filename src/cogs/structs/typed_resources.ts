/**
 * Typed resources: one definition — a kind, its names and TypeBox schemas of
 * its `spec` and `status` — gives the TypeScript types of its objects (for
 * handlers), their validation, and the CustomResourceDefinition that makes
 * Kubernetes serve them (`kopf crd`).
 *
 * Why TypeBox: its schemas *are* JSON Schema objects, so the CRD's
 * `openAPIV3Schema` is what the user wrote (with the small translation of
 * `structural.ts`), Kubernetes' own keywords (`x-kubernetes-*`, `default`,
 * `format`) are plain options carried verbatim, and the static type comes
 * from the same object through `Static<>`.
 *
 * Kubernetes validates objects against the CRD on every write, so handlers
 * get bodies that already passed the schema: the typing is static, and
 * bodies are not validated again at run time. {@link TypedResource.validate}
 * checks an object on request (e.g. before a handler creates one).
 *
 * @module
 */

import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { toStructural } from "./structural.ts";

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
export interface ResourceDefinition<Spec extends TSchema, Status extends TSchema> {
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

/** A problem found by {@link TypedResource.validate}: where, and what is wrong. */
export interface ValidationIssue {
  /** The dotted path, e.g. `spec.size`. */
  path: string;
  /** What is wrong. */
  message: string;
}

/** The static types of a typed resource's objects (type-level only). */
declare const TYPES: unique symbol;

/**
 * A custom resource with a schema: usable as the resource of `kopf.on.*`,
 * `kopf.daemon`, `kopf.timer`, `kopf.index` (handlers then get typed `spec`,
 * `status`, `body` and `patch`), and the source of its CRD.
 *
 * @typeParam Spec The type of `spec`.
 * @typeParam Status The type of `status`.
 */
export class TypedResource<Spec = Record<string, unknown>, Status = Record<string, unknown>> {
  /** The API group. */
  readonly group: string;
  /** The version. */
  readonly version: string;
  /** The kind. */
  readonly kind: string;
  /** The plural name. */
  readonly plural: string;
  /** The singular name. */
  readonly singular: string;
  /** Short names for kubectl. */
  readonly shortNames: readonly string[];
  /** Namespaced or cluster-wide. */
  readonly scope: "Namespaced" | "Cluster";
  /** The schema of `spec`. */
  readonly specSchema: TSchema;
  /** The schema of `status`, if given. */
  readonly statusSchema: TSchema | undefined;
  /** Columns of `kubectl get`. */
  readonly printerColumns: readonly PrinterColumn[];
  /** Categories of kubectl. */
  readonly categories: readonly string[];
  /** Type-level only: the types of `spec` and `status` (never set at run time). */
  declare readonly [TYPES]?: { spec: Spec; status: Status };

  /**
   * Defines a typed resource; see `kopf.resource()`.
   *
   * @param def The definition.
   */
  constructor(def: ResourceDefinition<TSchema, TSchema>) {
    for (const key of ["group", "version", "kind", "plural"] as const) {
      if (typeof def[key] !== "string" || !def[key]) {
        throw new TypeError(`kopf.resource({...}) needs a non-empty ${key}`);
      }
    }
    if (def.scope !== "Namespaced" && def.scope !== "Cluster") {
      throw new TypeError('kopf.resource({...}) needs scope: "Namespaced" or "Cluster"');
    }
    this.group = def.group;
    this.version = def.version;
    this.kind = def.kind;
    this.plural = def.plural;
    this.singular = def.singular ?? def.kind.toLowerCase();
    this.shortNames = [...(def.shortNames ?? [])];
    this.scope = def.scope;
    this.specSchema = def.spec;
    this.statusSchema = def.status;
    this.printerColumns = [...(def.printerColumns ?? [])];
    this.categories = [...(def.categories ?? [])];
    this.crd(); // a schema Kubernetes cannot take fails here, at definition time
    Object.freeze(this);
  }

  /** `group/version`, as in the objects' `apiVersion`. */
  get apiVersion(): string {
    return `${this.group}/${this.version}`;
  }

  /**
   * The CustomResourceDefinition (`apiextensions.k8s.io/v1`) of this resource: a structural
   * schema, the status subresource when a status schema is given, printer columns, short names,
   * categories. `status` keeps unknown fields (Kopf stores handler results and progress there).
   *
   * @returns The CRD as a plain object (serialise it as JSON or YAML).
   * @throws {StructuralSchemaError} When a schema has no structural form.
   */
  crd(): Record<string, unknown> {
    const spec = toStructural(this.specSchema, "spec");
    const status = this.statusSchema
      ? toStructural(this.statusSchema, "status")
      : { type: "object" };
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
      name: this.version,
      served: true,
      storage: true,
      schema: { openAPIV3Schema: root },
    };
    if (this.statusSchema) version.subresources = { status: {} };
    if (this.printerColumns.length) {
      version.additionalPrinterColumns = this.printerColumns.map((c) => ({ ...c }));
    }
    const names: Record<string, unknown> = {
      kind: this.kind,
      listKind: `${this.kind}List`,
      plural: this.plural,
      singular: this.singular,
    };
    if (this.shortNames.length) names.shortNames = [...this.shortNames];
    if (this.categories.length) names.categories = [...this.categories];
    return {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${this.plural}.${this.group}` },
      spec: { group: this.group, names, scope: this.scope, versions: [version] },
    };
  }

  /**
   * Checks an object's `spec` and `status` against the schemas (TypeBox's checks: types,
   * required fields, formats and bounds; unknown fields are not errors, as Kubernetes prunes
   * them). The API server does this on every write; use it before writing objects yourself.
   *
   * @param obj The object (a whole body).
   * @returns The problems; empty when the object is valid.
   */
  validate(obj: unknown): ValidationIssue[] {
    const body = (typeof obj === "object" && obj !== null ? obj : {}) as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    const parts: Array<[string, TSchema | undefined, unknown]> = [
      ["spec", this.specSchema, body.spec ?? {}],
      ["status", this.statusSchema, body.status],
    ];
    for (const [name, schema, value] of parts) {
      if (!schema || value === undefined) continue;
      for (const e of Value.Errors(schema, value)) {
        const sub = e.path.split("/").filter(Boolean).join(".");
        issues.push({ path: sub ? `${name}.${sub}` : name, message: e.message });
      }
    }
    return issues;
  }

  /**
   * Whether an object is valid (see {@link TypedResource.validate}); narrows its type.
   *
   * @param obj The object.
   * @returns Whether it has no problems.
   */
  is(obj: unknown): obj is { spec: Spec; status?: Status } {
    return this.validate(obj).length === 0;
  }
}

/**
 * Defines a typed resource (`kopf.resource`). The types of `spec` and `status` come from the
 * schemas; handlers registered on the result get them.
 *
 * @param def The group, version, kind, plural (and optional singular, short names, categories,
 *   printer columns), the scope, and TypeBox schemas of `spec` and (optionally) `status`.
 * @returns The typed resource.
 * @throws {TypeError} For missing names or a bad scope.
 * @throws {StructuralSchemaError} For a schema Kubernetes cannot take (e.g. a union of objects).
 *
 * @example
 * ```ts
 * import { Type } from "@sinclair/typebox";
 * import { defineResource } from "./typed_resources.ts";
 * const Evc = defineResource({
 *   group: "kopf.dev", version: "v1", kind: "EphemeralVolumeClaim",
 *   plural: "ephemeralvolumeclaims", scope: "Namespaced",
 *   spec: Type.Object({ size: Type.String() }),
 * });
 * console.log(Evc.validate({ spec: { size: 1 } })[0]?.path); // "spec.size"
 * ```
 */
export function defineResource<
  Spec extends TSchema,
  Status extends TSchema = TSchema,
>(
  def: ResourceDefinition<Spec, Status>,
): TypedResource<Static<Spec>, TSchema extends Status ? Record<string, unknown> : Static<Status>> {
  return new TypedResource(def);
}
