/**
 * A sleep that an `AbortSignal` cuts short: the building block of daemons,
 * timers, backoffs and reconnects, all of which must stop promptly on exit.
 *
 * @module
 */

/**
 * Sleeps for `seconds`, or until `signal` aborts, whichever comes first.
 * Never rejects: a stopped sleep simply returns early, so a daemon's loop
 * `while (!signal.aborted) await sleep(10, signal)` ends cleanly.
 *
 * @param seconds How long to sleep; zero or negative returns at once.
 * @param signal Cuts the sleep short when it aborts.
 * @returns `true` if the full time passed, `false` if the signal cut it short.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sleep } from "../../../mod.ts";
 * const slept = await sleep(0.01);
 * assert.deepEqual(slept, true);
 * ```
 */
export function sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (!(seconds > 0)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, seconds * 1000);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
