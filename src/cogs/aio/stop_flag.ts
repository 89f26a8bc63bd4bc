/**
 * A stop flag: Kopf's `stopped` of daemons and timers — set once (with one or
 * more reasons), checked with `isSet()`, slept on with `wait(seconds)`, and an
 * `AbortSignal` for the APIs that take one.
 *
 * Why not just an `AbortController`: an operator holds one flag per daemon and
 * timer of every object, and most of them are never read as a signal. So the
 * controller is made on the first read of `signal`,
 * and `wait(seconds)` sleeps on the clock's shared {@link Scheduler} (one
 * armed timer for all flags) instead of a timer and an abort listener each.
 * A sleep is one object — its scheduler entry and its waker at once — beside
 * its promise: a timer's sleep lives its whole interval, so what it holds is
 * what the old generation grows by, run after run.
 *
 * @module
 */

import { type Clock, realClock } from "./clock.ts";
import { type ScheduledEntry, type Scheduler, schedulerFor } from "./scheduler.ts";

/** One sleep on a flag: its scheduler entry (if it has a time limit) and its waker. */
class Sleep implements ScheduledEntry {
  seq = 0;
  fire: Sleep | undefined = this;
  constructor(
    readonly when: number,
    readonly flag: { isSet(): boolean },
    /** The flag's sleeps, this one among them until it ends. */
    readonly sleeps: Sleep[],
    readonly resolve: (set: boolean) => void,
  ) {}

  /** Its time has come: it is no waker of the flag any more. */
  onScheduled(): void {
    const sleeps = this.sleeps;
    const i = sleeps.indexOf(this);
    if (i >= 0) {
      for (let j = i; j < sleeps.length - 1; j++) sleeps[j] = sleeps[j + 1]!;
      sleeps.pop();
    }
    this.resolve(this.flag.isSet());
  }
}

/**
 * A flag that is set once to stop something, with its reasons, a sleep cut short by it, and a
 * lazily made `AbortSignal`.
 *
 * @typeParam R The reasons' type (Kopf's `DaemonStoppingReason` for daemons and timers).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { StopFlag } from "@kopf/kopf";
 * const stopped = new StopFlag();
 * setTimeout(() => stopped.set("operator exiting"), 10);
 * assert.deepEqual([await stopped.wait(5), stopped.reason], [true, "operator exiting"]);
 * ```
 */
export class StopFlag<R extends string = string> {
  /** Made on the first read of `signal` (most flags never need one). */
  #controller: AbortController | undefined;
  readonly #reasons: R[] = [];
  /** The sleeps now (kept once made: a flag slept on again and again reuses it). */
  #sleeps: Sleep[] | undefined;
  readonly #scheduler: Scheduler;

  /**
   * Makes a flag that is not set.
   *
   * @param clock The clock whose time `wait(seconds)` sleeps on (default: the real one).
   */
  constructor(clock: Clock = realClock) {
    this.#scheduler = schedulerFor(clock);
  }

  /** Aborted when the flag is set (with the first reason). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reasons.length) this.#controller.abort(this.#reasons[0]);
    }
    return this.#controller.signal;
  }

  /** The first reason, or undefined while not set. */
  get reason(): R | undefined {
    return this.#reasons[0];
  }

  /** All reasons, in order. */
  get reasons(): readonly R[] {
    return this.#reasons;
  }

  /**
   * Whether the flag is set (with any reason).
   *
   * @returns Whether the flag is set.
   */
  isSet(): boolean {
    return this.#reasons.length > 0;
  }

  /**
   * Sets the flag (again, with more reasons): aborts the signal, wakes the waiters.
   *
   * @param reason Why.
   */
  set(reason: R): void {
    if (!this.#reasons.includes(reason)) this.#reasons.push(reason);
    const controller = this.#controller;
    if (controller && !controller.signal.aborted) controller.abort(reason);
    const sleeps = this.#sleeps;
    if (!sleeps?.length) return;
    for (const sleep of sleeps.splice(0)) {
      if (sleep.fire) this.#scheduler.cancel(sleep);
      sleep.resolve(true);
    }
  }

  /**
   * Sleeps until the flag is set, or for `seconds` at most.
   *
   * @param seconds How long at most; forever if undefined; zero or less returns at once.
   * @returns Whether the flag is set.
   */
  wait(seconds?: number): Promise<boolean> {
    if (this.isSet() || (seconds !== undefined && !(seconds > 0))) {
      return Promise.resolve(this.isSet());
    }
    return new Promise((resolve) => {
      const scheduler = this.#scheduler;
      const when = seconds === undefined ? Infinity : scheduler.clock.now() + seconds * 1000;
      const sleeps = this.#sleeps ??= [];
      const sleep = new Sleep(when, this, sleeps, resolve);
      sleeps.push(sleep);
      if (seconds === undefined) sleep.fire = undefined; // no time limit: woken by set() only
      else scheduler.add(sleep);
    });
  }
}
