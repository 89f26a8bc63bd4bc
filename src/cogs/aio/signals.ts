/**
 * Signals and deadlines for work that may be abandoned: a lazily made
 * `AbortSignal` that follows another signal (most handlers never read their
 * signal, and a controller plus a listener per call adds up at scale), and a
 * deadline that stops waiting for a promise without pretending to stop the
 * work itself — the work is told through its signal, and whatever it does
 * later is the caller's to log or ignore.
 *
 * @module
 */

import type { Clock } from "./clock.ts";

/**
 * A signal source: a signal, or what gives one when asked (lazily): a function, or an owner of a
 * `signal` (an `AbortController`, a stop flag) whose `signal` is read only when needed.
 */
export type SignalSource =
  | AbortSignal
  | (() => AbortSignal | undefined)
  | { readonly signal: AbortSignal }
  | undefined;

/**
 * An `AbortSignal` made on first read, aborted by {@link LazySignal.abort} or when the
 * followed signal aborts; {@link LazySignal.detach} stops following it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LazySignal } from "./signals.ts";
 * const exit = new AbortController();
 * const lazy = new LazySignal(exit.signal);
 * lazy.abort("timed out");
 * assert.deepEqual([lazy.signal.aborted, lazy.signal.reason], [true, "timed out"]);
 * ```
 */
export class LazySignal {
  #outer: SignalSource;
  #controller: AbortController | undefined;
  #unlisten: (() => void) | undefined;
  #reason: unknown;
  #aborted = false;

  /** @param outer The signal to follow (or a function or owner giving it, read when first needed). */
  constructor(outer: SignalSource) {
    this.#outer = outer;
  }

  /** The signal (made now if it was not read before). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = this.#controller = new AbortController();
      const source = this.#outer;
      const outer = typeof source === "function"
        ? source()
        : source instanceof AbortSignal
        ? source
        : source?.signal;
      if (this.#aborted) controller.abort(this.#reason);
      else if (outer?.aborted) controller.abort(outer.reason);
      else if (outer) {
        const onAbort = () => controller.abort(outer.reason);
        outer.addEventListener("abort", onAbort, { once: true });
        this.#unlisten = () => outer.removeEventListener("abort", onAbort);
      }
    }
    return this.#controller.signal;
  }

  /**
   * Aborts the signal (now, or when it is first read).
   *
   * @param reason The abort reason.
   */
  abort(reason: unknown): void {
    this.#aborted = true;
    this.#reason = reason;
    this.detach();
    this.#controller?.abort(reason);
  }

  /** Stops following the outer signal (the work is over). */
  detach(): void {
    this.#unlisten?.();
    this.#unlisten = undefined;
  }
}

/**
 * Waits for a promise for `seconds` at most; then rejects with what `expire` makes (the promise
 * keeps running: `expire` is where the caller tells the work to stop and handles its later end).
 *
 * @param work The promise.
 * @param seconds How long to wait, on the clock.
 * @param clock The clock.
 * @param expire Called once when the time is up; its error is the rejection.
 * @returns The promise's value, if it settles in time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deadline } from "./signals.ts";
 * import { FakeClock } from "@kopf/kopf/testing";
 * const clock = new FakeClock();
 * const never = new Promise<void>(() => {});
 * const waiting = deadline(never, 1, clock, () => new Error("too slow")).catch((e) => e.message);
 * await clock.advance(1);
 * assert.deepEqual(await waiting, "too slow");
 * ```
 */
export function deadline<T>(
  work: PromiseLike<T>,
  seconds: number,
  clock: Clock,
  expire: () => unknown,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.timer(Math.max(0, seconds) * 1000, () => reject(expire()));
    work.then(
      (v) => (cancel(), resolve(v)),
      (e) => (cancel(), reject(e)),
    );
  });
}
