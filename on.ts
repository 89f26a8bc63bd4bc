/**
 * `kopf.on.*`: registering handlers. Each function takes the resource (in any
 * of Kopf's forms), an optional options object, and the handler function, and
 * returns the function — so handlers are plain functions registered by a
 * call:
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.create("kopfexamples", { registry }, function createFn({ spec, logger }) {
 *   logger.info(`Creating with ${JSON.stringify(spec)}`);
 *   return { message: "hello" };
 * });
 * kopf.on.update("kopf.dev", "v1", "kopfexamples", { field: "spec.size", registry }, ({ old, new: now }) => {});
 * kopf.on.delete({ group: "kopf.dev", plural: "kopfexamples" }, { optional: true, registry }, () => {});
 * assert.equal(registry.isEmpty, false);
 * ```
 *
 * @module
 */

import {
  type ActivityOptions,
  registerActivity,
  registerChanging,
  registerWatching,
  type ResourceOptions,
} from "./src/core/intents/registration.ts";
import type {
  ActivityContext,
  ChangingContext,
  EventContext,
  HandlerFn,
} from "./src/core/intents/handlers.ts";
import type { IndexRegistrar, ResourceArg, ResourceRegistrar } from "./src/core/intents/typing.ts";
import { type IndexHandle, registerIndexing } from "./src/core/intents/indexers.ts";

export type { ActivityOptions, ResourceArg, ResourceOptions, ResourceRegistrar };

/** The call forms of `kopf.on.create/update/delete/resume/field`. */
export type ChangingRegistrar = ResourceRegistrar<"changing", ResourceOptions, ChangingContext>;

/** The argument list of resource handlers: resource parts, optional options, the function. */
export type ResourceHandlerArgs<C> =
  | [...resource: ResourceArg[], fn: HandlerFn<C>]
  | [...resource: ResourceArg[], options: ResourceOptions, fn: HandlerFn<C>];

/**
 * Registers a creation handler: called once when an object appears (with retries until it succeeds).
 *
 * @param args The resource, optional options, and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * const fn = kopf.on.create("kopfexamples", { registry }, function createFn({ name, logger }) {
 *   logger.info(`And here we are! Created ${name}.`);
 *   return { message: "hello" }; // lands in status.createFn
 * });
 * assert.equal(fn.name, "createFn"); // the function itself, still callable
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const create: ChangingRegistrar = (...args: unknown[]): HandlerFn =>
  registerChanging("kopf.on.create", "create", args);

/**
 * Registers an update handler: called when the object's essence (spec, labels, annotations…) changes.
 *
 * @param args The resource, optional options (`field`, `value`, `old`, `new`), and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.update("kopfexamples", { registry, field: "spec.size" }, ({ old, new: now, logger }) => {
 *   logger.info(`Resized from ${old} to ${now}.`);
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const update: ChangingRegistrar = (...args: unknown[]): HandlerFn =>
  registerChanging("kopf.on.update", "update", args);

/**
 * Registers a deletion handler: called when the object is marked for deletion.
 * A finalizer blocks the deletion until it succeeds, unless `optional: true`.
 *
 * @param args The resource, optional options, and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.delete("kopfexamples", { registry, optional: true }, ({ name, logger }) => {
 *   logger.info(`${name} is going away.`); // optional: no finalizer blocks the deletion
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
const deleteHandler: ChangingRegistrar = (...args: unknown[]): HandlerFn =>
  registerChanging("kopf.on.delete", "delete", args);
export { deleteHandler as delete };

/**
 * Registers a resuming handler: called once per operator process for each existing object
 * (not for objects being deleted, unless `deleted: true`).
 *
 * @param args The resource, optional options, and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.resume("kopfexamples", { registry }, function resumeFn({ spec, logger }) {
 *   logger.info(`Found at start-up with ${JSON.stringify(spec)}.`);
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const resume: ChangingRegistrar = (...args: unknown[]): HandlerFn =>
  registerChanging("kopf.on.resume", undefined, args, { initial: true });

/**
 * Registers a field handler: called when one field changes; `old`, `new` and `diff` are the field's.
 *
 * @param args The resource, options with `field` (required), and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.field("kopfexamples", { registry, field: "spec.field" }, ({ old, new: now, diff }) => {
 *   return { changed: diff.length > 0, from: old, to: now };
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const field: ChangingRegistrar = (...args: unknown[]): HandlerFn =>
  registerChanging("kopf.on.field", undefined, args, { requireField: true });

/**
 * Registers a raw event handler: called for every watch event of matching objects (no retries).
 *
 * @param args The resource, optional options, and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.event("pods", { registry, labels: { app: "web" } }, ({ type, name, logger }) => {
 *   logger.info(`${type ?? "listed"}: ${name}`); // every watch event, no retries
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const event: ResourceRegistrar<"event", ResourceOptions, EventContext> = (
  ...args: unknown[]
): HandlerFn => registerWatching(args);

/** The argument list of activity handlers: optional options, the function. */
export type ActivityHandlerArgs = [fn: HandlerFn<ActivityContext>] | [
  options: ActivityOptions,
  fn: HandlerFn<ActivityContext>,
];

