/**
 * The lives of one daemon and one timer: a daemon runs its function once, for
 * long, until it returns, fails for good, or is stopped; a timer runs its
 * function on a schedule (`interval`, on the grid with `sharp`, only after
 * `idle` seconds without changes, after `initialDelay`), never overlapping.
 * Every run goes through the one handler protocol (actions/execution.ts), so
 * retries, delays, errors modes, timeouts and result checks are the same as
 * for every other handler; the attempt's `signal` follows the stop-flag.
 *
 * Time comes from the engine's {@link Clock}, so schedules are tested on a
 * fake one. A run that produced nothing to write makes no API call.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { StopFlag } from "../../cogs/aio/stop_flag.ts";
import { Patch } from "../../cogs/structs/patches.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { applyPatch, type ObjectApi } from "../actions/application.ts";
import { type Attempt, executeHandler, type HandlerMetrics } from "../actions/execution.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import type {
  AnyObject,
  DaemonStoppingReason as Reason,
  SpawningContext,
  SpawningHandler,
} from "../intents/handlers.ts";
import type { Resource } from "../../cogs/structs/references.ts";

/** What the engine keeps about one object (kept in the object's memory by the reactor). */
export interface SpawnedObject {
  /** The object as last seen: daemons and timers read it live. */
  body: AnyObject;
  /** The clock's `now()` at the last change of the object (for `idle`). */
  lastChange: number;
  resource: Resource;
  api: ObjectApi;
  logger: ObjectLogger;
  /** The per-object memo (the handlers' `memo`). */
  memo: AnyObject;
  /** The running daemons and timers by id (also those exiting). */
  running: Map<string, unknown>;
  /** Ids that exited on their own or failed permanently: never re-spawned for this object. */
  finished: Set<string> | undefined;
  /** Deleted or being deleted: nothing is spawned any more. */
  deleting: boolean;
}

/** What the loops need from the engine. */
export interface SpawningEnv {
  settings: OperatorSettings;
  indices: AnyObject;
  clock: Clock;
  metrics?: HandlerMetrics | undefined;
  /** Takes in the object a run's patch returned (the live body, the last change). */
  touch(state: SpawnedObject, body: AnyObject): void;
}

/**
 * A daemon's life: after its initial delay, runs until it returns, fails for good, or stops.
 *
 * @param env The engine's parts.
 * @param state The object.
 * @param handler The daemon.
 * @param flag Its stop-flag.
 * @returns When it has exited.
 */
export async function runDaemon(
  env: SpawningEnv,
  state: SpawnedObject,
  handler: SpawningHandler,
  flag: StopFlag<Reason>,
): Promise<void> {
  if (handler.initialDelay && await flag.wait(handler.initialDelay)) return;
  const end = await runUntilFinal(env, state, handler, flag);
  if (end === "stopped" || flag.isSet()) {
    state.logger.debug(`Daemon '${handler.id}' has exited gracefully.`);
    return;
  }
  (state.finished ??= new Set()).add(handler.id);
  if (end === "done") state.logger.info(`Daemon '${handler.id}' has exited on its own.`);
  else state.logger.debug(`Daemon '${handler.id}' has exited after a permanent failure.`);
}

/**
 * A timer's life: runs on its schedule until stopped or failed for good.
 *
 * @param env The engine's parts.
 * @param state The object.
 * @param handler The timer.
 * @param flag Its stop-flag.
 * @returns When it has stopped.
 */
export async function runTimer(
  env: SpawningEnv,
  state: SpawnedObject,
  handler: SpawningHandler,
  flag: StopFlag<Reason>,
): Promise<void> {
  const clock = env.clock;
  if (handler.initialDelay && await flag.wait(handler.initialDelay)) return;
  const interval = handler.interval !== undefined ? handler.interval * 1000 : undefined;
  const idle = handler.idle !== undefined ? handler.idle * 1000 : undefined;
  let anchor: number | undefined;
  let lastRun = -Infinity;
  while (!flag.isSet()) {
    if (idle !== undefined) {
      // Idling: only after so long without changes; with no interval, once per quiet period.
      while (!flag.isSet()) {
        const left = state.lastChange + idle - clock.now();
        if (left > 0) await flag.wait(left / 1000);
        else if (interval === undefined && lastRun >= state.lastChange) {
          await flag.wait(idle / 1000);
        } else break;
      }
      if (flag.isSet()) return;
    }
    const started = clock.now();
    anchor ??= started;
    lastRun = started;
    const end = await runUntilFinal(env, state, handler, flag);
    if (end === "stopped") return;
    if (end === "failed") {
      (state.finished ??= new Set()).add(handler.id);
      state.logger.debug(`Timer '${handler.id}' has stopped after a permanent failure.`);
      return;
    }
    if (interval === undefined) continue;
    const now = clock.now();
    let wait = interval;
    if (handler.sharp) {
      // On the grid of the first run, whatever this run and its retries took.
      const next = anchor + Math.ceil((now - anchor) / interval) * interval;
      wait = next > now ? next - now : interval;
    }
    await flag.wait(wait / 1000);
  }
}

