/**
 * The operator's own parts (parts.ts), in the order running.ts starts them:
 * the health server ({@link probesPart}), the startup handlers
 * ({@link startupPart}) and the settings' checks ({@link checksPart}), the
 * login ({@link loginPart}), the API client ({@link apiPart}), the events
 * ({@link eventsPart}), the context of the queues and handlers
 * ({@link contextPart}), the discovery of the served resources
 * ({@link discoveryPart}), the watchers ({@link watchersPart}) and their
 * metrics ({@link metricsPart}). Admission, peering, sharding and leader
 * election wire themselves in their own files (webhooking.ts, peering.ts,
 * sharding.ts, leader_election.ts).
 *
 * @module
 */

import { ToggleSet } from "../../cogs/aio/toggles.ts";
import { ApiClient } from "../../cogs/clients/api.ts";
import {
  loginViaClient,
  loginWithKubeconfig,
  runAuthenticator,
  withDefaultKubeconfig,
} from "../../cogs/clients/auth.ts";
import { ConnectionInfo } from "../../cogs/structs/connection_info.ts";
import { Vault, type VaultSource } from "../../cogs/structs/vault.ts";
import { runActivity } from "../engines/activities.ts";
import { apiEventWriter, EventRecorder } from "../engines/event_recorder.ts";
import { serveProbes } from "../engines/probing.ts";
import { apiFailure, fatal, OperatorError } from "./errors.ts";
import { resolveResources } from "./observation.ts";
import { Orchestrator } from "./orchestration.ts";
import { need, type OperatorPart } from "./parts.ts";
import { loadDaemons, type OperatorContext } from "./processing.ts";

/**
 * The health server (`--liveness`): liveness probes, `/readyz` and `/metrics`; started first,
 * so that a slow start is seen as alive; ready once all watchers have listed; stopped near the end.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probesPart } from "./startup.ts";
 * assert.equal(probesPart.name, "probes");
 * ```
 */
export const probesPart: OperatorPart = {
  name: "probes",
  start(run) {
    const { options, registry, env, metrics, signal, logger } = run;
    if (!options.liveness) return;
    let probing;
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
    run.undo.push(probing.shutdown);
    run.probing = probing;
    return { exit: { probes: () => probing.shutdown() } };
  },
};

/**
 * The startup handlers (`kopf.on.startup`), which may change the settings; and the cleanup
 * handlers (`kopf.on.cleanup`) at the exit, once nothing else runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startupPart } from "./startup.ts";
 * assert.equal(startupPart.name, "startup");
 * ```
 */
export const startupPart: OperatorPart = {
  name: "startup",
  async start(run) {
    const { registry, env, signal, logger } = run;
    await runActivity("startup", registry.activityHandlers("startup"), env, signal).catch(
      fatal("startup"),
    );
    const cleanup = () =>
      runActivity("cleanup", registry.activityHandlers("cleanup"), env).then(() => {}, (e) => {
        logger.error(`Cleanup failed: ${e instanceof Error ? e.message : e}`);
      });
    return { exit: { cleanup } };
  },
};

/**
 * Each part's check of its settings ({@link OperatorPart.check}), in the parts' order: after the
 * startup handlers changed them, before anything connects.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checksPart } from "./startup.ts";
 * assert.equal(checksPart.name, "checks");
 * ```
 */
export const checksPart: OperatorPart = {
  name: "checks",
  async start(run) {
    for (const part of run.parts) await part.check?.(run);
  },
};

/**
 * The login: the login handlers, or the default (kubeconfig, in-cluster, or the client library's
 * config), then re-authentication whenever the credentials fail; the vault closed last at exit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loginPart } from "./startup.ts";
 * assert.equal(loginPart.name, "login");
 * ```
 */