/**
 * Registers a startup handler: runs before the operator starts watching; `settings` may be changed here.
 *
 * @param args Optional options and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, function configure({ settings }) {
 *   settings.posting.level = "warning";
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export function startup(...args: ActivityHandlerArgs): HandlerFn<ActivityContext> {
  return registerActivity("startup", args);
}

/**
 * Registers a cleanup handler: runs when the operator stops.
 *
 * @param args Optional options and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.cleanup({ registry }, ({ logger }) => logger.info("Goodbye."));
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export function cleanup(...args: ActivityHandlerArgs): HandlerFn<ActivityContext> {
  return registerActivity("cleanup", args);
}

/**
 * Registers a login handler: returns the connection info (`kopf.ConnectionInfo`) to the cluster.
 *
 * @param args Optional options and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.login({ registry }, () => {
 *   return new kopf.ConnectionInfo({ server: "https://127.0.0.1:6443", token: "secret" });
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export function login(...args: ActivityHandlerArgs): HandlerFn<ActivityContext> {
  return registerActivity("login", args);
}

/**
 * Registers a probe handler: its result is part of the liveness endpoint's answer.
 *
 * @param args Optional options and the handler.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.probe({ registry, id: "now" }, () => new Date().toISOString());
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export function probe(...args: ActivityHandlerArgs): HandlerFn<ActivityContext> {
  return registerActivity("probe", args);
}

// --- Sub-handlers (kopf.on.subhandler, kopf.on.register) --------------------------------------

export { register } from "./src/core/intents/registration.ts";
export { subhandler } from "./src/core/intents/subhandler.ts";

// --- Daemons and timers (kopf.daemon, kopf.timer) ---------------------------------------------

import { registerSpawning, type SpawningOptions } from "./src/core/intents/spawners.ts";
import type { SpawningContext } from "./src/core/intents/handlers.ts";

/** The argument list of daemons and timers: resource parts, optional options, the function. */
export type SpawningHandlerArgs =
  | [...resource: ResourceArg[], fn: HandlerFn<SpawningContext>]
  | [...resource: ResourceArg[], options: SpawningOptions, fn: HandlerFn<SpawningContext>];

