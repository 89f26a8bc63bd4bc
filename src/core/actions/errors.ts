/**
 * The errors a handler may throw to steer its own retries, and the errors the
 * framework raises for handlers that time out or run out of retries — Kopf's
 * `PermanentError`, `TemporaryError(delay)`, `HandlerTimeoutError` and
 * `HandlerRetriesError`.
 *
 * @module
 */

/**
 * A handler failed and must not be retried.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PermanentError } from "@kopf/kopf";
 * const err = new PermanentError("the spec is wrong: fix spec.size");
 * assert.deepEqual(err.name, "PermanentError");
 * ```
 */
export class PermanentError extends Error {
  /** Always `"PermanentError"`. */
  override name = "PermanentError";
}

/**
 * A handler failed and should be retried after a delay (60 s by default).
 * `delay: 0` — or `null`, Kopf's `delay=None` — retries at once (a daemon restarts instantly).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TemporaryError } from "@kopf/kopf";
 * const err = new TemporaryError("not ready yet", { delay: 10 });
 * assert.deepEqual(err.delay, 10);
 * assert.deepEqual(new TemporaryError("restart", { delay: null }).delay, 0);
 * ```
 */
export class TemporaryError extends Error {
  /** Always `"TemporaryError"`. */
  override name = "TemporaryError";
  /** Seconds to wait before the retry. */
  readonly delay: number;

  /**
   * Creates the error with its retry delay.
   *
   * @param message What is not ready.
   * @param options The delay in seconds (default 60; `null` means none) and a cause.
   * @throws {TypeError} If the delay is not a number of 0 or more (NaN, negative, a string).
   */
  constructor(message = "", options: { delay?: number | null; cause?: unknown } = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    const delay: unknown = options.delay === null ? 0 : options.delay ?? 60;
    if (typeof delay !== "number" || !(delay >= 0)) {
      throw new TypeError(
        `TemporaryError: delay must be a number of 0 or more (seconds) or null, not ${
          typeof delay === "number" ? String(delay) : JSON.stringify(delay) ?? String(delay)
        }.`,
      );
    }
    this.delay = delay;
  }
}

/**
 * A handler ran longer than its `timeout` (across retries): failed permanently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HandlerTimeoutError, PermanentError } from "@kopf/kopf";
 * assert.deepEqual(new HandlerTimeoutError("x") instanceof PermanentError, true);
 * ```
 */
export class HandlerTimeoutError extends PermanentError {
  /** Always `"HandlerTimeoutError"`. */
  override name = "HandlerTimeoutError";
}

/**
 * A handler was retried more than its `retries`: failed permanently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HandlerRetriesError } from "@kopf/kopf";
 * assert.deepEqual(new HandlerRetriesError("x").name, "HandlerRetriesError");
 * ```
 */
export class HandlerRetriesError extends PermanentError {
  /** Always `"HandlerRetriesError"`. */
  override name = "HandlerRetriesError";
}

/**
 * The whole handler child tree failed (a sub-handler failed permanently).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ChildrenFailedError } from "@kopf/kopf";
 * assert.deepEqual(new ChildrenFailedError("x").name, "ChildrenFailedError");
 * ```
 */
export class ChildrenFailedError extends PermanentError {
  /** Always `"ChildrenFailedError"`. */
  override name = "ChildrenFailedError";
}

/**
 * Sub-handlers not finished yet: the parent retries (not an error of the parent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TemporaryError } from "@kopf/kopf";
 * import { ChildrenRetry } from "./errors.ts";
 * assert.deepEqual(new ChildrenRetry("later") instanceof TemporaryError, true);
 * ```
 */
export class ChildrenRetry extends TemporaryError {
  /** Always `"ChildrenRetry"`. */
  override name = "ChildrenRetry";
}

/**
 * A handler's result cannot be stored on the object: the handler failed permanently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PermanentError } from "@kopf/kopf";
 * import { ResultError } from "./errors.ts";
 * assert.deepEqual(new ResultError("result.n is a BigInt") instanceof PermanentError, true);
 * ```
 */
export class ResultError extends PermanentError {
  /** Always `"ResultError"`. */
  override name = "ResultError";
}
