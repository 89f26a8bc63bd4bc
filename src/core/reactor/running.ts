/**
 * Running an operator: startup handlers, login, discovery of the resources
 * the handlers want, one watcher per resource and namespace feeding
 * per-object queues, the cleanup at exit — all owned by one task that stops
 * through an `AbortSignal`, gracefully, with nothing left running behind.
 *
 * `operator()` is the embeddable core (several operators may run in one
 * process, each with its own registry and settings); `run()` adds the process
 * signals (SIGINT/SIGTERM, a second one forces the exit); `spawnTasks()` and
 * `runTasks()` split the two steps for applications with their own loops.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { Clock } from "../../cogs/aio/clock.ts";
import { sleep } from "../../cogs/aio/sleep.ts";
import { ApiClient } from "../../cogs/clients/api.ts";
import { ApiError, NotFoundError } from "../../cogs/clients/errors.ts";
import {
  loginViaClient,
  loginWithKubeconfig,
  runAuthenticator,
  withDefaultKubeconfig,
} from "../../cogs/clients/auth.ts";
import { postEvent } from "../../cogs/clients/events.ts";
import { readObject } from "../../cogs/clients/fetching.ts";
import { patchObject } from "../../cogs/clients/patching.ts";
import { scanResources } from "../../cogs/clients/scanning.ts";
import { infiniteWatch } from "../../cogs/clients/watching.ts";
import { OperatorSettings } from "../../cogs/configs/settings.ts";
import {
  ConnectionInfo,
  LoginError,
  Vault,
  type VaultSource,
} from "../../cogs/structs/credentials.ts";
import {
  matchNamespace,
  type Resource,
  Resource as ResourceClass,
  type Selector,
} from "../../cogs/structs/references.ts";
import type { ObjectApi } from "../actions/application.ts";
import { allAtOnce, type Lifecycle } from "../actions/execution.ts";
import type { AnyObject } from "../actions/invocation.ts";
import {
  lineSink,
  type LogOutputOptions,
  type LogSink,
  ObjectLogger,
  OperatorLogger,
} from "../actions/loggers.ts";
import { ActivityError, runActivity } from "../engines/activities.ts";
import { Daemons } from "../engines/daemons.ts";
import { OperatorIndexers } from "../engines/indexing.ts";
import { OperatorMetrics, type QueueSample } from "../engines/metrics.ts";
import { EventPoster, type PostingScope, postingScope } from "../engines/posting.ts";
import { type ProbeServer, serveProbes } from "../engines/probing.ts";
import { Memo } from "../intents/handlers.ts";
import { getDefaultRegistry } from "../intents/registration.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import { type OperatorContext, processEvent } from "./processing.ts";
import { ObjectQueues } from "./queueing.ts";

/** The operator could not start or run: one line says what and what to do. */
export class OperatorError extends Error {
  /** Always `"OperatorError"`. */
  override name = "OperatorError";
}

/** Options of an operator. */
export interface OperatorOptions {
  /** The handlers (default: the default registry of `kopf.on.*`). */
  registry?: OperatorRegistry;
  /** The settings (default: fresh defaults; startup handlers may change them). */
  settings?: OperatorSettings;
  /** The operator memo passed to all handlers (`kopf.Memo`). */
  memo?: AnyObject;
  /** Serve these namespaces (globs and `!negations` allowed); namespaced resources only there. */
  namespaces?: string[];
  /** Serve all namespaces (`-A`). This is also the default when no namespaces are given. */
  clusterwide?: boolean;
  /** Run without peering (accepted; peering comes later). */
  standalone?: boolean;
  /** The peering priority (accepted; peering comes later). */
  priority?: number;
  /** The peering name (accepted; peering comes later). */
  peeringName?: string;
  /**
   * Serve liveness probes at this URL, e.g. `http://0.0.0.0:8080/healthz` (200 once ready, 503
   * before), and Prometheus metrics on `/metrics` of the same server.
   */
  liveness?: string;
  /** Record metrics here (default: a new registry of its own when `liveness` is given). */
  metrics?: OperatorMetrics;
  /** Stops the operator when aborted. */
  signal?: AbortSignal;
  /** Called once the operator watches everything it should. */
  onReady?: () => void;
  /**
   * Log in with this kubeconfig file (when there are no login handlers) instead of the default
   * login; login handlers get it as the default of `kopf.loginWithKubeconfig()`.
   */
  kubeconfig?: string;
  /** Credentials store (default: a new vault filled by login handlers or the default login). */
  vault?: Vault;
  /** Which ready handlers run in one cycle (default: all, in order). */
  lifecycle?: Lifecycle;
  /** Log output: level, format, prefix, where lines go. */
  logging?: LogOutputOptions;
  /** A sink for the operator's records instead of `logging`. */
  sink?: LogSink;
  /** The time source of queues, retries, daemons and timers (default: the real clock). */
  clock?: Clock;
}

