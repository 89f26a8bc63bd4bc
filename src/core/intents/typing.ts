/**
 * The types of handlers registered on typed resources (`kopf.resource`), and
 * the call forms of `kopf.on.*` that give them.
 *
 * Why overloads as an interface: one `kopf.on.create` serves a typed
 * resource (whose handler's `spec`, `status`, `body`, `patch`, `old`/`new`
 * are typed from the schemas), a resource in any of Kopf's string and object
 * forms (plain `AnyObject`s, as before), and 1–3 positional strings. As
 * overloads, each form reads on its own in `deno doc`, and a handler whose
 * annotated parameter does not fit is reported against the forms, not as a
 * mismatch of the resource name with the options (which a rest-tuple union
 * made TypeScript say).
 *
 * The typing is static: Kubernetes validates the objects against the CRD,
 * so handlers are not given a second, run-time check of every body.
 *
 * @module
 */

import type { Patch } from "../../cogs/structs/patches.ts";
import type { Everything } from "../../cogs/structs/selector_specs.ts";
import type { TypedResource } from "../../cogs/structs/typed_resources.ts";
import type {
  AnyObject,
  ChangingContext,
  EventContext,
  HandlerFn,
  SpawningContext,
} from "./handlers.ts";
import type {
  IndexHandle,
  IndexingContext,
  IndexingOptions,
  IndexKeyOf,
  IndexValueOf,
} from "./indexers.ts";
import type { WebhookContext } from "./webhooks.ts";

/** A resource in any of Kopf's forms: names, `{ group, version, plural, … }`, or EVERYTHING. */
export type ResourceArg = string | Everything | {
  group?: string;
  version?: string;
  plural?: string | Everything;
  kind?: string;
  singular?: string;
  shortcut?: string;
  category?: string;
  /** Never given: keeps typed resources (which have it) to their typed call forms. */
  specSchema?: never;
  /**
   * Never given: a resource with several versions (which has it) is not one resource to watch;
   * register handlers on one of its versions (`Evc.v1`), converters on it (`kopf.on.convert`).
   */
  versions?: never;
};

/** An object of a typed resource, as handlers get it. */
export interface TypedBody<Spec, Status> {
  /** `group/version`. */
  apiVersion: string;
  /** The kind. */
  kind: string;
  /** The metadata (name, namespace, labels, annotations, …). */
  metadata: AnyObject;
  /** The spec, as the schema says. */
  spec: Spec;
  /** The status, as the schema says (absent until something writes it). */
  status?: Status;
}

/** A JSON merge patch of a value: every field optional, `null` deletes, arrays replace. */
export type MergePatchOf<T> = T extends readonly unknown[] ? T
  : T extends object ? { [K in keyof T]?: MergePatchOf<T[K]> | null }
  : T;

/** The `patch` of handlers on typed resources: `patch.spec` and `patch.status` are typed. */
export type TypedPatch<Spec, Status> = Omit<Patch, "spec" | "status"> & {
  /** Changes to `spec` (merge patch: `null` deletes). */
  spec: MergePatchOf<Spec>;
  /** Changes to `status` (merge patch: `null` deletes). */
  status: MergePatchOf<Status>;
};

/** The dotted paths of a type's fields (to 5 levels; not into arrays), e.g. `"spec.size"`. */
export type FieldPathOf<T, D extends number = 5> = [D] extends [never] ? never
  : T extends readonly unknown[] ? never
  : T extends object ? string extends keyof T ? string
    : {
      [K in keyof T & string]-?:
        | K
        | (NonNullable<T[K]> extends readonly unknown[] ? never
          : NonNullable<T[K]> extends object
            ? `${K}.${FieldPathOf<NonNullable<T[K]>, [never, 0, 1, 2, 3, 4][D]>}`
          : never);
    }[keyof T & string]
  : never;

/** The type of the field at a dotted path (`unknown` when not known statically). */
export type FieldValueOf<T, P extends string> = P extends `${infer K}.${infer R}`
  ? K extends keyof NonNullable<T> ? FieldValueOf<NonNullable<T>[K], R> : unknown
  : P extends keyof NonNullable<T> ? NonNullable<T>[P]
  : unknown;

