/**
 * Turning `kopf.on.convert(...)` calls into registered converters: functions
 * that turn an object of one version of a custom resource into the same
 * object at another version (beyond Kopf; Kubernetes' CRD conversion
 * webhooks). One converter is one step between two versions; the engine
 * chains steps (v1 → v2 → v3) when no direct converter is registered, so an
 * operator registers only the steps between neighbouring versions (both
 * directions: Kubernetes converts either way — reads at the old version of
 * objects stored at the new one, and the other way round).
 *
 * Converters cannot be retried (Kubernetes waits for the answer), so they
 * take no errors/timeout/retries/backoff options; they are not filtered
 * (every object must be convertible), so they take no filters either.
 *
 * @module
 */

import type { Patch } from "../../cogs/structs/patches.ts";
import { TypedResource, VersionedResource } from "../../cogs/structs/typed_resources.ts";
import type { AnyObject, HandlerFn, ObjectContext } from "./handlers.ts";
import {
  getDefaultRegistry,
  parseResourceArgs,
  RegistrationError,
  resourceHandlerBase,
} from "./registration.ts";
import type { OptionsOf } from "./option_types.ts";
import type { RegistryOption } from "./options.ts";

import type { ConverterHandler } from "./kinds.ts";

export type { ConverterHandler } from "./kinds.ts";
import type { MergePatchOf, ResourceArg, Retyped } from "./typing.ts";
import { noteTypedResource } from "./typed_notes.ts";

/** Options of `kopf.on.convert` (option_specs.ts declares each). */
export interface ConverterOptions extends OptionsOf<"convert">, RegistryOption {}

/**
 * The context of converters: the object at `from` (a deep copy: change it freely), and the
 * versions. A converter returns the object at `to` — or nothing, and then the (changed)
 * `body` with `patch` merged into it is the object at `to`. Either way, the framework sets
 * `apiVersion` to the target version and keeps the object's metadata, except the labels and
 * annotations, which are taken from the result (Kubernetes ignores other metadata changes).
 */
export interface ConversionContext extends ObjectContext {
  /** The version of the given object (e.g. `"v1"`). */
  from: string;
  /** The version to return the object at (e.g. `"v2"`). */
  to: string;
  /** The `apiVersion` the object gets (e.g. `"kopf.dev/v2"`). */
  apiVersion: string;
  /** The `apiVersion` the API server asked for: the end of the chain this step is part of. */
  desiredAPIVersion: string;
}

/** The `spec` and `status` types of a typed resource (of one version), as a pair. */
// deno-lint-ignore no-explicit-any
export type SpecStatusOf<R> = R extends TypedResource<infer S, infer T> ? [S, T] : [any, any];

/**
 * Options of `kopf.on.convert` on a resource with several versions: `from` and `to` are two of
 * its version names (checked statically).
 */
export interface TypedConverterOptions<F extends string, T extends string>
  extends Omit<ConverterOptions, "from" | "to"> {
  /** The version the converter takes objects at, e.g. `"v1"`. */
  from: F;
  /** The version the converter returns objects at, e.g. `"v2"`. */
  to: T;
}

/**
 * The `patch` of a typed converter, merged into `body` when the converter returns nothing: the
 * fields of the target version, and `null` for the fields that only the source version has.
 */
export type ConversionPatch<FromSpec, FromStatus, ToSpec, ToStatus> =
  & Omit<Patch, "spec" | "status">
  & {
    /** Changes to `spec`: the target version's fields; `null` removes a source-only field. */
    spec: MergePatchOf<ToSpec> & { [K in Exclude<keyof FromSpec, keyof ToSpec>]?: null };
    /** Changes to `status`: as for `spec`. */
    status: MergePatchOf<ToStatus> & { [K in Exclude<keyof FromStatus, keyof ToStatus>]?: null };
  };

/**
 * What a typed converter returns: the object at the target version (`apiVersion`, `kind` and
 * `metadata` may be left out: the framework sets and keeps them) — or nothing, and then `body`
 * with `patch` merged into it is the result.
 */
export interface ConvertedBody<Spec, Status> {
  /** Ignored: the framework sets the target version's. */
  apiVersion?: string;
  /** The kind (kept when left out). */
  kind?: string;
  /** Only labels and annotations are taken from it (Kubernetes ignores other changes). */
  metadata?: AnyObject;
  /** The spec at the target version. */
  spec: Spec;
  /** The status at the target version. */
  status?: Status;
}

/**
 * The context of a converter between two versions of a typed resource: `body`, `spec`, `status`
 * typed at the source version; `patch` towards the target version.
 *
 * @typeParam From The source version's typed resource.
 * @typeParam To The target version's typed resource.
 * @typeParam F The source version's name.
 * @typeParam T The target version's name.
 */
export type TypedConversionContext<From, To, F extends string, T extends string> =
  & Omit<
    Retyped<ConversionContext, SpecStatusOf<From>[0], SpecStatusOf<From>[1]>,
    "patch" | "from" | "to"
  >
  & {
    /** The version of the given object. */
    from: F;
    /** The version to return the object at. */
    to: T;
    /** Changes that make `body` the object at `to` (when the converter returns nothing). */
    patch: ConversionPatch<
      SpecStatusOf<From>[0],
      SpecStatusOf<From>[1],
      SpecStatusOf<To>[0],
      SpecStatusOf<To>[1]
    >;
  };

