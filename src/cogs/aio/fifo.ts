/**
 * A first-in-first-out queue whose `shift()` costs O(1): the waiters of a
 * limiter or of the API client's request slots can number thousands in a
 * burst (a per-object worker each), and an array's `shift()` moves all the
 * others every time. The items are kept in an array with a head index; the
 * consumed front is cut off once it is most of the array.
 *
 * @module
 */

/**
 * A FIFO queue with O(1) push and shift.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Fifo } from "./fifo.ts";
 * const q = new Fifo<string>();
 * q.push("a");
 * q.push("b");
 * assert.deepEqual([q.shift(), q.size, q.shift(), q.shift()], ["a", 1, "b", undefined]);
 * ```
 */
export class Fifo<T> {
  #items: Array<T | undefined> = [];
  #head = 0;

  /** How many items wait. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /**
   * Adds an item at the end.
   *
   * @param item The item.
   */
  push(item: T): void {
    this.#items.push(item);
  }

  /**
   * Takes the first item.
   *
   * @returns The item, or undefined when empty.
   */
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined; // not kept alive by the consumed front
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
