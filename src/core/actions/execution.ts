/**
 * Running handlers with Kopf's error protocol: each handler runs until it
 * succeeds; a `TemporaryError` retries after its delay, an arbitrary error
 * after the handler's `backoff` (or stops, or is ignored, per `errors`), a
 * `PermanentError` stops it; `timeout` and `retries` bound the attempts. The
 * outcome of every handler is logged with Kopf's lines and folded into the
 * state that the progress storage keeps on the object.
 *
 * Sub-handlers (`kopf.register`, `kopf.subhandler`, `kopf.execute`) are
 * collected while their parent runs, through an async context, and run as
 * children with ids `parent/child`.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { AnyObject, BaseHandler } from "./invocation.ts";
import {
  ChildrenFailedError,
  HandlerRetriesError,
  HandlerTimeoutError,
  PermanentError,
  TemporaryError,
} from "./errors.ts";
import type { OperatorLogger } from "./loggers.ts";
import type { Outcome, State } from "./progression.ts";

/** The default delay before retrying after an arbitrary error, in seconds. */
export const DEFAULT_BACKOFF = 60;

/** A handler-choosing policy per cycle (Kopf's lifecycles). */
export type Lifecycle = <H extends BaseHandler>(handlers: H[], state: State) => H[];

/**
 * All ready handlers, in order, one after another within one cycle — the
 * default here, as it needs the fewest API writes.
 *
 * @param handlers The ready handlers.
 * @param _state Their state.
 * @returns All of them.
 */
export function allAtOnce<H extends BaseHandler>(handlers: H[], _state: State): H[] {
  return handlers;
}

/**
 * Only the first ready handler per cycle (Kopf's `one_by_one`).
 *
 * @param handlers The ready handlers.
 * @param _state Their state.
 * @returns The first.
 */
export function oneByOne<H extends BaseHandler>(handlers: H[], _state: State): H[] {
  return handlers.slice(0, 1);
}

/**
 * The ready handler with the fewest retries first, one per cycle (Kopf's `asap`).
 *
 * @param handlers The ready handlers.
 * @param state Their state.
 * @returns One handler.
 */
export function asap<H extends BaseHandler>(handlers: H[], state: State): H[] {
  return [...handlers].sort((a, b) =>
    (state.get(a.id)?.retries ?? 0) - (state.get(b.id)?.retries ?? 0)
  ).slice(0, 1);
}

/**
 * All ready handlers in random order (Kopf's `shuffled`).
 *
 * @param handlers The ready handlers.
 * @param _state Their state.
 * @returns A shuffled copy.
 */