/** A converter between two versions of a typed resource: the object at `to`, or nothing. */
export type TypedConverterFn<From, To, F extends string, T extends string> = (
  context: TypedConversionContext<From, To, F, T>,
) =>
  | ConvertedBody<SpecStatusOf<To>[0], SpecStatusOf<To>[1]>
  | void
  | Promise<ConvertedBody<SpecStatusOf<To>[0], SpecStatusOf<To>[1]> | void>;

/**
 * The call forms of `kopf.on.convert`: on a resource with several versions
 * (`kopf.resource({ versions })`), typed — the body at `from` in, the body at `to` out; or on a
 * resource by name (untyped bodies).
 */
export interface ConvertRegistrar {
  /** On a typed resource with several versions: `from`/`to` are its versions, the bodies typed. */
  <
    // deno-lint-ignore no-explicit-any
    H extends Record<string, TypedResource<any, any>>,
    F extends keyof H & string,
    T extends keyof H & string,
  >(
    resource: VersionedResource<H>,
    options: TypedConverterOptions<F, T>,
    fn: TypedConverterFn<H[F], H[T], F, T>,
  ): TypedConverterFn<H[F], H[T], F, T>;
  /** On a resource by name or object, without a version (e.g. `"kopfexamples.kopf.dev"`). */
  (
    ...args: [
      ...resource: ResourceArg[],
      options: ConverterOptions,
      fn: HandlerFn<ConversionContext>,
    ]
  ): HandlerFn<ConversionContext>;
}

/**
 * Registers a converter: `(…resource, { from, to, … }, fn)`.
 *
 * @param args The call's arguments.
 * @returns The converter function.
 * @throws {RegistrationError} Without `from`/`to`, with `from === to`, with a version in the
 *   resource, or for any other option of other kinds (e.g. `retries`).
 * @throws {DuplicateHandlerError} When the resource already has a converter for the pair.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, function upgrade({ body }) {
 *   const { field, ...spec } = body.spec;
 *   return { ...body, spec: { ...spec, renamed: field } };
 * });
 * assert.deepEqual(registry.converterHandlers().map((h) => `${h.id}: ${h.from}→${h.to}`), [ "upgrade: v1→v2" ]);
 * ```
 */
export function registerConverter(args: unknown[]): HandlerFn {
  const what = "kopf.on.convert";
  const single = args.find((a): a is TypedResource => a instanceof TypedResource);
  if (single) {
    throw new RegistrationError(
      `${what}(...): converters are registered on a resource with several versions ` +
        `(kopf.resource({ versions })), not on one version (${single.plural}.${single.version}.` +
        `${single.group})`,
    );
  }
  const versioned = args.find((a): a is VersionedResource => a instanceof VersionedResource);
  const parts = versioned
    ? args.map((a) => (a === versioned ? { group: versioned.group, plural: versioned.plural } : a))
    : args;
  const { selector, options: o, fn } = parseResourceArgs<ConverterOptions>(what, "convert", parts);
  if (o.from === undefined || o.to === undefined) {
    throw new RegistrationError(
      `${what}(...) needs the versions: { from: "v1", to: "v2" } (one converter per step)`,
    );
  }
  if (!selector.isSpecific || selector.version !== undefined) {
    throw new RegistrationError(
      `${what}(...) needs one resource without a version (e.g. "kopfexamples.kopf.dev"): ` +
        `the versions are given by from/to`,
    );
  }
  const from = bareVersion(o.from, selector.group);
  const to = bareVersion(o.to, selector.group);
  if (from === to) {
    throw new RegistrationError(`${what}(...): from and to are the same version (${from})`);
  }
  if (versioned) {
    const names = versioned.versions.map((v) => v.version);
    for (const version of [from, to]) {
      if (!names.includes(version)) {
        throw new RegistrationError(
          `${what}(...): ${versioned.plural}.${versioned.group} has no version ${version} ` +
            `(versions: ${names.join(", ")})`,
        );
      }
    }
    noteTypedResource(o.registry ?? getDefaultRegistry(), versioned);
  }
  const handler: ConverterHandler = {
    kind: "converter",
    ...resourceHandlerBase(o, fn, selector, `convert_${from}_to_${to}`, false),
    from,
    to,
  };
  (o.registry ?? getDefaultRegistry()).register(handler);
  return fn;
}

/** `"kopf.dev/v1"` → `"v1"` (the group must be the resource's, if it has one). */
function bareVersion(version: string, group: string | undefined): string {
  const slash = version.lastIndexOf("/");
  if (slash < 0) return version;
  const g = version.slice(0, slash);
  if (group !== undefined && g !== group) {
    throw new RegistrationError(
      `kopf.on.convert(...): the version ${version} is not of the resource's group ${group}`,
    );
  }
  return version.slice(slash + 1);
}
