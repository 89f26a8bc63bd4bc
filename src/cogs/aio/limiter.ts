/**
 * A limit on how many tasks run at once (the per-object queues' worker
 * limit): a counter and a FIFO of waiters, no polling. A slot is taken before
 * the work and given back after it; waiters get freed slots in arrival order.
 *
 * @module
 */

import { Fifo } from "./fifo.ts";

/**
 * Up to `limit` holders at once; `null` means no limit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Limiter } from "./limiter.ts";
 * const limiter = new Limiter(1);
 * await limiter.acquire();
 * let second = false;
 * const waiting = limiter.acquire().then(() => (second = true));
 * assert.deepEqual([limiter.active, second], [1, false]);
 * limiter.release();
 * await waiting;
 * assert.deepEqual([limiter.active, second], [1, true]);
 * ```
 */
export class Limiter {
  #limit: () => number | null;
  #active = 0;
  #waiting = new Fifo<() => void>();

  /** @param limit The limit, or a function read at every acquisition (settings may change). */
  constructor(limit: number | null | (() => number | null)) {
    this.#limit = typeof limit === "function" ? limit : () => limit;
  }

  /** How many slots are taken. */
  get active(): number {
    return this.#active;
  }

  /** How many wait for a slot. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /**
   * Takes a slot if one is free now — the common case without a limit, with no promise to await.
   *
   * @returns True when the slot is taken; false when all are taken (then {@link acquire} waits).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Limiter } from "./limiter.ts";
   * const limiter = new Limiter(1);
   * assert.deepEqual([limiter.tryAcquire(), limiter.tryAcquire(), limiter.active], [true, false, 1]);
   * ```
   */
  tryAcquire(): boolean {
    const limit = this.#limit();
    // Waiters first: a free slot goes to the longest waiter, not to a newcomer.
    if (this.#waiting.size || (limit !== null && this.#active >= limit)) return false;
    this.#active++;
    return true;
  }

  /**
   * Takes a slot, waiting for one if all are taken.
   *
   * @returns When the slot is taken.
   */
  acquire(): Promise<void> {
    const limit = this.#limit();
    if (limit === null || this.#active < limit) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.#waiting.push(() => {
        this.#active++;
        resolve();
      })
    );
  }

  /**
   * Lets waiters in while the limit, read anew, allows: for a limit that was raised or lifted
   * ({@link release} lets one in per slot given back; this, as many as now fit).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Limiter } from "./limiter.ts";
   * let limit: number | null = 1;
   * const limiter = new Limiter(() => limit);
   * limiter.tryAcquire();
   * const waiting = limiter.acquire();
   * limit = null;
   * limiter.wake();
   * await waiting;
   * assert.deepEqual([limiter.active, limiter.waiting], [2, 0]);
   * ```
   */
  wake(): void {
    const limit = this.#limit();
    while (this.#waiting.size && (limit === null || this.#active < limit)) {
      this.#waiting.shift()!();
    }
  }

  /**
   * Gives a slot back: to the longest waiter, if any, while the limit, read anew, allows — a
   * limit lowered below the slots taken (it was lifted, then set again) is kept from then on,
   * not the slots taken meanwhile.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Limiter } from "./limiter.ts";
   * let limit: number | null = null;
   * const limiter = new Limiter(() => limit);
   * limiter.tryAcquire();
   * limiter.tryAcquire();
   * limit = 1;
   * let admitted = false;
   * const waiting = limiter.acquire().then(() => (admitted = true));
   * limiter.release(); // 1 taken: the limit is reached, the waiter waits on
   * await Promise.resolve();
   * assert.deepEqual([admitted, limiter.active, limiter.waiting], [false, 1, 1]);
   * limiter.release();
   * await waiting;
   * assert.deepEqual([limiter.active, limiter.waiting], [1, 0]);
   * ```
   */
  release(): void {
    this.#active--;
    if (!this.#waiting.size) return;
    const limit = this.#limit();
    if (limit === null || this.#active < limit) this.#waiting.shift()!();
  }
}