/** `old`/`new` of changing handlers: the field's value with a `field` option, else the body. */
export type OldNew<Spec, Status, O> = O extends { field: infer F extends string }
  ? FieldValueOf<TypedBody<Spec, Status>, F> | undefined
  : Partial<TypedBody<Spec, Status>> | undefined;

/** A handler context with the object's parts typed. */
export type Retyped<C, Spec, Status> = Omit<C, "body" | "spec" | "status" | "patch"> & {
  /** The whole object as last seen. */
  body: TypedBody<Spec, Status>;
  /** `body.spec`. */
  spec: Spec;
  /** `body.status`, or `{}`. */
  status: Partial<Status>;
  /** Changes to apply to the object at the end of the cycle, as one merge patch. */
  patch: TypedPatch<Spec, Status>;
};

/** The context of `on.create/update/delete/resume/field` handlers on a typed resource. */
export type TypedChangingContext<Spec, Status, O = unknown> =
  & Omit<Retyped<ChangingContext, Spec, Status>, "old" | "new">
  & {
    /** The old body (or, with `field`, the field's old value). */
    old: OldNew<Spec, Status, O>;
    /** The new body (or, with `field`, the field's new value). */
    new: OldNew<Spec, Status, O>;
  };

/** The context of admission handlers on a typed resource (`old`/`new` are whole bodies). */
export type TypedWebhookContext<Spec, Status> =
  & Omit<Retyped<WebhookContext, Spec, Status>, "old" | "new">
  & {
    /** The old object (UPDATE, DELETE), or undefined. */
    old: TypedBody<Spec, Status> | undefined;
    /** The new object (CREATE, UPDATE, CONNECT), or undefined. */
    new: TypedBody<Spec, Status> | undefined;
  };

/** The typed contexts of each handler family, by family. */
export interface TypedContexts<Spec, Status, O> {
  /** `on.create/update/delete/resume/field`. */
  changing: TypedChangingContext<Spec, Status, O>;
  /** `on.event`. */
  event: Retyped<EventContext, Spec, Status>;
  /** `daemon`, `timer`. */
  spawning: Retyped<SpawningContext, Spec, Status>;
  /** `index`. */
  indexing: Retyped<IndexingContext, Spec, Status>;
  /** `on.validate`, `on.mutate`. */
  webhook: TypedWebhookContext<Spec, Status>;
}

/** The `field` option on a typed resource: one of its fields' paths (checked statically). */
export interface TypedFieldOption<Spec, Status> {
  /** A dotted path of the typed body, e.g. `"spec.size"`, or its parts. */
  field?: FieldPathOf<TypedBody<Spec, Status>> | string[];
}

/**
 * The call forms of a `kopf.on.*` function for resource handlers: on a typed resource (typed
 * context), or on a resource given as one to three strings or an object (untyped context).
 *
 * @typeParam K The handler family (which typed context).
 * @typeParam O The options.
 * @typeParam C The untyped context.
 */