/** One long-running part of an operator. */
export interface OperatorTask {
  /** What the task is, e.g. `"main"` or `"watchers"`. */
  name: string;
  /** Settles when the task ends; rejects with its failure. */
  done: Promise<void>;
}

/** The scope of a running operator (for `kopf.event()`, test runners and console capture). */
export interface OperatorScope {
  /** A number unique to each operator started in this process, counting from 1. */
  id: number;
}

/** The operator the current code runs in. */
export const operatorScope: AsyncLocalStorage<OperatorScope> = new AsyncLocalStorage<
  OperatorScope
>();

let nextId = 1;

/**
 * Runs an operator until the signal aborts (or a fatal error).
 *
 * @param options Registry, settings, namespaces, logging, signal.
 * @returns When stopped.
 * @throws {OperatorError} For unknown resources, failed startup or login, unreachable API.
 *
 * @example
 * ```ts ignore
 * import { operator } from "./running.ts";
 * const stop = new AbortController();
 * setTimeout(() => stop.abort(), 10_000);
 * await operator({ clusterwide: true, signal: stop.signal });
 * ```
 */
export async function operator(options: OperatorOptions = {}): Promise<void> {
  const tasks = await spawnTasks(options);
  await runTasks(tasks, options.signal);
}

/**
 * Starts an operator's tasks: the returned tasks run until the signal aborts.
 * Startup handlers, login and discovery happen before this resolves.
 *
 * @param options As for {@link operator}.
 * @returns The tasks.
 * @throws {OperatorError} For failed startup, login, or discovery.
 */
export async function spawnTasks(options: OperatorOptions = {}): Promise<OperatorTask[]> {
  const scope: OperatorScope = { id: nextId++ };
  const posting: PostingScope = {
    poster: undefined,
    posting: () => ({ enabled: false, level: "info" }),
  };
  return await operatorScope.run(
    scope,
    () => postingScope.run(posting, () => startOperator(options, posting)),
  );
}

/**
 * Waits for an operator's tasks; a task that fails stops the operator (and so the others) from
 * inside, and its error is what this throws.
 *
 * @param tasks The tasks from {@link spawnTasks}.
 * @param signal Not needed: the tasks stop on the signal given to {@link spawnTasks} (kept for
 *   calls written as `runTasks(tasks, signal)`).
 * @returns When all tasks ended.
 * @throws The first task's error.
 */
