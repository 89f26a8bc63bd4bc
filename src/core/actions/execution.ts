/**
 * The one handler protocol, for every kind of handler — changing, event,
 * daemon, timer, index, activity (and admission): run a handler once, turn
 * what happened into an {@link Outcome}, log it with Kopf's lines, fold it
 * into the handler's state. A kind differs only in its defaults (its errors
 * mode: `"temporary"` for changing handlers, daemons, timers and activities,
 * `"ignored"` for event and indexing handlers), what its context holds, and
 * what it does with the outcome (store it on the object, keep it in memory,
 * retry in a loop) — as Kopf's `execute_handlers_once(…, default_errors=…)`.
 *
 * The protocol:
 * - before an attempt: `timeout` (seconds since the first attempt) and
 *   `retries` exhausted → `HandlerTimeoutError` / `HandlerRetriesError`;
 * - during it: the context's `signal` aborts at the handler's `timeout` and at
 *   operator exit; when the timeout passes, the operator stops waiting for the
 *   attempt (its later outcome is ignored, and logged at debug level) and the
 *   handler fails with `HandlerTimeoutError`;
 * - after it: `TemporaryError` → retry after its delay; `PermanentError` →
 *   failed for good; any other error → per `errors` (or the kind's default):
 *   retry after `backoff` (or `settings.execution.defaultBackoff`), stop, or
 *   ignore; a result that is to be stored on the object is checked first
 *   (results.ts): one that cannot be stored fails the handler permanently.
 *
 * Sub-handlers (`kopf.register`, `kopf.subhandler`, `kopf.execute`) are
 * collected while their parent runs, through an async context, and run as
 * children with ids `parent/child`, by this same protocol.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { deadline, LazySignal, type SignalSource } from "../../cogs/aio/signals.ts";
import type { AnyObject, BaseHandler, ErrorsMode, HandlerMetrics } from "./invocation.ts";
import { ChildrenFailedError, ChildrenRetry, HandlerTimeoutError, ResultError } from "./errors.ts";
import { getDefaultLifecycle, type Lifecycle } from "./lifecycles.ts";
import type { OperatorLogger } from "./loggers.ts";
import type { Outcome, State } from "./progression.ts";
import { checkResult } from "./results.ts";
import { type Attempt, AttemptInfo, type RunningAttempt, track } from "./attempts.ts";
import { exhausted, failure, permanently, seconds } from "./outcomes.ts";
import { TRACING } from "../../cogs/tracing/tracing.ts";
import { traceHandler } from "./handler_tracing.ts";

export { allAtOnce, asap, type Lifecycle, oneByOne, shuffled } from "./lifecycles.ts";
export { type Attempt, type AttemptFields, type RunningAttempt, withAttempt } from "./attempts.ts";
export { ChildrenRetry, ResultError } from "./errors.ts";
export type { HandlerMetrics } from "./invocation.ts";

/** The default delay before retrying after an arbitrary error, in seconds. */
export const DEFAULT_BACKOFF = 60;

/** What `kopf.register`/`kopf.execute` see while a parent handler runs. */
export interface SubhandlerScope {
  /** The parent's id. */
  parentId: string;
  /** Sub-handlers registered so far in this run of the parent. */
  registered: BaseHandler[];
  /** The parent handler (sub-handlers inherit its resource and filters). */
  parent: BaseHandler;
  /** Runs sub-handlers now (for `kopf.execute`), returning when they are all done. */
  execute: (handlers: BaseHandler[], lifecycle?: Lifecycle) => Promise<void>;
}

/**
 * What the code of a running handler finds through its async context: the handler's context
 * (so `kopf.adopt()` and the other hierarchy helpers default to its object, as Kopf's
 * `cause_var` does) and, in resource-changing handlers, the sub-handler registration.
 */
export interface HandlerScope {
  /** The running handler's context (its `body`, `name`, `namespace`, `labels`…). */
  readonly context: AnyObject | undefined;
  /** Sub-handler registration: only while a resource-changing handler runs. */
  readonly subhandlers?: SubhandlerScope | undefined;
}

/** The async context of running handlers (the current context, sub-handler registration). */
export const handlerScope: AsyncLocalStorage<HandlerScope> = new AsyncLocalStorage<
  HandlerScope
>();

/** The context of the handler running now (in this async context); undefined outside of one. */
export function currentContext(): AnyObject | undefined {
  return handlerScope.getStore()?.context;
}

