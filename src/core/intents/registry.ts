/**
 * The registry of an operator: every handler registered with `kopf.on.*`,
 * grouped by kind (resource-changing, raw-event, activities), queried by the
 * reactor per resource and cause. Several operators in one process each have
 * their own registry; `kopf.on.*` uses the default one unless told otherwise.
 *
 * @module
 */

import type { Resource } from "../../cogs/structs/resource.ts";
import type { Selector } from "../../cogs/structs/selector.ts";
import type { Diff } from "../../cogs/structs/diffs.ts";
import { hasCallbacks, matchesObject, prematches } from "./filters.ts";
import type {
  ActivityHandler,
  AnyObject,
  ChangingHandler,
  Handler,
  IndexingHandler,
  ResourceHandler,
  SpawningHandler,
  WatchingHandler,
} from "./handlers.ts";
import type {
  ConverterHandler,
  HandlerKinds,
  ReconcilingHandler,
  RegisteredKind,
  WebhookHandler,
  WebhookType,
} from "./kinds.ts";
import { type ClashRules, KindRegistry } from "./kind_registry.ts";
import { selectForCause } from "./selection.ts";

export { DuplicateHandlerError } from "./kind_registry.ts";
export { selectForCause } from "./selection.ts";

/** The handlers of one resource, as {@link OperatorRegistry} keeps them between registrations. */
interface ResourceHandlers {
  changing?: readonly ChangingHandler[];
  spawning?: readonly SpawningHandler[];
  watching?: readonly WatchingHandler[];
  indexing?: readonly IndexingHandler[];
  reconciling?: readonly ReconcilingHandler[];
  callbacks?: boolean;
}

/** Two handlers of one resource selector (the same selector, as written). */
const sameSelector = (a: { selector: Selector }, b: { selector: Selector }) =>
  a.selector.toString() === b.selector.toString();
const ANOTHER_ID = `give one of them another id ({ id: "..." })`;

/** When two handlers of a kind may not both be registered, and what the refusal says. */
const CLASHES: ClashRules<HandlerKinds> = {
  changing: (h, added) =>
    h.id === added.id && sameSelector(h, added) && h.reason === added.reason
      ? `a handler with id "${added.id}" is already registered for ${added.selector}: ${ANOTHER_ID}`
      : undefined,
  watching: (h, added) =>
    h.id === added.id && sameSelector(h, added)
      ? `a handler with id "${added.id}" is already registered for ${added.selector}: ${ANOTHER_ID}`
      : undefined,
  activity: (h, added) =>
    h.activity === added.activity && h.id === added.id
      ? `a ${added.activity} handler with id "${added.id}" is already registered: ${ANOTHER_ID}`
      : undefined,
  // Index ids are operator-wide (one id, one index): handlers of several resources with one id
  // (e.g. one function for pods and for deployments) feed the same index.
  indexing: (h, added) =>
    h.id === added.id && sameSelector(h, added)
      ? `an index with id "${added.id}" is already registered for ${added.selector}: ${ANOTHER_ID}`
      : undefined,
  spawning: (h, added) =>
    h.id === added.id && sameSelector(h, added)
      ? `a daemon or timer with id "${added.id}" is already registered for ${added.selector}: ` +
        ANOTHER_ID
      : undefined,
  // The id is the webhook's endpoint path and name: unique among all admission handlers.
  webhook: (h, added) =>
    h.id === added.id
      ? `an admission handler with id "${added.id}" is already registered (the id is its ` +
        `webhook's path): ${ANOTHER_ID}`
      : undefined,
  // One step per resource and pair of versions: a second converter for one step would make the
  // answer depend on the order of registration.
  converter: (h, added) =>
    sameSelector(h, added) && h.from === added.from && h.to === added.to
      ? `${added.selector} has a converter from ${added.from} to ${added.to} already ` +
        `("${h.id}"): one converter per step`
      : undefined,
  reconciling: (h, added) =>
    h.id === added.id && sameSelector(h, added)
      ? `a reconciler with id "${added.id}" is already registered for ${added.selector}: ` +
        ANOTHER_ID
      : undefined,
};

/** The kinds whose handlers belong to a resource (and so to the per-resource cache). */
const PER_RESOURCE: ReadonlySet<RegisteredKind> = new Set([
  "changing",
  "watching",
  "indexing",
  "spawning",
  "reconciling",
]);