export async function runTasks(tasks: OperatorTask[], signal?: AbortSignal): Promise<void> {
  const results = await Promise.allSettled(tasks.map((t) => t.done));
  void signal;
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

async function startOperator(
  options: OperatorOptions,
  posting: PostingScope,
): Promise<OperatorTask[]> {
  // What to undo when the start fails half-way (e.g. the health server started before startup).
  const undo: Array<() => Promise<void>> = [];
  try {
    return await startOperatorTasks(options, posting, undo);
  } catch (e) {
    for (const fn of undo) await fn().catch(() => {});
    throw e;
  }
}

async function startOperatorTasks(
  options: OperatorOptions,
  posting: PostingScope,
  undo: Array<() => Promise<void>>,
): Promise<OperatorTask[]> {
  const registry = options.registry ?? getDefaultRegistry();
  const settings = options.settings ?? new OperatorSettings();
  const memo = options.memo ?? new Memo();
  const sink = options.sink ?? lineSink(options.logging);
  const logger = new OperatorLogger(sink, "kopf.activities");
  const stop = new AbortController();
  const outer = options.signal;
  if (outer?.aborted) stop.abort();
  outer?.addEventListener("abort", () => stop.abort(), { once: true });
  const signal = stop.signal;
  // In-memory indexing: the watchers fill the indices; handlers wait until all are listed.
  const indexers = new OperatorIndexers({
    registry,
    settings,
    memo,
    sink,
    signal,
    clock: options.clock,
  });
  const indices: AnyObject = indexers.indices;
  const metrics = options.metrics ?? (options.liveness ? new OperatorMetrics() : undefined);
  const env = { logger, memo, settings, indices, metrics, clock: options.clock };
  const lifecycle = options.lifecycle ?? allAtOnce;

  if (registry.isEmpty) {
    logger.warning(
      "No handlers are registered: nothing to do. Check the handler files or modules given to kopf run.",
    );
  }

  let probing: ProbeServer | undefined;
  if (options.liveness) {
    try {
      probing = serveProbes({
        url: options.liveness,
        probes: () => registry.activityHandlers("probe"),
        env,
        metrics,
        signal,
        logger,
      });
    } catch (e) {
      throw new OperatorError(`Cannot serve the liveness endpoint: ${(e as Error).message}`);
    }
    undo.push(probing.shutdown);
  }

  await runActivity("startup", registry.activityHandlers("startup"), env, signal).catch(
    fatal("startup"),
  );

  // Login: the login handlers, or the default (kubeconfig, in-cluster, or the client library's config).
  const vault = options.vault ?? new Vault();
  const owned = !options.vault;
  const loginHandlers = registry.activityHandlers("login");
  const login = async (s: AbortSignal | undefined): Promise<VaultSource> => {
    if (!loginHandlers.length) {
      if (options.kubeconfig) {
        return { "login_with_kubeconfig": await loginWithKubeconfig({ path: options.kubeconfig }) };
      }
      return { "login_via_client": await loginViaClient() };
    }
    // Login handlers of an operator given a kubeconfig find it as the default of loginWithKubeconfig().
    const results = options.kubeconfig
      ? await withDefaultKubeconfig(
        options.kubeconfig,
        () => runActivity("login", loginHandlers, env, s),
      )
      : await runActivity("login", loginHandlers, env, s);
    const out: Record<string, ConnectionInfo | null> = {};
    for (const [id, result] of results) {
      out[id] = result instanceof ConnectionInfo || result === null || result === undefined
        ? (result ?? null)
        : new ConnectionInfo(result as ConstructorParameters<typeof ConnectionInfo>[0]);
    }
    return out;
  };
  let authenticator: Promise<void> = Promise.resolve();
  if (owned || vault.isEmpty()) {
    logger.info("Initial authentication has been initiated.");
    authenticator = runAuthenticator(vault, login, { signal });
    await vault.whenReady(signal).catch(fatal("login"));
    logger.info("Initial authentication has finished.");
  }

  const requestCounts = new Map<string, number>();
  const api = new ApiClient({
    vault,
    settings,
    logger: {
      debug: (m) => logger.debug(m),
      warn: (m) => logger.warning(m),
      error: (m) => logger.error(m),
    },
    onRequest: (r) => {
      metrics?.apiRequest(r);
      const key = `${r.method} ${r.code ?? "error"}`;
      requestCounts.set(key, (requestCounts.get(key) ?? 0) + 1);
    },
  });

  const poster = new EventPoster(
    async (e, s) => {
      await postEvent(api, { ref: e.ref, type: e.type, reason: e.reason, message: e.message }, {
        posting: settings.posting,
        signal: s,
      });
    },
    (e) => logger.debug(`Failed to post an event: ${e instanceof Error ? e.message : e}`),
  );
  posting.poster = poster;
  posting.posting = () => settings.posting;
  const op: OperatorContext = {
    registry,
    settings,
    memo,
    indices,
    indexers,
    sink,
    post: (ref, type, reason, message) => poster.post(ref, type, reason, message),
    lifecycle,
    metrics,
    clock: options.clock,
    exiting: signal,
  };
  // Daemons and timers: spawned by the object cycles, all stopped at exit before the cleanup.
  op.daemons = new Daemons(op);

  // Discovery: which resources to serve.
  let resources: Resource[];
  try {
    resources = await resolveResources(api, registry.selectors(), signal);
  } catch (e) {
    stop.abort();
    await authenticator.catch(() => {});
    await poster.close();
    if (owned) vault.close();
    throw e instanceof OperatorError ? e : new OperatorError(describeApiFailure(e));
  }

  const namespaces = options.clusterwide || !options.namespaces?.length
    ? undefined
    : options.namespaces;
  if (!options.clusterwide && !options.namespaces?.length && resources.some((r) => r.namespaced)) {
    logger.warning(
      "Neither --namespace nor --all-namespaces is given: serving all namespaces (cluster-wide).",
    );
  }

  const watchers = new Orchestrator(api, op, settings, logger, signal);
  const ready = watchers.start(resources, namespaces, registry.selectors());
  // The start-up hold of the readiness gate ends when all initial watchers have listed
  // (indexed or not); from then on, only new watchers of indexed resources close it again.
  ready.then(() => indexers.markReady(), () => indexers.markReady());
  const unobserve = metrics?.observeQueues(() => watchers.queueSamples());

  const main = (async () => {
    await ready;
    probing?.ready();
    options.onReady?.();
    // Stopped during the start-up (e.g. an early SIGINT): the abort event has already fired.
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    logger.info("Stop-flag is raised. Operator is stopping.");
    await op.daemons?.close();
    await watchers.stop();
    await runActivity("cleanup", registry.activityHandlers("cleanup"), env).catch((e) => {
      logger.error(`Cleanup failed: ${e instanceof Error ? e.message : e}`);
    });
    await poster.close();
    await authenticator.catch(() => {});
    unobserve?.();
    await probing?.shutdown();
    if (owned) vault.close();
  })();
  const failing = watchers.failure.then((e) => {
    if (e) {
      stop.abort();
      throw e;
    }
  });
  return [
    {
      name: "main",
      done: main,
    },
    { name: "watchers", done: failing },
  ];
}

function fatal(activity: string): (e: unknown) => never {
  return (e) => {
    if (e instanceof ActivityError) throw new OperatorError(e.message);
    throw new OperatorError(
      `The ${activity} failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  };
}

function describeApiFailure(e: unknown): string {
  if (e instanceof LoginError) {
    // Say why the login failed (a missing kubeconfig, a missing permission), not only that
    // the credentials ran out; rejected credentials (an API answer) keep the advice.
    const cause = e.cause instanceof Error && !(e.cause instanceof ApiError) ? e.cause : e;
    return `Cannot log in to the Kubernetes API: ${cause.message.split("\n")[0]}`;
  }
  const message = e instanceof Error ? e.message.split("\n")[0]! : String(e);
  return `Cannot reach the Kubernetes API: ${message}`;
}

/**
 * Resolves the registry's selectors against discovery; unknown or ambiguous specific names are
 * fatal when `strict` (at start), and skipped otherwise (rescans while running).
 *
 * @param api The client.
 * @param selectors The selectors.
 * @param signal Stops the scan.
 * @returns The resources to serve.
 */
async function resolveResources(
  api: ApiClient,
  selectors: Selector[],
  signal: AbortSignal,
  strict = true,
): Promise<Resource[]> {
  if (!selectors.length) return [];
  const all = await scanResources(api, { signal });
  const out = new Map<string, Resource>();
  for (const selector of selectors) {
    if (selector.isSpecific) {
      let resource: Resource;
      try {
        resource = selector.selectOne(all);
      } catch (e) {
        if (!strict) continue;
        throw new OperatorError(`${(e as Error).message}`);
      }
      out.set(resource.toString(), resource);
    } else {
      for (const r of selector.select(all)) {
        if (r.verbs.size && !(r.verbs.has("list") && r.verbs.has("watch"))) continue;
        out.set(r.toString(), r);
      }
    }
  }
  return [...out.values()];
}

/**
 * One watcher per resource (and namespace), feeding per-object queues. The
 * set of watchers follows two things while running: the namespaces that
 * match `-n` patterns (a watch on namespaces), and the served resources (a
 * watch on CRDs: a new CRD matching a category/EVERYTHING selector is picked
 * up; a deleted CRD's watchers stop; a re-created one's restart).
 */
class Orchestrator {
  #api: ApiClient;
  #op: OperatorContext;
  #settings: OperatorSettings;
  #logger: OperatorLogger;
  #signal: AbortSignal;
  #streams = new Map<
    string,
    { stop: AbortController; done: Promise<void>; queues: ObjectQueues }
  >();
  #failure: (e: unknown) => void = () => {};
  #resources: Resource[] = [];
  /** Served namespaces, or undefined for cluster-wide. */
  #namespaces: Set<string> | undefined;
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

  /** Starts watching; resolves when every initial listing has been queued. */
  async start(
    resources: Resource[],
    namespaces: string[] | undefined,
    selectors: Selector[],
  ): Promise<void> {
    this.#resources = resources;
    this.#selectors = selectors;
    const waits: Promise<void>[] = [];
    if (namespaces !== undefined && resources.some((r) => r.namespaced)) {
      this.#namespaces = new Set();
      waits.push(this.#followNamespaces(namespaces));
    }
    if (selectors.length) waits.push(this.#followCrds());
    await Promise.all(waits);
    await this.#reconcile();
  }

  /** Starts and stops watchers to match the current resources and namespaces. */
  #reconcile(): Promise<void> {
    const wanted = new Map<string, [Resource, string | undefined]>();
    for (const r of this.#resources) {
      if (!r.namespaced || this.#namespaces === undefined) wanted.set(`${r}@*`, [r, undefined]);
      else for (const ns of this.#namespaces) wanted.set(`${r}@${ns}`, [r, ns]);
    }
    const starting: Promise<void>[] = [];
    for (const [key, [r, ns]] of wanted) {
      if (!this.#streams.has(key)) starting.push(this.#watch(r, ns));
    }
    for (const key of [...this.#streams.keys()]) if (!wanted.has(key)) void this.#unwatchKey(key);
    return Promise.all(starting).then(() => {});
  }

  /** Follows namespaces: the served set changes as matching namespaces come and go. */
  #followNamespaces(patterns: string[]): Promise<void> {
    let listed!: () => void;
    const ready = new Promise<void>((resolve) => (listed = resolve));
    const namespaces = new ResourceClass({
      group: "",
      version: "v1",
      plural: "namespaces",
      kind: "Namespace",
      namespaced: false,
    });
    const run = async () => {
      let initial = true;
      for await (
        const event of infiniteWatch(this.#api, namespaces, null, { signal: this.#signal })
      ) {
        if (event.type === "LISTED") {
          initial = false;
          listed();
          continue;
        }
        const name = event.object.metadata?.name ?? "";
        if (!matchNamespace(patterns, name)) continue;
        const served = this.#namespaces!;
        if (event.type === "DELETED") served.delete(name);
        else served.add(name);
        // Not awaited: the readiness gate holds the handlers while new watchers list, and a
        // namespace that goes while its watchers still list must be noticed (and unwatched).
        if (!initial) void this.#reconcile();
      }
    };
    run().catch((e) => this.#fail(e)).finally(() => listed());
    return ready;
  }

  /** Follows CRDs: re-resolves the selectors after any CRD change (debounced). */
  #followCrds(): Promise<void> {
    let listed!: () => void;
    const ready = new Promise<void>((resolve) => (listed = resolve));
    const crds = new ResourceClass({
      group: "apiextensions.k8s.io",
      version: "v1",
      plural: "customresourcedefinitions",
      kind: "CustomResourceDefinition",
      namespaced: false,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const rescan = () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        try {
          const next = await resolveResources(this.#api, this.#selectors, this.#signal, false);
          const before = new Set(this.#resources.map(String));
          const added = next.filter((r) => !before.has(String(r)));
          if (added.length) {
            this.#logger.info(`Serving new resources: ${added.map(String).join(", ")}.`);
          }
          this.#resources = next;
          await this.#reconcile();
        } catch (e) {
          if (!this.#signal.aborted) {
            this.#logger.warning(`Rescanning the resources failed: ${(e as Error).message}`);
          }
        }
      }, 500);
    };
    this.#signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
    const run = async () => {
      let initial = true;
      for await (const event of infiniteWatch(this.#api, crds, null, { signal: this.#signal })) {
        if (event.type === "LISTED") {
          initial = false;
          listed();
          continue;
        }
        if (!initial) rescan();
      }
    };
    run().catch((e) => {
      // Without access to CRDs the operator still serves what it found at start.
      if (!this.#signal.aborted) this.#logger.debug(`Not following CRDs: ${(e as Error).message}`);
    }).finally(() => listed());
    return ready;
  }

  /** Starts one watcher; resolves when its initial listing has been queued. */
  #watch(resource: Resource, namespace: string | undefined): Promise<void> {
    const key = `${resource}@${namespace ?? "*"}`;
    if (this.#streams.has(key)) return Promise.resolve();
    const stop = new AbortController();
    const signal = AbortSignal.any([stop.signal, this.#signal]);
    const settings = this.#settings;
    const objectApi = this.#objectApi(resource);
    const queues = new ObjectQueues(
      (event, memory, s) => processEvent(this.#op, resource, objectApi, event, memory, s),
      {
        get batchWindow() {
          return settings.batching.batchWindow;
        },
        get idleTimeout() {
          return settings.batching.idleTimeout;
        },
        get workerLimit() {
          return settings.batching.workerLimit;
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
    const done = (async () => {
      try {
        for await (
          const event of infiniteWatch(this.#api, resource, namespace ?? null, {
            signal,
            serverTimeout: settings.watching.serverTimeout,
            clientTimeout: settings.watching.clientTimeout,
            connectTimeout: settings.watching.connectTimeout,
            inactivityTimeout: settings.watching.inactivityTimeout,
            reconnectBackoff: settings.watching.reconnectBackoff,
          })
        ) {
          if (event.type === "LISTED") {
            release();
            listed();
            continue;
          }
          // Indexed before any handler sees the event (the docs' readiness rule).
          const raw = { type: event.type, object: event.object as AnyObject };
          await this.#op.indexers?.index(resource, stream, raw);
          queues.push({ type: event.type, object: event.object as AnyObject });
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
        await queues.close(settings.batching.exitTimeout);
      }
    })();
    this.#streams.set(key, { stop, done, queues });
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
    return {
      patch: async (name, namespace, body, type, signal) =>
        await patchObject(api, resource, namespace ?? null, name, body, {
          contentType: type,
          signal,
        }) as
          | AnyObject
          | undefined,
      get: async (name, namespace, signal) =>
        await readObject(api, resource, namespace ?? null, name, { signal }) as
          | AnyObject
          | undefined,
    };
  }

  #fail(e: unknown): void {
    this.#failure(e instanceof OperatorError ? e : new OperatorError(describeApiFailure(e)));
  }

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

/**
 * Runs an operator in this process until SIGINT or SIGTERM (a second signal forces the exit).
 *
 * @param options As for {@link operator}; a given `signal` is honoured too.
 * @returns When stopped.
 * @throws {OperatorError} For fatal errors.
 *
 * @example
 * ```ts ignore
 * import { run } from "./running.ts";
 * await run({ clusterwide: true });
 * ```
 */
export async function run(options: OperatorOptions = {}): Promise<void> {
  const stop = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const onSignal = () => {
    if (stop.signal.aborted) Deno.exit(130);
    stop.abort();
  };
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  try {
    await operator({ ...options, signal: stop.signal });
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
  await sleep(0);
}
