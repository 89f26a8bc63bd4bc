/**
 * The registry of an operator: every handler registered with `kopf.on.*`,
 * grouped by kind (resource-changing, raw-event, activities), queried by the
 * reactor per resource and cause. Several operators in one process each have
 * their own registry; `kopf.on.*` uses the default one unless told otherwise.
 *
 * @module
 */

import type { Resource, Selector } from "../../cogs/structs/references.ts";
import { hasCallbacks, matchesChange, matchesObject, prematches } from "./filters.ts";
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
import type { Diff } from "../../cogs/structs/diffs.ts";
import type { WebhookHandler, WebhookType } from "./webhooks.ts";
import type { ConverterHandler } from "./converters.ts";
import type { ReconcilingHandler } from "./reconcilers.ts";

/** A handler id was registered twice for the same resource and kind. */
export class DuplicateHandlerError extends Error {
  /** Always `"DuplicateHandlerError"`. */
  override name = "DuplicateHandlerError";
}

/** The handlers of one resource, as {@link OperatorRegistry} keeps them between registrations. */
interface ResourceHandlers {
  changing?: readonly ChangingHandler[];
  spawning?: readonly SpawningHandler[];
  watching?: readonly WatchingHandler[];
  indexing?: readonly IndexingHandler[];
  reconciling?: readonly ReconcilingHandler[];
  callbacks?: boolean;
}

/**
 * The handlers of an operator.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorRegistry } from "../../../mod.ts";
 * const registry = new OperatorRegistry();
 * assert.deepEqual(registry.activityHandlers("startup").length, 0);
 * ```
 */
export class OperatorRegistry {
  #changing: ChangingHandler[] = [];
  /**
   * The changing, spawning, watching, indexing and reconciling handlers of each resource, and
   * whether it has reconcilers (asked on every event), kept until the next registration;
   * read-only arrays, shared by all callers.
   */
  #byResource = new WeakMap<
    Resource,
    ResourceHandlers
  >();

