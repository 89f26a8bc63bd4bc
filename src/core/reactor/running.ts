/**
 * Running an operator: startup handlers, login, discovery of the resources
 * the handlers want (observation.ts), the watchers feeding per-object queues
 * (orchestration.ts), the cleanup at exit — all owned by one task that stops
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
import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { clockScope } from "../../cogs/aio/clock_scope.ts";
import { sleep } from "../../cogs/aio/sleep.ts";
import { ToggleSet } from "../../cogs/aio/toggles.ts";
import { within } from "../../cogs/aio/within.ts";
import { ApiClient } from "../../cogs/clients/api.ts";
import {
  loginViaClient,
  loginWithKubeconfig,
  runAuthenticator,
  withDefaultKubeconfig,
} from "../../cogs/clients/auth.ts";
import { OperatorSettings } from "../../cogs/configs/settings.ts";
import { ConnectionInfo, Vault, type VaultSource } from "../../cogs/structs/credentials.ts";
import type { Lifecycle } from "../actions/execution.ts";
import { getDefaultLifecycle } from "../actions/lifecycles.ts";
import type { AnyObject } from "../actions/invocation.ts";
import {
  lineSink,
  type LogOutputOptions,
  type LogSink,
  ObjectLogger,
  OperatorLogger,
} from "../actions/loggers.ts";
import { apiScope, type PendingApi, pendingApi } from "../actions/handler_api.ts";
import { runActivity } from "../engines/activities.ts";
import { Daemons } from "../engines/daemons.ts";
import { OperatorIndexers } from "../engines/indexing.ts";
import { OperatorMetrics } from "../engines/metrics.ts";
import { Reconcilers } from "../engines/reconciling.ts";
import { apiEventWriter, EventRecorder } from "../engines/event_recorder.ts";
import { type PostingScope, postingScope } from "../engines/posting.ts";
import { type ProbeServer, serveProbes } from "../engines/probing.ts";
import { Memo } from "../intents/handlers.ts";
import { getDefaultRegistry } from "../intents/registration.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import type { OperatorContext } from "./processing.ts";
import { apiFailure, fatal, OperatorError } from "./errors.ts";
import { type Resolution, resolveResources } from "./observation.ts";
import { Orchestrator } from "./orchestration.ts";
import { applyPeeringOptions, startPeering } from "./peering.ts";
import { checkSharding, startSharding } from "./sharding.ts";
import { checkLeaderElection, startLeaderElection } from "./leader_election.ts";
import { checkAdmission, startAdmission } from "./webhooking.ts";

export { OperatorError } from "./errors.ts";

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
  /** Run without peering (`settings.peering.standalone`). */
  standalone?: boolean;
  /** The peering priority (`settings.peering.priority`). */
  priority?: number;
  /** The peering object's name; the peering becomes mandatory (`--peering NAME`). */
  peeringName?: string;
  /**
   * This operator's identity among its peers (Kopf's `kopf.operator(identity=...)`): the key of
   * its entry in the peering object, and its holder name in leader election and sharding Leases.
   * Default: `$POD_ID`, else `user@host/YYYYmmddHHMMSS/xyz`.
   *
   * @example
   * ```ts ignore
   * import * as kopf from "@kopf/kopf";
   * await kopf.operator({ clusterwide: true, identity: "operator-a", priority: 100 });
   * ```
   */
  identity?: string;
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

/**
 * The abort reason of an operator stopped by a process signal (`kopf.run()`, `kopf run`): a
 * second signal exits the process at once, and the exit's notices say so.
 *
 * @example
 * ```ts ignore
 * const stop = new AbortController();
 * Deno.addSignalListener("SIGINT", () => stop.abort(new SignalledExit("SIGINT")));
 * ```
 */
export class SignalledExit extends Error {
  /** The signal received. */
  readonly signal: Deno.Signal;

  /** @param signal The signal received. */
  constructor(signal: Deno.Signal) {
    super(`Stopped by ${signal}.`);
    this.name = "SignalledExit";
    this.signal = signal;
  }
}

