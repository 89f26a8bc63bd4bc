/**
 * Debouncing: a burst of triggers runs the action once, a quiet period after
 * the last trigger — e.g. one rescan of the cluster's resources after a burst
 * of CRD changes (a Helm install applies many at once). On a {@link Clock},
 * so the quiet period is tested on a fake one.
 *
 * @module
 */

import { type CancelTimer, type Clock, realClock } from "./clock.ts";

/**
 * Runs an action once the triggers have been quiet for a while.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { Debouncer } from "./debounce.ts";
 * const clock = new FakeClock();
 * let runs = 0;
 * const rescan = new Debouncer(0.5, () => void runs++, clock);
 * rescan.trigger();
 * await clock.advance(0.4);
 * rescan.trigger(); // the quiet period starts again
 * await clock.advance(0.4);
 * assert.deepEqual(runs, 0);
 * await clock.advance(0.1);
 * assert.deepEqual(runs, 1);
 * ```
 */
export class Debouncer {
  readonly #seconds: number;
  readonly #action: () => unknown;
  readonly #clock: Clock;
  #cancel: CancelTimer | undefined;

  /**
   * @param seconds The quiet period.
   * @param action What to run after it (its result, or rejection, is not awaited).
   * @param clock The clock (default: the real one).
   */
  constructor(seconds: number, action: () => unknown, clock: Clock = realClock) {
    this.#seconds = seconds;
    this.#action = action;
    this.#clock = clock;
  }

  /** (Re)starts the quiet period; the action runs when it ends. */
  trigger(): void {
    this.#cancel?.();
    this.#cancel = this.#clock.timer(this.#seconds * 1000, () => {
      this.#cancel = undefined;
      void this.#action();
    });
  }

  /** Cancels a pending run. */
  cancel(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }
}