export function shuffled<H extends BaseHandler>(handlers: H[], _state: State): H[] {
  const out = [...handlers];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Sub-handlers not finished yet: the parent retries (not an error of the parent). */
export class ChildrenRetry extends TemporaryError {
  /** Always `"ChildrenRetry"`. */
  override name = "ChildrenRetry";
}

/** What `kopf.register`/`kopf.execute` see while a parent handler runs. */
export interface SubhandlerScope {
  /** The parent's id. */
  parentId: string;
  /** Sub-handlers registered so far in this run of the parent. */
  registered: BaseHandler[];
  /** The parent handler (sub-handlers inherit its resource and filters). */
  parent: BaseHandler;
  /** Runs sub-handlers now (for `kopf.execute`), returning when they are all done. */
  execute: (handlers: BaseHandler[]) => Promise<void>;
}

/** The async context of running handlers (sub-handler registration, current object). */
export const handlerScope: AsyncLocalStorage<SubhandlerScope> = new AsyncLocalStorage<
  SubhandlerScope
>();

/**
 * Where runs of handlers are recorded (the operator's metrics); without one, nothing is recorded.
 *
 * @example
 * ```ts
 * import type { HandlerMetrics } from "./execution.ts";
 * const runs: string[] = [];
 * const metrics: HandlerMetrics = { handlerRun: (id, kind) => void runs.push(`${kind}/${id}`) };
 * metrics.handlerRun("createFn", "changing", 0.1, false);
 * ```
 */
export interface HandlerMetrics {
  /**
   * One run of a handler has ended.
   *
   * @param handler The handler's id.
   * @param kind `changing`, `event`, `activity`, `daemon`, `timer`, …
   * @param seconds How long it ran.
   * @param failed Whether it failed (temporarily or permanently).
   */
  handlerRun(handler: string, kind: string, seconds: number, failed: boolean): void;
}

/** Everything needed to run handlers of one cycle. */
export interface RunRequest<H extends BaseHandler> {
  /** The handlers of the cycle, in order. */
  handlers: H[];
  /** Their progress state (updated in place). */
  state: State;
  /** The policy choosing which ready handlers run now. */
  lifecycle: Lifecycle;
  /** Builds a handler's context argument. */
  context: (handler: H, retry: number, started: Date, runtime: number) => AnyObject;
  /** The logger of the object or operator. */
  logger: OperatorLogger;
  /** Receives each successful handler's non-empty result. */
  onResult?: (handler: H, result: unknown) => void;
  /** The current time (injectable for tests). */
  now?: () => Date;
  /** How log lines name the handlers: "Handler" (default) or "Activity". */
  noun?: string;
  /** Records each handler's run (metrics); absent, nothing is recorded. */
  metrics?: HandlerMetrics | undefined;
}

/**
 * Runs the ready handlers of one cycle once, recording their outcomes in the state.
 *
 * @param request Handlers, state, lifecycle, context factory, logger.
 * @returns The outcomes of the handlers that ran, by id.
 */
export async function runHandlersOnce<H extends BaseHandler>(
  request: RunRequest<H>,
): Promise<Map<string, Outcome>> {
  const now = request.now ?? (() => new Date());
  const t0 = now();
  const ready = request.handlers.filter((h) => request.state.ensure(h.id, t0).awakened(t0));
  const outcomes = new Map<string, Outcome>();
  for (const handler of request.lifecycle(ready, request.state)) {
    const began = request.metrics ? performance.now() : 0;
    const outcome = await runHandler(handler, request, now);
    if (request.metrics) {
      const kind = (handler as { kind?: string }).kind ?? "handler";
      const seconds = (performance.now() - began) / 1000;
      request.metrics.handlerRun(handler.id, kind, seconds, outcome.error !== undefined);
    }
    request.state.get(handler.id)!.apply(outcome, now());
    outcomes.set(handler.id, outcome);
  }
  return outcomes;
}

async function runHandler<H extends BaseHandler>(
  handler: H,
  request: RunRequest<H>,
  now: () => Date,
): Promise<Outcome> {
  const { logger } = request;
  const noun = request.noun ?? "Handler";
  const hs = request.state.ensure(handler.id, now());
  const runtime = hs.runtime(now());
  const id = handler.id;
  if (handler.timeout !== undefined && runtime > handler.timeout) {
    const error = new HandlerTimeoutError(
      `${noun} '${id}' has timed out after ${formatSeconds(runtime)}.`,
    );
    logger.error(`${noun} '${id}' failed permanently: ${error.message}`);
    return { final: true, error };
  }
  if (handler.retries !== undefined && hs.retries >= handler.retries) {
    const error = new HandlerRetriesError(
      `${noun} '${id}' has exceeded ${handler.retries} retries.`,
    );
    logger.error(`${noun} '${id}' failed permanently: ${error.message}`);
    return { final: true, error };
  }
  // Ids of children run by kopf.execute(): remembered in the parent's record (subrefs),
  // so that their own records are found again in the next cycle.
  const executed: string[] = [];
  const scope: SubhandlerScope = {
    parentId: id,
    registered: [],
    parent: handler,
    execute: async (children) => {
      for (const c of children) if (!executed.includes(c.id)) executed.push(c.id);
      const done = await runChildren(children, request, id, now);
      if (!done.finished) {
        throw new ChildrenRetry("sub-handlers are not finished yet", { delay: done.delay });
      }
      if (done.failed) {
        throw new ChildrenFailedError(`sub-handlers of '${id}' failed: ${done.failed}`);
      }
    },
  };
  let result: unknown;
  let context: AnyObject | undefined;
  try {
    context = request.context(handler, hs.retries, hs.started, runtime);
    const args = context;
    result = await handlerScope.run(scope, () => handler.fn(args));
    if (scope.registered.length) {
      const done = await runChildren(scope.registered, request, id, now);
      const subrefs = [...executed, ...scope.registered.map((h) => h.id)];
      if (!done.finished) return { final: false, delay: done.delay, subrefs };
      if (done.failed) {
        const error = new ChildrenFailedError(`sub-handlers failed: ${done.failed}`);
        logger.error(`${noun} '${id}' failed permanently: ${error.message}`);
        return { final: true, error, subrefs };
      }
    }
  } catch (e) {
    // Without the handler's own `backoff`: the operator's settings.execution.defaultBackoff.
    const backoff = handler.backoff ?? context?.settings?.execution?.defaultBackoff ??
      DEFAULT_BACKOFF;
    const outcome = failure(handler, e, logger, noun, backoff);
    return executed.length ? { ...outcome, subrefs: executed } : outcome;
  }
  logger.info(`${noun} '${id}' succeeded.`);
  if (result !== undefined && result !== null) request.onResult?.(handler, result);
  // Registered children too: their records (kept while other handlers are unfinished) are found
  // through the parent's subrefs, and purged with it.
  const subrefs = [...executed, ...scope.registered.map((h) => h.id)];
  return subrefs.length ? { final: true, result, subrefs } : { final: true, result };
}

function failure(
  handler: BaseHandler,
  e: unknown,
  logger: OperatorLogger,
  noun: string,
  backoff: number,
): Outcome {
  const id = handler.id;
  if (e instanceof ChildrenRetry) {
    logger.debug(`${noun} '${id}' has unfinished sub-handlers. Will retry.`);
    return { final: false, delay: e.delay };
  }
  if (e instanceof TemporaryError) {
    logger.error(`${noun} '${id}' failed temporarily: ${e.message || e.name}`);
    return { final: false, error: e, delay: e.delay };
  }
  if (e instanceof PermanentError) {
    logger.error(`${noun} '${id}' failed permanently: ${e.message || e.name}`);
    return { final: true, error: e };
  }
  const mode = handler.errors ?? "temporary";
  if (mode === "ignored") {
    logger.exception(`${noun} '${id}' failed with an exception. Will ignore.`, e);
    return { final: true };
  }
  if (mode === "permanent") {
    logger.exception(`${noun} '${id}' failed with an exception. Will stop.`, e);
    return { final: true, error: e };
  }
  logger.exception(`${noun} '${id}' failed with an exception. Will retry.`, e);
  return { final: false, error: e, delay: backoff };
}

async function runChildren<H extends BaseHandler>(
  children: BaseHandler[],
  request: RunRequest<H>,
  parentId: string,
  now: () => Date,
): Promise<{ finished: boolean; failed: string; delay: number }> {
  const ids = children.map((c) => c.id);
  const childRequest: RunRequest<BaseHandler> = {
    ...(request as unknown as RunRequest<BaseHandler>),
    handlers: children,
    lifecycle: request.lifecycle,
  };
  await runHandlersOnce(childRequest);
  const state = request.state;
  const finished = state.done(ids);
  const failed = ids.filter((i) => state.get(i)?.failure).map((i) => i.slice(parentId.length + 1))
    .join(", ");
  const delays = state.delays(ids, now());
  return { finished, failed, delay: delays.length ? Math.min(...delays) : 0 };
}

function formatSeconds(s: number): string {
  return `${Math.round(s * 1000) / 1000}s`;
}
