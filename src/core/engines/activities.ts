/**
 * Operator activities: startup, cleanup, login and probe handlers. Each
 * activity runs its handlers with the same error protocol as resource
 * handlers (retries, TemporaryError delays, PermanentError), but in memory:
 * the operator waits until they have all finished. A permanently failed
 * startup or login stops the operator with a clear message.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { executeHandlers, type HandlerMetrics, withAttempt } from "../actions/execution.ts";
import { currentApi } from "../actions/handler_api.ts";
import type { AnyObject } from "../actions/invocation.ts";
import type { OperatorLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import type { ActivityContext, ActivityHandler } from "../intents/handlers.ts";

/** An activity failed for good: the operator cannot go on. */
export class ActivityError extends Error {
  override name = "ActivityError";
  /** The errors by handler id. */
  readonly errors: Map<string, unknown>;

  /**
   * @param message What failed.
   * @param errors The errors by handler id.
   */
  constructor(message: string, errors: Map<string, unknown>) {
    super(message);
    this.errors = errors;
  }
}

/** The operator-wide parts an activity handler gets. */
export interface ActivityEnvironment {
  logger: OperatorLogger;
  memo: AnyObject;
  settings: ActivityContext["settings"];
  indices: AnyObject;
  /** Records the handlers' runs (metrics), if given. */
  metrics?: HandlerMetrics | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
}

/**
 * Runs the handlers of an activity until all have finished (retrying as told).
 *
 * @param activity The activity's name (for messages).
 * @param handlers Its handlers.
 * @param env Logger, memo, settings, indices.
 * @param signal Stops waiting between retries.
 * @returns The results by handler id.
 * @throws {ActivityError} When a handler failed permanently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runActivity } from "./activities.ts";
 * import { OperatorLogger } from "@kopf/kopf";
 * const results = await runActivity("probe", [{
 *   kind: "activity", activity: "probe", id: "ping", fn: () => "pong",
 *   param: undefined, errors: undefined, timeout: undefined, retries: undefined, backoff: undefined,
 * }], { logger: new OperatorLogger(() => {}), memo: {}, settings: {} as never, indices: {} });
 * assert.deepEqual(results.get("ping"), "pong");
 * ```
 */
export async function runActivity(
  activity: string,
  handlers: ActivityHandler[],
  env: ActivityEnvironment,
  signal?: AbortSignal,
): Promise<Map<string, unknown>> {
  const results = new Map<string, unknown>();
  if (!handlers.length) return results;
  const clock = env.clock ?? realClock;
  const state = new State(activity);
  const ids = handlers.map((h) => h.id);
  while (true) {
    await executeHandlers<ActivityHandler>(handlers, {
      state,
      kind: "activity",
      defaultErrors: "temporary",
      defaultBackoff: env.settings?.execution?.defaultBackoff,
      logger: env.logger,
      noun: "Activity",
      metrics: env.metrics,
      clock,
      signal,
      context: (handler, attempt): ActivityContext =>
        withAttempt({
          logger: env.logger,
          memo: env.memo,
          settings: env.settings,
          indices: env.indices,
          api: currentApi(),
          param: handler.param,
          clock,
        }, attempt),
      onResult: (handler, result) => results.set(handler.id, result),
    });
    if (state.done(ids)) break;
    if (signal?.aborted) {
      throw new ActivityError(`The ${activity} activity was interrupted.`, new Map());
    }
    const delays = state.delays(ids, clock.date());
    await clock.sleep(Math.min(...delays), signal);
  }
  const failed = ids.filter((id) => state.get(id)?.failure);
  if (failed.length) {
    const errors = new Map(failed.map((id) => [id, state.get(id)?.message]));
    throw new ActivityError(
      `One or more ${activity} handlers failed: ${
        failed.map((id) => `'${id}': ${errors.get(id)}`).join("; ")
      }`,
      errors,
    );
  }
  return results;
}
