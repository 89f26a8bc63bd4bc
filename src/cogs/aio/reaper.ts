/**
 * Idle expiry on one timer: many items (e.g. the per-object queues of a
 * watcher, 100,000 of them after a start-up) each wait out an idle timeout,
 * and each is expired when its time has passed unless it was taken back
 * first. Not a timer per item: the items sit in one insertion-ordered map with
 * their due times, and
 * one timer is armed for the earliest. Items are expected in order of their
 * due times (one timeout for all, as with the queues); one added out of order
 * waits for those before it. On a {@link Clock}, so it is tested on a fake one.
 *
 * Coalescing (`coalesce`): in a steady trickle every item is due a little after
 * the one before, and a timer re-armed for the next one fires once per item — a
 * wake-up each. With `coalesce` seconds, after a sweep the next one waits at
 * least that long and expires together what fell due meanwhile: an item expires
 * at most that much after its time (never before), the first one after a quiet
 * spell exactly on time.
 *
 * @module
 */

import { type CancelTimer, type Clock, realClock } from "./clock.ts";

/**
 * Expires items after their idle timeout, on one shared timer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { Reaper } from "./reaper.ts";
 * const clock = new FakeClock();
 * const expired: string[] = [];
 * const reaper = new Reaper<string>((item) => void expired.push(item), clock);
 * reaper.add("a", 5);
 * await clock.advance(1);
 * reaper.add("b", 5);
 * reaper.delete("a"); // taken back: never expires
 * await clock.advance(5);
 * assert.deepEqual(expired, ["b"]);
 * ```
 */
export class Reaper<T> {
  readonly #due = new Map<T, number>();
  readonly #expire: (item: T) => void;
  readonly #clock: Clock;
  #timer: CancelTimer | undefined;
  /** After a sweep, the least time until the next one, in ms (see the module doc). */
  readonly #coalesce: number;

  /**
   * @param expire Called for each item whose time has passed (it is removed first).
   * @param clock The clock (default: the real one).
   * @param options `coalesce`: seconds that items due close together may wait to expire
   *   together (default 0: each exactly on time).
   */
  constructor(
    expire: (item: T) => void,
    clock: Clock = realClock,
    options: { coalesce?: number } = {},
  ) {
    this.#expire = expire;
    this.#clock = clock;
    this.#coalesce = Math.max(0, options.coalesce ?? 0) * 1000;
  }

  /** How many items wait. */
  get size(): number {
    return this.#due.size;
  }

  /**
   * Whether an item waits.
   *
   * @param item The item.
   * @returns True while it waits (added, not yet expired nor deleted).
   */
  has(item: T): boolean {
    return this.#due.has(item);
  }

  /**
   * Adds an item (again, at the end, if it waits already) to expire after `seconds`.
   *
   * @param item The item.
   * @param seconds Its idle timeout.
   */
  add(item: T, seconds: number): void {
    const due = this.#clock.now() + Math.max(0, seconds) * 1000;
    this.#due.delete(item);
    this.#due.set(item, due);
    this.#timer ??= this.#clock.timer(due - this.#clock.now(), this.#fire);
  }

  /**
   * Takes an item back before it expires.
   *
   * @param item The item.
   * @returns True if it was waiting.
   */
  delete(item: T): boolean {
    return this.#due.delete(item);
  }

  /** Expires every waiting item now and stops the timer (e.g. at close). */
  expireAll(): void {
    this.#timer?.();
    this.#timer = undefined;
    this.#sweep(Infinity);
  }

  #fire = (): void => {
    this.#timer = undefined;
    this.#sweep(this.#clock.now());
  };

  /** Expires the items due by `upTo` (clock ms) and re-arms the timer for the next one. */
  #sweep(upTo: number): void {
    for (const [item, due] of this.#due) {
      // A microsecond of slack: a fake clock keeps due times to the microsecond.
      if (due > upTo + 1e-3) {
        const wait = Math.max(due - this.#clock.now(), this.#coalesce);
        this.#timer ??= this.#clock.timer(wait, this.#fire);
        return;
      }
      this.#due.delete(item);
      this.#expire(item);
    }
  }
}