/** How one kind of handler is executed: the parts of the protocol a kind chooses. */
export interface Execution<H extends BaseHandler> {
  /** The handlers' progress (updated in place with each outcome). */
  state: State;
  /** Builds a handler's context for one attempt. */
  context: (handler: H, attempt: Attempt) => AnyObject;
  /** The logger of the object or operator. */
  logger: OperatorLogger;
  /** The kind, for metrics: `changing`, `event`, `daemon`, `timer`, `index`, `activity`. */
  kind: string;
  /** What arbitrary errors do when the handler has no `errors` of its own. */
  defaultErrors: ErrorsMode;
  /** Seconds before a retry after an arbitrary error without the handler's `backoff` (60). */
  defaultBackoff?: number | undefined;
  /** Which ready handlers run in one call (default: all, in order). */
  lifecycle?: Lifecycle | undefined;
  /** Receives each successful handler's non-empty result (checked first, if `resultLimit`). */
  onResult?: ((handler: H, result: unknown) => void) | undefined;
  /** Results are stored on the object: they must be JSON of at most this many bytes. */
  resultLimit?: number | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
  /** Aborts the attempts' signals: operator exit (a function or owner: read only when needed). */
  signal?: SignalSource;
  /** How log lines name the handlers (default "Handler"). */
  noun?: string | undefined;
  /** The level of the "succeeded" line (default info). */
  successLevel?: "info" | "debug" | undefined;
  /** Records each run (metrics); absent, nothing is recorded. */
  metrics?: HandlerMetrics | undefined;
  /** The attempts in progress (the operator's, for its exit's report); absent, not tracked. */
  running?: Set<RunningAttempt> | undefined;
  /**
   * Handlers of this kind may have sub-handlers (`kopf.register`, `kopf.execute`): the
   * resource-changing kind. The other kinds run in a scope with their context only (one small
   * object held for as long as a handler runs: a daemon's, for as long as its object lives).
   */
  subhandlers?: boolean | undefined;
}

/**
 * Runs the ready handlers once (as the lifecycle picks them), recording their outcomes.
 *
 * @param handlers The handlers of the cycle, in order.
 * @param ex How this kind executes.
 * @returns The outcomes of the handlers that ran, by id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { executeHandlers } from "./execution.ts";
 * import { State } from "./progression.ts";
 * import { OperatorLogger } from "@kopf/kopf";
 * const handler = {
 *   id: "hello", fn: () => "world", param: undefined,
 *   errors: undefined, timeout: undefined, retries: undefined, backoff: undefined,
 * };
 * const outcomes = await executeHandlers([handler], {
 *   state: new State("create"), context: () => ({}), logger: new OperatorLogger(() => {}),
 *   kind: "changing", defaultErrors: "temporary",
 * });
 * assert.deepEqual(outcomes.get("hello"), { final: true, result: "world" });
 * ```
 */
export async function executeHandlers<H extends BaseHandler>(
  handlers: readonly H[],
  ex: Execution<H>,
): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  for (const handler of readyInOrder(handlers, ex)) {
    outcomes.set(handler.id, await executeHandler(handler, ex));
  }
  return outcomes;
}

/**
 * Runs the ready handlers once as {@link executeHandlers} does, for a caller that reads their
 * outcomes from `ex.state` only: no map of them, and a lone ready handler's own promise (no
 * frame around it).
 *
 * @param handlers The handlers of the cycle, in order.
 * @param ex How this kind executes.
 * @returns When they have run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runHandlers } from "./execution.ts";
 * import { State } from "./progression.ts";
 * import { OperatorLogger } from "@kopf/kopf";
 * const handler = {
 *   id: "hello", fn: () => "world", param: undefined,
 *   errors: undefined, timeout: undefined, retries: undefined, backoff: undefined,
 * };
 * const state = new State("create");
 * await runHandlers([handler], {
 *   state, context: () => ({}), logger: new OperatorLogger(() => {}),
 *   kind: "changing", defaultErrors: "temporary",
 * });
 * assert.deepEqual(state.done(["hello"]), true);
 * ```
 */