export const loginPart: OperatorPart = {
  name: "login",
  async start(run) {
    const { options, registry, env, signal, logger } = run;
    const vault = options.vault ?? new Vault();
    const owned = !options.vault;
    const loginHandlers = registry.activityHandlers("login");
    const login = async (s: AbortSignal | undefined): Promise<VaultSource> => {
      if (!loginHandlers.length) {
        if (options.kubeconfig) {
          return {
            "login_with_kubeconfig": await loginWithKubeconfig({ path: options.kubeconfig }),
          };
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
    run.vault = vault;
    run.ownedVault = owned;
    run.authenticator = authenticator;
    if (owned || vault.isEmpty()) {
      logger.info("Initial authentication has been initiated.");
      authenticator = run.authenticator = runAuthenticator(vault, login, { signal });
      // Ready is not enough: a login that gave no credentials leaves the vault ready and empty.
      await vault.select({ signal }).catch(fatal("login"));
      logger.info("Initial authentication has finished.");
    }
    return {
      exit: {
        login: () => authenticator.catch(() => {}),
        vault: () => {
          if (owned) vault.close();
        },
      },
    };
  },
};

/**
 * The API client over the vault, counting its requests into the metrics; `kopf.api()` and the
 * handlers' `api` are connected to it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { apiPart } from "./startup.ts";
 * assert.equal(apiPart.name, "api");
 * ```
 */
export const apiPart: OperatorPart = {
  name: "api",
  start(run) {
    const { settings, logger, metrics } = run;
    const api = new ApiClient({
      vault: need(run, "vault"),
      settings,
      logger: {
        debug: (m) => logger.debug(m),
        warn: (m) => logger.warning(m),
        error: (m) => logger.error(m),
      },
      // Without metrics, no record of each request is made at all.
      onRequest: metrics && ((r) => metrics.apiRequest(r)),
    });
    run.handlerApi.connect(api);
    run.api = api;
  },
};

/**
 * The events (`kopf.event()`, the handlers' posting): recorded, aggregated and posted; the
 * events posted until then are written at the exit, after the cleanup handlers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventsPart } from "./startup.ts";
 * assert.equal(eventsPart.name, "events");
 * ```
 */
export const eventsPart: OperatorPart = {
  name: "events",
  start(run) {
    const { settings, metrics, logger, posting } = run;
    const poster = new EventRecorder(apiEventWriter(need(run, "api"), settings.posting), {
      settings: settings.posting,
      metrics,
      clock: run.options.clock,
      onError: (e) =>
        logger.debug(`Failed to post an event: ${e instanceof Error ? e.message : e}`),
      warn: (m) => logger.warning(m),
    });
    posting.poster = poster;
    posting.posting = () => settings.posting;
    run.poster = poster;
    return { exit: { posting: () => poster.close() } };
  },
};

/**
 * The context of the queues and handlers: registry, settings, memo, indices, events, the pause
 * gate, the handlers in progress; the daemons and timers, and the reconcilers, stopped first at
 * the exit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { contextPart } from "./startup.ts";
 * assert.equal(contextPart.name, "context");
 * ```
 */
export const contextPart: OperatorPart = {
  name: "context",
  async start(run) {
    const { registry, settings, memo, indexers, sink, lifecycle, metrics, signal } = run;
    const poster = need(run, "poster");
    const op: OperatorContext = {
      registry,
      settings,
      memo,
      indices: indexers.indices,
      indexers,
      sink,
      post: (ref, type, reason, message) => poster.post(ref, type, reason, message),
      lifecycle,
      metrics,
      clock: run.options.clock,
      exiting: signal,
      paused: new ToggleSet(), // held by the peering (and any other reason to pause)
      running: new Set(), // the handlers in progress: what the exit waits for
    };
    // Daemons and timers: spawned by the object cycles, all stopped at exit before the cleanup.
    // Their engine loads now if there are any (else at the first cycle that needs it), the
    // reconcilers' (kopf.on.reconcile: parents and their owned children) only if there are any.
    if (registry.handlers("spawning").length) await loadDaemons(op);
    if (registry.handlers("reconciling").length) {
      const { Reconcilers } = await import("../engines/reconciling.ts");
      op.reconcilers = new Reconcilers(op);
    }
    run.op = op;
    const handlers = async () => {
      await op.daemons?.close();
      await op.reconcilers?.close();
    };
    return { exit: { handlers } };
  },
};

/**
 * The discovery: which of the handlers' resources the cluster serves, and in which namespaces.
 * An unreachable API fails the start, with the login and events already started undone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { discoveryPart } from "./startup.ts";
 * assert.equal(discoveryPart.name, "discovery");
 * ```
 */
export const discoveryPart: OperatorPart = {
  name: "discovery",
  async start(run) {
    const { options, registry, settings, signal, logger } = run;
    try {
      const following = !settings.scanning.disabled;
      run.resolution = await resolveResources(
        need(run, "api"),
        registry.selectors(),
        signal,
        following,
      );
    } catch (e) {
      run.stop.abort();
      await run.authenticator?.catch(() => {});
      await run.poster?.close();
      if (run.ownedVault) run.vault?.close();
      throw apiFailure(e);
    }
    run.namespaces = run.clusterwide ? undefined : options.namespaces;
    const resources = run.resolution.resources;
    if (
      !options.clusterwide && !options.namespaces?.length && resources.some((r) => r.namespaced)
    ) {
      logger.warning(
        "Neither --namespace nor --all-namespaces is given: serving all namespaces (cluster-wide).",
      );
    }
  },
};

/**
 * The watchers of the served resources and their per-object queues; the operator is ready when
 * all have listed; a watcher's failure stops the operator.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { watchersPart } from "./startup.ts";
 * assert.equal(watchersPart.name, "watchers");
 * ```
 */
export const watchersPart: OperatorPart = {
  name: "watchers",
  start(run) {
    const { registry, settings, logger, signal, indexers, stop } = run;
    const watchers = new Orchestrator(need(run, "api"), need(run, "op"), settings, logger, signal);
    const ready = watchers.start(need(run, "resolution"), run.namespaces, registry.selectors());
    // Readiness: held until all initial watchers have listed; then only new indexed watchers re-close it.
    ready.then(() => indexers.markReady(), () => indexers.markReady());
    run.watchers = watchers;
    run.ready = ready;
    const failing = watchers.failure.then((e) => {
      if (e) {
        stop.abort();
        throw e;
      }
    });
    return {
      tasks: [{ name: "watchers", done: failing }],
      exit: { watchers: () => watchers.stop() },
    };
  },
};

/**
 * The queues' gauges on `/metrics`, read from the watchers at each scrape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { metricsPart } from "./startup.ts";
 * assert.equal(metricsPart.name, "metrics");
 * ```
 */
export const metricsPart: OperatorPart = {
  name: "metrics",
  start(run) {
    const watchers = need(run, "watchers");
    const unobserve = run.metrics?.observeQueues(() => watchers.queueSamples());
    return { exit: { metrics: () => unobserve?.() } };
  },
};