/** Seconds of exiting after which the operator says what it still waits for (then each minute). */
const EXIT_NOTICE = 5;

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
 * @throws {OperatorError} For failed startup or login, an unreachable API.
 *
 * @example
 * ```ts ignore
 * import { operator } from "../../../mod.ts";
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
  const handlerApi = pendingApi(); // kopf.api() and the handlers' `api`, connected after the login
  return await operatorScope.run(
    scope,
    () =>
      postingScope.run(
        posting,
        () =>
          // The operator's clock for kopf.sleep() in its handlers and the tasks they start.
          clockScope.run(
            options.clock ?? realClock,
            () => apiScope.run(handlerApi.kube, () => startOperator(options, posting, handlerApi)),
          ),
      ),
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
  handlerApi: PendingApi,
): Promise<OperatorTask[]> {
  // What to undo when the start fails half-way (e.g. the health server started before startup).
  const undo: Array<() => Promise<void>> = [];
  try {
    return await startOperatorTasks(options, posting, undo, handlerApi);
  } catch (e) {
    for (const fn of undo) await fn().catch(() => {});
    throw e;
  }
}

async function startOperatorTasks(
  options: OperatorOptions,
  posting: PostingScope,
  undo: Array<() => Promise<void>>,
  handlerApi: PendingApi,
): Promise<OperatorTask[]> {
  const identity = options.identity;
  if (identity !== undefined && (typeof identity !== "string" || identity.trim() === "")) {
    throw new OperatorError(
      `kopf.operator(): identity must be a non-empty string (this operator's name among its ` +
        `peers, e.g. "operator-a"), not ${JSON.stringify(identity)}; or leave it out for ` +
        `$POD_ID or user@host/time/xyz.`,
    );
  }
  const registry = options.registry ?? getDefaultRegistry();
  const settings = options.settings ?? new OperatorSettings();
  const clusterwide = !!options.clusterwide || !options.namespaces?.length;
  applyPeeringOptions(settings, { ...options, clusterwide }); // before startup handlers (Kopf's)
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
  const lifecycle = options.lifecycle ?? getDefaultLifecycle();

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
      throw new OperatorError(`Cannot serve the liveness endpoint: ${(e as Error).message}`, {
        cause: e,
      });
    }
    undo.push(probing.shutdown);
  }

  await runActivity("startup", registry.activityHandlers("startup"), env, signal).catch(
    fatal("startup"),
  );
  checkAdmission(registry, settings);
  checkSharding(settings);
  checkLeaderElection(settings);

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
    // Ready is not enough: a login that gave no credentials leaves the vault ready and empty.
    await vault.select({ signal }).catch(fatal("login"));
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
  handlerApi.connect(api);

  const poster = new EventRecorder(apiEventWriter(api, settings.posting), {
    settings: settings.posting,
    metrics,
    clock: options.clock,
    onError: (e) => logger.debug(`Failed to post an event: ${e instanceof Error ? e.message : e}`),
    warn: (m) => logger.warning(m),
  });
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
    paused: new ToggleSet(), // held by the peering (and any other reason to pause)
    running: new Set(), // the handlers in progress: what the exit waits for
  };
  // Daemons and timers: spawned by the object cycles, all stopped at exit before the cleanup.
  op.daemons = new Daemons(op);
  op.reconcilers = new Reconcilers(op); // kopf.on.reconcile: parents and their owned children

  // Discovery: which resources to serve.
  let resolution: Resolution;
  try {
    const following = !settings.scanning.disabled;
    resolution = await resolveResources(api, registry.selectors(), signal, following);
  } catch (e) {
    stop.abort();
    await authenticator.catch(() => {});
    await poster.close();
    if (owned) vault.close();
    throw apiFailure(e);
  }

  const namespaces = clusterwide ? undefined : options.namespaces;
  const resources = resolution.resources;
  if (!options.clusterwide && !options.namespaces?.length && resources.some((r) => r.namespaced)) {
    logger.warning(
      "Neither --namespace nor --all-namespaces is given: serving all namespaces (cluster-wide).",
    );
  }

  const sharding = startSharding({ ...op, api, namespaces, metrics, identity }); // the queues' gate
  op.shards = sharding.gate;
  const watchers = new Orchestrator(api, op, settings, logger, signal);
  const ready = watchers.start(resolution, namespaces, registry.selectors());
  // Readiness: held until all initial watchers have listed; then only new indexed watchers re-close it.
  ready.then(() => indexers.markReady(), () => indexers.markReady());
  const unobserve = metrics?.observeQueues(() => watchers.queueSamples());
  const admission = startAdmission(op, api, stop, watchers.memoryOf);
  const peering = startPeering({ ...op, api, namespaces, signal, identity });
  const leadership = startLeaderElection({
    ...op,
    api,
    namespaces,
    signal,
    probing,
    metrics,
    identity,
  });

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
    let phase = "the daemons and timers";
    // What the exit waits for, said at once when handlers are in progress, and again after a few
    // seconds (then every minute) while it lasts — never a silent wait of up to 10 minutes.
    const clock = options.clock ?? realClock;
    const began = clock.now();
    const cap = settings.process.ultimateExitingTimeout;
    const signalled = outer?.reason instanceof SignalledExit ? outer.reason.signal : undefined;
    const notice = () => {
      const now = clock.now();
      const secs = (ms: number) => `${Math.round(ms / 1000)}s`;
      const attempts = [...op.running ?? []].map((a) =>
        `${a.what}${
          a.logger instanceof ObjectLogger ? ` of ${a.logger.prefix.trim()}` : ""
        } (running for ${secs(now - a.since)})`
      );
      const awaited =
        phase === "the daemons and timers" || phase === "the watchers and their handlers"
          ? attempts.length ? `the handlers in progress: ${attempts.join(", ")}` : phase
          : phase;
      const limit = cap === null
        ? "with no time limit (process.ultimateExitingTimeout is not set)"
        : `for at most ${secs(Math.max(0, began + cap * 1000 - now))} more ` +
          `(process.ultimateExitingTimeout ${cap}s), then exiting anyway`;
      const again = signalled
        ? ` A second Ctrl-C (${signalled === "SIGINT" ? "SIGINT" : `${signalled} or SIGINT`}) ` +
          `exits now, without waiting.`
        : "";
      const head = now - began >= 1000 ? `Still stopping after ${secs(now - began)}:` : "Stopping:";
      logger.info(`${head} waiting for ${awaited}, ${limit}.${again}`);
    };
    if (op.running?.size) notice();
    let cancelNotice = clock.timer(EXIT_NOTICE * 1000, function repeat() {
      notice();
      cancelNotice = clock.timer(60_000, repeat);
    });
    const exiting = (async () => {
      await op.daemons?.close();
      await op.reconcilers?.close();
      phase = "the watchers and their handlers";
      await watchers.stop();
      phase = "the cleanup handlers";
      await runActivity("cleanup", registry.activityHandlers("cleanup"), env).catch((e) => {
        logger.error(`Cleanup failed: ${e instanceof Error ? e.message : e}`);
      });
      phase = "the posting of events";
      await poster.close();
      phase = "the admission clean-up"; // Its patches need the vault (closed below).
      await admission.closed;
    })();
    // Kopf's absolute cap on the exit: after it, the operator exits whatever still runs.
    const finished = await within(exiting, cap, clock);
    cancelNotice();
    if (!finished) {
      logger.warning(
        `The operator did not stop within process.ultimateExitingTimeout (${cap}s): ` +
          `exiting anyway, leaving ${phase} running.`,
      );
    }
    await peering.leave(); // Lower-priority peers resume only now; its patches need the vault.
    await sharding.leave(); // The other shards take this one's objects only now.
    await leadership.leave(); // Released last: a standby starts when nothing runs here.
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
    { name: "main", done: main },
    { name: "watchers", done: failing },
    ...admission.tasks,
    ...peering.tasks,
    ...sharding.tasks,
    ...leadership.tasks,
  ];
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
 * import { run } from "../../../mod.ts";
 * await run({ clusterwide: true });
 * ```
 */
export async function run(options: OperatorOptions = {}): Promise<void> {
  const stop = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const listeners = signals.map((s) => [s, onProcessSignal(stop, s)] as const);
  for (const [s, fn] of listeners) Deno.addSignalListener(s, fn);
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  try {
    await operator({ ...options, signal: stop.signal });
  } finally {
    for (const [s, fn] of listeners) Deno.removeSignalListener(s, fn);
  }
  await sleep(0);
}

/**
 * The listener of a process signal for an operator's stop: the first signal stops it gracefully
 * (with a {@link SignalledExit} reason, so its notices tell of the second), the second exits
 * the process at once with code 130.
 *
 * @param stop The operator's stop.
 * @param signal The signal listened to.
 * @returns The listener.
 */
export function onProcessSignal(stop: AbortController, signal: Deno.Signal): () => void {
  return () => {
    if (stop.signal.aborted) Deno.exit(130);
    stop.abort(new SignalledExit(signal));
  };
}
