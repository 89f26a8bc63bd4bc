/**
 * Throttling of unexpected errors, with the processor: a cycle that fails with an error that no
 * handler outcome explains (a bug, an API outage) is retried after a delay, one per consecutive
 * failure from `errorDelays` (the last repeats); a success starts the sequence afresh. As Kopf's
 * `throttled()` in its processing, this wraps the processing of one object's event; the queue
 * (queueing.ts) only waits for the delay it returns — batching the events that come meanwhile,
 * so that only the latest is processed after the pause.
 *
 * @module
 */

import type { CycleResult, ObjectMemory, RawEvent } from "./processing.ts";

/** Processes one object's latest event; the queue owns the object's memory. */
export type Processor = (
  event: RawEvent,
  memory: ObjectMemory,
  signal: AbortSignal,
) => Promise<CycleResult>;

/** Receives unexpected errors of a cycle, the event, and the throttling delay. */
export type ErrorCallback = (error: unknown, event: RawEvent, delay: number | undefined) => void;

/**
 * The error delays of one object: engaged by a failure, released by a success.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Throttle } from "./throttling.ts";
 * const throttle = new Throttle([1, 2]);
 * assert.deepEqual([throttle.failed(), throttle.failed(), throttle.failed()], [1, 2, 2]);
 * throttle.succeeded();
 * assert.deepEqual([throttle.engaged, throttle.failed()], [false, 1]);
 * ```
 */
export class Throttle {
  readonly #delays: Iterable<number>;
  #sequence: Iterator<number> | undefined;
  #delay: number | undefined;

  /** @param delays Seconds after each consecutive failure; the last repeats. */
  constructor(delays: Iterable<number>) {
    this.#delays = delays;
  }

  /** The delay after the latest failure (undefined after a success, or for no delays). */
  get delay(): number | undefined {
    return this.#delay;
  }

  /** Whether the object failed last (and has not succeeded since). */
  get engaged(): boolean {
    return this.#sequence !== undefined;
  }

  /**
   * A failure: the next delay of the sequence (the last one again when it is exhausted).
   *
   * @returns Seconds to wait before trying again; undefined for an empty sequence.
   */
  failed(): number | undefined {
    this.#sequence ??= this.#delays[Symbol.iterator]();
    const next = this.#sequence.next();
    if (!next.done) this.#delay = next.value;
    return this.#delay;
  }

  /** A success: the next failure starts the sequence afresh. */
  succeeded(): void {
    this.#sequence = this.#delay = undefined;
  }
}

/**
 * The processor with its errors throttled: one cycle of an object gives the processor's result,
 * or — when it throws — undefined, the error reported with the delay to wait before the next
 * try (the object's {@link Throttle} says which).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Throttle, ThrottledProcessor } from "./throttling.ts";
 * const delays: Array<number | undefined> = [];
 * const cycles = new ThrottledProcessor(() => Promise.reject(new Error("boom")),
 *   new AbortController().signal, (_e, _event, delay) => delays.push(delay));
 * const throttle = new Throttle([5]);
 * const memory = {} as Parameters<ThrottledProcessor["run"]>[1];
 * const result = await cycles.run({ type: "ADDED", object: { metadata: { uid: "1" } } }, memory, throttle);
 * assert.deepEqual([result, delays, throttle.engaged], [undefined, [5], true]);
 * ```
 */
export class ThrottledProcessor {
  readonly #processor: Processor;
  readonly #signal: AbortSignal;
  readonly #onError: ErrorCallback | undefined;

  /**
   * @param processor Processes an object's event.
   * @param signal Aborts the cycles' API calls (the queues close); a cycle that fails once it is
   *   aborted is not reported.
   * @param onError Receives unexpected errors, the event and the delay.
   */
  constructor(processor: Processor, signal: AbortSignal, onError?: ErrorCallback | undefined) {
    this.#processor = processor;
    this.#signal = signal;
    this.#onError = onError;
  }

  /**
   * One cycle of an object, throttled.
   *
   * @param event The object's event.
   * @param memory The object's memory.
   * @param throttle The object's throttle: released by a success, engaged by a failure.
   * @returns The cycle's result; undefined when it failed (the delay is `throttle.delay`).
   */
  run(
    event: RawEvent,
    memory: ObjectMemory,
    throttle: Throttle,
  ): Promise<CycleResult | undefined> {
    return this.cycle(event, memory).then(
      (result) => {
        throttle.succeeded();
        return result;
      },
      (e) => this.failed(e, event, throttle),
    );
  }

  /**
   * The cycle itself, unthrottled: a caller that awaits it in a frame of its own (the queue's
   * worker) settles it there — {@link Throttle.succeeded} on success, {@link
   * ThrottledProcessor.failed} on failure — with no callbacks made per cycle.
   *
   * @param event The object's event.
   * @param memory The object's memory.
   * @returns The cycle's promise (a processor that throws gives a rejected one).
   */
  cycle(event: RawEvent, memory: ObjectMemory): Promise<CycleResult> {
    try {
      return Promise.resolve(this.#processor(event, memory, this.#signal));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * A failed cycle: the throttle engages and the error is reported with its delay — unless the
   * queues closed and their grace ran out (the cycle's API calls were aborted on purpose, the
   * exit: not an unexpected error to report with its stack).
   *
   * @param error What the cycle threw.
   * @param event The object's event.
   * @param throttle The object's throttle.
   * @returns Undefined: no result (the delay is `throttle.delay`).
   */
  failed(error: unknown, event: RawEvent, throttle: Throttle): undefined {
    if (this.#signal.aborted) return undefined;
    this.#onError?.(error, event, throttle.failed());
    return undefined;
  }
}
