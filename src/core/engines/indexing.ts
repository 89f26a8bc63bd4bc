/**
 * In-memory indexing (`kopf.index`): every event of every watched object goes
 * through the indexing handlers of its resource before it is queued for
 * processing, and their results are kept as `kopf.Index` (keys → `kopf.Store`
 * of values, one value per object) under the handler's id.
 *
 * Why indexing runs in the watcher's loop rather than in the per-object
 * queues: the docs' readiness rule says that no handler starts before every
 * index is filled from its initial listing. Indexed inline, an index holds
 * every listed object at the very moment the watcher sees the listing end
 * (`LISTED`), so readiness is "every watcher has listed" — no counting of
 * queued-but-unprocessed objects.
 *
 * The readiness gate is re-closable, as Kopf's `operator_indexed` toggle set:
 * every watcher of an indexed resource holds it closed from its start until
 * its initial listing is indexed, also watchers that start while the operator
 * runs (a new namespace matching `-n`, a new CRD picked up by a category or
 * `EVERYTHING`, a re-created CRD). Resource-related processing waits while any
 * such watcher has not listed ({@link OperatorIndexers.whenReady}); watchers of
 * resources without indexing handlers never close it. A watcher that stops
 * before listing (stopped, its namespace gone, failed) releases its hold. The
 * gate is a counter of holds and a promise re-made when it closes: no polling.
 *
 * Indexing functions are meant to be fast (the docs say so); all indexing of
 * one operator is serialised, so an index never sees two updates of one
 * object out of order, also when a temporarily excluded object is re-indexed
 * by its timer.
 *
 * Decisions (where the docs leave room):
 * - Objects are identified by resource, namespace and name; an object
 *   re-created under the same name replaces the old one's values.
 * - A `DELETED` event (also the one the watcher synthesises for objects that
 *   vanished during a relist after a 410) removes the object's values from
 *   all indices and forgets its exclusions.
 * - When a watcher stops for good while the operator runs (its CRD was
 *   deleted, its namespace is no longer served), its objects leave the indices.
 * - Errors follow "Errors in indexing", through the one handler protocol
 *   (actions/execution.ts) with errors ignored by default: `"ignored"` keeps
 *   stale values; `PermanentError` or `errors: "permanent"` drop the values
 *   and exclude the object (this uid) for good; `TemporaryError` (its `delay`)
 *   or `errors: "temporary"` (`backoff`, else `settings.execution.defaultBackoff`)
 *   drop the values and exclude the object for the delay, after which it is
 *   re-indexed from its latest state; `retries` and `timeout`, counted from
 *   the first failure, turn the next attempt into a permanent exclusion.
 *   Indexing handlers get `retry`, `started`, `runtime` of that failure
 *   sequence; a success resets it.
 * - Indexing handlers get the operator's memo (they run outside the objects'
 *   queues, where the per-object memos live) and the indices.
 * - A relist of a watcher that has listed once (after a 410 Gone, or any
 *   reconnect) does not close the gate, as in Kopf: the relisted objects are
 *   re-indexed inline and in order, the vanished ones leave through the
 *   synthesised `DELETED` before `LISTED`, so the index is never less complete
 *   than what the watcher has already delivered; holding the handlers for the
 *   relist would only stall the operator during every outage.
 * - At start-up, the gate also waits for the initial listings of resources
 *   without indexing handlers ({@link OperatorIndexers.markReady}), as it did
 *   before it was re-closable.
 * - Daemons and timers already running are not paused by a closed gate (nor in
 *   Kopf); spawning new ones is part of processing and waits.
 *
 * @module
 */

import { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { type CancelTimer, type Clock, realClock } from "../../cogs/aio/clock.ts";
import { executeHandler, withAttempt } from "../actions/execution.ts";
import { type LogSink, ObjectLogger } from "../actions/loggers.ts";
import { type Outcome, State } from "../actions/progression.ts";
import { matchesObject } from "../intents/filters.ts";
import { objectContext } from "../intents/contexts.ts";
import type { AnyObject, IndexingHandler } from "../intents/handlers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import { type Index, IndexState, resultEntries } from "./indices.ts";

export { Index, Store } from "./indices.ts";

const OPEN: Promise<void> = Promise.resolve();

interface Failure {
  uid: string | undefined;
  /** The object's latest body and resource, to re-index it from when the exclusion ends. */
  body: AnyObject;
  resource: Resource;
  /** The failure sequence's progress (retries, started), as the executor keeps it. */
  progress: State;
  /** Excluded until this time (clock ms); Infinity for good; undefined when not excluded. */
  until: number | undefined;
  /** Cancels the re-indexing timer. */
  cancel?: CancelTimer | undefined;
}

/** What the indexers need from the operator. */
export interface IndexersOptions {
  registry: OperatorRegistry;
  settings: OperatorSettings;
  memo: AnyObject;
  sink: LogSink;
  /** Stops the re-indexing timers. */
  signal?: AbortSignal;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
}

/**
 * The indices of one operator and the readiness gate of its handlers: closed
 * while the operator starts up and while any watcher of an indexed resource
 * has not indexed its initial listing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * import { OperatorIndexers } from "./indexing.ts";
 * const registry = new kopf.OperatorRegistry();
 * kopf.index("pods", { registry }, function names({ name }) {
 *   return name;
 * });
 * const indexers = new OperatorIndexers({
 *   registry, settings: new kopf.OperatorSettings(), memo: {}, sink: () => {},
 * });
 * const pods = new kopf.Resource({ group: "", version: "v1", plural: "pods", kind: "Pod" });
 * indexers.markReady(); // the start-up is over
 * const release = indexers.hold(pods); // a new watcher of pods starts
 * assert.deepEqual(indexers.isReady, false);
 * const waiting = indexers.whenReady(); // what handlers await
 * release(); // its initial listing is indexed (or it stopped before)
 * await waiting;
 * assert.deepEqual([indexers.isReady, Object.keys(indexers.indices)], [true, [ "names" ]]);
 * ```
 */
export class OperatorIndexers {
  #options: IndexersOptions;
  #states = new Map<string, IndexState<Failure>>();
  /** Stream key → object keys indexed through it. */
  #streams = new Map<string, Set<string>>();
  /**
   * Object key → the stream it was last indexed through. No bodies: only an excluded object's
   * failure record keeps its latest body, to re-index it from when the exclusion ends.
   */
  #where = new Map<string, string>();
  #chain: Promise<void> = Promise.resolve();
  /** The readiness gate: how many holds keep it closed, and the promise that resolves when open. */
  #holds = 0;
  #gate: Promise<void> = OPEN;
  #open: () => void = () => {};
  /** The operator stops: the gate is open for good (nothing waits for listings any more). */
  #stopped = false;
  /** The start-up hold, released by {@link markReady}. */
  #startup: () => void;
  /** The read-only indices by id, as handlers get them in `indices`. */
  readonly indices: Readonly<Record<string, Index>>;

  /** @param options The registry, settings, operator memo, log sink, and a stop signal. */
  constructor(options: IndexersOptions) {
    this.#options = options;
    const indices: Record<string, Index> = {};
    for (const h of options.registry.indexingHandlers()) {
      if (this.#states.has(h.id)) continue; // one id, one index, whatever the resources
      const state = new IndexState<Failure>();
      this.#states.set(h.id, state);
      indices[h.id] = state.index;
    }
    this.indices = Object.freeze(indices);
    this.#startup = this.#states.size ? this.#hold() : () => {};
    const stopping = () => {
      this.#stopped = true;
      this.#open();
      for (const state of this.#states.values()) {
        for (const f of state.failures.values()) f.cancel?.();
      }
    };
    if (options.signal?.aborted) stopping();
    else options.signal?.addEventListener("abort", stopping, { once: true });
  }

  /** Whether the operator has any indexing handlers (and handlers must wait for readiness). */
  get active(): boolean {
    return this.#states.size > 0;
  }

  /** Whether the readiness gate is open now: no watcher of an indexed resource is listing. */
  get isReady(): boolean {
    return this.#stopped || this.#holds === 0;
  }

  /**
   * Waits until the readiness gate is open: the start-up is over and every watcher of an
   * indexed resource has indexed its initial listing (or stopped before). Resource-related
   * processing awaits this before any handler; the gate may close again later, when new
   * watchers start, so every wait asks anew.
   *
   * @returns A promise that resolves when the gate is open (already resolved when open now).
   */
  whenReady(): Promise<void> {
    return this.isReady ? OPEN : this.#gate;
  }

  /** Ends the start-up: every watcher that existed at start has listed its objects (or stopped). */
  markReady(): void {
    this.#startup();
  }

  /**
   * Holds the readiness gate closed for one watcher of a resource until its initial listing is
   * indexed: call the returned release when the watcher sees `LISTED`, and when it stops (both
   * are fine; only the first call counts). A resource without indexing handlers does not hold.
   *
   * @param resource The watcher's resource.
   * @returns The release (idempotent).
   */
  hold(resource: Resource): () => void {
    if (this.#stopped || !this.#states.size || !this.indexes(resource)) return () => {};
    return this.#hold();
  }

  #hold(): () => void {
    if (this.#holds++ === 0) this.#gate = new Promise((resolve) => (this.#open = resolve));
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.#holds === 0) this.#open();
    };
  }

  /**
   * Whether a resource is indexed at all.
   *
   * @param resource The resource.
   * @returns True when some indexing handler serves it.
   */
  indexes(resource: Resource): boolean {
    return this.#options.registry.indexersOf(resource).length > 0;
  }

  /**
   * Indexes one watch event (listing, ADDED, MODIFIED, DELETED) of one object.
   *
   * @param resource The object's resource.
   * @param stream The watcher's key (to forget its objects when it stops).
   * @param event The event.
   * @returns When indexed.
   */
  index(
    resource: Resource,
    stream: string,
    event: { type: string | null; object: AnyObject },
  ): Promise<void> {
    if (!this.#states.size || !this.indexes(resource)) return Promise.resolve();
    return this.#serial(() => this.#index(resource, stream, event));
  }

  /**
   * Forgets the objects of a stopped watcher: their values leave all indices — except the
   * objects indexed since through another watcher (e.g. the next watcher of a re-created
   * namespace or CRD, started while this one was still stopping).
   *
   * @param stream The watcher's key (unique per watcher: one key, one stream of events).
   * @returns When forgotten.
   */
  forgetStream(stream: string): Promise<void> {
    return this.#serial(() => {
      for (const objectKey of this.#streams.get(stream) ?? []) {
        const where = this.#where.get(objectKey);
        if (where === undefined || where === stream) this.#forget(objectKey);
      }
      this.#streams.delete(stream);
    });
  }

  #serial(fn: () => void | Promise<void>): Promise<void> {
    const next = this.#chain.then(fn);
    this.#chain = next.catch(() => {});
    return next;
  }

  #forget(objectKey: string): void {
    for (const state of this.#states.values()) {
      state.remove(objectKey);
      state.failures.get(objectKey)?.cancel?.();
      state.failures.delete(objectKey);
    }
    this.#where.delete(objectKey);
  }

  async #index(
    resource: Resource,
    stream: string,
    event: { type: string | null; object: AnyObject },
  ): Promise<void> {
    const body = event.object;
    const meta = body.metadata ?? {};
    const objectKey = `${resource}|${meta.namespace ?? ""}|${meta.name ?? ""}`;
    if (event.type === "DELETED") {
      this.#forget(objectKey);
      this.#streams.get(stream)?.delete(objectKey);
      return;
    }
    let objects = this.#streams.get(stream);
    if (!objects) this.#streams.set(stream, objects = new Set());
    objects.add(objectKey);
    this.#where.set(objectKey, stream);
    for (const handler of this.#options.registry.indexersOf(resource)) {
      const state = this.#states.get(handler.id);
      if (state) await this.#indexOne(handler, state, resource, objectKey, event);
    }
  }

  async #indexOne(
    handler: IndexingHandler,
    state: IndexState<Failure>,
    resource: Resource,
    objectKey: string,
    event: { type: string | null; object: AnyObject },
  ): Promise<void> {
    const body = event.object;
    const meta = body.metadata ?? {};
    let failure = state.failures.get(objectKey);
    if (failure && failure.uid !== meta.uid) {
      failure.cancel?.();
      state.failures.delete(objectKey);
      failure = undefined;
    }
    if (failure) {
      failure.body = body;
      failure.resource = resource;
    }
    const logger = new ObjectLogger(this.#options.sink, body);
    const context: AnyObject = {
      ...objectContext(body, resource, new Patch(), logger, {
        memo: this.#options.memo,
        settings: this.#options.settings,
        indices: this.indices,
      }),
      param: handler.param,
      type: event.type,
      event,
    };
    if (!matchesObject(handler, body, context)) {
      state.remove(objectKey);
      return;
    }
    const clock = this.#options.clock ?? realClock;
    if (failure?.until !== undefined) {
      if (failure.until > clock.now()) return; // excluded: not even invoked
      failure.until = undefined;
    }
    // The one protocol, with the indexers' default: errors are ignored (the values stay).
    const progress = failure?.progress ?? new State("index");
    const outcome = await executeHandler<IndexingHandler>(handler, {
      state: progress,
      kind: "index",
      defaultErrors: "ignored",
      defaultBackoff: this.#options.settings.execution.defaultBackoff,
      noun: "Indexing handler",
      successLevel: "debug",
      logger,
      clock,
      signal: this.#options.signal,
      context: (_handler, attempt) => withAttempt({ ...context }, attempt),
    });
    if (outcome.final && outcome.error === undefined) {
      if (failure) state.failures.delete(objectKey);
      // No result (or an ignored error): the values stay as they are.
      if (outcome.result === undefined || outcome.result === null) return;
      state.replace(objectKey, resultEntries(outcome.result));
      return;
    }
    this.#exclude(
      handler,
      state,
      objectKey,
      meta.uid,
      failure ?? { uid: meta.uid, body, resource, progress, until: undefined },
      outcome,
      logger,
    );
  }

  /** A failed indexing handler: the object leaves the index, for good or for the delay. */
  #exclude(
    handler: IndexingHandler,
    state: IndexState<Failure>,
    objectKey: string,
    uid: string | undefined,
    f: Failure,
    outcome: Outcome,
    logger: ObjectLogger,
  ): void {
    const clock = this.#options.clock ?? realClock;
    f.uid = uid;
    state.remove(objectKey);
    state.failures.set(objectKey, f);
    if (outcome.final) {
      f.until = Infinity;
      logger.debug(`Indexing handler '${handler.id}' is excluded from the index for good.`);
      return;
    }
    const delay = outcome.delay ?? 0;
    f.until = clock.now() + delay * 1000;
    logger.info(`Indexing handler '${handler.id}' is excluded from the index for ${delay}s.`);
    // With no delay, the object is re-indexed on its next event (a timer would spin on errors).
    if (delay > 0 && !this.#options.signal?.aborted) {
      f.cancel = clock.timer(delay * 1000, () => {
        if (state.failures.get(objectKey) !== f) return;
        void this.#serial(async () => {
          if (state.failures.get(objectKey) !== f) return;
          await this.#indexOne(handler, state, f.resource, objectKey, {
            type: null,
            object: f.body,
          });
        }).catch(() => {});
      }, { unref: true });
    }
  }
}
