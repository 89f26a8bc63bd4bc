/**
 * Time as a value that can be passed around: every part of the operator that
 * waits — per-object queues and their batching windows, retry backoffs, the
 * daemons' and timers' schedules, probe caches — asks a {@link Clock} for the
 * time and for its sleeps instead of calling `Date.now()`, `performance.now()`
 * and `setTimeout` directly. The real clock is the default; tests pass a
 * {@link FakeClock} (./fake_clock.ts) and move time by hand, so that timing
 * is asserted exactly, with no server and no wall-clock windows.
 *
 * @module
 */

/** A cancellable timer of a {@link Clock}: calling it cancels the timer (idempotent). */
export type CancelTimer = () => void;

/** Options of {@link Clock.timer}. */
export interface TimerOptions {
  /** The timer alone does not keep the process alive (`Deno.unrefTimer`). */
  unref?: boolean;
}

/**
 * The source of time of an operator: monotonic time for durations and
 * schedules, wall time for what is stored (timestamps), and timers.
 *
 * @example
 * ```ts
 * import { type Clock, realClock } from "../../../mod.ts";
 * async function twice(clock: Clock): Promise<number> {
 *   const t0 = clock.now();
 *   await clock.sleep(0.01);
 *   return clock.now() - t0;
 * }
 * console.log(await twice(realClock) >= 9); // true
 * ```
 */
export interface Clock {
  /** Monotonic milliseconds since an arbitrary origin (`performance.now()` on the real clock). */
  now(): number;
  /** The wall time (`new Date()` on the real clock). */
  date(): Date;
  /**
   * Calls `fn` after `ms` milliseconds (at once for zero or less).
   *
   * @param ms The delay in milliseconds.
   * @param fn What to call.
   * @param options `unref`: the timer alone does not keep the process alive.
   * @returns A function that cancels the timer.
   */
  timer(ms: number, fn: () => void, options?: TimerOptions): CancelTimer;
  /**
   * Sleeps for `seconds`, or until `signal` aborts. Never rejects.
   *
   * @param seconds How long; zero or negative returns at once.
   * @param signal Cuts the sleep short.
   * @returns `true` if the full time passed, `false` if the signal cut it short.
   */
  sleep(seconds: number, signal?: AbortSignal): Promise<boolean>;
}

/**
 * Sleeps on a clock's timers: the one implementation of {@link Clock.sleep} for every clock.
 *
 * @param clock The clock whose timers to use.
 * @param seconds How long to sleep.
 * @param signal Cuts the sleep short.
 * @returns `true` if the full time passed, `false` if the signal cut it short.
 *
 * @example
 * ```ts
 * import { realClock } from "../../../mod.ts";
 * import { sleepOn } from "./clock.ts";
 * console.log(await sleepOn(realClock, 0.001)); // true
 * ```
 */
export function sleepOn(clock: Clock, seconds: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (!(seconds > 0)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    const cancel = clock.timer(seconds * 1000, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The longest delay `setTimeout` takes (about 24.8 days); longer timers re-arm. */
const MAX_TIMEOUT = 2 ** 31 - 1;

class RealClock implements Clock {
  now(): number {
    return performance.now();
  }
  date(): Date {
    return new Date();
  }
  timer(ms: number, fn: () => void, options?: TimerOptions): CancelTimer {
    const due = performance.now() + Math.max(0, ms);
    // Never early: `setTimeout` counts whole milliseconds on a coarser clock than
    // `performance.now()`, so a timer may fire a fraction before its due time; it re-arms then.
    // Never synchronous either, even for zero: callers hold the cancel function first.
    const fire = () => {
      const left = due - performance.now();
      if (left > 0) return arm(left);
      handle = undefined;
      fn();
    };
    const arm = (delay: number) => {
      handle = setTimeout(fire, Math.min(delay, MAX_TIMEOUT));
      if (options?.unref) Deno.unrefTimer(handle);
    };
    let handle: ReturnType<typeof setTimeout> | undefined;
    arm(Math.max(0, ms));
    return () => {
      if (handle !== undefined) clearTimeout(handle);
      handle = undefined;
    };
  }
  sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
    return sleepOn(this, seconds, signal);
  }
}

/**
 * The real clock: `performance.now()`, `new Date()` and `setTimeout`.
 *
 * @example
 * ```ts
 * import { realClock } from "../../../mod.ts";
 * const cancel = realClock.timer(1000, () => console.log("never"));
 * cancel();
 * console.log(realClock.date() instanceof Date); // true
 * ```
 */
export const realClock: Clock = new RealClock();
