/**
 * Reconcilers (`kopf.on.reconcile`, beyond Kopf): a level-based function per
 * parent object, called with the parent as it is now and the children it owns
 * as they are now — whenever the parent changes, or one of its children is
 * created, changes or disappears, and every `resync` seconds without changes.
 *
 * How it is fed: the reactor tells this engine about every parent event after
 * the parent's own cycle (`observe`, as it tells the daemons), and about every
 * child event straight from the children's watcher (`observeChild`, before
 * any queue: children need no per-object worker of their own). Children are
 * matched to parents by the parent's uid in their `ownerReferences`, through
 * an index (owned_children.ts) — an event finds its parents without a scan.
 * Only owner references of the parents' kinds are kept; the kinds come from
 * the parents' watchers (`watching`), which the orchestrator starts together
 * with the children's.
 *
 * When it calls: per parent and reconciler, a {@link Coalescer} — debounced
 * (`debounce`, capped at ten times that under steady churn), never two calls
 * at once, a change during a call makes one more call after it, a `resync`
 * timer. No call before the children's watchers have listed (a first call with
 * half the children would re-create the other half), while the operator is
 * paused, or before the indices are ready. No call once the parent is being
 * deleted or is gone: a running call's `signal` aborts, and Kubernetes' garbage
 * collector deletes the children.
 *
 * How it calls (reconcile_calls.ts): the one handler protocol (actions/execution.ts), errors
 * `"temporary"` by default — `TemporaryError(delay)` calls again after the
 * delay, other errors after `backoff`, `PermanentError` or exhausted
 * `retries`/`timeout` end the attempts until the next change or resync, which
 * start afresh. The parent's `patch` (and a result, in `status.<id>`) is one
 * merge patch after the call; our own write does not bring the parent back.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { Coalescer } from "../../cogs/aio/coalescer.ts";
import { Limiter } from "../../cogs/aio/limiter.ts";
import type { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { ObjectApi } from "../actions/application.ts";
import type { HandlerMetrics } from "../actions/execution.ts";
import { currentApi } from "../actions/handler_api.ts";
import { type EventPoster, type Level, type LogSink, ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import { matchesObject } from "../intents/filters.ts";
import type { AnyObject } from "../intents/handlers.ts";
import type { ReconcilingHandler } from "../intents/reconcilers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import type { OperatorIndexers } from "./indexing.ts";
import { ChildIndex, type OwnerRef } from "./owned_children.ts";
import { type CallEnv, type ParentRecord, reconcileOnce } from "./reconcile_calls.ts";

/** Under steady churn, a change waits at most this many debounce periods for its call. */
const MAX_WAIT_FACTOR = 10;

/** The operator-wide parts the engine needs. */
export interface ReconcilersContext {
  registry: OperatorRegistry;
  settings: OperatorSettings;
  memo: AnyObject;
  indices: AnyObject;
  sink: LogSink;
  post: EventPoster;
  /** Records each call (the operator's metrics), if given. */
  metrics?: HandlerMetrics | undefined;
  /** The time source of debounces, retries and resyncs (default: the real clock). */
  clock?: Clock | undefined;
  /** The operator's pause gate: no call starts while it is on. */
  paused?: ToggleSet | undefined;
  /** In-memory indices: no call starts before they are ready. */
  indexers?: OperatorIndexers | undefined;
}

/** One reconciler of one parent: its timing and its progress across retries. */
interface Runner {
  handler: ReconcilingHandler;
  work: Coalescer;
  /** The attempts since the last success or permanent failure (retries, started). */
  state: State | undefined;
}

/** What the engine keeps about one parent: the record a call reads, and its reconcilers. */
interface Parent extends ParentRecord {
  runners: Map<string, Runner>;
}

/** Which reconcilers own a child resource, and the parent kinds (`group/Kind`) they accept. */
interface Owners {
  handlers: ReconcilingHandler[];
  kinds: Set<string>;
}

/**
 * The reconcilers of one operator: the children's index, and per parent the timing of calls.
 *
 * @example
 * ```ts ignore
 * const reconcilers = new Reconcilers(op);
 * reconcilers.watching(resource, stream);          // a watcher starts (parents' or children's)
 * reconcilers.observeChild(resource, stream, raw); // every child event, from the watch loop
 * reconcilers.listed(stream);                      // its initial listing is complete
 * reconcilers.observe(resource, api, body, deleting, context); // every parent cycle
 * await reconcilers.close();                       // at the operator's exit
 * ```
 */
