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
 * Several versions (`kopf.resource({ …, versions: { v1: {…}, v2: {…} }, storage })`) are one
 * {@link VersionedResource}: one CRD with every version, and one {@link TypedResource} per
 * version (`Evc.v1`, `Evc.v2`) — what handlers are registered on, typed at that version; the
 * API server converts objects to the version a handler's watch asks for. Why per version and
 * not one handle: a handler is written against one version's fields, and Kubernetes serves
 * every object at every served version, so the version is the handler's choice, made once in
 * the code and checked by the compiler.
 *
 * Where the pieces live: the definitions a developer writes in `typed_definitions.ts`;
 * the CRD built from them in `typed_crds.ts`; the resources themselves (one version or
 * several, which refer to each other) and `resource()` here.
 *
 * @module
 */

import type { TSchema } from "npm:@sinclair/typebox@^0.34";
// TypeBox's error walk alone (what `Value.Errors` re-exports), not all of `Value`'s modules.
import { Errors } from "npm:@sinclair/typebox@^0.34/errors";
import { StructuralSchemaError } from "./structural.ts";
import { crdOf, crdVersion } from "./typed_crds.ts";
import type {
  PrinterColumn,
  ResourceDefinition,
  Schema,
  Static,
  VersionDefinition,
  VersionedDefinition,
} from "./typed_definitions.ts";

export type * from "./typed_definitions.ts";

/** The typed resource of each version of a definition, by version name. */
export type VersionsOf<V extends Record<string, VersionDefinition>> = {
  readonly [K in keyof V & string]: TypedResource<
    Static<V[K]["spec"]>,
    V[K] extends { status: infer T extends Schema } ? Static<T> : Record<string, unknown>
  >;
};

/** A problem found by {@link TypedResource.validate}: where, and what is wrong. */
export interface ValidationIssue {
  /** The dotted path, e.g. `spec.size`. */
  path: string;
  /** What is wrong. */
  message: string;
}

