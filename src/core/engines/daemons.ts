/**
 * Daemons and timers (`kopf.daemon`, `kopf.timer`): functions that accompany
 * each matching object for as long as it exists, rather than react to its
 * changes. The reactor tells this engine about every event of an object
 * (`observe`); the engine spawns what matches and is not running, stops what
 * no longer matches, and on deletion stops everything of the object and lets
 * the deletion wait (`stopObject` + `waitObject`) until it all has exited — or
 * was abandoned after its `cancellationTimeout`.
 *
 * Why it is shaped like this: an operator may serve 10,000 objects, each with
 * a timer and a daemon. So the per-object state is one small record (the live
 * body, the last change time, the running daemons by id), every sleep of
 * every daemon and timer is an entry in one heap with one armed timer
 * (cogs/aio/scheduler.ts, through the stop-flags), and a timer run that
 * produced nothing to write makes no API call.
 *
 * This module is the engine: which daemons and timers run for which object,
 * and how they are stopped (Kopf's sequence: the stop-flag, the graceful
 * `cancellationBackoff`, "cancelled", `cancellationTimeout`, abandoned). What
 * runs — the loops, their schedules and the error protocol — is in
 * spawning.ts; their context is live_context.ts. All time is the context's
 * `clock` (the real one by default), so that tests drive it by hand.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { StopFlag } from "../../cogs/aio/stop_flag.ts";
import type { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { ObjectApi } from "../actions/application.ts";
import type { HandlerMetrics } from "../actions/execution.ts";
import { type EventPoster, type Level, type LogSink, ObjectLogger } from "../actions/loggers.ts";
import { matchesObject } from "../intents/filters.ts";
import { DaemonStoppingReason } from "../intents/daemon_stopping.ts";
import type {
  AnyObject,
  DaemonStoppingReason as Reason,
  SpawningHandler,
} from "../intents/handlers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import {
  type Flag,
  type LiveObject,
  noun,
  runDaemon,
  runTimer,
  type SpawningEnv,
  touch,
} from "./spawning.ts";

export { StopFlag } from "../../cogs/aio/stop_flag.ts";

export { DaemonStoppingReason };

/** Seconds the operator waits at exit for daemons that have no cancellation timeout. */
const EXIT_TIMEOUT = 5;

/** One running daemon or timer of one object. */
interface Runner {
  handler: SpawningHandler;
  flag: Flag;
  /** Settles when the function has truly exited. */
  done: Promise<void>;
  /** Settles when it exited or was abandoned after its stop (set when stopping starts). */
  stopped: Promise<void> | undefined;
  /** Stopped by a pause and wanted again after the resume: spawned anew once it has exited. */
  respawn?: boolean;
  /** When it was first asked to stop (clock ms), and why. */
  asked?: { at: number; reason: Reason };
  /** When it was cancelled after its cancellationBackoff (clock ms). */
  cancelledAt?: number;
  /** When the deletion's wait for it was last logged at info level (clock ms). */
  toldAt?: number;
}

/** Seconds between the info lines about one daemon that a deletion still waits for. */
const RETELL = 600;

/** What the engine keeps about one object (kept in the object's memory by the reactor). */
export interface SpawnedObject extends LiveObject {
  /** The running daemons and timers by id (also those exiting). */
  running: Map<string, Runner>;
  /** Deleted or being deleted: nothing is spawned any more. */
  deleting: boolean;
  /**
   * Its daemons and timers were stopped by the operator's pause: the reactor brings the object
   * through a cycle after the resume, which spawns them again.
   */
  paused?: boolean;
}

/** The operator-wide parts the engine needs. */
export interface DaemonsContext {
  registry: OperatorRegistry;
  settings: OperatorSettings;
  memo: AnyObject;
  indices: AnyObject;
  sink: LogSink;
  post: EventPoster;
  /** Records each run of a daemon or timer (the operator's metrics), if given. */
  metrics?: HandlerMetrics | undefined;
  /** The time source of every sleep, schedule and timeout (default: the real clock). */
  clock?: Clock | undefined;
  /**
   * The operator's pause gate: while it is on, all daemons and timers are stopped (reason
   * "operator pausing") and none are spawned.
   */
  paused?: ToggleSet | undefined;
}

