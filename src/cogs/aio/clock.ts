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
 * import assert from "node:assert/strict";
 * import { type Clock, realClock } from "@kopf/kopf";
 * async function twice(clock: Clock): Promise<number> {
 *   const t0 = clock.now();
 *   await clock.sleep(0.01);
 *   return clock.now() - t0;
 * }
 * assert.deepEqual(await twice(realClock) >= 9, true);
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
 * import assert from "node:assert/strict";
 * import { realClock } from "@kopf/kopf";
 * import { sleepOn } from "./clock.ts";
 * assert.deepEqual(await sleepOn(realClock, 0.001), true);
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

/**
 * Timer lists of this duration and longer keep their `setTimeout`, unreferenced, when they empty
 * (see {@link TimerList}): one wasted wake-up per duration at most, against a `setTimeout` and a
 * `clearTimeout` per timer when one is pending at a time.
 */
const LINGER_MS = 1000;

/** What a {@link realTimerOf} timer calls when it is due. */
export interface TimerTarget {
  /** The timer is due. */
  onTimer(): void;
}

/**
 * A pending timer of the real clock for a {@link TimerTarget} ({@link realTimerOf}): the entry of
 * its list itself.
 */
export interface TargetTimer {
  /** When it is due (`performance.now()` milliseconds). */
  readonly due: number;
  /** Cancels the timer (idempotent; nothing once it fired). */
  cancel(): void;
}

/** One pending timer of the real clock, in the list of its duration. */
class Pending implements TargetTimer {
  due: number;
  fn: (() => void) | TimerTarget | undefined;
  prev: Pending | undefined;
  next: Pending | undefined = undefined;
  list: TimerList;

  constructor(list: TimerList, fn: (() => void) | TimerTarget) {
    this.due = performance.now() + list.ms;
    this.fn = fn;
    this.list = list;
    this.prev = list.tail;
  }

  cancel(): void {
    this.list.remove(this);
  }
}

/**
 * The pending timers of one duration, in the order they are due (the same delay added later is
 * due later), with one `setTimeout` for the earliest: adding a timer to a busy list costs an
 * object and no `setTimeout`; cancelling one unlinks it. When it fires early for a cancelled
 * head, it re-arms for the current one. When the list empties, a short one's timer is cleared;
 * a long one's (at least {@link LINGER_MS}, e.g. the HTTP client's request timeouts) lingers
 * unreferenced until it fires — it holds no process alive — so that a trickle of requests, each
 * alone in its list, costs no `setTimeout` and `clearTimeout` per request: the next timer added
 * references it again (and it re-arms when it fires early for it).
 */
class TimerList {
  head: Pending | undefined;
  tail: Pending | undefined;
  handle: ReturnType<typeof setTimeout> | undefined;
  /** Emptied with its timer kept, unreferenced (a long list's, see {@link LINGER_MS}). */
  lingering = false;

  constructor(readonly ms: number, readonly lists: Map<number, TimerList>) {}

  add(fn: (() => void) | TimerTarget): Pending {
    const entry = new Pending(this, fn);
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    if (this.handle === undefined) this.#arm(this.ms);
    else if (this.lingering) {
      // Due no later than this entry (armed for an earlier one): it re-arms when it fires.
      Deno.refTimer(this.handle);
      this.lingering = false;
    }
    return entry;
  }

  remove(entry: Pending): void {
    if (entry.fn === undefined) return; // fired or cancelled already
    entry.fn = undefined;
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
    if (this.head !== undefined) return;
    if (this.ms >= LINGER_MS && this.handle !== undefined) {
      Deno.unrefTimer(this.handle);
      this.lingering = true;
    } else this.#drop();
  }

  #drop(): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
    this.lists.delete(this.ms);
  }

  #arm(delay: number): void {
    this.handle = setTimeout(this.#fire, Math.min(Math.max(0, delay), MAX_TIMEOUT));
  }

  // Never early: `setTimeout` counts whole milliseconds on a coarser clock than
  // `performance.now()`, so it may fire a fraction before the due time; it re-arms then.
  #fire = (): void => {
    this.handle = undefined;
    if (this.lingering) {
      // Empty since it lingered: it goes now.
      this.lingering = false;
      this.#drop();
      return;
    }
    const now = performance.now();
    const due: Array<(() => void) | TimerTarget> = [];
    while (this.head && this.head.due <= now) {
      const entry = this.head;
      due.push(entry.fn!);
      this.remove(entry);
    }
    // Emptied, the list was dropped by the last remove(); otherwise its timer re-arms.
    if (this.head) this.#arm(this.head.due - now);
    for (const fn of due) {
      try {
        if (typeof fn === "function") fn();
        else fn.onTimer();
      } catch (error) {
        // As a throwing `setTimeout` callback: uncaught, and the other timers still fire.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };
}

class RealClock implements Clock {
  /** Pending timers by their duration (see {@link TimerList}). */
  readonly #lists = new Map<number, TimerList>();

  now(): number {
    return performance.now();
  }
  date(): Date {
    return new Date();
  }
  timer(ms: number, fn: () => void, options?: TimerOptions): CancelTimer {
    ms = Math.max(0, ms);
    if (!options?.unref) {
      const entry = this.listOf(ms).add(fn);
      return () => entry.list.remove(entry);
    }
    // Unreferenced timers (rare) keep a `setTimeout` of their own.
    const due = performance.now() + ms;
    // Never synchronous either, even for zero: callers hold the cancel function first.
    const fire = () => {
      const left = due - performance.now();
      if (left > 0) return arm(left);
      handle = undefined;
      fn();
    };
    const arm = (delay: number) => {
      handle = setTimeout(fire, Math.min(delay, MAX_TIMEOUT));
      Deno.unrefTimer(handle);
    };
    let handle: ReturnType<typeof setTimeout> | undefined;
    arm(ms);
    return () => {
      if (handle !== undefined) clearTimeout(handle);
      handle = undefined;
    };
  }
  sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
    return sleepOn(this, seconds, signal);
  }

  /** The list of the timers of `ms` milliseconds (made when needed). */
  listOf(ms: number): TimerList {
    let list = this.#lists.get(ms);
    if (!list) this.#lists.set(ms, list = new TimerList(ms, this.#lists));
    return list;
  }
}

const REAL_CLOCK = new RealClock();

/**
 * A timer of {@link realClock} that calls an object instead of a function, for the many
 * short-lived timers of a client (e.g. one per HTTP request).
 * Referenced, as {@link Clock.timer} without `unref`; due as late as it would be.
 *
 * @param ms The delay in milliseconds.
 * @param target What to call (`onTimer()`) when due.
 * @returns The timer: when it is due, and `cancel()`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { realTimerOf } from "./clock.ts";
 * const timer = realTimerOf(1000, { onTimer: () => console.log("never") });
 * timer.cancel();
 * assert.deepEqual(timer.due > performance.now(), true);
 * ```
 */
export function realTimerOf(ms: number, target: TimerTarget): TargetTimer {
  return REAL_CLOCK.listOf(Math.max(0, ms)).add(target);
}

/**
 * The real clock: `performance.now()`, `new Date()` and `setTimeout`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { realClock } from "@kopf/kopf";
 * const cancel = realClock.timer(1000, () => console.log("never"));
 * cancel();
 * assert.deepEqual(realClock.date() instanceof Date, true);
 * ```
 */
export const realClock: Clock = REAL_CLOCK;