  #cached(
    resource: Resource,
  ): ResourceHandlers {
    let cached = this.#byResource.get(resource);
    if (!cached) this.#byResource.set(resource, cached = {});
    return cached;
  }
  #watching: WatchingHandler[] = [];
  #activities: ActivityHandler[] = [];

  /**
   * Adds a handler.
   *
   * @param handler The handler.
   * @throws {DuplicateHandlerError} When the id is already taken for the same resource and kind.
   */
  register(handler: Handler): void {
    if (handler.kind === "activity") {
      const clash = this.#activities.find((h) =>
        h.activity === handler.activity && h.id === handler.id
      );
      if (clash) {
        throw new DuplicateHandlerError(
          `a ${handler.activity} handler with id "${handler.id}" is already registered: give one of them another id ({ id: "..." })`,
        );
      }
      this.#activities.push(handler);
      return;
    }
    const list: ResourceHandler[] = handler.kind === "changing" ? this.#changing : this.#watching;
    const clash = list.find((h) =>
      h.id === handler.id && h.selector.toString() === handler.selector.toString() &&
      (handler.kind !== "changing" || (h as ChangingHandler).reason === handler.reason)
    );
    if (clash) {
      throw new DuplicateHandlerError(
        `a handler with id "${handler.id}" is already registered for ${handler.selector}: give one of them another id ({ id: "..." })`,
      );
    }
    if (handler.kind === "changing") this.#changing.push(handler);
    else this.#watching.push(handler);
    this.#byResource = new WeakMap(); // the changing and watching handlers of each resource
  }

  /** Every resource selector that has handlers (what the operator must watch). */
  selectors(): Selector[] {
    const seen = new Map<string, Selector>();
    for (
      const h of [
        ...this.#changing,
        ...this.#watching,
        ...this.#indexing,
        ...this.#spawning,
        ...this.#reconciling,
      ]
    ) {
      seen.set(h.selector.toString(), h.selector);
    }
    // The owned children of reconcilers are watched too (their events reach their parents).
    for (const h of this.#reconciling) {
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
    return cached.changing ??= Object.freeze(
      this.#changing.filter((h) => h.selector.check(resource)),
    );
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
    const all = cached.watching ??= Object.freeze(
      this.#watching.filter((h) => h.selector.check(resource)),
    );
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
    return this.#activities.filter((h) => h.activity === activity);
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
   * import { OperatorRegistry, Resource } from "../../../mod.ts";
   * import * as kopf from "../../../mod.ts";
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
    return !this.#changing.length && !this.#watching.length && !this.#activities.length &&
      !this.#indexing.length && !this.#spawning.length && !this.#webhooks.length &&
      !this.#converters.length && !this.#reconciling.length;
  }

  // --- In-memory indexing (kopf.index) ---------------------------------------------------------

  #indexing: IndexingHandler[] = [];

  /**
   * Adds an indexing handler (`kopf.index`). Index ids are operator-wide: one id, one index;
   * handlers of several resources with the same id (e.g. one function registered for pods and
   * for deployments) feed the same index.
   *
   * @param handler The handler.
   * @throws {DuplicateHandlerError} When the id is already taken for the same resource.
   */
  registerIndexing(handler: IndexingHandler): void {
    const selector = handler.selector.toString();
    if (this.#indexing.some((h) => h.id === handler.id && h.selector.toString() === selector)) {
      throw new DuplicateHandlerError(
        `an index with id "${handler.id}" is already registered for ${selector}: give one of them another id ({ id: "..." })`,
      );
    }
    this.#indexing.push(handler);
    this.#byResource = new WeakMap(); // the indexing handlers of each resource
  }

  /**
   * The indexing handlers: all of them, or those of one resource.
   *
   * @param resource The resource, or undefined for all.
   * @returns The handlers, in registration order.
   */
  indexingHandlers(resource?: Resource): IndexingHandler[] {
    return resource
      ? this.#indexing.filter((h) => h.selector.check(resource))
      : [...this.#indexing];
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
   * import { OperatorRegistry, Resource } from "../../../mod.ts";
   * const registry = new OperatorRegistry();
   * const resource = new Resource({ group: "", version: "v1", plural: "pods" });
   * assert.deepEqual(registry.indexersOf(resource).length, 0);
   * ```
   */
  indexersOf(resource: Resource): readonly IndexingHandler[] {
    const cached = this.#cached(resource);
    return cached.indexing ??= Object.freeze(
      this.#indexing.filter((h) => h.selector.check(resource)),
    );
  }

  // --- Daemons and timers (kopf.daemon, kopf.timer) -------------------------------------------

  #spawning: SpawningHandler[] = [];

  /**
   * Adds a daemon or timer handler (`kopf.daemon`, `kopf.timer`).
   *
   * @param handler The handler.
   * @throws {DuplicateHandlerError} When the id is already taken for the same resource.
   */
  registerSpawning(handler: SpawningHandler): void {
    const clash = this.#spawning.find((h) =>
      h.id === handler.id && h.selector.toString() === handler.selector.toString()
    );
    if (clash) {
      throw new DuplicateHandlerError(
        `a daemon or timer with id "${handler.id}" is already registered for ${handler.selector}: give one of them another id ({ id: "..." })`,
      );
    }
    this.#spawning.push(handler);
    this.#byResource = new WeakMap();
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
    return cached.spawning ??= Object.freeze(
      this.#spawning.filter((h) => h.selector.check(resource)),
    );
  }

  // --- Admission webhooks (kopf.on.validate, kopf.on.mutate) ----------------------------------

  #webhooks: WebhookHandler[] = [];

  /**
   * Adds an admission handler. Its id is its webhook's endpoint path and name, so ids are unique
   * among all admission handlers of the operator.
   *
   * @param handler The handler.
   * @throws {DuplicateHandlerError} When the id is already taken by another admission handler.
   */
  registerWebhook(handler: WebhookHandler): void {
    if (this.#webhooks.some((h) => h.id === handler.id)) {
      throw new DuplicateHandlerError(
        `an admission handler with id "${handler.id}" is already registered (the id is its webhook's path): give one of them another id ({ id: "..." })`,
      );
    }
    this.#webhooks.push(handler);
  }

  /**
   * The admission handlers: all of them, or those of one type.
   *
   * @param reason Validating or mutating; undefined for both.
   * @returns The handlers, in registration order.
   */
  webhookHandlers(reason?: WebhookType): WebhookHandler[] {
    return reason ? this.#webhooks.filter((h) => h.reason === reason) : [...this.#webhooks];
  }

  // --- Conversion webhooks (kopf.on.convert) ---------------------------------------------------

  #converters: ConverterHandler[] = [];

  /**
   * Adds a converter. One step per resource and pair of versions: a second converter for the
   * same step would make the answer depend on the order of registration, so it is refused.
   *
   * @param handler The converter.
   * @throws {DuplicateHandlerError} When the resource has a converter for the same step.
   */
  registerConverter(handler: ConverterHandler): void {
    const same = this.#converters.find((h) =>
      String(h.selector) === String(handler.selector) && h.from === handler.from &&
      h.to === handler.to
    );
    if (same) {
      throw new DuplicateHandlerError(
        `${handler.selector} has a converter from ${handler.from} to ${handler.to} already ` +
          `("${same.id}"): one converter per step`,
      );
    }
    this.#converters.push(handler);
  }

  /**
   * The converters (`kopf.on.convert`).
   *
   * @returns The converters, in registration order.
   */
  converterHandlers(): ConverterHandler[] {
    return [...this.#converters];
  }

  // --- Reconcilers of parents and their owned children (kopf.on.reconcile) ---------------------

  #reconciling: ReconcilingHandler[] = [];

  /**
   * Adds a reconciler (`kopf.on.reconcile`).
   *
   * @param handler The reconciler.
   * @throws {DuplicateHandlerError} When the id is already taken for the same resource.
   */
  registerReconciling(handler: ReconcilingHandler): void {
    const selector = handler.selector.toString();
    if (this.#reconciling.some((h) => h.id === handler.id && String(h.selector) === selector)) {
      throw new DuplicateHandlerError(
        `a reconciler with id "${handler.id}" is already registered for ${selector}: give one of them another id ({ id: "..." })`,
      );
    }
    this.#reconciling.push(handler);
    this.#byResource = new WeakMap(); // whether each resource has reconcilers
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
   * import { OperatorRegistry, Resource } from "../../../mod.ts";
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
    return resource
      ? this.#reconciling.filter((h) => h.selector.check(resource))
      : [...this.#reconciling];
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
   * import { OperatorRegistry, Resource } from "../../../mod.ts";
   * const registry = new OperatorRegistry();
   * const resource = new Resource({ group: "apps", version: "v1", plural: "deployments" });
   * assert.deepEqual(registry.reconcilersOf(resource).length, 0);
   * ```
   */
  reconcilersOf(resource: Resource): readonly ReconcilingHandler[] {
    const cached = this.#cached(resource);
    return cached.reconciling ??= Object.freeze(
      this.#reconciling.filter((h) => h.selector.check(resource)),
    );
  }
}

/**
 * Selects, from a list of changing handlers, those that apply to a cause:
 * the cause's own handlers, resume handlers in the first cycle of an object
 * noticed by the initial listing (also mixed into its creation, when it was
 * created while the operator was down; not during deletion unless
 * `deleted: true`), and field handlers whose field changed. A function
 * registered under one id for several causes runs once per cycle.
 *
 * @param handlers The candidates.
 * @param cause The cause.
 * @param context The handler context, for callback filters.
 * @returns The applicable handlers, in order.
 */
export function selectForCause(
  handlers: readonly ChangingHandler[],
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
  // A plain loop (this runs on every cycle): no filtered arrays, no maps or sets of seen ids.
  const selected: ChangingHandler[] = [];
  for (let i = 0; i < handlers.length; i++) {
    const h = handlers[i]!;
    if (h.initial) {
      if (!cause.initial) continue;
      if (cause.reason === "delete" && !h.deleted) continue;
    } else if (h.reason !== undefined && h.reason !== cause.reason) continue;
    else if (h.reason === undefined && !(cause.reason === "update" || cause.reason === "create")) {
      continue;
    }
    if (!matchesChange(h, cause, context)) continue;
    // The same function with the same id registered for several causes (e.g. create and resume,
    // for an object created while the operator was down) runs once per cycle: the first wins.
    // The same function with other ids (e.g. other fields) runs once per id, as in Kopf.
    if (!selectedAlready(selected, h)) selected.push(h);
  }
  return selected;
}

/** Whether the same function under the same id is selected already. */
function selectedAlready(selected: readonly ChangingHandler[], h: ChangingHandler): boolean {
  for (let i = 0; i < selected.length; i++) {
    if (selected[i]!.fn === h.fn && selected[i]!.id === h.id) return true;
  }
  return false;
}