export class Reconcilers {
  readonly #op: ReconcilersContext;
  readonly #clock: Clock;
  /** What calls need of the operator (one record for all). */
  readonly #env: CallEnv;
  readonly #level: () => Level | undefined;
  readonly #index = new ChildIndex();
  readonly #parents = new Map<string, Parent>();
  /** The child resources watched, by key (to collect a parent's children per `owns` entry). */
  readonly #childResources = new Map<string, Resource>();
  /** Parent kinds (`group/Kind`) of each reconciler, learned from its parents' watchers. */
  readonly #parentKinds = new Map<ReconcilingHandler, Set<string>>();
  /** Per child resource key: its owners (cleared when a parent kind is learned). */
  readonly #owners = new Map<string, Owners>();
  /**
   * The same by the resource object, asked on every child event of every watcher: no string
   * made per event (the watch loop passes its one resource object); dropped with `#owners`.
   */
  #ownersByResource = new WeakMap<Resource, Owners>();
  /** Children's watchers that have not listed yet: no call starts meanwhile. */
  readonly #unlisted = new Set<string>();
  #listedWaiters: Array<() => void> = [];
  /** Runners being closed (deleted parents): awaited at the operator's exit. */
  readonly #closing = new Set<Promise<void>>();
  #closed = false;
  /** How many calls run at once: `settings.batching.workerLimit`, as for the per-object queues. */
  readonly #limiter: Limiter;