/**
 * The handlers of an operator.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorRegistry } from "@kopf/kopf";
 * const registry = new OperatorRegistry();
 * assert.deepEqual(registry.activityHandlers("startup").length, 0);
 * ```
 */
export class OperatorRegistry {
  #kinds = new KindRegistry<HandlerKinds>(CLASHES);
  /**
   * The changing, spawning, watching, indexing and reconciling handlers of each resource, and
   * whether it has reconcilers (asked on every event), kept until the next registration;
   * read-only arrays, shared by all callers.
   */
  #byResource = new WeakMap<Resource, ResourceHandlers>();

  #cached(resource: Resource): ResourceHandlers {
    let cached = this.#byResource.get(resource);
    if (!cached) this.#byResource.set(resource, cached = {});
    return cached;
  }

  /**
   * Adds a handler of any kind (its `kind` says which), after those registered before it.
   *
   * @param handler The handler.
   * @throws {DuplicateHandlerError} When the id is already taken for the same resource and kind
   *   (for admission handlers: by any of them; for converters: the same step of a resource).
   */
  register(handler: Handler | HandlerKinds[RegisteredKind]): void {
    this.#kinds.add(handler.kind, handler as never);
    // The handlers of each resource are recomputed after a registration of their kinds.
    if (PER_RESOURCE.has(handler.kind)) this.#byResource = new WeakMap();
  }

  /**
   * All the handlers of one kind, in registration order: a fresh array to change.
   *
   * @param kind The kind (`"changing"`, `"spawning"`, `"webhook"`, …).
   * @returns The handlers.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import * as kopf from "@kopf/kopf";
   * const registry = new kopf.OperatorRegistry();
   * kopf.on.create("kopfexamples", { registry }, function made() {});
   * assert.deepEqual(registry.handlers("changing").map((h) => h.id), ["made"]);
   * assert.deepEqual(registry.handlers("spawning"), []);
   * ```
   */
  handlers<K extends RegisteredKind>(kind: K): HandlerKinds[K][] {
    return [...this.#kinds.list(kind)];
  }

  /** The handlers of a kind that apply to a resource, in registration order. */
  #of<K extends Exclude<RegisteredKind, "activity">>(
    kind: K,
    resource: Resource,
  ): HandlerKinds[K][] {
    return this.#kinds.list(kind).filter((h) => (h as ResourceHandler).selector.check(resource));
  }

  /** Every resource selector that has handlers (what the operator must watch). */
  selectors(): Selector[] {
    const seen = new Map<string, Selector>();
    for (
      const h of [
        ...this.#kinds.list("changing"),
        ...this.#kinds.list("watching"),
        ...this.#kinds.list("indexing"),
        ...this.#kinds.list("spawning"),
        ...this.#kinds.list("reconciling"),
      ]
    ) {
      seen.set(h.selector.toString(), h.selector);
    }
    // The owned children of reconcilers are watched too (their events reach their parents).
    for (const h of this.#kinds.list("reconciling")) {
      for (const { selector } of h.owns) seen.set(selector.toString(), selector);
    }
    return [...seen.values()];
  }

  /**
   * The resource-changing handlers of a resource, in registration order: a frozen array,
   * computed once per resource until the next registration (it is asked on every event).
   *
   * @param resource The resource.
   * @returns The handlers.
   */
  changingHandlers(resource: Resource): readonly ChangingHandler[] {
    const cached = this.#cached(resource);
    return cached.changing ??= Object.freeze(this.#of("changing", resource));
  }

  /**
   * The raw-event handlers of a resource that match an object.
   *
   * @param resource The resource.
   * @param body The object.
   * @param context The handler context, for callback filters.
   * @returns The handlers.
   */
  watchingHandlers(
    resource: Resource,
    body?: AnyObject,
    context?: unknown,
  ): readonly WatchingHandler[] {
    const cached = this.#cached(resource);
    const all = cached.watching ??= Object.freeze(this.#of("watching", resource));
    return body === undefined || !all.length
      ? all
      : all.filter((h) => matchesObject(h, body, context));
  }

  /**
   * The activity handlers of one kind, in registration order.
   *
   * @param activity startup, cleanup, login, or probe.
   * @returns The handlers.
   */
  activityHandlers(activity: ActivityHandler["activity"]): ActivityHandler[] {
    return this.#kinds.list("activity").filter((h) => h.activity === activity);
  }

  /**
   * The changing handlers that apply to one cause of one object.
   *
   * @param resource The resource.
   * @param cause The cause: reason, initial flag, body, essences, diff.
   * @param context The handler context, for callback filters.
   * @returns The handlers, in registration order.
   */
  causeHandlers(
    resource: Resource,
    cause: {
      reason: string;
      initial: boolean;
      body: AnyObject;
      old: unknown;
      new: unknown;
      diff: Diff;
    },
    context: unknown,
  ): ChangingHandler[] {
    return selectForCause(this.changingHandlers(resource), cause, context);
  }

  /**
   * Whether any changing handler of a resource has an object in its scope
   * (its filters pre-match, whatever the cause). If none has, the object is
   * processed in the stealth mode: nothing is logged or stored on it.
   *
   * @param resource The resource.
   * @param cause The object, and the old and new essences.
   * @param context The handler context, for callback filters.
   * @returns True when the object is in the scope of some handler.
   */
  prematch(
    resource: Resource,
    cause: { body: AnyObject; old: unknown; new: unknown },
    context: unknown,
  ): boolean {
    const changing = this.changingHandlers(resource);
    for (let i = 0; i < changing.length; i++) {
      if (prematches(changing[i]!, cause, context)) return true;
    }
    return this.#anySpawning(resource, cause.body, context);
  }

  /**
   * Whether an object needs our finalizer: a non-optional delete handler
   * matches it, or a daemon or timer matches it (their stop must be awaited).
   *
   * @param resource The resource.
   * @param body The object.
   * @param context The handler context, for callback filters.
   * @returns True when deletion must wait for this operator.
   */
  requiresFinalizer(resource: Resource, body: AnyObject, context: unknown): boolean {
    const changing = this.changingHandlers(resource);
    for (let i = 0; i < changing.length; i++) {
      const h = changing[i]!;
      if (h.requiresFinalizer && h.reason === "delete" && matchesObject(h, body, context)) {
        return true;
      }
    }
    return this.#anySpawning(resource, body, context);
  }

  /**
   * Whether any changing handler, daemon or timer of a resource has a callback among its
   * filters (`when`, or a function as a label, annotation, `value`, `old` or `new` filter):
   * computed once per resource until the next registration. Without any, the context given to
   * {@link prematch}, {@link requiresFinalizer} and {@link causeHandlers} is never read, and the
   * reactor does not build it.
   *
   * @param resource The resource.
   * @returns True when some filter of those handlers calls back.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorRegistry, Resource } from "@kopf/kopf";
   * import * as kopf from "@kopf/kopf";
   * const registry = new OperatorRegistry();
   * const resource = new Resource({ group: "kopf.dev", version: "v1", plural: "kopfexamples" });
   * kopf.on.create("kopfexamples", { registry }, function plain() {});
   * assert.deepEqual(registry.filterCallbacks(resource), false);
   * kopf.on.create("kopfexamples", { registry, when: () => true }, function picky() {});
   * assert.deepEqual(registry.filterCallbacks(resource), true);
   * ```
   */
  filterCallbacks(resource: Resource): boolean {
    const cached = this.#cached(resource);
    if (cached.callbacks === undefined) {
      cached.callbacks = this.changingHandlers(resource).some(hasCallbacks) ||
        this.spawningHandlers(resource).some(hasCallbacks);
    }
    return cached.callbacks;
  }

  /** Whether a daemon or timer of the resource matches the object (plain loops: every cycle). */
  #anySpawning(resource: Resource, body: AnyObject, context: unknown): boolean {
    const spawning = this.spawningHandlers(resource);
    for (let i = 0; i < spawning.length; i++) {
      if (matchesObject(spawning[i]!, body, context)) return true;
    }
    return false;
  }

  /** Whether any handler at all is registered. */
  get isEmpty(): boolean {
    return this.#kinds.isEmpty;
  }

  // --- Per-kind shorthands (kopf.index, kopf.daemon/timer, admission, conversion, reconcile) ---

  /** {@link register}, for one kind (its duplicate rule is in `CLASHES`). */
  registerIndexing(handler: IndexingHandler): void {
    this.register(handler);
  }

  /**
   * The indexing handlers: all of them, or those of one resource.
   *
   * @param resource The resource, or undefined for all.
   * @returns The handlers, in registration order.
   */
  indexingHandlers(resource?: Resource): IndexingHandler[] {
    return resource ? this.#of("indexing", resource) : this.handlers("indexing");
  }

  /**
   * The indexing handlers of one resource, for the per-event questions (is it indexed, which
   * indexers run): a frozen array, computed once per resource until the next registration.
   * {@link indexingHandlers} gives a fresh array to change.
   *
   * @param resource The resource.
   * @returns The handlers, in registration order.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorRegistry, Resource } from "@kopf/kopf";
   * const registry = new OperatorRegistry();
   * const resource = new Resource({ group: "", version: "v1", plural: "pods" });
   * assert.deepEqual(registry.indexersOf(resource).length, 0);
   * ```
   */
  indexersOf(resource: Resource): readonly IndexingHandler[] {
    const cached = this.#cached(resource);
    return cached.indexing ??= Object.freeze(this.#of("indexing", resource));
  }

  /** {@link register}, for one kind (its duplicate rule is in `CLASHES`). */
  registerSpawning(handler: SpawningHandler): void {
    this.register(handler);
  }

  /**
   * The daemons and timers of a resource, in registration order: a frozen array, computed once
   * per resource until the next registration.
   *
   * @param resource The resource.
   * @returns The handlers.
   */
  spawningHandlers(resource: Resource): readonly SpawningHandler[] {
    const cached = this.#cached(resource);
    return cached.spawning ??= Object.freeze(this.#of("spawning", resource));
  }

  /** {@link register}, for one kind (its duplicate rule is in `CLASHES`). */
  registerWebhook(handler: WebhookHandler): void {
    this.register(handler);
  }

  /**
   * The admission handlers: all of them, or those of one type.
   *
   * @param reason Validating or mutating; undefined for both.
   * @returns The handlers, in registration order.
   */
  webhookHandlers(reason?: WebhookType): WebhookHandler[] {
    const all = this.#kinds.list("webhook");
    return reason ? all.filter((h) => h.reason === reason) : [...all];
  }

  /** {@link register}, for one kind (its duplicate rule is in `CLASHES`). */
  registerConverter(handler: ConverterHandler): void {
    this.register(handler);
  }

  /**
   * The converters (`kopf.on.convert`).
   *
   * @returns The converters, in registration order.
   */
  converterHandlers(): ConverterHandler[] {
    return this.handlers("converter");
  }

  /** {@link register}, for one kind (its duplicate rule is in `CLASHES`). */
  registerReconciling(handler: ReconcilingHandler): void {
    this.register(handler);
  }

  /**
   * Whether a resource has reconcilers (as parents): computed once per resource until the next
   * registration, for the question asked on every processed event.
   *
   * @param resource The resource.
   * @returns True when some reconciler's selector matches the resource.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorRegistry, Resource } from "@kopf/kopf";
   * const registry = new OperatorRegistry();
   * const resource = new Resource({ group: "kopf.dev", version: "v1", plural: "kopfexamples" });
   * assert.deepEqual(registry.reconciles(resource), false);
   * ```
   */
  reconciles(resource: Resource): boolean {
    return this.reconcilersOf(resource).length > 0;
  }

  /**
   * The reconcilers: all of them, or those of one (parent) resource.
   *
   * @param resource The parent resource, or undefined for all.
   * @returns The reconcilers, in registration order.
   */
  reconcilingHandlers(resource?: Resource): ReconcilingHandler[] {
    return resource ? this.#of("reconciling", resource) : this.handlers("reconciling");
  }

  /**
   * The reconcilers of one (parent) resource, for the per-event questions: a frozen array,
   * computed once per resource until the next registration. {@link reconcilingHandlers} gives
   * a fresh array to change.
   *
   * @param resource The parent resource.
   * @returns The reconcilers, in registration order.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorRegistry, Resource } from "@kopf/kopf";
   * const registry = new OperatorRegistry();
   * const resource = new Resource({ group: "apps", version: "v1", plural: "deployments" });
   * assert.deepEqual(registry.reconcilersOf(resource).length, 0);
   * ```
   */
  reconcilersOf(resource: Resource): readonly ReconcilingHandler[] {
    const cached = this.#cached(resource);
    return cached.reconciling ??= Object.freeze(this.#of("reconciling", resource));
  }
}
