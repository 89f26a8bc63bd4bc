/**
 * One armed timer for many sleeps: at 10,000 objects, each with a timer and a
 * daemon, a platform timer (≈1.3 KB) and an abort listener (≈1 KB) per
 * sleeping object add up; a heap of small entries with one armed timer for
 * the earliest does not. Cancelled entries are dropped lazily when their time
 * comes. Works on any {@link Clock}, so schedules are tested on a fake one.
 *
 * @module
 */

import type { CancelTimer, Clock } from "./clock.ts";
import { realClock } from "./clock.ts";

/** A scheduled call: its time, and the call (undefined once fired or cancelled). */
export interface Entry {
  /** When, in the clock's milliseconds. */
  when: number;
  /** What to call; undefined once fired or cancelled. */
  fire: (() => void) | undefined;
}

/**
 * Many sleeps on one armed timer of a {@link Clock}.
 *
 * @example
 * ```ts
 * import { FakeClock } from "../../../testing.ts";
 * import { Scheduler } from "./scheduler.ts";
 * const clock = new FakeClock();
 * const scheduler = new Scheduler(clock);
 * const fired: string[] = [];
 * scheduler.at(2000, () => fired.push("b"));
 * scheduler.at(1000, () => fired.push("a"));
 * await clock.advance(2);
 * console.log(fired, clock.pending); // [ "a", "b" ] 0
 * ```
 */
export class Scheduler {
  readonly #clock: Clock;
  #heap: Entry[] = [];
  #cancel: CancelTimer | undefined;
  #armedFor = Infinity;
  /** Entries not cancelled nor fired: when none is left, no timeout stays armed. */
  #live = 0;

  /** @param clock The clock whose timer is armed for the earliest entry. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** @returns The clock's time now, in milliseconds. */
  now(): number {
    return this.#clock.now();
  }

  /**
   * Calls `fire` at `when` (a time of the clock's `now()`, in milliseconds).
   *
   * @param when When.
   * @param fire What to call.
   * @returns The entry, for `cancel`.
   */
  at(when: number, fire: () => void): Entry {
    const entry = { when, fire: fire as (() => void) | undefined };
    const heap = this.#heap;
    this.#live++;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.when <= when) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
    if (when < this.#armedFor) this.#arm();
    return entry;
  }

  /**
   * Cancels an entry (nothing happens if it has fired or was cancelled).
   *
   * @param entry The entry from {@link Scheduler.at}.
   */
  cancel(entry: Entry): void {
    if (!entry.fire) return;
    entry.fire = undefined;
    if (--this.#live === 0) {
      this.#heap = [];
      this.#arm();
    }
  }

  #pop(): Entry {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      let i = 0;
      while (true) {
        const l = 2 * i + 1;
        if (l >= heap.length) break;
        const r = l + 1;
        const c = r < heap.length && heap[r]!.when < heap[l]!.when ? r : l;
        if (heap[c]!.when >= last.when) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = last;
    }
    return top;
  }

  #arm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#armedFor = Infinity;
    // Drop the cancelled entries at the top: they must not keep the process alive.
    while (this.#heap.length && !this.#heap[0]!.fire) this.#pop();
    if (!this.#heap.length) return;
    const next = this.#heap[0]!.when;
    this.#armedFor = next;
    this.#cancel = this.#clock.timer(Math.max(0, next - this.#clock.now()), () => this.#run());
  }

  #run(): void {
    this.#cancel = undefined;
    this.#armedFor = Infinity;
    const now = this.#clock.now();
    while (this.#heap.length && this.#heap[0]!.when <= now + 0.5) {
      const entry = this.#pop();
      const fire = entry.fire;
      entry.fire = undefined;
      if (fire) {
        this.#live--;
        fire();
      }
    }
    this.#arm();
  }
}

const schedulers = new WeakMap<Clock, Scheduler>();

/**
 * The one scheduler of a clock (made on first use).
 *
 * @param clock The clock (default: the real clock).
 * @returns Its scheduler.
 *
 * @example
 * ```ts
 * import { realClock } from "../../../mod.ts";
 * import { schedulerOf } from "./scheduler.ts";
 * console.log(schedulerOf(realClock) === schedulerOf(realClock)); // true
 * ```
 */
export function schedulerOf(clock: Clock = realClock): Scheduler {
  let scheduler = schedulers.get(clock);
  if (!scheduler) schedulers.set(clock, scheduler = new Scheduler(clock));
  return scheduler;
}
