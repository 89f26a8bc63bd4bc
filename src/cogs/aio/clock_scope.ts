/**
 * The clock of the operator that the current code runs in: a running operator puts its clock
 * (`kopf.operator({ clock })`, `KopfRunner`'s `clock`) into an async scope at its start, so that
 * `kopf.sleep()` — called by a handler, a helper it calls, or a task it started, none of which
 * holds the operator — sleeps on that clock. A user's test that runs an operator on a
 * `FakeClock` then moves its daemons' and timers' sleeps with `clock.advance()`.
 *
 * Why an async scope and not an argument: `kopf.sleep(seconds, signal)` is called as it was
 * before clocks existed, deep in user code; several operators may run in one process (tests),
 * each on its own clock. The same reason, and the same mechanism, as `kopf.api()`.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { type Clock, realClock } from "./clock.ts";

/** The clock of the operator the current code runs in (set once per operator at its start). */
export const clockScope: AsyncLocalStorage<Clock> = new AsyncLocalStorage<Clock>();

/**
 * The clock of the operator the current code runs in; the real clock outside of any operator.
 *
 * @returns The clock.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { realClock } from "./clock.ts";
 * import { clockScope, currentClock } from "./clock_scope.ts";
 * import { FakeClock } from "./fake_clock.ts";
 * const clock = new FakeClock();
 * assert.deepEqual(currentClock(), realClock);
 * assert.deepEqual(clockScope.run(clock, () => currentClock()), clock);
 * ```
 */
export function currentClock(): Clock {
  return clockScope.getStore() ?? realClock;
}
