/**
 * The protocol's table: what the end of an attempt means. Before an attempt,
 * exhausted `timeout`/`retries` fail the handler for good; after it, the
 * error's type and the errors mode decide — `TemporaryError` retries after
 * its delay, `PermanentError` fails for good, any other error retries after
 * the backoff, stops, or is ignored. Each outcome is logged with Kopf's line
 * ("Handler 'x' failed temporarily: …"), once, here.
 *
 * Apart from the executor (execution.ts) so that the table reads as one
 * piece, and the executor as the sequence of an attempt.
 *
 * @module
 */

import type { BaseHandler, ErrorsMode } from "./invocation.ts";
import {
  ChildrenRetry,
  HandlerRetriesError,
  HandlerTimeoutError,
  PermanentError,
  TemporaryError,
} from "./errors.ts";
import type { OperatorLogger } from "./loggers.ts";
import type { Outcome } from "./progression.ts";

/**
 * The outcome when `timeout` or `retries` are exhausted before an attempt.
 *
 * @param handler The handler (its `timeout` and `retries`).
 * @param retries How many attempts were made so far.
 * @param runtime Seconds since the first attempt.
 * @param logger Where the failure is logged.
 * @param noun How the handler is named in the line ("Handler", "Daemon", …).
 * @returns A permanent failure, or undefined when an attempt may be made.
 */
export function exhausted(
  handler: BaseHandler,
  retries: number,
  runtime: number,
  logger: OperatorLogger,
  noun: string,
): Outcome | undefined {
  const id = handler.id;
  if (handler.timeout !== undefined && runtime > handler.timeout) {
    return permanently(
      logger,
      noun,
      id,
      new HandlerTimeoutError(`${noun} '${id}' has timed out after ${seconds(runtime)}.`),
    );
  }
  if (handler.retries !== undefined && retries >= handler.retries) {
    return permanently(
      logger,
      noun,
      id,
      new HandlerRetriesError(`${noun} '${id}' has exceeded ${handler.retries} retries.`),
    );
  }
  return undefined;
}

/**
 * A permanent failure, logged as "… failed permanently: …".
 *
 * @param logger Where it is logged.
 * @param noun How the handler is named.
 * @param id The handler's id.
 * @param error The error.
 * @returns The final outcome with the error.
 */
export function permanently(
  logger: OperatorLogger,
  noun: string,
  id: string,
  error: Error,
): Outcome {
  logger.error(`${noun} '${id}' failed permanently: ${error.message}`);
  return { final: true, error };
}

/**
 * The outcome of a failed attempt, by error type and errors mode (the protocol's one table).
 *
 * @param handler The handler.
 * @param e What the attempt threw.
 * @param logger Where the outcome is logged.
 * @param noun How the handler is named.
 * @param mode The errors mode (the handler's, or its kind's default).
 * @param backoff Seconds before a retry after an arbitrary error.
 * @returns The outcome.
 */
export function failure(
  handler: BaseHandler,
  e: unknown,
  logger: OperatorLogger,
  noun: string,
  mode: ErrorsMode,
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

/**
 * Seconds as log lines show them (`1s`, `0.25s`).
 *
 * @param s Seconds.
 * @returns The text.
 */
export function seconds(s: number): string {
  return `${Math.round(s * 1000) / 1000}s`;
}