/**
 * Registers a daemon (also `kopf.daemon`): a long-running function spawned for each matching
 * object when it appears or when the operator starts, and stopped (its `signal` aborted, its
 * `stopped` flag set) when the object is deleted, stops matching the filters, or the operator
 * exits. The deletion waits for it through the finalizer.
 *
 * @param args The resource, optional options (`initialDelay`, `cancellationBackoff`,
 *   `cancellationTimeout`, `cancellationPolling`, errors and filters), and the function.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.daemon("kopfexamples", { registry }, async function monitor({ signal, logger }) {
 *   while (!signal.aborted) {
 *     logger.info("Checking.");
 *     await kopf.sleep(10, signal);
 *   }
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const daemon: ResourceRegistrar<"spawning", SpawningOptions, SpawningContext> = (
  ...args: unknown[]
): HandlerFn => registerSpawning("daemon", args);

/**
 * Registers a timer (also `kopf.timer`): a function run for each matching object every
 * `interval` seconds (on a grid with `sharp`), only after `idle` seconds without changes,
 * first after `initialDelay`; never overlapping itself; stopped with the object.
 *
 * @param args The resource, optional options (`interval`, `sharp`, `idle`, `initialDelay`,
 *   errors and filters), and the function.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.timer("kopfexamples", { registry, interval: 60, idle: 10 }, function ping({ spec }) {
 *   return { seen: spec.field };
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const timer: ResourceRegistrar<"spawning", SpawningOptions, SpawningContext> = (
  ...args: unknown[]
): HandlerFn => registerSpawning("timer", args);

// --- In-memory indexing (kopf.index) -----------------------------------------------------------

/**
 * Registers an indexing handler (`kopf.index`, also `kopf.on.index`): its result for every
 * matching object is kept in the in-memory index named by its id (the function's name or `id`),
 * which all handlers find in `indices`. Return `{ key: value }` (or a `Map`, for non-string keys)
 * to index under keys, any other value to collect it under the key `null`, nothing to skip.
 *
 * Returns the index's handle: the function itself (still callable), its `id`, and
 * `of(indices)` — the index in another handler's `indices`, typed by what the function returns
 * (`kopf.Index` keys and values). `indices.byApp` (by id, untyped) works as in Kopf.
 *
 * @param args The resource, optional options (`id`, filters, `errors`, `backoff`, `retries`,
 *   `timeout`), and the function.
 * @returns The index's handle.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * const byApp = kopf.on.index("pods", { registry }, function byApp({ labels, name }) {
 *   return { [labels.app ?? ""]: name };
 * });
 * kopf.on.create("kopfexamples", { registry }, ({ indices, logger }) => {
 *   const names: string[] = [...(byApp.of(indices).get("web") ?? [])]; // typed
 *   logger.info(`web pods: ${names.join(", ")} (also in indices.${byApp.id}, untyped)`);
 * });
 * assert.equal(byApp.id, "byApp");
 * ```
 */
export const index: IndexRegistrar = (
  ...args: unknown[]
): IndexHandle<unknown, unknown, unknown> => registerIndexing(args);

// --- Admission webhooks (kopf.on.validate, kopf.on.mutate) -----------------------------------

import {
  registerWebhook,
  type WebhookContext,
  type WebhookOptions,
} from "./src/core/intents/webhooks.ts";

/** The argument list of admission handlers: resource parts, optional options, the function. */
export type WebhookHandlerArgs =
  | [...resource: ResourceArg[], fn: HandlerFn<WebhookContext>]
  | [...resource: ResourceArg[], options: WebhookOptions, fn: HandlerFn<WebhookContext>];

