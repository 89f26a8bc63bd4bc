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

import type { HandlerFn, ObjectContext, ResourceHandler } from "./handlers.ts";
import {
  getDefaultRegistry,
  parseResourceArgs,
  RegistrationError,
  resourceHandlerBase,
} from "./registration.ts";
import type { OperatorRegistry } from "./registry.ts";

/** Options of `kopf.on.convert`. */
export interface ConverterOptions {
  /** The version the converter takes objects at (`"v1"`; `"kopf.dev/v1"` is accepted too). */
  from: string;
  /** The version the converter returns objects at (`"v2"`). */
  to: string;
  /** The handler id (for log lines and failure messages); defaults to the function's name. */
  id?: string;
  /** Any value passed to the converter as `param`. */
  param?: unknown;
  /** Register in this registry instead of the default one. */
  registry?: OperatorRegistry;
}

/** A registered converter: one step from one version of a resource to another. */
export interface ConverterHandler extends ResourceHandler {
  /** Always `"converter"`. */
  kind: "converter";
  /** The version it takes objects at (without the group). */
  from: string;
  /** The version it returns objects at (without the group). */
  to: string;
}

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
 * import * as kopf from "../../../mod.ts";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, function upgrade({ body }) {
 *   const { field, ...spec } = body.spec;
 *   return { ...body, spec: { ...spec, renamed: field } };
 * });
 * console.log(registry.converterHandlers().map((h) => `${h.id}: ${h.from}→${h.to}`));
 * // [ "upgrade: v1→v2" ]
 * ```
 */
export function registerConverter(args: unknown[]): HandlerFn {
  const what = "kopf.on.convert";
  const { selector, options: o, fn } = parseResourceArgs<ConverterOptions>(what, "convert", args);
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
  const handler: ConverterHandler = {
    kind: "converter",
    ...resourceHandlerBase(o, fn, selector, `convert_${from}_to_${to}`, false),
    from,
    to,
  };
  (o.registry ?? getDefaultRegistry()).registerConverter(handler);
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
