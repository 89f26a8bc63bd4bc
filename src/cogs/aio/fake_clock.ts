/**
 * A clock whose time moves only when a test says so: `advance(seconds)` fires
 * the timers that fall due, in order, letting the code under test run between
 * them. Timing logic (batching windows, backoffs, timer schedules, daemon
 * cancellation) is then asserted exactly, with no wall-clock windows and no
 * sleeping test — the way kube-runtime tests its scheduler with `pause()` and
 * `advance()`.
 *
 * Between timers, `advance()` lets the event loop turn a few times (on
 * `setImmediate`: every promise chain that can run now runs, and I/O that has
 * already completed delivers its callbacks), so promise chains started by a
 * timer settle before the next one fires. Why not a zero-delay `setTimeout`:
 * Deno gives it at least a millisecond, four once nested, and more on a loaded
 * machine — a test that fires a few hundred fake timers waited seconds of real
 * time for nothing. Code that waits for real I/O is not made faster by it: a
 * fake clock is for logic that waits for time. Only `advanceUntil()`, whose
 * condition may wait on outside I/O (an API server, a subprocess), also gives
 * each step a few real timer turns.
 *
 * @module
 */

import type { CancelTimer, Clock, TimerOptions } from "./clock.ts";
import { sleepOn } from "./clock.ts";
import { setImmediate } from "node:timers";

interface Entry {
  due: number;
  seq: number;
  fn: (() => void) | undefined;
}

/**
 * A manually driven {@link Clock} for tests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * const clock = new FakeClock();
 * const woke: number[] = [];
 * void clock.sleep(2).then(() => woke.push(clock.now()));
 * await clock.advance(1);
 * assert.deepEqual(woke, []);
 * await clock.advance(1);
 * assert.deepEqual(woke, [ 2000 ]);
 * ```
 */
export class FakeClock implements Clock {
  #now = 0;
  readonly #epoch: number;
  #seq = 0;
  #timers: Entry[] = [];

  /**
   * Makes a clock at time zero, whose wall time starts at `start`.
   *
   * @param options `start`: the wall time at which the clock starts (default 2026-01-01 UTC).
   */
  constructor(options: { start?: Date } = {}) {
    this.#epoch = (options.start ?? new Date(Date.UTC(2026, 0, 1))).getTime();
  }

  /** Milliseconds since the clock was made. */
  now(): number {
    return this.#now;
  }

  /** The wall time: the start plus the time advanced. */
  date(): Date {
    return new Date(this.#epoch + this.#now);
  }

  /**
   * Calls `fn` when the clock has advanced by `ms`.
   *
   * @param ms The delay in milliseconds.
   * @param fn What to call.
   * @param _options Accepted for the interface; a fake timer never holds a process.
   * @returns A function that cancels the timer.
   */
  timer(ms: number, fn: () => void, _options?: TimerOptions): CancelTimer {
    // Due times are kept to the microsecond: delays computed from dates (60 - 0.1 = 59.9 s)
    // must not miss their moment by a float's last bit.
    const due = Math.round((this.#now + Math.max(0, ms)) * 1000) / 1000;
    const entry: Entry = { due, seq: this.#seq++, fn };
    // Kept sorted by due time, then by creation: the order real timers fire in.
    let i = this.#timers.length;
    while (i > 0) {
      const prev = this.#timers[i - 1]!;
      if (prev.due < entry.due || (prev.due === entry.due && prev.seq < entry.seq)) break;
      i--;
    }
    this.#timers.splice(i, 0, entry);
    return () => {
      entry.fn = undefined;
      const at = this.#timers.indexOf(entry);
      if (at >= 0) this.#timers.splice(at, 1);
    };
  }

  /**
   * Sleeps on the fake time.
   *
   * @param seconds How long.
   * @param signal Cuts the sleep short.
   * @returns `true` if the full time passed.
   */
  sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
    return sleepOn(this, seconds, signal);
  }

  /** How many timers wait to fire. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Milliseconds until the next timer fires, or undefined when none waits. */
  get nextIn(): number | undefined {
    const next = this.#timers[0];
    return next ? next.due - this.#now : undefined;
  }

  /**
   * Moves the time forward by `seconds`, firing every timer that falls due, in order, and
   * letting the code they wake run before the next one fires (also timers they set, if due).
   *
   * @param seconds How far; zero only settles what is ready now.
   * @returns When the time has moved and the woken code has settled.
   */
  async advance(seconds: number): Promise<void> {
    const target = this.#now + Math.max(0, seconds) * 1000;
    await settle();
    while (true) {
      const next = this.#timers[0];
      if (!next || next.due > target) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.due);
      next.fn?.();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /**
   * Advances in steps until `condition` holds (checked after each step), for `limit` seconds
   * of fake time at most. Between steps, a few turns of the real clock's timers pass (each
   * about a millisecond), so that a condition waiting on outside I/O can come true.
   *
   * @param condition What to wait for.
   * @param limit How many fake seconds at most (default 3600).
   * @param step The step in seconds (default 0.01).
   * @returns Whether the condition holds.
   */
  async advanceUntil(condition: () => boolean, limit = 3600, step = 0.01): Promise<boolean> {
    const end = this.#now + limit * 1000;
    await settle();
    while (!condition()) {
      if (this.#now >= end) return false;
      const next = this.#timers[0];
      // Jump to the next timer when it is further than a step: the result is the same.
      const jump = next && next.due > this.#now + step * 1000
        ? (next.due - this.#now) / 1000
        : step;
      await this.advance(Math.min(jump, (end - this.#now) / 1000));
      if (!condition()) await realTurns();
    }
    return true;
  }
}

/**
 * Lets every promise chain that can run now run: a few turns of the real event loop, each a
 * `setImmediate` (run after the microtasks drain and after the loop has polled I/O; not clamped
 * as a zero-delay `setTimeout` is).
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A few turns of the real clock's timers: real time for outside I/O to progress. */
async function realTurns(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setTimeout(resolve, 0));
}
