/**
 * A sleep that an `AbortSignal` cuts short, on the operator's clock: the
 * building block of daemons, timers and backoffs, all of which must stop
 * promptly on exit — and move with `FakeClock.advance()` in a test that runs
 * the operator on a fake clock.
 *
 * @module
 */

import { currentClock } from "./clock_scope.ts";
import { iterationBoundary, TRACING } from "../tracing/tracing.ts";

/**
 * Sleeps for `seconds`, or until `signal` aborts, whichever comes first.
 * Never rejects: a stopped sleep simply returns early, so a daemon's loop
 * `while (!signal.aborted) await sleep(10, signal)` ends cleanly.
 *
 * The time is the running operator's clock (`clock` of `kopf.operator()` and of `KopfRunner`;
 * also every handler context's `clock`): in an operator run on a `FakeClock`, the sleep ends
 * when the test advances that clock, not on the wall clock. Outside of an operator, it is the
 * real clock.
 *
 * @param seconds How long to sleep; zero or negative returns at once.
 * @param signal Cuts the sleep short when it aborts.
 * @returns `true` if the full time passed, `false` if the signal cut it short.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sleep } from "@kopf/kopf";
 * const slept = await sleep(0.01);
 * assert.deepEqual(slept, true);
 * const stop = new AbortController();
 * stop.abort();
 * assert.deepEqual(await sleep(60, stop.signal), false);
 * ```
 */
export function sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
  // With tracing on, a daemon's sleep ends its iteration's span; waking starts the next one.
  const next = TRACING ? iterationBoundary() : undefined;
  if (!next) return currentClock().sleep(seconds, signal);
  return currentClock().sleep(seconds, signal).then((slept) => (next(), slept));
}
