/**
 * The loops of one daemon and one timer of one object: when each runs, how
 * often, and what happens between and after the runs. The engine
 * (daemons.ts) decides which of them run for which object and stops them;
 * this module is what runs.
 *
 * Why apart from the engine: the schedules are the part worth testing on
 * their own, on a fake clock — a timer's `interval` (the first run at once,
 * then every interval counted from the end of a run), `sharp` (on the grid of
 * the first run, whatever a run takes), `idle` (only after so long without a
 * change), `initialDelay` — and every wait here goes through the engine's
 * clock: the stop-flag's sleeps and `clock.now()`.
 *
 * Each run goes through the one handler protocol (actions/execution.ts) with
 * errors `"temporary"` by default: a `TemporaryError` runs the function again
 * after its delay, an arbitrary error after `backoff` (or the settings'
 * default backoff), a `PermanentError` or exhausted `retries`/`timeout` end
 * it. A daemon that returns is not restarted. The attempt's signal aborts when
 * the stop-flag is set and at the handler's `timeout`; results land in
 * `status.<id>`, so they are checked before they are accepted. A run that
 * produced nothing to write makes no API call.
 *
 * Memory: a daemon waits inside its function for as long as its object lives,
 * so what one attempt holds is kept small (one execution record per run of
 * the loop, the state of one handler, a live context; no signal until read).
 *
 * @module
 */

import { Patch } from "../../cogs/structs/patches.ts";
import { trimBody } from "../../cogs/structs/trimming.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { Clock } from "../../cogs/aio/clock.ts";
import type { StopFlag } from "../../cogs/aio/stop_flag.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { applyPatch, type ObjectApi, type PatchMemory } from "../actions/application.ts";
import {
  type Attempt,
  executeHandler,
  type Execution,
  type HandlerMetrics,
} from "../actions/execution.ts";
import { currentApi } from "../actions/handler_api.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import { type Outcome, State } from "../actions/progression.ts";
import type {
  AnyObject,
  DaemonStoppingReason as Reason,
  SpawningHandler,
} from "../intents/handlers.ts";
import { LiveContext } from "./live_context.ts";

/** The shortest wait before a re-run (a `TemporaryError` without a delay): never a hot loop. */
const MIN_RERUN_DELAY = 0.001;

/**
 * What the loops read and write of an object's record (the engine keeps the rest); the
 * inconsistencies of its patches are warned about once per object and set of fields.
 */
export interface LiveObject extends PatchMemory {
  /** The object as last seen: daemons and timers read it live. */
  body: AnyObject;
  /** The clock's `now()` at the last change of the object (for `idle`). */
  lastChange: number;
  /** The object's resource. */
  resource: Resource;
  /** Patching the object. */
  api: ObjectApi;
  /** The object's logger. */
  logger: ObjectLogger;
  /** The per-object memo (the handlers' `memo`). */
  memo: AnyObject;
  /** Ids that exited on their own or failed permanently: never re-spawned for this object. */
  finished: Set<string> | undefined;
}

/** The operator-wide parts the loops need. */
export interface SpawningEnv {
  /** The operator's settings. */
  settings: OperatorSettings;
  /** The in-memory indices. */
  indices: AnyObject;
  /** Records each run, if given. */
  metrics: HandlerMetrics | undefined;
  /** The time source of every wait. */
  clock: Clock;
}

/** The stop-flag of a daemon or timer. */
export type Flag = StopFlag<Reason>;

/**
 * Runs a daemon: after its `initialDelay`, until it returns, fails for good, or is stopped.
 *
 * @param env The operator-wide parts.
 * @param object The object's record.
 * @param handler The daemon.
 * @param flag Its stop-flag.
 */
export async function runDaemon(
  env: SpawningEnv,
  object: LiveObject,
  handler: SpawningHandler,
  flag: Flag,
): Promise<void> {
  if (handler.initialDelay && await flag.wait(handler.initialDelay)) return;
  // The loop of runToEnd(), written out here: a daemon waits inside its function for as long as
  // its object lives, and each async frame it waits under is held that long.
  const run = new SpawnedRun(env, object, handler, flag);
  let end: End = "stopped";
  while (!flag.isSet()) {
    const outcome = await executeHandler(handler, run);
    if (!run.patch.isEmpty()) await run.flush();
    if (outcome.final) {
      end = outcome.error !== undefined ? "failed" : "done";
      break;
    }
    await flag.wait(rerunDelay(outcome));
  }
  if (end === "stopped" || flag.isSet()) {
    object.logger.debug(`Daemon '${handler.id}' has exited gracefully.`);
    return;
  }
  (object.finished ??= new Set()).add(handler.id);
  if (end === "done") object.logger.info(`Daemon '${handler.id}' has exited on its own.`);
  else object.logger.debug(`Daemon '${handler.id}' has exited after a permanent failure.`);
}

/**
 * Runs a timer: after its `initialDelay`, at once and then every `interval` (counted from the end
 * of a run, or on the grid of the first run if `sharp`), only after `idle` seconds without a
 * change if given; until it fails for good or is stopped.
 *
 * @param env The operator-wide parts.
 * @param object The object's record.
 * @param handler The timer.
 * @param flag Its stop-flag.
 */
