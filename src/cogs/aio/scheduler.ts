/**
 * One armed timer for many sleepers. At 10,000 objects with a timer and a
 * daemon each, a runtime timer and an abort listener per sleeping object add
 * up; a binary heap of small entries with a single timer armed for the
 * earliest does not. The daemons' and timers' stop
 * flags ({@link StopFlag}, ./stop_flag.ts) sleep here.
 *
 * The heap works on a {@link Clock}: it reads the time with `clock.now()` and
 * arms through `clock.timer()`, so that a fake clock drives it in tests.
 * Cancelled entries stay in the heap until their time comes (a cancel is O(1));
 * when no live entry is left, the heap is dropped and no timer stays armed, so
 * an idle scheduler neither holds memory nor keeps the process alive.
 *
 * @module
 */

import { type CancelTimer, type Clock, realClock } from "./clock.ts";

/** An entry of a {@link Scheduler}: what to call, and when (`clock.now()` milliseconds). */
export interface ScheduledEntry {
  /** When it is due, in the clock's `now()` milliseconds. */
  readonly when: number;
  /** The order of scheduling: entries due at the same time fire in it. */
  readonly seq: number;
  /** What to call (a function, or an object's `onScheduled()`); cleared when it fires or is cancelled. */
  fire: (() => void) | ScheduledTarget | undefined;
}

/** What an entry may call instead of a function: an object that is its own entry, often. */
export interface ScheduledTarget {
  /** The entry is due. */
  onScheduled(): void;
}

/**
 * A heap of callbacks due at given times, with one timer of the clock armed for the earliest.
 * They fire in time order, and those due at the same time in the order they were scheduled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Scheduler } from "./scheduler.ts";
 * import { FakeClock } from "@kopf/kopf/testing";
 * const clock = new FakeClock();
 * const scheduler = new Scheduler(clock);
 * const fired: string[] = [];
 * scheduler.at(2000, () => fired.push("b"));
 * scheduler.at(1000, () => fired.push("a"));
 * const never = scheduler.at(1500, () => fired.push("cancelled"));
 * scheduler.cancel(never);
 * await clock.advance(2);
 * assert.deepEqual(fired, [ "a", "b" ]);
 * ```
 */
export class Scheduler {
  /** The clock whose time and timers the scheduler uses. */
  readonly clock: Clock;
  #heap: ScheduledEntry[] = [];
  #cancel: CancelTimer | undefined;
  #armedFor = Infinity;
  /** Entries neither cancelled nor fired: when none is left, no timer stays armed. */
  #live = 0;
  #seq = 0;
  /** The one callback of every armed timer. */
  readonly #onTimer = () => this.#run();

  /**
   * Makes an empty scheduler.
   *
   * @param clock The clock (default: the real one).
   */
  constructor(clock: Clock = realClock) {
    this.clock = clock;
  }

  /** How many entries wait to fire (cancelled ones not counted). */
  get size(): number {
    return this.#live;
  }

  /**
   * Calls `fire` at `when`.
   *
   * @param when The time, in the clock's `now()` milliseconds.
   * @param fire What to call.
   * @returns The entry, for {@link Scheduler.cancel}.
   */
  at(when: number, fire: () => void): ScheduledEntry {
    const entry: ScheduledEntry = { when, seq: this.#seq++, fire };
    this.#push(entry);
    return entry;
  }

  #push(entry: ScheduledEntry): void {
    const when = entry.when;
    const heap = this.#heap;
    this.#live++;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(entry, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
    if (when < this.#armedFor) this.#arm();
  }

  /**
   * Calls `fire` after `seconds`.
   *
   * @param seconds The delay in seconds.
   * @param fire What to call.
   * @returns The entry, for {@link Scheduler.cancel}.
   */
  after(seconds: number, fire: () => void): ScheduledEntry {
    return this.at(this.clock.now() + seconds * 1000, fire);
  }

  /**
   * Schedules an entry made by the caller (one object that is the entry and what it calls: a
   * sleeper that lives as long as it sleeps costs one object, not an entry and closures). Its
   * `seq` is set here.
   *
   * @param entry The entry: its time, and what to call.
   * @returns The entry.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Scheduler } from "./scheduler.ts";
   * import { FakeClock } from "@kopf/kopf/testing";
   * const clock = new FakeClock();
   * const scheduler = new Scheduler(clock);
   * const fired: number[] = [];
   * const entry = { when: 1000, seq: 0, fire: undefined as undefined | { onScheduled(): void } };
   * entry.fire = { onScheduled: () => fired.push(entry.when) };
   * scheduler.add(entry);
   * await clock.advance(1);
   * assert.deepEqual(fired, [1000]);
   * ```
   */
  add<E extends { when: number; seq: number; fire: ScheduledEntry["fire"] }>(entry: E): E {
    entry.seq = this.#seq++;
    this.#push(entry);
    return entry;
  }

  /**
   * Cancels an entry (nothing happens if it has fired or was cancelled already).
   *
   * @param entry The entry that `at` or `after` returned.
   */
  cancel(entry: ScheduledEntry): void {
    if (!entry.fire) return;
    entry.fire = undefined;
    if (--this.#live === 0) {
      this.#heap = [];
      this.#arm();
    }
  }

  #pop(): ScheduledEntry {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      let i = 0;
      while (true) {
        const l = 2 * i + 1;
        if (l >= heap.length) break;
        const r = l + 1;
        const c = r < heap.length && earlier(heap[r]!, heap[l]!) ? r : l;
        if (!earlier(heap[c]!, last)) break;
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
    // Drop the cancelled entries at the top: they must not keep a timer armed.
    while (this.#heap.length && !this.#heap[0]!.fire) this.#pop();
    if (!this.#heap.length) return;
    const next = this.#heap[0]!.when;
    this.#armedFor = next;
    this.#cancel = this.clock.timer(next - this.clock.now(), this.#onTimer);
  }

  #run(): void {
    this.#cancel = undefined;
    // While the due entries fire, those they add wait for the re-arming at the end.
    this.#armedFor = -Infinity;
    const now = this.clock.now();
    while (this.#heap.length && this.#heap[0]!.when <= now) {
      const entry = this.#pop();
      const fire = entry.fire;
      entry.fire = undefined;
      if (fire) {
        this.#live--;
        if (typeof fire === "function") fire();
        else fire.onScheduled();
      }
    }
    this.#arm();
  }
}

/** Whether `a` fires before `b`: by time, then in the order of scheduling (as timers do). */
function earlier(a: ScheduledEntry, b: ScheduledEntry): boolean {
  return a.when < b.when || (a.when === b.when && a.seq < b.seq);
}

const schedulers = new WeakMap<Clock, Scheduler>();

/**
 * The shared scheduler of a clock: all stop flags of one clock sleep on one heap and one timer.
 *
 * @param clock The clock (default: the real one).
 * @returns Its scheduler (made on first use).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { schedulerFor } from "./scheduler.ts";
 * import { realClock } from "@kopf/kopf";
 * assert.deepEqual(schedulerFor(realClock) === schedulerFor(realClock), true);
 * ```
 */
export function schedulerFor(clock: Clock = realClock): Scheduler {
  let scheduler = schedulers.get(clock);
  if (!scheduler) schedulers.set(clock, scheduler = new Scheduler(clock));
  return scheduler;
}