/** The static types of a typed resource's objects (type-level only). */
declare const TYPES: unique symbol;
/** The versions of a resource with several versions, by name (type-level only). */
declare const VERSIONS: unique symbol;

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
  readonly specSchema: Schema;
  /** The schema of `status`, if given. */
  readonly statusSchema: Schema | undefined;
  /** Columns of `kubectl get`. */
  readonly printerColumns: readonly PrinterColumn[];
  /** Categories of kubectl. */
  readonly categories: readonly string[];
  /** Whether the API serves this version (always, unless a versioned definition says not). */
  readonly served: boolean;
  /** Whether objects are stored at this version (always for a resource with one version). */
  readonly storage: boolean;
  /** Whether this version is deprecated. */
  readonly deprecated: boolean;
  /** The deprecation warning of this version, if given. */
  readonly deprecationWarning: string | undefined;
  /** The resource with several versions that this is one version of; undefined when alone. */
  readonly versionOf: VersionedResource | undefined;
  /** Type-level only: the types of `spec` and `status` (never set at run time). */
  declare readonly [TYPES]?: { spec: Spec; status: Status };

  /**
   * Defines a typed resource; see `kopf.resource()`.
   *
   * @param def The definition.
   * @param member For a version of a {@link VersionedResource} (which makes its versions so):
   *   the resource, and the version's CRD fields.
   */
  constructor(def: ResourceDefinition<Schema, Schema>, member?: VersionMember) {
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
    this.served = member?.served ?? true;
    this.storage = member?.storage ?? true;
    this.deprecated = member?.deprecated ?? false;
    this.deprecationWarning = member?.deprecationWarning;
    this.versionOf = member?.of;
    crdVersion(this); // a schema Kubernetes cannot take fails here, at definition time
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
   * For a version of a {@link VersionedResource}: the CRD of all its versions.
   *
   * @returns The CRD as a plain object (serialise it as JSON or YAML).
   * @throws {StructuralSchemaError} When a schema has no structural form.
   */
  crd(): Record<string, unknown> {
    return this.versionOf ? this.versionOf.crd() : crdOf(this, [this]);
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
    const parts: Array<[string, Schema | undefined, unknown]> = [
      ["spec", this.specSchema, body.spec ?? {}],
      ["status", this.statusSchema, body.status],
    ];
    for (const [name, schema, value] of parts) {
      if (!schema || value === undefined) continue;
      for (const e of Errors(schema as TSchema, value)) {
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

/** What makes a {@link TypedResource} one version of a {@link VersionedResource}. */
export interface VersionMember {
  /** The resource with several versions. */
  of: VersionedResource;
  /** Whether the API serves this version. */
  served: boolean;
  /** Whether objects are stored at this version. */
  storage: boolean;
  /** Whether this version is deprecated. */
  deprecated: boolean;
  /** The deprecation warning, if any. */
  deprecationWarning: string | undefined;
}

/** Kubernetes' version names (`v1`, `v2beta1`, `v1alpha3`), as Kopf's resource names find them. */
const VERSION_NAME = /^v[1-9]\d*(?:(?:alpha|beta)[1-9]\d*)?$/;

/**
 * A custom resource with several versions (`kopf.resource({ …, versions, storage })`): one CRD
 * that lists them all, and one {@link TypedResource} per version — as a property named after
 * the version (`Evc.v1`, `Evc.v2`) and in {@link VersionedResource.versions}. Handlers are
 * registered on a version (typed at it); converters (`kopf.on.convert(Evc, { from, to }, fn)`)
 * on the resource itself.
 *
 * @typeParam H The typed resource of each version, by version name.
 */
export class VersionedResource<
  // deno-lint-ignore no-explicit-any
  H extends Record<string, TypedResource<any, any>> = Record<string, TypedResource>,
> {
  /** The API group. */
  readonly group: string;
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
  /** Categories of kubectl. */
  readonly categories: readonly string[];
  /** The version objects are stored at. */
  readonly storage: keyof H & string;
  /** The versions, in the CRD's order (also properties by name: `Evc.v1`). */
  readonly versions: readonly H[keyof H][];
  /** Type-level only: the typed resource of each version, by name (never set at run time). */
  declare readonly [VERSIONS]?: H;

  /**
   * Defines a resource with several versions; see `kopf.resource()`.
   *
   * @param def The definition.
   * @throws {TypeError} For missing names, a bad scope, no versions, a version name that is not
   *   Kubernetes', no or an unknown storage version, no served version, a deprecation warning
   *   of a version not deprecated (or longer than 256 characters).
   * @throws {StructuralSchemaError} For a schema Kubernetes cannot take.
   */
  constructor(def: VersionedDefinition<Record<string, VersionDefinition>>) {
    const what = "kopf.resource({...})";
    for (const key of ["group", "kind", "plural"] as const) {
      if (typeof def[key] !== "string" || !def[key]) {
        throw new TypeError(`${what} needs a non-empty ${key}`);
      }
    }
    if (def.scope !== "Namespaced" && def.scope !== "Cluster") {
      throw new TypeError(`${what} needs scope: "Namespaced" or "Cluster"`);
    }
    const names = Object.keys(def.versions ?? {});
    if (!names.length) {
      throw new TypeError(`${what} needs at least one version: versions: { v1: { spec } }`);
    }
    for (const name of names) {
      if (!VERSION_NAME.test(name)) {
        throw new TypeError(
          `${what}: the version ${JSON.stringify(name)} is not a Kubernetes version name ` +
            `(v1, v2beta1, v1alpha3)`,
        );
      }
      const v = def.versions[name]!;
      if (v.deprecationWarning !== undefined && !v.deprecated) {
        throw new TypeError(`${what}: ${name} has a deprecationWarning but is not deprecated`);
      }
      if ((v.deprecationWarning ?? "").length > 256) {
        throw new TypeError(`${what}: the deprecationWarning of ${name} is over 256 characters`);
      }
    }
    const storage = def.storage ?? (names.length === 1 ? names[0] : undefined);
    if (storage === undefined || !names.includes(storage)) {
      throw new TypeError(
        `${what} needs storage: the version objects are stored at (one of ${names.join(", ")})` +
          (storage === undefined ? "" : `, not ${JSON.stringify(storage)}`),
      );
    }
    if (!names.some((n) => def.versions[n]!.served ?? true)) {
      throw new TypeError(`${what}: no version is served (served: false on all of them)`);
    }
    this.group = def.group;
    this.kind = def.kind;
    this.plural = def.plural;
    this.singular = def.singular ?? def.kind.toLowerCase();
    this.shortNames = [...(def.shortNames ?? [])];
    this.scope = def.scope;
    this.categories = [...(def.categories ?? [])];
    this.storage = storage;
    const versions: TypedResource[] = [];
    for (const name of names) {
      const v = def.versions[name]!;
      const version = atVersion(name, () =>
        new TypedResource({
          group: this.group,
          version: name,
          kind: this.kind,
          plural: this.plural,
          singular: this.singular,
          shortNames: [...this.shortNames],
          scope: this.scope,
          categories: [...this.categories],
          spec: v.spec,
          ...(v.status ? { status: v.status } : {}),
          ...(v.printerColumns ? { printerColumns: v.printerColumns } : {}),
        }, {
          of: this as unknown as VersionedResource,
          served: v.served ?? true,
          storage: name === storage,
          deprecated: v.deprecated ?? false,
          deprecationWarning: v.deprecationWarning,
        }));
      versions.push(version);
      Object.defineProperty(this, name, { value: version, enumerable: true });
    }
    this.versions = versions as H[keyof H][];
    Object.freeze(this);
  }

  /**
   * The CustomResourceDefinition of all the versions: each with its structural schema, `served`,
   * `storage`, deprecation, status subresource and printer columns. No `spec.conversion`: the
   * API server's default (`None`: only `apiVersion` changes) until an operator with converters
   * and `settings.admission.managed` sets it to its webhook.
   *
   * @returns The CRD as a plain object.
   */
  crd(): Record<string, unknown> {
    return crdOf(this, this.versions);
  }

  /**
   * A short plain view for messages and logs (its versions refer back to it, so it has no JSON
   * of its own otherwise).
   *
   * @returns The names, the versions' names and the storage version.
   */
  toJSON(): Record<string, unknown> {
    return {
      group: this.group,
      kind: this.kind,
      plural: this.plural,
      versions: this.versions.map((v) => v.version),
      storage: this.storage,
    };
  }
}

/** Makes a version's schema errors name the version (`v2: spec.size: …`). */
function atVersion<T>(name: string, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (e instanceof StructuralSchemaError) {
      throw new StructuralSchemaError(`${name}: ${e.message}`, { cause: e });
    }
    throw e;
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
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const { Type } = kopf;
 * const Evc = kopf.resource({
 *   group: "kopf.dev", version: "v1", kind: "EphemeralVolumeClaim",
 *   plural: "ephemeralvolumeclaims", scope: "Namespaced",
 *   spec: Type.Object({ size: Type.String() }),
 * });
 * assert.deepEqual(Evc.validate({ spec: { size: 1 } })[0]?.path, "spec.size");
 * ```
 */
export function resource<
  Spec extends Schema,
  Status extends Schema = Schema,
>(
  def: ResourceDefinition<Spec, Status>,
): TypedResource<Static<Spec>, Schema extends Status ? Record<string, unknown> : Static<Status>>;
/**
 * Defines a typed resource with several versions (`kopf.resource({ versions, storage })`): one
 * CRD with all of them, and a typed resource per version (`Evc.v1`, `Evc.v2`) to register
 * handlers on, typed at that version.
 *
 * @param def The group, kind, plural (and optional singular, short names, categories), the
 *   scope, the versions by name (each with TypeBox schemas of `spec` and optionally `status`,
 *   printer columns, `served`, `deprecated`, `deprecationWarning`), and the storage version.
 * @returns The resource, with each version as a property by its name.
 * @throws {TypeError} For missing names, a bad scope, bad version names, no storage version.
 * @throws {StructuralSchemaError} For a schema Kubernetes cannot take.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const { Type } = kopf;
 * const Evc = kopf.resource({
 *   group: "kopf.dev", kind: "EphemeralVolumeClaim", plural: "ephemeralvolumeclaims",
 *   scope: "Namespaced", storage: "v2",
 *   versions: {
 *     v1: { spec: Type.Object({ size: Type.String() }), deprecated: true },
 *     v2: { spec: Type.Object({ storage: Type.Object({ size: Type.String() }) }) },
 *   },
 * });
 * assert.deepEqual([Evc.v1.apiVersion, Evc.v2.storage], ["kopf.dev/v1", true]);
 * ```
 */
export function resource<V extends Record<string, VersionDefinition>>(
  def: VersionedDefinition<V>,
): VersionedResource<VersionsOf<V>> & VersionsOf<V>;
export function resource(
  def:
    | ResourceDefinition<Schema, Schema>
    | VersionedDefinition<Record<string, VersionDefinition>>,
  // deno-lint-ignore no-explicit-any
): TypedResource | VersionedResource<any> {
  return "versions" in def ? new VersionedResource(def) : new TypedResource(def);
}