export async function runTimer(
  env: SpawningEnv,
  object: LiveObject,
  handler: SpawningHandler,
  flag: Flag,
): Promise<void> {
  if (handler.initialDelay && await flag.wait(handler.initialDelay)) return;
  const clock = env.clock;
  const interval = handler.interval !== undefined ? handler.interval * 1000 : undefined;
  const idle = handler.idle !== undefined ? handler.idle * 1000 : undefined;
  let anchor: number | undefined;
  let lastRun = -Infinity;
  while (!flag.isSet()) {
    if (idle !== undefined) {
      // Idling: only after so long without changes; with no interval, once per quiet period.
      while (!flag.isSet()) {
        const left = object.lastChange + idle - clock.now();
        if (left > 0) await flag.wait(left / 1000);
        else if (interval === undefined && lastRun >= object.lastChange) {
          await flag.wait(idle / 1000);
        } else break;
      }
      if (flag.isSet()) return;
    }
    const started = clock.now();
    anchor ??= started;
    lastRun = started;
    const end = await runToEnd(env, object, handler, flag);
    if (end === "stopped") return;
    if (end === "failed") {
      (object.finished ??= new Set()).add(handler.id);
      object.logger.debug(`Timer '${handler.id}' has stopped after a permanent failure.`);
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
 * Updates the live body of an object; a new resourceVersion counts as a change (for `idle`).
 *
 * @param object The object's record.
 * @param body The latest object.
 * @param clock The clock of `lastChange`.
 */
export function touch(object: LiveObject, body: AnyObject, clock: Clock): void {
  if (body.metadata?.resourceVersion !== object.body.metadata?.resourceVersion) {
    object.lastChange = clock.now();
  }
  object.body = body;
}

/**
 * How log lines name a daemon or timer.
 *
 * @param handler The handler.
 * @returns "Daemon" or "Timer".
 */
export function noun(handler: SpawningHandler): "Daemon" | "Timer" {
  return handler.spawn === "daemon" ? "Daemon" : "Timer";
}

/** How a run of the loop ended: succeeded, failed for good, or stopped by the flag. */
type End = "done" | "failed" | "stopped";

/**
 * Runs the function until it succeeds or fails for good (again after each retryable outcome's
 * delay), applying its patch after each attempt.
 */
async function runToEnd(
  env: SpawningEnv,
  object: LiveObject,
  handler: SpawningHandler,
  flag: Flag,
): Promise<End> {
  const run = new SpawnedRun(env, object, handler, flag);
  while (!flag.isSet()) {
    const outcome = await executeHandler(handler, run);
    if (!run.patch.isEmpty()) await run.flush();
    if (outcome.final) return outcome.error !== undefined ? "failed" : "done";
    await flag.wait(rerunDelay(outcome));
  }
  return "stopped";
}

/** Seconds until the function runs again after a retryable outcome (never a hot loop). */
function rerunDelay(outcome: Outcome): number {
  return Math.max(MIN_RERUN_DELAY, outcome.delay ?? 0);
}

/**
 * How a daemon or timer is executed by the one protocol: errors "temporary" by default,
 * results stored in `status.<id>` (checked against the settings' size limit), the attempt's
 * signal following the stop-flag (read only if a handler reads its signal). One per run of the
 * loop.
 */
class SpawnedRun implements Execution<SpawningHandler> {
  /** The handler's progress in this run of the loop. */
  readonly state: State;
  /** Where the current attempt writes its changes (a fresh one after each flush). */
  patch: Patch = new Patch();
  /** The attempt's signal follows the stop-flag: the flag's own, made only when read. */
  readonly signal: Flag;
  readonly #env: SpawningEnv;
  readonly #object: LiveObject;
  readonly #handler: SpawningHandler;

  constructor(env: SpawningEnv, object: LiveObject, handler: SpawningHandler, flag: Flag) {
    this.#env = env;
    this.#object = object;
    this.#handler = handler;
    this.signal = flag;
    this.state = new State(handler.spawn);
  }

  // The rest is read through getters: fields would be held by every waiting daemon.
  get kind(): "daemon" | "timer" {
    return this.#handler.spawn;
  }
  get noun(): "Daemon" | "Timer" {
    return noun(this.#handler);
  }
  get defaultErrors(): "temporary" {
    return "temporary";
  }
  get defaultBackoff(): number {
    return this.#env.settings.execution.defaultBackoff;
  }
  get resultLimit(): number {
    return this.#env.settings.persistence.resultSizeLimit;
  }
  get clock(): Clock {
    return this.#env.clock;
  }
  get metrics(): HandlerMetrics | undefined {
    return this.#env.metrics;
  }
  get logger(): ObjectLogger {
    return this.#object.logger;
  }

  context(handler: SpawningHandler, attempt: Attempt): AnyObject {
    const object = this.#object;
    return new LiveContext(object, attempt, {
      resource: object.resource,
      patch: this.patch,
      logger: object.logger,
      memo: object.memo,
      settings: this.#env.settings,
      indices: this.#env.indices,
      api: currentApi(),
      param: handler.param,
      clock: this.#env.clock,
      stopped: this.signal,
    }, handler.timeout !== undefined);
  }

  onResult(handler: SpawningHandler, result: unknown): void {
    this.patch.status[handler.id] = result;
  }

  /** Applies the attempt's patch (and takes in the patched body); a fresh patch for the next. */
  async flush(): Promise<void> {
    const patch = this.patch;
    const object = this.#object;
    this.patch = new Patch();
    try {
      const patched = await applyPatch(
        object.api,
        object.body,
        patch.toJSON(),
        object.logger,
        undefined,
        object,
      );
      if (patched) touch(object, trimBody(patched), this.clock);
    } catch (e) {
      object.logger.exception(
        `${this.noun} '${this.#handler.id}' could not apply its patch: ${
          e instanceof Error ? e.message : e
        }`,
        e,
      );
    }
  }
}