/**
 * Runs the handler until its outcome is final (retrying as the protocol says), applying its
 * patch after each run.
 */
async function runUntilFinal(
  env: SpawningEnv,
  state: SpawnedObject,
  handler: SpawningHandler,
  flag: StopFlag<Reason>,
): Promise<"done" | "failed" | "stopped"> {
  const { clock, settings } = env;
  const progress = new State(handler.spawn);
  const ids = [handler.id];
  while (!flag.isSet()) {
    if (progress.ensure(handler.id, clock.date()).awakened(clock.date())) {
      const patch = new Patch();
      const outcome = await executeHandler<SpawningHandler>(handler, {
        state: progress,
        kind: handler.spawn,
        defaultErrors: "temporary",
        defaultBackoff: settings.execution.defaultBackoff,
        resultLimit: settings.persistence.resultSizeLimit,
        noun: noun(handler),
        logger: state.logger,
        metrics: env.metrics,
        clock,
        // The attempt's signal follows the stop-flag (read lazily: most daemons never ask).
        signal: () => flag.signal,
        context: (h, attempt) => new LiveContext(state, h, flag, patch, attempt, env),
        onResult: (h, value) => {
          patch.status[h.id] = value;
        },
      });
      await flush(env, state, handler, patch);
      if (outcome.final) return outcome.error !== undefined ? "failed" : "done";
    }
    const delays = progress.delays(ids, clock.date());
    await flag.wait(delays.length ? Math.max(0.001, Math.min(...delays)) : 0.001);
  }
  return "stopped";
}

async function flush(
  env: SpawningEnv,
  state: SpawnedObject,
  handler: SpawningHandler,
  patch: Patch,
): Promise<void> {
  if (patch.isEmpty()) return;
  try {
    const patched = await applyPatch(state.api, state.body, patch.toJSON(), state.logger);
    if (patched) env.touch(state, patched);
  } catch (e) {
    state.logger.exception(
      `${noun(handler)} '${handler.id}' could not apply its patch: ${
        e instanceof Error ? e.message : e
      }`,
      e,
    );
  }
}

/**
 * How log lines name a daemon or a timer.
 *
 * @param handler The daemon or timer.
 * @returns `"Daemon"` or `"Timer"`.
 */
export function noun(handler: SpawningHandler): string {
  return handler.spawn === "daemon" ? "Daemon" : "Timer";
}

/**
 * The context of a daemon or timer: a live view — every object field reads the latest body,
 * as in Kopf. A class, so that its getters live on the prototype, not in every context.
 */
class LiveContext implements SpawningContext {
  readonly #state: SpawnedObject;
  readonly #attempt: Attempt;
  resource: SpawningContext["resource"];
  patch: Patch;
  logger: ObjectLogger;
  memo: AnyObject;
  settings: OperatorSettings;
  indices: AnyObject;
  param: unknown;
  retry: number;
  started: Date;
  runtime: number;
  stopped: StopFlag<Reason>;

  constructor(
    state: SpawnedObject,
    handler: SpawningHandler,
    flag: StopFlag<Reason>,
    patch: Patch,
    attempt: Attempt,
    env: SpawningEnv,
  ) {
    this.#state = state;
    this.#attempt = attempt;
    this.resource = state.resource;
    this.patch = patch;
    this.logger = state.logger;
    this.memo = state.memo;
    this.settings = env.settings;
    this.indices = env.indices;
    this.param = handler.param;
    this.retry = attempt.retry;
    this.started = attempt.started;
    this.runtime = attempt.runtime;
    this.stopped = flag;
  }
  /** Aborts when the daemon or timer is stopped, at its timeout, and at operator exit. */
  get signal(): AbortSignal {
    return this.#attempt.signal;
  }
  get body(): AnyObject {
    return this.#state.body;
  }
  get spec(): AnyObject {
    return this.#state.body.spec ?? {};
  }
  get meta(): AnyObject {
    return this.#state.body.metadata ?? {};
  }
  get status(): AnyObject {
    return this.#state.body.status ?? {};
  }
  get uid(): string {
    return this.#state.body.metadata?.uid;
  }
  get name(): string {
    return this.#state.body.metadata?.name;
  }
  get namespace(): string | undefined {
    return this.#state.body.metadata?.namespace;
  }
  get labels(): Record<string, string> {
    return this.#state.body.metadata?.labels ?? {};
  }
  get annotations(): Record<string, string> {
    return this.#state.body.metadata?.annotations ?? {};
  }
}
