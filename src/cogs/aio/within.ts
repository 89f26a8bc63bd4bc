/**
 * Waiting for a task up to a time limit on a {@link Clock}, without
 * cancelling it: the caller decides what to do with a task that overruns
 * (e.g. the operator's exit under `process.ultimateExitingTimeout`, which
 * leaves what still runs and says so).
 *
 * @module
 */

import type { Clock } from "./clock.ts";

/**
 * Whether a task ends (or fails) within the seconds on the clock; null seconds: no limit.
 *
 * @param task The task (its failure counts as its end).
 * @param seconds The limit, or null for none.
 * @param clock The clock of the limit.
 * @returns True if it ended in time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { within } from "./within.ts";
 * const clock = new FakeClock();
 * const ended = within(new Promise(() => {}), 5, clock);
 * await clock.advance(5);
 * assert.deepEqual(await ended, false);
 * assert.deepEqual(await within(Promise.resolve(), null, clock), true);
 * ```
 */
export function within(
  task: Promise<unknown>,
  seconds: number | null,
  clock: Clock,
): Promise<boolean> {
  const ended = task.then(() => true, () => true);
  if (seconds === null) return ended;
  return new Promise((resolve) => {
    const cancel = clock.timer(seconds * 1000, () => resolve(false));
    void ended.then(() => {
      cancel();
      resolve(true);
    });
  });
}
