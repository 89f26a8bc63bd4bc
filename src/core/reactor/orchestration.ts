/**
 * The orchestration of watchers: one watcher per served resource (and per
 * served namespace, with `-n`), each feeding the indexers and the per-object
 * queues of its resource. The set of watchers follows what is observed
 * (observation.ts): namespaces that come and go, CRDs that are created,
 * deleted and re-created. A watcher that fails for good stops the operator
 * with one line.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { Debouncer } from "../../cogs/aio/debounce.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { NotFoundError } from "../../cogs/clients/errors.ts";
import { readObject } from "../../cogs/clients/fetching.ts";
import { patchObject } from "../../cogs/clients/patching.ts";
import { infiniteWatchBatches } from "../../cogs/clients/watching.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { Selector } from "../../cogs/structs/selector.ts";
import type { ObjectApi } from "../actions/application.ts";
import type { AnyObject } from "../actions/invocation.ts";
import { ObjectLogger, type OperatorLogger } from "../actions/loggers.ts";
import type { QueueSample } from "../engines/metrics.ts";
import type { ShardGate } from "../engines/sharding.ts";
import { apiFailure } from "./errors.ts";
import {
  followCrds,
  followNamespaces,
  literalNamespaces,
  type Resolution,
  resolveResources,
} from "./observation.ts";
import {
  type ObjectMemory,
  type OperatorContext,
  processEvent,
  type RawEvent,
} from "./processing.ts";
import { ObjectQueues } from "./queueing.ts";
import { BacklogLimit } from "./backlog.ts";
import { TRACING } from "../../cogs/tracing/tracing.ts";
import { tracedCycle } from "./cycle_tracing.ts";

/**
 * Waits until the shard gate is at a fresh point (ShardGate.onFresh), the time is up, or the
 * signal aborts.
 *
 * @param shards The shard gate.
 * @param signal Cuts the wait short.
 * @param clock The operator's clock.
 * @param seconds The longest wait.
 */