/**
 * Registers a validating admission handler: called by Kubernetes (through the operator's
 * webhook server, `settings.admission.server`) before an object is stored. Throw
 * `kopf.AdmissionError(message, code)` to refuse the request; push strings to `warnings` to warn.
 *
 * @param args The resource, optional options (`id`, `operation`/`operations`, `subresource`,
 *   `persistent`, `sideEffects`, `ignoreFailures`, filters), and the function.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.validate("kopfexamples", { registry }, function checkNumbers({ spec, warnings }) {
 *   if (!Array.isArray(spec.numbers ?? [])) throw new kopf.AdmissionError("Numbers must be a list.");
 *   warnings.push("Verified with the operator's hook.");
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const validate: ResourceRegistrar<"webhook", WebhookOptions, WebhookContext> = (
  ...args: unknown[]
): HandlerFn => registerWebhook("validating", args);

/**
 * Registers a mutating admission handler: its changes to `patch` go back to Kubernetes as a
 * JSON Patch, applied before the object is stored (`null` removes a key).
 *
 * @param args The resource, optional options (as {@link validate}), and the function.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.mutate("kopfexamples", { registry }, function ensureDefaults({ spec, patch }) {
 *   if (!("numbers" in spec)) patch.spec.numbers = [1, 2, 3];
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const mutate: ResourceRegistrar<"webhook", WebhookOptions, WebhookContext> = (
  ...args: unknown[]
): HandlerFn => registerWebhook("mutating", args);

// --- Conversion webhooks (kopf.on.convert) ---------------------------------------------------

import { type ConvertRegistrar, registerConverter } from "./src/core/intents/converters.ts";

/**
 * Registers a converter between two versions of a custom resource (beyond Kopf: the CRD
 * conversion webhook of Kubernetes). The function gets the object at `from` as `body` (a copy:
 * change it freely) and returns the object at `to` — or returns nothing, and then the changed
 * `body` with `patch` merged into it is the result. The framework sets `apiVersion`, keeps the
 * kind, and keeps the metadata except labels and annotations (taken from the result).
 *
 * One converter per step; register both directions (Kubernetes converts reads of old versions
 * as well as writes of new ones). Versions with no direct converter are converted through the
 * shortest chain of steps (v1 → v2 → v3). The operator's webhook server
 * (`settings.admission.server`) serves `<path>/convert/<plural>.<group>`; with
 * `settings.admission.managed`, the CRD's `spec.conversion` is set to this webhook.
 *
 * @param args The resource (one resource, no version), the options (`from`, `to`, optional
 *   `id`, `param`, `registry`), and the function.
 * @returns The converter function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.convert("kopfexamples.kopf.dev", { registry, from: "v1", to: "v2" }, ({ body }) => {
 *   const { field, ...spec } = body.spec;
 *   return { ...body, spec: { ...spec, renamed: field } };
 * });
 * kopf.on.convert("kopfexamples.kopf.dev", { registry, from: "v2", to: "v1" }, ({ spec, patch }) => {
 *   patch.spec.field = spec.renamed;
 *   patch.spec.renamed = null;
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 *
 * On a typed resource with several versions (`kopf.resource({ versions })`), `from` and `to`
 * are its versions, `body` is typed at `from` and the result (or `patch`) at `to`:
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * const Evc = kopf.resource({
 *   group: "kopf.dev", kind: "EphemeralVolumeClaim", plural: "ephemeralvolumeclaims",
 *   scope: "Namespaced", storage: "v2",
 *   versions: {
 *     v1: { spec: kopf.Type.Object({ size: kopf.Type.String() }) },
 *     v2: { spec: kopf.Type.Object({ storage: kopf.Type.Object({ size: kopf.Type.String() }) }) },
 *   },
 * });
 * kopf.on.convert(Evc, { registry, from: "v1", to: "v2" }, ({ body }) => {
 *   return { ...body, spec: { storage: { size: body.spec.size } } };
 * });
 * kopf.on.convert(Evc, { registry, from: "v2", to: "v1" }, ({ spec, patch }) => {
 *   patch.spec.size = spec.storage.size;
 *   patch.spec.storage = null;
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const convert: ConvertRegistrar =
  ((...args: unknown[]): HandlerFn => registerConverter(args)) as unknown as ConvertRegistrar;

// --- Reconcilers of parents and their owned children (kopf.on.reconcile) ----------------------

import { type ReconcileRegistrar, registerReconciling } from "./src/core/intents/reconcilers.ts";

/**
 * Registers a reconciler (beyond Kopf; also `kopf.reconcile`): a level-based function called
 * with an object as it is now and the children it owns as they are now (`children`, by the
 * names in `owns`: children of those resources whose `ownerReferences` name this object's uid)
 * — whenever the object changes, or one of its children is created, changes or goes away; also
 * every `resync` seconds without changes. Debounced (`debounce`, 0.1 s by default: a burst of
 * changes is one call), never two calls at once for one object (a change during a call makes one
 * more call after it); errors, retries, backoff and timeout as for other handlers; its `patch`
 * (and a result, in `status.<id>`) is applied to the object after the call. No calls once the
 * object is being deleted: Kubernetes' garbage collector deletes the children.
 *
 * @param args The resource, optional options (`owns`, `resync`, `debounce`, errors and
 *   filters), and the function.
 * @returns The handler function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.reconcile(
 *   "kopfexamples",
 *   { registry, owns: ["configmaps"], resync: 600 },
 *   async function ensureConfig({ name, namespace, spec, children, api, patch }) {
 *     if (!children.configmaps.length) {
 *       const cm = { metadata: { name: `${name}-config` }, data: { field: String(spec.field) } };
 *       kopf.adopt(cm);
 *       await api.create("configmaps", cm, { namespace });
 *     }
 *     patch.status.configs = children.configmaps.length;
 *   },
 * );
 * assert.equal(registry.isEmpty, false);
 * ```
 */
export const reconcile: ReconcileRegistrar = (...args: unknown[]): HandlerFn =>
  registerReconciling(args);