export interface ResourceRegistrar<K extends keyof TypedContexts<unknown, unknown, unknown>, O, C> {
  /** On a typed resource, with options: the handler's context is typed (and `field` checked). */
  <Spec, Status, const TO extends O & TypedFieldOption<Spec, Status>>(
    resource: TypedResource<Spec, Status>,
    options: TO,
    fn: HandlerFn<TypedContexts<Spec, Status, TO>[K]>,
  ): HandlerFn<TypedContexts<Spec, Status, TO>[K]>;
  /** On a typed resource: the handler's context is typed. */
  <Spec, Status>(
    resource: TypedResource<Spec, Status>,
    fn: HandlerFn<TypedContexts<Spec, Status, unknown>[K]>,
  ): HandlerFn<TypedContexts<Spec, Status, unknown>[K]>;
  /** On a resource by name (`"kopfexamples"`, `"kopfexamples.kopf.dev"`), object, or EVERYTHING. */
  (resource: ResourceArg, fn: HandlerFn<C>): HandlerFn<C>;
  /** On a resource by name, object, or EVERYTHING, with options. */
  (resource: ResourceArg, options: O, fn: HandlerFn<C>): HandlerFn<C>;
  /** On a resource by group (or version) and plural, e.g. `("kopf.dev", "kopfexamples")`. */
  (group: string, plural: string | Everything, fn: HandlerFn<C>): HandlerFn<C>;
  /** On a resource by group (or version) and plural, with options. */
  (group: string, plural: string | Everything, options: O, fn: HandlerFn<C>): HandlerFn<C>;
  /** On a resource by group, version and plural, e.g. `("kopf.dev", "v1", "kopfexamples")`. */
  (group: string, version: string, plural: string | Everything, fn: HandlerFn<C>): HandlerFn<C>;
  /** On a resource by group, version and plural, with options. */
  (
    group: string,
    version: string,
    plural: string | Everything,
    options: O,
    fn: HandlerFn<C>,
  ): HandlerFn<C>;
}

/** An index's handle typed by its function's return type `R` (keys and values). */
export type IndexHandleOf<R, C> = IndexHandle<IndexKeyOf<R>, IndexValueOf<R>, C>;

/**
 * The call forms of `kopf.index`: those of {@link ResourceRegistrar} (typed context on a typed
 * resource), returning the index's handle, whose keys and values are those of the function's
 * return type — so that `handle.of(indices)` in other handlers is typed, without declaring the
 * indices anywhere else.
 */
export interface IndexRegistrar {
  /** On a typed resource, with options: the function's context is typed. */
  <Spec, Status, const TO extends IndexingOptions & TypedFieldOption<Spec, Status>, R>(
    resource: TypedResource<Spec, Status>,
    options: TO,
    fn: (context: TypedContexts<Spec, Status, TO>["indexing"]) => R,
  ): IndexHandleOf<R, TypedContexts<Spec, Status, TO>["indexing"]>;
  /** On a typed resource: the function's context is typed. */
  <Spec, Status, R>(
    resource: TypedResource<Spec, Status>,
    fn: (context: TypedContexts<Spec, Status, unknown>["indexing"]) => R,
  ): IndexHandleOf<R, TypedContexts<Spec, Status, unknown>["indexing"]>;
  /** On a resource by name (`"pods"`, `"kopfexamples.kopf.dev"`), object, or EVERYTHING. */
  <R>(
    resource: ResourceArg,
    fn: (context: IndexingContext) => R,
  ): IndexHandleOf<R, IndexingContext>;
  /** On a resource by name, object, or EVERYTHING, with options. */
  <R>(
    resource: ResourceArg,
    options: IndexingOptions,
    fn: (context: IndexingContext) => R,
  ): IndexHandleOf<R, IndexingContext>;
  /** On a resource by group (or version) and plural, e.g. `("", "pods")`. */
  <R>(
    group: string,
    plural: string | Everything,
    fn: (context: IndexingContext) => R,
  ): IndexHandleOf<R, IndexingContext>;
  /** On a resource by group (or version) and plural, with options. */
  <R>(
    group: string,
    plural: string | Everything,
    options: IndexingOptions,
    fn: (context: IndexingContext) => R,
  ): IndexHandleOf<R, IndexingContext>;
  /** On a resource by group, version and plural, e.g. `("", "v1", "pods")`. */
  <R>(
    group: string,
    version: string,
    plural: string | Everything,
    fn: (context: IndexingContext) => R,
  ): IndexHandleOf<R, IndexingContext>;
  /** On a resource by group, version and plural, with options. */
  <R>(
    group: string,
    version: string,
    plural: string | Everything,
    options: IndexingOptions,
    fn: (context: IndexingContext) => R,
  ): IndexHandleOf<R, IndexingContext>;
}

export { noteTypedResource, type TypedDefinition, typedResourcesOf } from "./typed_notes.ts";
