/**
 * The stop-flag of daemons and timers (Kopf's `stopped`): an `AbortSignal`
 * made only when read, reasons in order, and waits that sleep on one shared
 * scheduler — at 10,000 daemons, a controller and a timer each would add up.
 *
 * @module
 */

import type { Clock } from "./clock.ts";
import { type Entry, schedulerOf } from "./scheduler.ts";

/**
 * The stop-flag of a daemon or timer: an `AbortSignal` plus Kopf's `stopped` interface.
 *
 * @example
 * ```ts
 * import { StopFlag } from "../../../mod.ts";
 * const stopped = new StopFlag();
 * setTimeout(() => stopped.set("operator exiting"), 10);
 * console.log(await stopped.wait(5), stopped.reason); // true "operator exiting"
 * ```
 */
export class StopFlag<Reason extends string = string> {
  /** Made on the first read of `signal` (an `AbortSignal` costs ≈0.3 KB, most flags never need one). */
  #controller: AbortController | undefined;
  readonly #reasons: Reason[] = [];
  #wakers: Array<() => void> | undefined;
  readonly #clock: Clock | undefined;

  /**
   * Makes a flag that is not set.
   *
   * @param clock The clock its waits sleep on (default: the real clock).
   */
  constructor(clock?: Clock) {
    this.#clock = clock;
  }

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
      const scheduler = schedulerOf(this.#clock);
      let entry: Entry | undefined;
      const wake = () => {
        if (entry) scheduler.cancel(entry);
        resolve(true);
      };
      (this.#wakers ??= []).push(wake);
      if (seconds !== undefined) {
        entry = scheduler.at(scheduler.now() + seconds * 1000, () => {
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
