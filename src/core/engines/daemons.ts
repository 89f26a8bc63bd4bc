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
 * body, the last change time, the running daemons by id), a timer is one
 * re-armed `setTimeout` between runs (no polling, no interval callbacks), and
 * a timer run that produced nothing to write makes no API call.
 *
 * The error protocol is the one of all handlers (`runHandlersOnce`): a
 * `TemporaryError` retries after its delay, arbitrary errors after `backoff`
 * (or stop/ignore per `errors`), a `PermanentError` stops for good. A daemon
 * that returns is not restarted ("Daemon 'x' has exited on its own.").
 *
 * @module
 */

import { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/references.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { applyPatch, type ObjectApi } from "../actions/application.ts";
import { allAtOnce, type HandlerMetrics, runHandlersOnce } from "../actions/execution.ts";
import { type EventPoster, type Level, type LogSink, ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import { matchesObject } from "../intents/filters.ts";
import type {
  AnyObject,
  DaemonStopped,
  DaemonStoppingReason as Reason,
  SpawningContext,
  SpawningHandler,
} from "../intents/handlers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";

/**
 * The reasons of stopping daemons and timers (Kopf's `kopf.DaemonStoppingReason`).
 *
 * @example
 * ```ts
 * import { DaemonStoppingReason } from "./daemons.ts";
 * console.log(DaemonStoppingReason.RESOURCE_DELETED); // "resource deleted"
 * ```
 */
export const DaemonStoppingReason = {
  DONE: "done",
  FILTERS_MISMATCH: "filters mismatching",
  RESOURCE_DELETED: "resource deleted",
  OPERATOR_PAUSING: "operator pausing",
  OPERATOR_EXITING: "operator exiting",
  DAEMON_SIGNALLED: "daemon signalled",
  DAEMON_CANCELLED: "daemon cancelled",
  DAEMON_ABANDONED: "daemon abandoned",
} as const satisfies Record<string, Reason>;

/** Seconds between checks of an exiting daemon without a cancellation timeout (Kopf polls too). */
const DEFAULT_POLLING = 5;
/** Seconds the operator waits at exit for daemons that have no cancellation timeout. */
const EXIT_TIMEOUT = 5;

/**
 * One `setTimeout` for all the sleeps of daemons and timers: at 10,000 objects, a timer each,
 * a Deno timer (≈1.3 KB) and an abort listener (≈1 KB) per sleeping object add up; a heap of
 * small entries with one armed timeout for the earliest does not. Cancelled entries are
 * dropped lazily when their time comes.
 */
class Scheduler {
  #heap: Array<{ when: number; fire: (() => void) | undefined }> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armedFor = Infinity;
  /** Entries not cancelled nor fired: when none is left, no timeout stays armed. */
  #live = 0;

  /**
   * Calls `fire` at `when` (a `performance.now()` time).
   *
   * @returns The entry, for `cancel`.
   */
  at(when: number, fire: () => void): { when: number; fire: (() => void) | undefined } {
    const entry = { when, fire: fire as (() => void) | undefined };
    const heap = this.#heap;
    this.#live++;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.when <= when) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
    if (when < this.#armedFor) this.#arm();
    return entry;
  }

  cancel(entry: { fire: (() => void) | undefined }): void {
    if (!entry.fire) return;
    entry.fire = undefined;
    if (--this.#live === 0) {
      this.#heap = [];
      this.#arm();
    }
  }

  #pop(): { when: number; fire: (() => void) | undefined } {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      let i = 0;
      while (true) {
        const l = 2 * i + 1;
        if (l >= heap.length) break;
        const r = l + 1;
        const c = r < heap.length && heap[r]!.when < heap[l]!.when ? r : l;
        if (heap[c]!.when >= last.when) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = last;
    }
    return top;
  }

  #arm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
    // Drop the cancelled entries at the top: they must not keep the process alive.
    while (this.#heap.length && !this.#heap[0]!.fire) this.#pop();
    if (!this.#heap.length) return;
    const next = this.#heap[0]!.when;
    this.#armedFor = next;
    const delay = Math.min(Math.max(0, next - performance.now()), 2 ** 31 - 1);
    this.#timer = setTimeout(() => this.#run(), delay);
  }

  #run(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = performance.now();
    while (this.#heap.length && this.#heap[0]!.when <= now + 0.5) {
      const entry = this.#pop();
      const fire = entry.fire;
      entry.fire = undefined;
      if (fire) {
        this.#live--;
        fire();
      }
    }
    this.#arm();
  }
}

const scheduler = new Scheduler();

/**
 * The stop-flag of a daemon or timer: an `AbortSignal` plus Kopf's `stopped` interface.
 *
 * @example
 * ```ts
 * import { StopFlag } from "./daemons.ts";
 * const stopped = new StopFlag();
 * setTimeout(() => stopped.set("operator exiting"), 10);
 * console.log(await stopped.wait(5), stopped.reason); // true "operator exiting"
 * ```
 */
export class StopFlag implements DaemonStopped {
  /** Made on the first read of `signal` (an `AbortSignal` costs ≈0.3 KB, most flags never need one). */
  #controller: AbortController | undefined;
  readonly #reasons: Reason[] = [];
  #wakers: Array<() => void> | undefined;

  /** Aborted when the flag is set. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reasons.length) this.#controller.abort(this.#reasons[0]);
    }
    return this.#controller.signal;
  }

  /** The first reason, or undefined while not set. */
  get reason(): Reason | undefined {
    return this.#reasons[0];
  }

  /** All reasons, in order. */
  get reasons(): readonly Reason[] {
    return this.#reasons;
  }

  /**
   * Whether the flag is set (with any reason).
   *
   * @returns Whether the flag is set.
   */
  isSet(): boolean {
    return this.#reasons.length > 0;
  }

  /**
   * Sets the flag (again, with more reasons).
   *
   * @param reason Why.
   */
  set(reason: Reason): void {
    if (!this.#reasons.includes(reason)) this.#reasons.push(reason);
    const controller = this.#controller;
    if (controller && !controller.signal.aborted) controller.abort(reason);
    const wakers = this.#wakers;
    this.#wakers = undefined;
    if (wakers) { for (const wake of wakers) wake(); }
  }

  /**
   * Sleeps until the flag is set, or for `seconds` at most.
   *
   * @param seconds How long at most; forever if undefined.
   * @returns Whether the flag is set.
   */
  wait(seconds?: number): Promise<boolean> {
    if (this.isSet() || (seconds !== undefined && !(seconds > 0))) {
      return Promise.resolve(this.isSet());
    }
    return new Promise((resolve) => {
      let entry: { fire: (() => void) | undefined } | undefined;
      const wake = () => {
        if (entry) scheduler.cancel(entry);
        resolve(true);
      };
      (this.#wakers ??= []).push(wake);
      if (seconds !== undefined) {
        entry = scheduler.at(performance.now() + seconds * 1000, () => {
          const wakers = this.#wakers;
          if (wakers) {
            const i = wakers.indexOf(wake);
            if (i >= 0) wakers.splice(i, 1);
            if (!wakers.length) this.#wakers = undefined;
          }
          resolve(this.isSet());
        });
      }
    });
  }
}

/** One running daemon or timer of one object. */
interface Runner {
  handler: SpawningHandler;
  flag: StopFlag;
  /** Settles when the function has truly exited. */
  done: Promise<void>;
  /** Settles when it exited or was abandoned after its stop (set when stopping starts). */
  stopped: Promise<void> | undefined;
}

/** What the engine keeps about one object (kept in the object's memory by the reactor). */
export interface SpawnedObject {
  /** The object as last seen: daemons and timers read it live. */
  body: AnyObject;
  /** `performance.now()` of the last change of the object (for `idle`). */
  lastChange: number;
  resource: Resource;
  api: ObjectApi;
  logger: ObjectLogger;
  /** The per-object memo (the handlers' `memo`). */
  memo: AnyObject;
  /** The running daemons and timers by id (also those exiting). */
  running: Map<string, Runner>;
  /** Ids that exited on their own or failed permanently: never re-spawned for this object. */
  finished: Set<string> | undefined;
  /** Deleted or being deleted: nothing is spawned any more. */
  deleting: boolean;
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
  /** The posting level of all objects' loggers: one closure, not one per object. */
  readonly #level: () => Level | undefined;
  #closing = false;

  /** @param op The registry, settings, memo, indices, logging and posting of the operator. */
  constructor(op: DaemonsContext) {
    this.#op = op;
    const settings = op.settings;
    this.#level =
      () => (settings.posting.enabled && settings.posting.loggers
        ? settings.posting.level as Level
        : undefined);
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
        lastChange: performance.now(),
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
      } else if (matches && !state.finished?.has(handler.id)) {
        this.#spawn(state, handler);
      }
    }
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
    if (body.metadata?.resourceVersion !== state.body.metadata?.resourceVersion) {
      state.lastChange = performance.now();
    }
    state.body = body;
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
   * polling period at most (the smallest `cancellationPolling` of them, 5 s by default).
   *
   * @param state The object's record.
   * @param signal Stops the waiting (operator exit).
   * @returns Whether they all have exited.
   */
  async waitObject(state: SpawnedObject, signal?: AbortSignal): Promise<boolean> {
    const runners = [...state.running.values()];
    if (!runners.length) return true;
    const polling = Math.min(
      ...runners.map((r) => r.handler.cancellationPolling ?? DEFAULT_POLLING),
    );
    const all = Promise.all(runners.map((r) => r.stopped ?? r.done));
    const timeout = new StopFlag();
    const abort = () => timeout.set("operator exiting");
    signal?.addEventListener("abort", abort, { once: true });
    await Promise.race([all, timeout.wait(polling)]);
    timeout.set("done");
    signal?.removeEventListener("abort", abort);
    for (const r of state.running.values()) {
      state.logger.debug(
        `${
          noun(r.handler)
        } '${r.handler.id}' is still exiting. The next check is in ${polling} seconds.`,
      );
    }
    return state.running.size === 0;
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
    const timeout = new StopFlag();
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

  #logger(body: AnyObject): ObjectLogger {
    return new ObjectLogger(this.#op.sink, body, { post: this.#op.post, level: this.#level });
  }

  #spawn(state: SpawnedObject, handler: SpawningHandler): void {
    const flag = new StopFlag();
    const runner: Runner = { handler, flag, done: Promise.resolve(), stopped: undefined };
    const run = handler.spawn === "daemon"
      ? this.#daemon(state, handler, flag)
      : this.#timer(state, handler, flag);
    const exited = () => {
      if (state.running.get(handler.id) === runner) state.running.delete(handler.id);
      if (!state.running.size) this.#objects.delete(state);
      flag.set(DaemonStoppingReason.DONE);
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
      const deadline = new StopFlag();
      const exited = runner.done.then(() => deadline.set("done"));
      if (!(await deadline.wait(backoff))) {
        runner.flag.set(DaemonStoppingReason.DAEMON_CANCELLED);
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

  /**
   * Runs the handler until it succeeds or fails permanently; applies its patch after each run.
   *
   * The function is called here, directly, and its settled outcome is then replayed through
   * `runHandlersOnce` (Kopf's error protocol, logs and retry state): a daemon waits for long,
   * and each async frame it waits under costs memory at 10,000 objects — the protocol's own
   * frames would hold ≈5 KB per daemon for nothing. The limits (`timeout`, `retries`) are
   * checked before the call, as `runHandlersOnce` would.
   */
  async #runOnce(
    state: SpawnedObject,
    handler: SpawningHandler,
    flag: StopFlag,
  ): Promise<"done" | "failed" | "stopped"> {
    const progress = new State(handler.spawn);
    const ids = [handler.id];
    while (!flag.isSet()) {
      const patch = new Patch();
      const now = new Date();
      const hs = progress.ensure(handler.id, now);
      const runtime = hs.runtime(now);
      const exceeded = (handler.timeout !== undefined && runtime > handler.timeout) ||
        (handler.retries !== undefined && hs.retries >= handler.retries);
      let context: SpawningContext | undefined;
      let replay: SpawningHandler = handler;
      if (!exceeded && hs.awakened(now)) {
        context = this.#context(state, handler, flag, patch, hs.retries, hs.started, runtime);
        let settled: { value: unknown } | { error: unknown };
        const began = this.#op.metrics ? performance.now() : 0;
        try {
          settled = { value: await handler.fn(context) };
        } catch (error) {
          settled = { error };
        }
        this.#op.metrics?.handlerRun(
          handler.id,
          handler.spawn,
          (performance.now() - began) / 1000,
          "error" in settled,
        );
        replay = {
          ...handler,
          timeout: undefined,
          retries: undefined,
          fn: () => {
            if ("error" in settled) throw settled.error;
            return settled.value;
          },
        };
      }
      const outcomes = await runHandlersOnce<SpawningHandler>({
        handlers: [replay],
        state: progress,
        lifecycle: allAtOnce,
        logger: state.logger,
        noun: noun(handler),
        context: (h, retry, started, runtime) =>
          context ?? this.#context(state, h, flag, patch, retry, started, runtime),
        onResult: (h, value) => {
          patch.status[h.id] = value;
        },
      });
      await this.#flush(state, handler, patch);
      const outcome = outcomes.get(handler.id);
      if (outcome?.final) return outcome.error !== undefined ? "failed" : "done";
      const delays = progress.delays(ids, new Date());
      await flag.wait(delays.length ? Math.max(0.001, Math.min(...delays)) : 0.001);
    }
    return "stopped";
  }

  async #daemon(state: SpawnedObject, handler: SpawningHandler, flag: StopFlag): Promise<void> {
    if (handler.initialDelay && await flag.wait(handler.initialDelay)) return;
    const end = await this.#runOnce(state, handler, flag);
    if (end === "stopped" || flag.isSet()) {
      state.logger.debug(`Daemon '${handler.id}' has exited gracefully.`);
      return;
    }
    (state.finished ??= new Set()).add(handler.id);
    if (end === "done") state.logger.info(`Daemon '${handler.id}' has exited on its own.`);
    else state.logger.debug(`Daemon '${handler.id}' has exited after a permanent failure.`);
  }

  async #timer(state: SpawnedObject, handler: SpawningHandler, flag: StopFlag): Promise<void> {
    if (handler.initialDelay && await flag.wait(handler.initialDelay)) return;
    const interval = handler.interval !== undefined ? handler.interval * 1000 : undefined;
    const idle = handler.idle !== undefined ? handler.idle * 1000 : undefined;
    let anchor: number | undefined;
    let lastRun = -Infinity;
    while (!flag.isSet()) {
      if (idle !== undefined) {
        // Idling: only after so long without changes; with no interval, once per quiet period.
        while (!flag.isSet()) {
          const left = state.lastChange + idle - performance.now();
          if (left > 0) await flag.wait(left / 1000);
          else if (interval === undefined && lastRun >= state.lastChange) {
            await flag.wait(idle / 1000);
          } else break;
        }
        if (flag.isSet()) return;
      }
      const started = performance.now();
      anchor ??= started;
      lastRun = started;
      const end = await this.#runOnce(state, handler, flag);
      if (end === "stopped") return;
      if (end === "failed") {
        (state.finished ??= new Set()).add(handler.id);
        state.logger.debug(`Timer '${handler.id}' has stopped after a permanent failure.`);
        return;
      }
      if (interval === undefined) continue;
      const now = performance.now();
      let wait = interval;
      if (handler.sharp) {
        // On the grid of the first run, whatever this run and its retries took.
        const next = anchor + Math.ceil((now - anchor) / interval) * interval;
        wait = next > now ? next - now : interval;
      }
      await flag.wait(wait / 1000);
    }
  }

  async #flush(state: SpawnedObject, handler: SpawningHandler, patch: Patch): Promise<void> {
    if (patch.isEmpty()) return;
    try {
      const patched = await applyPatch(state.api, state.body, patch.toJSON(), state.logger);
      if (patched) this.touch(state, patched);
    } catch (e) {
      state.logger.exception(
        `${noun(handler)} '${handler.id}' could not apply its patch: ${
          e instanceof Error ? e.message : e
        }`,
        e,
      );
    }
  }

  #context(
    state: SpawnedObject,
    handler: SpawningHandler,
    flag: StopFlag,
    patch: Patch,
    retry: number,
    started: Date,
    runtime: number,
  ): SpawningContext {
    const op = this.#op;
    return new LiveContext(state, {
      resource: state.resource,
      patch,
      logger: state.logger,
      memo: state.memo,
      settings: op.settings,
      indices: op.indices,
      param: handler.param,
      retry,
      started,
      runtime,
      stopped: flag,
    });
  }
}

/**
 * The context of a daemon or timer: a live view — every object field reads the latest body,
 * as in Kopf. A class, so that its getters live on the prototype, not in every context.
 */
class LiveContext {
  readonly #state: SpawnedObject;
  resource!: SpawningContext["resource"];
  patch!: Patch;
  logger!: ObjectLogger;
  memo!: AnyObject;
  settings!: OperatorSettings;
  indices!: AnyObject;
  param: unknown;
  retry!: number;
  started!: Date;
  runtime!: number;
  stopped!: StopFlag;

  constructor(state: SpawnedObject, fields: Omit<SpawningContext, LiveField>) {
    this.#state = state;
    Object.assign(this, fields);
  }
  /** The stop-flag's signal, made only when a handler reads it. */
  get signal(): AbortSignal {
    return this.stopped.signal;
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

type LiveField =
  | "signal"
  | "body"
  | "spec"
  | "meta"
  | "status"
  | "uid"
  | "name"
  | "namespace"
  | "labels"
  | "annotations";

function noun(handler: SpawningHandler): string {
  return handler.spawn === "daemon" ? "Daemon" : "Timer";
}