  /** @param op The registry, settings, memo, indices, logging, posting, clock and gates. */
  constructor(op: ReconcilersContext) {
    this.#op = op;
    const clock = this.#clock = op.clock ?? realClock;
    // The operator's client, taken now: calls start from timers too.
    this.#env = {
      settings: op.settings,
      indices: op.indices,
      metrics: op.metrics,
      clock,
      api: currentApi(),
    };
    const settings = op.settings;
    this.#limiter = new Limiter(() => settings.batching.workerLimit);
    this.#level =
      () => (settings.posting.enabled && settings.posting.loggers
        ? settings.posting.level as Level
        : undefined);
  }

  /** How many parents have reconcilers now. */
  get parents(): number {
    return this.#parents.size;
  }

  /** How many children are indexed. */
  get children(): number {
    return this.#index.size;
  }

  /**
   * A watcher starts (before its events): a parents' watcher teaches the parents' kind; a
   * children's watcher holds the calls until it has listed.
   *
   * @param resource The watched resource.
   * @param stream The watcher's key (unique per watcher).
   */
  watching(resource: Resource, stream: string): void {
    // The orchestrator starts all watchers of a (re)scan before any of them yields, so the kinds
    // are known before the children come. (A child seen before its parent's kind was served — a
    // CRD applied later — is kept from its next event on: it cannot have been owned before.)
    for (const h of this.#op.registry.reconcilersOf(resource)) {
      const kinds = this.#parentKinds.get(h) ?? new Set();
      this.#parentKinds.set(h, kinds.add(`${resource.group}/${resource.kind}`));
      this.#owners.clear();
      this.#ownersByResource = new WeakMap();
    }
    if (this.#ownersOf(resource).handlers.length) {
      this.#childResources.set(String(resource), resource);
      this.#unlisted.add(stream);
    }
  }

  /**
   * A watcher's listing is complete (the initial one, or a relist).
   *
   * @param stream The watcher's key.
   */
  listed(stream: string): void {
    if (this.#unlisted.delete(stream)) this.#wakeListed();
  }

  /**
   * Whether a resource is watched as owned children of some reconciler's parents (its events
   * are observed whoever owns the child: they bring the parents).
   *
   * @param resource The resource.
   * @returns True if so.
   */
  observes(resource: Resource): boolean {
    return this.#ownersOf(resource).handlers.length > 0;
  }

  /**
   * Whether a resource's events go to the per-object queues: not for a resource watched only as
   * owned children (their events need no worker and no memory per object).
   *
   * @param resource The resource.
   * @returns False when the resource has no handlers but as owned children.
   */
  queued(resource: Resource): boolean {
    if (!this.#ownersOf(resource).handlers.length) return true;
    const r = this.#op.registry;
    return r.changingHandlers(resource).length > 0 || r.watchingHandlers(resource).length > 0 ||
      r.spawningHandlers(resource).length > 0 || r.indexersOf(resource).length > 0 ||
      r.reconcilersOf(resource).length > 0;
  }

  /**
   * A child's event: updates the index and brings the parents it concerns (old and new owners)
   * to their reconcilers that own this resource.
   *
   * @param resource The child's resource.
   * @param stream The watcher's key.
   * @param event The event (type null for listings).
   */
  observeChild(
    resource: Resource,
    stream: string,
    event: { type: string | null; object: AnyObject },
  ): void {
    if (this.#closed) return;
    const owners = this.#ownersOf(resource);
    if (!owners.handlers.length) return;
    const accepts = (ref: OwnerRef) => owners.kinds.has(`${groupOf(ref.apiVersion)}/${ref.kind}`);
    const parents = this.#index.apply(stream, String(resource), event.type, event.object, accepts);
    this.#bring(parents, resource);
  }

  /**
   * A watcher stopped (its namespace or CRD went away): its children are forgotten, and their
   * parents brought to their reconcilers.
   *
   * @param stream The watcher's key.
   */
  forgetStream(stream: string): void {
    this.listed(stream);
    this.#bring(this.#index.forgetStream(stream), undefined);
  }

  /**
   * A parent's cycle (every event of a parent resource): starts its reconcilers that match, stops
   * those that do not any more, brings a change to them (not our own write); a parent being
   * deleted or gone gets no calls any more.
   *
   * @param resource The parent's resource.
   * @param api Patching the parent.
   * @param body The parent.
   * @param deleting Whether it is gone or being deleted.
   * @param context The handler context (its `memo`; for `when` callbacks).
   */
  observe(
    resource: Resource,
    api: ObjectApi,
    body: AnyObject,
    deleting: boolean,
    context: { memo: AnyObject },
  ): void {
    const handlers = this.#op.registry.reconcilersOf(resource);
    const uid = body?.metadata?.uid;
    if (!handlers.length || this.#closed || typeof uid !== "string") return;
    let parent = this.#parents.get(uid);
    if (deleting) {
      if (parent) void this.#forget(parent, "resource deleted");
      return;
    }
    const matching = new Set(handlers.filter((h) => matchesObject(h, body, context)));
    if (!parent && !matching.size) return; // not ours (filters): nothing kept
    if (!parent) {
      const logger = new ObjectLogger(this.#op.sink, body, {
        post: this.#op.post,
        level: this.#level,
      });
      parent = {
        uid,
        resource,
        body,
        api,
        logger,
        memo: context.memo,
        seen: undefined,
        own: undefined,
        runners: new Map(),
      };
      this.#parents.set(uid, parent);
    }
    const version = body.metadata.resourceVersion;
    const changed = version !== parent.seen && version !== parent.own;
    parent.seen = version;
    parent.body = body;
    parent.api = api;
    for (const handler of handlers) {
      const runner = parent.runners.get(handler.id);
      if (!matching.has(handler)) {
        if (runner) this.#stop(parent, runner, "filters mismatching");
      } else if (!runner) this.#start(parent, handler).work.trigger();
      else if (changed) runner.work.trigger();
    }
    if (!parent.runners.size) this.#parents.delete(uid);
  }

  /**
   * Lets a parent go without its deletion (another replica serves it now): no more calls here;
   * a running call's `signal` aborts. A later event of the parent starts its reconcilers again.
   *
   * @param uid The parent's uid.
   * @returns When its running call (if any) has ended.
   */
  release(uid: string): Promise<void> {
    const parent = this.#parents.get(uid);
    return parent ? this.#forget(parent, "resource released") : Promise.resolve();
  }

  /** Stops all calls (the operator exits) and waits for the running ones. */
  async close(): Promise<void> {
    this.#closed = true;
    const waits = [...this.#closing];
    for (const parent of this.#parents.values()) {
      for (const runner of parent.runners.values()) {
        waits.push(runner.work.close("operator exiting"));
      }
    }
    this.#parents.clear();
    this.#unlisted.clear();
    this.#wakeListed();
    await Promise.all(waits);
  }

  /** The reconcilers that own a resource, and the parent kinds they accept. */
  #ownersOf(resource: Resource): Owners {
    let owners = this.#ownersByResource.get(resource);
    if (owners) return owners;
    const key = String(resource);
    owners = this.#owners.get(key);
    if (!owners) {
      const handlers = this.#op.registry.reconcilingHandlers().filter((h) =>
        h.owns.some((o) => o.selector.check(resource))
      );
      const kinds = new Set(handlers.flatMap((h) => [...this.#parentKinds.get(h) ?? []]));
      this.#owners.set(key, owners = { handlers, kinds });
    }
    this.#ownersByResource.set(resource, owners);
    return owners;
  }

  /** Brings parents to their reconcilers (those owning the resource; all if undefined). */
  #bring(uids: string[], resource: Resource | undefined): void {
    for (const uid of uids) {
      const parent = this.#parents.get(uid);
      if (!parent) continue; // not seen yet: its first call finds its children in the index
      for (const runner of parent.runners.values()) {
        if (!resource || runner.handler.owns.some((o) => o.selector.check(resource))) {
          runner.work.trigger();
        }
      }
    }
  }

  #start(parent: Parent, handler: ReconcilingHandler): Runner {
    const runner: Runner = { handler, work: undefined!, state: undefined };
    runner.work = new Coalescer((signal) => this.#reconcile(parent, runner, signal), {
      debounce: handler.debounce,
      maxWait: handler.debounce * MAX_WAIT_FACTOR,
      resync: handler.resync,
      clock: this.#clock,
      ready: (signal) => this.#ready(signal),
      onError: (e) => parent.logger.exception(`Reconciler '${handler.id}' crashed: ${e}`, e),
    });
    parent.runners.set(handler.id, runner);
    return runner;
  }

  #stop(parent: Parent, runner: Runner, reason: string): Promise<void> {
    parent.runners.delete(runner.handler.id);
    const closing = runner.work.close(reason);
    this.#closing.add(closing);
    void closing.finally(() => this.#closing.delete(closing));
    return closing;
  }

  #forget(parent: Parent, reason: string): Promise<void> {
    this.#parents.delete(parent.uid);
    const runners = [...parent.runners.values()];
    return Promise.all(runners.map((r) => this.#stop(parent, r, reason))).then(() => {});
  }

  /** What a call waits for: the pause's end, the children's listings, the indices. */
  #ready(signal: AbortSignal): Promise<unknown> | undefined {
    const { paused, indexers } = this.#op;
    if (paused?.on) return paused.waitFor(false, signal);
    if (this.#unlisted.size) {
      return new Promise<void>((resolve) => {
        this.#listedWaiters.push(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
    if (indexers?.active && !indexers.isReady) return indexers.whenReady();
    return undefined;
  }

  #wakeListed(): void {
    if (this.#unlisted.size) return;
    const waiters = this.#listedWaiters;
    this.#listedWaiters = [];
    for (const wake of waiters) wake();
  }

  /** One call of one reconciler for one parent; resolves to seconds until a retry, if any. */
  async #reconcile(
    parent: Parent,
    runner: Runner,
    signal: AbortSignal,
  ): Promise<number | undefined> {
    await this.#limiter.acquire();
    try {
      if (signal.aborted) return undefined; // deleted or exiting while waiting for a slot
      const children: Record<string, AnyObject[]> = {};
      for (const { key, selector } of runner.handler.owns) {
        children[key] = [...this.#childResources.values()]
          .filter((r) => selector.check(r))
          .flatMap((r) => this.#index.children(parent.uid, String(r)));
      }
      const state = runner.state ??= new State("reconcile");
      const again = await reconcileOnce(this.#env, parent, runner.handler, state, children, signal);
      if (again === undefined) runner.state = undefined; // the next change or resync: afresh
      return again;
    } finally {
      this.#limiter.release();
    }
  }
}

/** The API group of an `apiVersion` (`""` for the core API's `v1`). */
function groupOf(apiVersion: string | undefined): string {
  const slash = apiVersion?.indexOf("/") ?? -1;
  return slash < 0 ? "" : apiVersion!.slice(0, slash);
}