/**
 * The daemons and timers of one operator: spawns, stops and awaits them per object.
 *
 * @example
 * ```ts ignore
 * const daemons = new Daemons(op);
 * // on every event of an object (the reactor does this):
 * daemons.observe(memory, resource, api, body, context);
 * // on deletion:
 * daemons.stopObject(memory.spawned, "resource deleted");
 * const exited = await daemons.waitObject(memory.spawned);
 * // at exit:
 * await daemons.close();
 * ```
 */
export class Daemons {
  readonly #op: DaemonsContext;
  readonly #objects = new Set<SpawnedObject>();
  /** The posting level of all objects' loggers (one for all). */
  readonly #level: () => Level | undefined;
  /** What the daemons' and timers' loops need (one record for all). */
  readonly #env: SpawningEnv;
  readonly #clock: Clock;
  #closing = false;
  #paused = false;

  /** @param op The registry, settings, memo, indices, logging and posting of the operator. */
  constructor(op: DaemonsContext) {
    this.#op = op;
    const clock = this.#clock = op.clock ?? realClock;
    this.#env = { settings: op.settings, indices: op.indices, metrics: op.metrics, clock };
    const settings = op.settings;
    this.#level =
      () => (settings.posting.enabled && settings.posting.loggers
        ? settings.posting.level as Level
        : undefined);
    if (op.paused) {
      this.#paused = op.paused.on;
      op.paused.subscribe((on) => on ? this.#pause() : (this.#paused = false));
    }
  }

  /**
   * Whether a resource has any daemons or timers at all.
   *
   * @param resource The resource.
   * @returns True if so.
   */
  serves(resource: Resource): boolean {
    return this.#op.registry.spawningHandlers(resource).length > 0;
  }

  /**
   * Takes in the latest state of an object that is not being deleted: updates the live body
   * (and the last change time, when the version changed), spawns what matches and is not
   * running, and stops what does not match any more (it is re-spawned by a later event once
   * it has fully exited).
   *
   * @param state The object's record, or undefined for a new one.
   * @param resource The resource.
   * @param api Patching the object.
   * @param body The object.
   * @param context The handler context, for callback filters.
   * @returns The object's record (to keep in its memory), or undefined if nothing is spawned.
   */
  observe(
    state: SpawnedObject | undefined,
    resource: Resource,
    api: ObjectApi,
    body: AnyObject,
    context: unknown,
  ): SpawnedObject | undefined {
    const handlers = this.#op.registry.spawningHandlers(resource);
    if (!handlers.length) return state;
    if (!state) {
      state = {
        body,
        lastChange: this.#clock.now(),
        resource,
        api,
        logger: this.#logger(body),
        memo: (context as { memo?: AnyObject } | undefined)?.memo ?? this.#op.memo,
        running: new Map(),
        finished: undefined,
        deleting: false,
      };
    } else {
      this.touch(state, body);
    }
    if (state.deleting || this.#closing) return state;
    for (const handler of handlers) {
      const runner = state.running.get(handler.id);
      const matches = matchesObject(handler, body, context);
      if (runner) {
        if (!matches) this.#stop(state, runner, DaemonStoppingReason.FILTERS_MISMATCH);
        // Still exiting after a pause that is over: spawned anew once it has exited.
        else if (!this.#paused && runner.flag.reason === DaemonStoppingReason.OPERATOR_PAUSING) {
          runner.respawn = true;
        }
      } else if (matches && !this.#paused && !state.finished?.has(handler.id)) {
        this.#spawn(state, handler);
      }
    }
    state.paused = this.#paused; // observed while paused: brought through a cycle on resume
    if (state.running.size) this.#objects.add(state);
    return state;
  }

  /**
   * Updates the live body of an object; a new resourceVersion counts as a change (for `idle`).
   *
   * @param state The object's record.
   * @param body The latest object.
   */
  touch(state: SpawnedObject, body: AnyObject): void {
    touch(state, body, this.#clock);
  }

  /**
   * Asks all daemons and timers of an object to stop (does not wait); nothing is spawned for
   * it any more.
   *
   * @param state The object's record.
   * @param reason Why.
   */
  stopObject(state: SpawnedObject, reason: Reason): void {
    state.deleting = true;
    for (const runner of state.running.values()) this.#stop(state, runner, reason);
  }

  /**
   * Waits until all daemons and timers of an object have exited (or were abandoned), for one
   * polling period at most: the smallest `cancellationPolling` of them, where a handler without
   * one polls every `settings.background.cancellationPolling` seconds (60 by default, as Kopf).
   *
   * @param state The object's record.
   * @param signal Stops the waiting (operator exit).
   * @returns Whether they all have exited.
   */
  async waitObject(state: SpawnedObject, signal?: AbortSignal): Promise<boolean> {
    const runners = [...state.running.values()];
    if (!runners.length) return true;
    const polling = Math.min(
      ...runners.map((r) =>
        r.handler.cancellationPolling ?? this.#env.settings.background.cancellationPolling
      ),
    );
    const all = Promise.all(runners.map((r) => r.stopped ?? r.done));
    const timeout = new StopFlag<Reason>(this.#clock);
    const abort = () => timeout.set("operator exiting");
    signal?.addEventListener("abort", abort, { once: true });
    await Promise.race([all, timeout.wait(polling)]);
    timeout.set("done");
    signal?.removeEventListener("abort", abort);
    const now = this.#clock.now();
    for (const r of state.running.values()) {
      // Said at info level the first time and then every 10 minutes: the finalizer is kept
      // because of this daemon, and its author should know why and what to change.
      state.logger.debug(
        `${
          noun(r.handler)
        } '${r.handler.id}' is still exiting. The next check is in ${polling} seconds.`,
      );
      if (r.toldAt === undefined || now - r.toldAt >= RETELL * 1000) {
        r.toldAt = now;
        state.logger.info(this.#waiting(r, now, polling));
      }
    }
    return state.running.size === 0;
  }

  /** What a deletion waits for, since when, until when, and what would end it sooner. */
  #waiting(r: Runner, now: number, polling: number): string {
    const { handler } = r;
    const what = `${noun(handler)} '${handler.id}'`;
    const secs = (ms: number) => `${Math.round(ms / 100) / 10}s`;
    const asked = r.asked ?? { at: now, reason: "resource deleted" as Reason };
    const fix = `to stop sooner, make it return when its \`stopped\` flag is set or its ` +
      `\`signal\` aborts (e.g. \`await stopped.wait(...)\`, \`kopf.sleep(..., signal)\`)`;
    const head = `The deletion waits for ${what}, asked to exit ${
      secs(now - asked.at)
    } ago (${asked.reason}), before the finalizer is released`;
    const timeout = handler.cancellationTimeout;
    if (timeout === undefined) {
      return `${head}: with no time limit (it has no cancellationTimeout; re-checked every ` +
        `${polling}s); ${fix}, or give it a cancellationTimeout to abandon it after that long.`;
    }
    const backoff = handler.cancellationBackoff ?? 0;
    const abandon = asked.at + (backoff + timeout) * 1000;
    if (r.cancelledAt === undefined) {
      return `${head}: it is cancelled ${secs(asked.at + backoff * 1000 - now)} from now ` +
        `(cancellationBackoff ${backoff}s) and abandoned ${secs(abandon - now)} from now ` +
        `(cancellationTimeout ${timeout}s); ${fix}.`;
    }
    return `${head}: cancelled ${secs(now - r.cancelledAt)} ago, it is abandoned ${
      secs(abandon - now)
    } from now (cancellationTimeout ${timeout}s); ${fix}.`;
  }

  /**
   * Stops all daemons and timers of an object that goes to another replica (sharding), with the
   * reason "operator pausing" — for this object, this operator pauses — and waits until they
   * have exited or were abandoned after their cancellation timeout (without one, as long as they
   * take). Nothing is spawned for this record any more: the object's next cycle here, if it ever
   * comes back, starts with a fresh one.
   *
   * @param state The object's record.
   * @returns When they all have exited.
   */
  async release(state: SpawnedObject): Promise<void> {
    state.deleting = true;
    const waits: Promise<void>[] = [];
    for (const runner of state.running.values()) {
      runner.respawn = false;
      this.#stop(state, runner, DaemonStoppingReason.OPERATOR_PAUSING);
      waits.push(runner.stopped ?? runner.done);
    }
    await Promise.all(waits);
    this.#objects.delete(state);
  }

  /**
   * Stops all daemons and timers of all objects (operator exit) and waits for them: each up to
   * its cancellation backoff and timeout, those without a timeout up to 5 seconds.
   * Nothing is spawned afterwards.
   */
  async close(): Promise<void> {
    this.#closing = true;
    const waits: Promise<void>[] = [];
    for (const state of this.#objects) {
      for (const runner of state.running.values()) {
        this.#stop(state, runner, DaemonStoppingReason.OPERATOR_EXITING);
        waits.push(runner.stopped ?? runner.done);
      }
    }
    if (!waits.length) return;
    const timeout = new StopFlag<Reason>(this.#clock);
    await Promise.race([Promise.all(waits), timeout.wait(EXIT_TIMEOUT)]);
    timeout.set("done");
    for (const state of this.#objects) {
      for (const r of state.running.values()) {
        state.logger.warning(
          `${
            noun(r.handler)
          } '${r.handler.id}' did not exit at the operator's exit. Leaving it orphaned.`,
        );
      }
    }
  }

  /** How many daemons and timers run now (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const state of this.#objects) n += state.running.size;
    return n;
  }

  /** The operator pauses: every daemon and timer is stopped; none are spawned until it resumes. */
  #pause(): void {
    this.#paused = true;
    for (const state of this.#objects) {
      state.paused = true;
      for (const runner of state.running.values()) {
        runner.respawn = false;
        this.#stop(state, runner, DaemonStoppingReason.OPERATOR_PAUSING);
      }
    }
  }

  #logger(body: AnyObject): ObjectLogger {
    return new ObjectLogger(this.#op.sink, body, { post: this.#op.post, level: this.#level });
  }

  #spawn(state: SpawnedObject, handler: SpawningHandler): void {
    const flag = new StopFlag<Reason>(this.#clock);
    const runner: Runner = { handler, flag, done: Promise.resolve(), stopped: undefined };
    const run = handler.spawn === "daemon"
      ? runDaemon(this.#env, state, handler, flag)
      : runTimer(this.#env, state, handler, flag);
    const exited = () => {
      if (state.running.get(handler.id) === runner) state.running.delete(handler.id);
      flag.set(DaemonStoppingReason.DONE);
      if (runner.respawn && !this.#paused && !this.#closing && !state.deleting) {
        if (!state.running.has(handler.id)) this.#spawn(state, handler);
      }
      if (!state.running.size) this.#objects.delete(state);
    };
    runner.done = run.then(exited, (e) => {
      state.logger.exception(`${noun(handler)} '${handler.id}' crashed unexpectedly.`, e);
      exited();
    });
    state.running.set(handler.id, runner);
  }

  /** Kopf's termination sequence: signal, graceful backoff, cancel, timeout, abandon. */
  #stop(state: SpawnedObject, runner: Runner, reason: Reason): void {
    const already = runner.flag.isSet();
    runner.flag.set(reason);
    runner.asked ??= { at: this.#clock.now(), reason };
    if (already && runner.stopped) return;
    const { handler } = runner;
    const what = `${noun(handler)} '${handler.id}'`;
    state.logger.debug(`${what} is signalled to exit (${reason}).`);
    const timeout = handler.cancellationTimeout;
    if (timeout === undefined) {
      runner.stopped = runner.done;
      return;
    }
    const backoff = handler.cancellationBackoff ?? 0;
    runner.stopped = (async () => {
      const deadline = new StopFlag<Reason>(this.#clock);
      const exited = runner.done.then(() => deadline.set("done"));
      if (!(await deadline.wait(backoff))) {
        runner.flag.set(DaemonStoppingReason.DAEMON_CANCELLED);
        runner.cancelledAt = this.#clock.now();
        state.logger.debug(`${what} is cancelled. Will wait for its exit for ${timeout}s.`);
        if (!(await deadline.wait(timeout))) {
          runner.flag.set(DaemonStoppingReason.DAEMON_ABANDONED);
          state.logger.warning(`${what} did not exit in time. Leaving it orphaned.`);
          if (state.running.get(handler.id) === runner) state.running.delete(handler.id);
          if (!state.running.size) this.#objects.delete(state);
          deadline.set("done");
          return;
        }
      }
      await exited;
    })();
  }
}