function freshPoint(
  shards: ShardGate,
  signal: AbortSignal,
  clock: Clock,
  seconds: number,
): Promise<void> {
  if (shards.freshPoint !== undefined || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      unsubscribe();
      cancel();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const unsubscribe = shards.onFresh(done);
    const cancel = clock.timer(seconds * 1000, done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** A running watcher: its stop, its end, its per-object queues, and what it watches. */
interface Stream {
  stop: AbortController;
  done: Promise<void>;
  queues: ObjectQueues;
  resource: Resource;
  namespace: string | undefined;
}

/**
 * One watcher per resource (and namespace), feeding per-object queues. The
 * set of watchers follows two things while running: the namespaces that
 * match `-n` patterns (a watch on namespaces), and the served resources (a
 * watch on CRDs: a new CRD matching a category/EVERYTHING selector is picked
 * up; a deleted CRD's watchers stop; a re-created one's restart).
 */
export class Orchestrator {
  #api: ApiClient;
  #op: OperatorContext;
  #settings: OperatorSettings;
  #logger: OperatorLogger;
  #signal: AbortSignal;
  #streams = new Map<string, Stream>();
  #failure: (e: unknown) => void = () => {};
  #resources: Resource[] = [];
  /** The `-n` patterns, or undefined for cluster-wide. */
  #patterns: string[] | undefined;
  /** Served namespaces; undefined for cluster-wide (or before a namespaced resource is served). */
  #namespaces: Set<string> | undefined;
  /** The selectors' problems warned about (see {@link Resolution}). */
  #problems = new Set<string>();
  #selectors: Selector[] = [];
  /** Counts the watchers started, to tell apart the watchers of one key over time. */
  #generation = 0;
  /** Resolves with a fatal error of a watcher, or undefined at a clean stop. */
  readonly failure: Promise<unknown>;

  constructor(
    api: ApiClient,
    op: OperatorContext,
    settings: OperatorSettings,
    logger: OperatorLogger,
    signal: AbortSignal,
  ) {
    this.#api = api;
    this.#op = op;
    this.#settings = settings;
    this.#logger = logger;
    this.#signal = signal;
    this.failure = new Promise((resolve) => {
      this.#failure = resolve;
      signal.addEventListener("abort", () => resolve(undefined), { once: true });
    });
  }

  /**
   * Starts watching; resolves when every initial listing has been queued. The resolution's
   * problems (names not served yet, ambiguous names) are warned about; the names not served
   * yet are served once their CRDs appear (unless `settings.scanning.disabled`).
   */
  async start(
    resolution: Resolution,
    namespaces: string[] | undefined,
    selectors: Selector[],
  ): Promise<void> {
    this.#resources = resolution.resources;
    this.#selectors = selectors;
    this.#patterns = namespaces;
    this.#report(resolution.problems);
    const waits: Promise<void>[] = [this.#followNamespaces()];
    if (selectors.length && !this.#settings.scanning.disabled) {
      const rescan = new Debouncer(0.5, () => this.#rescan(), this.#op.clock);
      this.#signal.addEventListener("abort", () => rescan.cancel(), { once: true });
      waits.push(followCrds(this.#api, {
        signal: this.#signal,
        onChange: () => rescan.trigger(),
        // Without access to CRDs the operator still serves what it found at start.
        onError: (e) => {
          if (this.#signal.aborted) return;
          const line = `Not following CRDs: ${(e as Error).message.split("\n")[0]}`;
          if (!this.#problems.size) this.#logger.debug(line);
          else {
            this.#logger.warning(
              `${line}; the resources not served yet are served only after a restart.`,
            );
          }
        },
      }));
    }
    await Promise.all(waits);
    await this.#reconcile();
  }

  /**
   * Starts following the `-n` namespaces once a namespaced resource is served (at start, or
   * when its CRD appears later); resolves when the served namespaces are known.
   */
  #followNamespaces(): Promise<void> {
    const patterns = this.#patterns;
    if (patterns === undefined || this.#namespaces !== undefined) return Promise.resolve();
    if (!this.#resources.some((r) => r.namespaced)) return Promise.resolve();
    const warn = (line: string) => this.#logger.warning(line);
    if (this.#settings.scanning.disabled) {
      this.#namespaces = literalNamespaces(patterns, "Scanning is disabled", warn);
      return Promise.resolve();
    }
    this.#namespaces = new Set();
    return followNamespaces(this.#api, patterns, this.#namespaces, {
      signal: this.#signal,
      // Not awaited: the readiness gate holds the handlers while new watchers list, and a
      // namespace that goes while its watchers still list must be noticed (and unwatched).
      onChange: () => void this.#reconcile(),
      onError: (e) => this.#fail(e),
      warn,
    });
  }

  /** Warns once about each new problem of the selectors (until it goes and comes back). */
  #report(problems: string[]): void {
    for (const line of problems) if (!this.#problems.has(line)) this.#logger.warning(line);
    this.#problems = new Set(problems);
  }

  /** Starts and stops watchers to match the current resources and namespaces. */
  #reconcile(): Promise<void> {
    const wanted = new Map<string, [Resource, string | undefined]>();
    for (const r of this.#resources) {
      if (!r.namespaced || this.#patterns === undefined) wanted.set(`${r}@*`, [r, undefined]);
      else if (this.#namespaces === undefined) continue; // Not known yet: #followNamespaces().
      else for (const ns of this.#namespaces) wanted.set(`${r}@${ns}`, [r, ns]);
    }
    const starting: Promise<void>[] = [];
    for (const [key, [r, ns]] of wanted) {
      if (!this.#streams.has(key)) starting.push(this.#watch(r, ns));
    }
    for (const key of [...this.#streams.keys()]) if (!wanted.has(key)) void this.#unwatchKey(key);
    return Promise.all(starting).then(() => {});
  }

  /** Re-resolves the selectors after CRD changes, debounced (a burst of CRDs: one rescan). */
  #rescan(): Promise<void> {
    return resolveResources(this.#api, this.#selectors, this.#signal).then(async (next) => {
      const before = new Set(this.#resources.map(String));
      const added = next.resources.filter((r) => !before.has(String(r)));
      if (added.length) {
        this.#logger.info(`Serving new resources: ${added.map(String).join(", ")}.`);
      }
      this.#report(next.problems);
      this.#resources = next.resources;
      await this.#followNamespaces();
      await this.#reconcile();
    }).catch((e) => {
      if (!this.#signal.aborted) {
        this.#logger.warning(`Rescanning the resources failed: ${(e as Error).message}`);
      }
    });
  }

  /** Starts one watcher; resolves when its initial listing has been queued. */
  #watch(resource: Resource, namespace: string | undefined): Promise<void> {
    const key = `${resource}@${namespace ?? "*"}`;
    if (this.#streams.has(key)) return Promise.resolve();
    const stop = new AbortController();
    const signal = AbortSignal.any([stop.signal, this.#signal]);
    const settings = this.#settings;
    const objectApi = this.#objectApi(resource);
    const api = this.#api;
    const backlog = new BacklogLimit(settings, api, () => queues.admitWaiting(), this.#op.clock);
    const queues = new ObjectQueues(
      (event, memory, s) =>
        (TRACING ? tracedCycle : processEvent)(this.#op, resource, objectApi, event, memory, s),
      {
        get batchWindow() {
          return settings.batching.batchWindow;
        },
        get idleTimeout() {
          return settings.batching.idleTimeout;
        },
        // No limit set: none, unless the API is backlogged (backlog.ts).
        get workerLimit() {
          return backlog.current;
        },
        get consistencyTimeout() {
          return settings.persistence.consistencyTimeout;
        },
        get errorDelays() {
          return settings.batching.errorDelays;
        },
      },
      {
        clock: this.#op.clock,
        paused: this.#op.paused,
        gate: this.#op.shards,
        // Sharding hands the object to another replica: its daemons, timers and reconcilers stop.
        release: async (uid, memory) => {
          await Promise.all([
            memory.spawned && this.#op.daemons?.release(memory.spawned),
            this.#op.reconcilers?.release(uid),
          ]);
        },
        // A stalled watch does not bring our own write back in time: read the object anew.
        refresh: (body, s) => objectApi.get(body.metadata?.name, body.metadata?.namespace, s),
        onError: (e, event, delay) => {
          const logger = new ObjectLogger(this.#op.sink, event.object);
          const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
          if (delay === undefined) {
            logger.exception(`An unexpected error occurred (throttling is off): ${what}`, e);
          } else {logger.exception(
              `Throttling for ${delay} seconds due to an unexpected error: ${what}`,
              e,
            );}
        },
      },
    );
    let listed!: () => void;
    const ready = new Promise<void>((resolve) => (listed = resolve));
    // The readiness gate: a watcher of an indexed resource holds the handlers of the whole
    // operator until its initial listing is indexed — also a watcher that starts while the
    // operator runs. A watcher that stops before (no longer served, failed) releases at once,
    // even if its loop is still busy in an indexing function. Its later relists (410 Gone,
    // reconnects) do not hold again: they re-index inline, in order (see indexing.ts).
    const release = this.#op.indexers?.hold(resource) ?? (() => {});
    signal.addEventListener("abort", release, { once: true });
    // The indexers' key of this very watcher: a namespace or CRD re-created while its old
    // watcher still stops gets a new watcher under the same key, which must not be forgotten.
    const stream = `${key}#${++this.#generation}`;
    // Owned children (kopf.on.reconcile) are indexed here, as they come; a resource watched only
    // as children needs no per-object queues.
    const reconcilers = this.#op.reconcilers;
    reconcilers?.watching(resource, stream);
    const queued = reconcilers?.queued(resource) ?? true;
    // Sharded: the events of objects another replica owns are left undecoded, unless an index or
    // a reconciler's children need every object (asked per line: handlers may come later); a
    // view that may give this replica objects it skipped reads the state anew.
    const shards = this.#op.shards;
    const indexers = this.#op.indexers;
    const skip = shards && queued
      ? (uid: string) =>
        queues.skips(uid) && !indexers?.indexes(resource) && !reconcilers?.observes(resource)
      : undefined;
    const done = (async () => {
      try {
        // Sharded: the stream lists at a fresh point, so that what it lists needs no take-over
        // read (the first view, too, may follow a member's last writes: a rolling update) — but
        // waits the renew deadline at most: a member that will never acknowledge (killed, its
        // Lease not expired yet) must not hold the readiness; the stream relists at the point.
        if (shards && skip) {
          const clock = this.#op.clock ?? realClock;
          await freshPoint(shards, signal, clock, settings.sharding.renewDeadline);
        }
        // The events in the batches they came in (a chunk of the stream, a page): one generator
        // step per batch, not per event; the batch is taken whole before the next is read.
        for await (
          const events of infiniteWatchBatches(this.#api, resource, namespace ?? null, {
            signal,
            serverTimeout: settings.watching.serverTimeout,
            clientTimeout: settings.watching.clientTimeout,
            connectTimeout: settings.watching.connectTimeout,
            inactivityTimeout: settings.watching.inactivityTimeout,
            reconnectBackoff: settings.watching.reconnectBackoff,
            skip,
            onRelist: shards && skip && queues.relists.bind(queues),
          })
        ) {
          for (let i = 0; i < events.length; i++) {
            const event = events[i]!;
            if (event.type === "LISTED") {
              reconcilers?.listed(stream);
              release();
              listed();
              continue;
            }
            // Indexed before any handler sees the event (the docs' readiness rule).
            // The watcher's event object itself (a fresh `{ type, object }` of its own, no copy)
            // for the indexers, the reconcilers and the queue (none changes it).
            const raw = event as RawEvent;
            // (Nothing to index while no index is registered: not even a resolved promise.)
            const indexers = this.#op.indexers;
            if (indexers?.active) await indexers.index(resource, stream, raw);
            reconcilers?.observeChild(resource, stream, raw);
            if (queued) queues.push(raw);
          }
        }
      } catch (e) {
        if (e instanceof NotFoundError) {
          // The resource went away (its CRD was deleted): the CRD watch restarts it if it comes back.
          this.#logger.debug(`Stopped watching ${resource}: it is not served any more.`);
          if (this.#streams.get(key)?.stop === stop) this.#streams.delete(key);
        } else if (!signal.aborted) this.#fail(e);
      } finally {
        release();
        signal.removeEventListener("abort", release);
        listed();
        // A watcher stopped while the operator runs (CRD deleted, namespace gone): unindex its objects.
        if (!this.#signal.aborted) await this.#op.indexers?.forgetStream(stream);
        reconcilers?.forgetStream(stream);
        try {
          await queues.close(settings.batching.exitTimeout);
        } finally {
          backlog.close();
        }
      }
    })();
    this.#streams.set(key, { stop, done, queues, resource, namespace });
    return ready;
  }

  async #unwatchKey(key: string): Promise<void> {
    const stream = this.#streams.get(key);
    if (!stream) return;
    this.#streams.delete(key);
    stream.stop.abort();
    await stream.done;
  }

  #objectApi(resource: Resource): ObjectApi {
    const api = this.#api;
    // The client's promises as they are: no async wrapper (a frame and a promise) per call.
    return {
      patch: (name, namespace, body, type, signal) =>
        patchObject(api, resource, namespace ?? null, name, body, {
          contentType: type,
          signal,
        }) as Promise<AnyObject | undefined>,
      get: (name, namespace, signal) =>
        readObject(api, resource, namespace ?? null, name, { signal }) as Promise<
          AnyObject | undefined
        >,
    };
  }

  #fail(e: unknown): void {
    this.#failure(apiFailure(e));
  }

  /**
   * The memory of an object that the current watchers know, for admission memos: UPDATE and
   * DELETE requests share the object's own memo with its handlers. Only the watchers of the
   * object's resource (by group and plural; the request's version first) and of its namespace
   * (or cluster-wide) are asked; stopped watchers (CRD or namespace gone) are no longer here,
   * and a deleted object's entry is gone with its worker. Nothing is added to the inventory:
   * an object not seen yet (or without a uid) gets undefined.
   *
   * @param body The object as the request carries it (its uid and namespace are used).
   * @param resource The request's resource; without it, any watcher (uids are unique).
   * @returns The object's memory, or undefined.
   */
  readonly memoryOf = (body: AnyObject, resource?: Resource): ObjectMemory | undefined => {
    const uid = body?.metadata?.uid;
    if (typeof uid !== "string" || !uid) return undefined;
    const namespace = body.metadata.namespace;
    const found: [Resource, ObjectMemory][] = [];
    for (const s of this.#streams.values()) {
      if (s.namespace !== undefined && s.namespace !== namespace) continue;
      const r = s.resource;
      if (resource && (r.group !== resource.group || r.plural !== resource.plural)) continue;
      const memory = s.queues.memoryOf(uid);
      if (memory) found.push([r, memory]);
    }
    return (found.find(([r]) => r.version === resource?.version) ?? found[0])?.[1];
  };

  /** The per-object queues' depth and size by resource (for the metrics). */
  queueSamples(): QueueSample[] {
    return [...this.#streams].map(([key, s]) => ({
      resource: key.slice(0, key.lastIndexOf("@")),
      depth: s.queues.depth,
      objects: s.queues.size,
    }));
  }

  /** Stops all watchers and waits for their queues to finish. */
  async stop(): Promise<void> {
    const all = [...this.#streams.values()];
    for (const s of all) s.stop.abort();
    await Promise.allSettled(all.map((s) => s.done));
  }
}