export function runHandlers<H extends BaseHandler>(
  handlers: readonly H[],
  ex: Execution<H>,
): Promise<unknown> {
  try {
    const order = readyInOrder(handlers, ex);
    // (A lifecycle of plain JavaScript may give any iterable: it is iterated as it comes.)
    return Array.isArray(order) && order.length === 1
      ? executeHandler(order[0]!, ex)
      : runInOrder(order, ex);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The awakened handlers, in the order the lifecycle picks them. */
function readyInOrder<H extends BaseHandler>(handlers: readonly H[], ex: Execution<H>): H[] {
  const now = (ex.clock ?? realClock).date();
  // Mostly all of them (a creation): a copy of exactly their size, not a list grown by pushes.
  let ready: H[] | undefined;
  for (let i = 0; i < handlers.length; i++) {
    const h = handlers[i]!;
    if (ex.state.ensure(h.id, now).awakened(now)) {
      if (ready) ready.push(h);
    } else if (!ready) {
      ready = handlers.slice(0, i);
    }
  }
  return (ex.lifecycle ?? getDefaultLifecycle())(ready ?? handlers.slice(), ex.state);
}

async function runInOrder<H extends BaseHandler>(order: Iterable<H>, ex: Execution<H>) {
  for (const handler of order) await executeHandler(handler, ex);
}

/**
 * Runs one handler once (one attempt, or none if its limits are exhausted), logs the outcome,
 * records it in the state and the metrics.
 *
 * One async frame from the call to the outcome, on purpose: a daemon waits inside its handler
 * for as long as its object lives, and every frame it waits under is held that long.
 *
 * @param handler The handler.
 * @param ex How this kind executes.
 * @returns The outcome.
 */
export async function executeHandler<H extends BaseHandler>(
  handler: H,
  ex: Execution<H>,
): Promise<Outcome> {
  const clock = ex.clock ?? realClock;
  const began = ex.metrics ? clock.now() : 0;
  const { logger } = ex;
  const noun = ex.noun ?? "Handler";
  const id = handler.id;
  const now = clock.date();
  const hs = ex.state.ensure(id, now);
  const runtime = hs.runtime(now);
  const trace = TRACING ? traceHandler(id, ex.kind, hs.retries, logger) : undefined;
  let caught: unknown;
  let outcome = exhausted(handler, hs.retries, runtime, logger, noun);
  if (!outcome) {
    const scope = ex.subhandlers ? new AttemptScope(handler, ex, clock) : undefined;
    const signals = new LazySignal(ex.signal);
    const attempt = ex.running ? track(ex.running, noun, id, logger, clock) : undefined;
    let result: unknown;
    let context: AnyObject | undefined;
    try {
      context = ex.context(handler, new AttemptInfo(hs.retries, hs.started, runtime, signals));
      const call = trace
        ? trace.run(inScope, scope ?? { context }, handler, context)
        : inScope(scope ?? { context }, handler, context);
      result = !isPromise(call)
        ? call
        : handler.timeout === undefined
        ? await call
        : await timed(call, handler, runtime, signals, ex, clock);
      if (scope?.registered.length) {
        outcome = childrenOutcome(await runChildren(scope.registered, ex, id, clock), scope, ex);
      }
    } catch (e) {
      caught = e;
      // Without the handler's own `backoff`: the operator's settings.execution.defaultBackoff.
      const backoff = handler.backoff ?? ex.defaultBackoff ??
        context?.settings?.execution?.defaultBackoff ?? DEFAULT_BACKOFF;
      outcome = failure(handler, e, logger, noun, handler.errors ?? ex.defaultErrors, backoff);
      if (scope?.executed.length) outcome = { ...outcome, subrefs: scope.executed };
    } finally {
      signals.detach();
      if (attempt) ex.running!.delete(attempt);
    }
    outcome ??= success(handler, ex, result, scope);
  }
  trace?.end(outcome, caught);
  ex.metrics?.handlerRun(id, ex.kind, (clock.now() - began) / 1000, outcome.error !== undefined);
  ex.state.get(id)!.apply(outcome, clock.date());
  return outcome;
}

// An attempt's callbacks are made in these helpers, so executeHandler() holds none while it waits.

/** Calls the handler with its scope (its context; its sub-handler registration) as the async context. */
function inScope<H extends BaseHandler>(
  scope: HandlerScope,
  handler: H,
  context: AnyObject,
): unknown {
  if (scope instanceof AttemptScope) scope.context = context;
  return handlerScope.run(scope, callHandler, handler, context);
}

function callHandler(handler: BaseHandler, context: AnyObject): unknown {
  return handler.fn(context);
}

/**
 * Waits for the handler's call until its timeout; then aborts the attempt's signal and fails
 * with HandlerTimeoutError (the call's later end is logged at debug level and ignored).
 */
function timed<H extends BaseHandler>(
  call: PromiseLike<unknown>,
  handler: H,
  runtime: number,
  signals: LazySignal,
  ex: Execution<H>,
  clock: Clock,
): Promise<unknown> {
  const { logger } = ex;
  const noun = ex.noun ?? "Handler";
  const id = handler.id;
  const timeout = handler.timeout!;
  return deadline(call, timeout - runtime, clock, () => {
    const error = new HandlerTimeoutError(
      `${noun} '${id}' has timed out after ${seconds(timeout)}.`,
    );
    signals.abort(error);
    call.then(
      () => logger.debug(`${noun} '${id}' has finished after its timeout; ignored.`),
      (e) => logger.debug(`${noun} '${id}' has failed after its timeout; ignored: ${message(e)}`),
    );
    return error;
  });
}

/** The outcome of a parent whose registered sub-handlers ran: undefined if they all succeeded. */
function childrenOutcome<H extends BaseHandler>(
  done: { finished: boolean; failed: string; delay: number },
  scope: AttemptScope<H>,
  ex: Execution<H>,
): Outcome | undefined {
  const subrefs = [...scope.executed, ...scope.registered.map((h) => h.id)];
  if (!done.finished) return { final: false, delay: done.delay, subrefs };
  if (done.failed) {
    const error = new ChildrenFailedError(`sub-handlers failed: ${done.failed}`);
    return { ...permanently(ex.logger, ex.noun ?? "Handler", scope.parent.id, error), subrefs };
  }
  return undefined;
}

/** The outcome of a successful attempt: its result checked (if stored), logged, delivered. */
function success<H extends BaseHandler>(
  handler: H,
  ex: Execution<H>,
  result: unknown,
  scope: AttemptScope<H> | undefined,
): Outcome {
  const { logger } = ex;
  const noun = ex.noun ?? "Handler";
  const id = handler.id;
  if (ex.resultLimit !== undefined && result !== undefined && result !== null) {
    const checked = checkResult(result, ex.resultLimit);
    if (!checked.ok) {
      const { path, reason } = checked.problem;
      return permanently(
        logger,
        noun,
        id,
        new ResultError(
          `${noun} '${id}' returned a result that cannot be stored: ${path} is ${reason}.`,
        ),
      );
    }
    if (checked.dropped.length) {
      logger.debug(
        `${noun} '${id}' returned values that JSON drops (functions, undefined): ${
          checked.dropped.join(", ")
        }; they are not stored.`,
      );
    }
    result = checked.value;
  }
  if (ex.successLevel === "debug") logger.debug(`${noun} '${id}' succeeded.`);
  else logger.info(`${noun} '${id}' succeeded.`);
  if (result !== undefined && result !== null) ex.onResult?.(handler, result);
  // Registered children too: their records (kept while other handlers are unfinished) are found
  // through the parent's subrefs, and purged with it.
  // (No arrays at all for the usual handler without children.)
  if (!scope || (!scope.executed.length && !scope.registered.length)) {
    return { final: true, result };
  }
  const subrefs = [...scope.executed, ...scope.registered.map((h) => h.id)];
  return { final: true, result, subrefs };
}

/** What `kopf.register`/`kopf.execute` see while a handler runs. */
class AttemptScope<H extends BaseHandler> implements SubhandlerScope, HandlerScope {
  context: AnyObject | undefined;
  readonly parent: H;
  readonly registered: BaseHandler[] = [];
  /**
   * Ids of children run by kopf.execute(): remembered in the parent's record (subrefs), so that
   * their own records are found again in the next cycle.
   */
  readonly executed: string[] = [];
  readonly #ex: Execution<H>;
  readonly #clock: Clock;

  constructor(parent: H, ex: Execution<H>, clock: Clock) {
    this.parent = parent;
    this.#ex = ex;
    this.#clock = clock;
  }

  get parentId(): string {
    return this.parent.id;
  }

  get subhandlers(): SubhandlerScope {
    return this;
  }

  async execute(children: BaseHandler[], lifecycle?: Lifecycle): Promise<void> {
    const id = this.parent.id;
    for (const c of children) if (!this.executed.includes(c.id)) this.executed.push(c.id);
    const ex = lifecycle ? { ...this.#ex, lifecycle } : this.#ex;
    const done = await runChildren(children, ex, id, this.#clock);
    if (!done.finished) {
      throw new ChildrenRetry("sub-handlers are not finished yet", { delay: done.delay });
    }
    if (done.failed) {
      throw new ChildrenFailedError(`sub-handlers of '${id}' failed: ${done.failed}`);
    }
  }
}

async function runChildren<H extends BaseHandler>(
  children: BaseHandler[],
  ex: Execution<H>,
  parentId: string,
  clock: Clock,
): Promise<{ finished: boolean; failed: string; delay: number }> {
  const ids = children.map((c) => c.id);
  await executeHandlers(children, ex as unknown as Execution<BaseHandler>);
  const state = ex.state;
  const finished = state.done(ids);
  const failed = ids.filter((i) => state.get(i)?.failure).map((i) => i.slice(parentId.length + 1))
    .join(", ");
  const delays = state.delays(ids, clock.date());
  return { finished, failed, delay: delays.length ? Math.min(...delays) : 0 };
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
