/**
 * Registering level-based reconcilers (`kopf.on.reconcile`, beyond Kopf): a
 * function called with a parent object's current state and the children it
 * owns, whenever either changes — rather than with a change (a cause, a diff)
 * as Kopf's resource-changing handlers are.
 *
 * The owned children are named in `owns` in any of the resource forms of
 * `kopf.on.*` (one form per entry: `"pods"`, `"deployments.apps"`,
 * `{ group, version, plural }`, a typed resource), and the handler finds them
 * in `children` under the name given (a string as written; the plural for the
 * other forms).
 *
 * @module
 */

import { Selector } from "../../cogs/structs/selector.ts";
import { TypedResource } from "../../cogs/structs/typed_resources.ts";
import type { AnyObject, HandlerFn, ObjectContext } from "./handlers.ts";
import {
  getDefaultRegistry,
  parseResourceArgs,
  RegistrationError,
  resourceHandlerBase,
} from "./registration.ts";
import type { OwnedArg } from "./option_specs.ts";
import type { OptionsOf } from "./option_types.ts";
import type { RegistryOption } from "./options.ts";

import type { OwnedResource, ReconcilingHandler } from "./kinds.ts";

export type { OwnedResource, ReconcilingHandler } from "./kinds.ts";
export type { OwnedArg } from "./option_specs.ts";
import type { ResourceArg, Retyped, TypedBody } from "./typing.ts";
import type { Everything } from "../../cogs/structs/selector_specs.ts";

/** Seconds of quiet after a change before a call, unless `debounce` says otherwise. */
export const DEFAULT_DEBOUNCE = 0.1;

/** Options of `kopf.on.reconcile` (option_specs.ts declares each). */
export interface ReconcileOptions extends OptionsOf<"reconcile">, RegistryOption {}

/**
 * The context of reconcilers: the parent as it is now, and its owned children as they are now
 * (by the names of `owns`; an empty list when there are none). `signal` also aborts when the
 * parent is deleted.
 */
export interface ReconcileContext<C = Record<string, AnyObject[]>> extends ObjectContext {
  /** The owned children by the names of `owns`, each list sorted by namespace and name. */
  children: C;
}

/** The name of one `owns` entry in `children`: the string as written, or the plural. */
export type OwnedKey<E> = E extends string ? E
  : E extends { plural: infer P extends string } ? P
  : string;

/** The children's body type of one `owns` entry: typed for typed resources. */
export type OwnedBody<E> = E extends TypedResource<infer S, infer T> ? TypedBody<S, T> : AnyObject;

/** The `children` of a reconciler with these options: a list per `owns` entry. */
export type ChildrenOf<O> = O extends { owns: readonly (infer E)[] }
  ? { [K in E as OwnedKey<K>]: OwnedBody<K>[] }
  : Record<string, AnyObject[]>;

/** The context of a reconciler on a typed resource. */
export type TypedReconcileContext<Spec, Status, O> = Retyped<
  ReconcileContext<ChildrenOf<O>>,
  Spec,
  Status
>;

/**
 * The call forms of `kopf.on.reconcile`: on a typed resource (typed context), or on a resource
 * given as one to three strings or an object; `children` is typed by the `owns` given.
 */
export interface ReconcileRegistrar {
  /** On a typed resource, with options: the parent and typed owned children are typed. */
  <Spec, Status, const O extends ReconcileOptions>(
    resource: TypedResource<Spec, Status>,
    options: O,
    fn: HandlerFn<TypedReconcileContext<Spec, Status, O>>,
  ): HandlerFn<TypedReconcileContext<Spec, Status, O>>;
  /** On a typed resource, without children. */
  <Spec, Status>(
    resource: TypedResource<Spec, Status>,
    fn: HandlerFn<TypedReconcileContext<Spec, Status, unknown>>,
  ): HandlerFn<TypedReconcileContext<Spec, Status, unknown>>;
  /** On a resource by name, object or EVERYTHING, with options (`owns`, `resync`, `debounce`…). */
  <const O extends ReconcileOptions>(
    resource: ResourceArg,
    options: O,
    fn: HandlerFn<ReconcileContext<ChildrenOf<O>>>,
  ): HandlerFn<ReconcileContext<ChildrenOf<O>>>;
  /** On a resource by name, object or EVERYTHING, without children. */
  (resource: ResourceArg, fn: HandlerFn<ReconcileContext>): HandlerFn<ReconcileContext>;
  /** On a resource by group (or version) and plural, with options. */
  <const O extends ReconcileOptions>(
    group: string,
    plural: string | Everything,
    options: O,
    fn: HandlerFn<ReconcileContext<ChildrenOf<O>>>,
  ): HandlerFn<ReconcileContext<ChildrenOf<O>>>;
  /** On a resource by group, version and plural, with options. */
  <const O extends ReconcileOptions>(
    group: string,
    version: string,
    plural: string | Everything,
    options: O,
    fn: HandlerFn<ReconcileContext<ChildrenOf<O>>>,
  ): HandlerFn<ReconcileContext<ChildrenOf<O>>>;
}

/**
 * Registers a reconciler: `(…resource, options?, fn)`.
 *
 * @param args The call's arguments.
 * @returns The handler function.
 * @throws {RegistrationError} For bad arguments, an `owns` entry that is not a resource, or two
 *   entries with the same name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registerReconciling } from "./reconcilers.ts";
 * import { OperatorRegistry } from "@kopf/kopf";
 * const registry = new OperatorRegistry();
 * registerReconciling(["kopfexamples", { registry, owns: ["pods"] }, function sync() {}]);
 * assert.deepEqual(registry.reconcilingHandlers().map((h) => h.owns.map((o) => o.key)), [ [ "pods" ] ]);
 * ```
 */
export function registerReconciling(args: unknown[]): HandlerFn {
  const what = "kopf.on.reconcile";
  const { selector, options: o, fn } = parseResourceArgs<ReconcileOptions>(what, "reconcile", args);
  const owns: OwnedResource[] = [];
  for (const arg of o.owns ?? []) {
    const owned = ownedResource(what, arg);
    if (owns.some((x) => x.key === owned.key)) {
      throw new RegistrationError(
        `${what}(...): owns names "${owned.key}" twice; each owned resource once`,
      );
    }
    owns.push(owned);
  }
  const handler: ReconcilingHandler = {
    kind: "reconciling",
    ...resourceHandlerBase(o, fn, selector, "reconcile_handler"),
    owns,
    resync: o.resync,
    debounce: o.debounce ?? DEFAULT_DEBOUNCE,
  };
  (o.registry ?? getDefaultRegistry()).register(handler);
  return fn;
}

function ownedResource(what: string, arg: OwnedArg): OwnedResource {
  try {
    if (arg instanceof TypedResource) {
      const { group, version, plural } = arg;
      return { key: plural, selector: new Selector({ group, version, plural }) };
    }
    if (typeof arg === "string") return { key: arg, selector: new Selector(arg) };
    const key = arg.plural ?? arg.kind;
    if (!key) {
      throw new Error(`give its plural or kind, e.g. { group: "apps", plural: "deployments" }`);
    }
    return { key, selector: new Selector(arg) };
  } catch (e) {
    throw new RegistrationError(
      `${what}(...): owns has ${JSON.stringify(arg)}, which is not a resource: ${
        (e as Error).message
      }`,
    );
  }
}
