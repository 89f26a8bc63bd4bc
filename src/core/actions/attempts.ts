/**
 * One attempt of a handler as its context sees it (its retry, times and signal), and the
 * operator's record of the attempts in progress — the parts of the handler protocol
 * (execution.ts) that the kinds' context builders read.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { LazySignal } from "../../cogs/aio/signals.ts";
import type { OperatorLogger } from "./loggers.ts";

/** One attempt of a handler, as its context builder sees it. */
export interface Attempt {
  /** How many attempts were made before this one. */
  retry: number;
  /** When the first attempt started. */
  started: Date;
  /** Seconds since the first attempt started. */
  runtime: number;
  /** Aborts at the handler's timeout and at the operator's exit (made on first read). */
  readonly signal: AbortSignal;
}

/** The fields of a handler's context that come from its attempt. */
export interface AttemptFields {
  /** How many attempts were made before this one. */
  retry: number;
  /** When the first attempt started. */
  started: Date;
  /** Seconds since the first attempt started. */
  runtime: number;
  /** Aborts at the handler's timeout and at the operator's exit. */
  readonly signal: AbortSignal;
}

/**
 * Completes a handler's context with its attempt's fields; the signal stays lazy (a getter).
 *
 * @param fields The context's other fields (a fresh object: it is completed in place).
 * @param attempt The attempt.
 * @returns The same object, with `retry`, `started`, `runtime` and `signal`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withAttempt } from "./attempts.ts";
 * const attempt = { retry: 1, started: new Date(0), runtime: 2, signal: AbortSignal.abort() };
 * const ctx = withAttempt({ param: "x" }, attempt);
 * assert.deepEqual([ctx.retry, ctx.param, ctx.signal.aborted], [1, "x", true]);
 * ```
 */
export function withAttempt<T extends object>(fields: T, attempt: Attempt): T & AttemptFields {
  const ctx = fields as T & { retry: number; started: Date; runtime: number };
  ctx.retry = attempt.retry;
  ctx.started = attempt.started;
  ctx.runtime = attempt.runtime;
  return Object.defineProperty(ctx, "signal", {
    get: () => attempt.signal,
    enumerable: true,
    configurable: true,
  }) as T & AttemptFields;
}

/**
 * A handler attempt in progress, as the operator's exit reports what it waits for: added when
 * the attempt starts, removed when it ends.
 */
export interface RunningAttempt {
  /** E.g. `Handler 'create_fn'`. */
  readonly what: string;
  /** The logger of its object (its `[ns/name] ` prefix) or of the operator. */
  readonly logger: OperatorLogger;
  /** When it started (clock ms). */
  readonly since: number;
}

/**
 * Adds an attempt to the operator's attempts in progress.
 *
 * @param running The operator's attempts in progress.
 * @param noun How log lines name the handler, e.g. `Handler`.
 * @param id The handler's id.
 * @param logger The logger of its object or of the operator.
 * @param clock The operator's clock.
 * @returns The attempt (its `what` is e.g. `Handler 'fn'`), to delete from `running` when it ends.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorLogger } from "@kopf/kopf";
 * import { type RunningAttempt, track } from "./attempts.ts";
 * const running = new Set<RunningAttempt>();
 * const clock = { now: () => 5 } as Parameters<typeof track>[4];
 * const attempt = track(running, "Handler", "fn", new OperatorLogger(() => {}), clock);
 * assert.deepEqual([running.has(attempt), attempt.what, attempt.since], [true, "Handler 'fn'", 5]);
 * ```
 */
export function track(
  running: Set<RunningAttempt>,
  noun: string,
  id: string,
  logger: OperatorLogger,
  clock: Clock,
): RunningAttempt {
  const attempt = new TrackedAttempt(noun, id, logger, clock.now());
  running.add(attempt);
  return attempt;
}

/** An attempt in progress: its `what` is spelt only when the exit's report reads it. */
class TrackedAttempt implements RunningAttempt {
  readonly #noun: string;
  readonly #id: string;
  readonly logger: OperatorLogger;
  readonly since: number;

  constructor(noun: string, id: string, logger: OperatorLogger, since: number) {
    this.#noun = noun;
    this.#id = id;
    this.logger = logger;
    this.since = since;
  }

  get what(): string {
    return `${this.#noun} '${this.#id}'`;
  }
}

/**
 * One attempt as its context builder sees it: the retry, its times, and the signal, made on
 * first read.
 */
export class AttemptInfo implements Attempt {
  readonly retry: number;
  readonly started: Date;
  readonly runtime: number;
  readonly #signals: LazySignal;

  constructor(retry: number, started: Date, runtime: number, signals: LazySignal) {
    this.retry = retry;
    this.started = started;
    this.runtime = runtime;
    this.#signals = signals;
  }

  get signal(): AbortSignal {
    return this.#signals.signal;
  }
}
