/**
 * Running a synchronous step that may need asynchronous work first: the step
 * throws a {@link Pending} with what to await, and {@link settle} awaits it and
 * runs the step again (a bounded number of times). A write stays one
 * synchronous step — so it commits atomically on JavaScript's single thread —
 * while conversion and admission webhooks are called before it.
 *
 * @module
 */

const MAX_ATTEMPTS = 5;

/** A sentinel thrown by a synchronous step that needs async work first: await `promise`, then run the step again. */
export class Pending {
  /**
   * @param promise What to await before running the step again.
   */
  constructor(readonly promise: Promise<unknown>) {}
}

/**
 * Runs a step, awaiting every {@link Pending} it throws and running it again.
 *
 * @param run The step (sync or async).
 * @returns What the step returns.
 * @throws What the step or an awaited promise throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Pending, settle } from "./settle.ts";
 * let ready = false;
 * const value = await settle(() => {
 *   if (!ready) throw new Pending(Promise.resolve().then(() => ready = true));
 *   return 42;
 * });
 * assert.deepEqual(value, 42);
 * ```
 */
export async function settle<T>(run: () => T | Promise<T>): Promise<T> {
  for (let i = 0;; i++) {
    try {
      return await run();
    } catch (e) {
      if (!(e instanceof Pending) || i >= MAX_ATTEMPTS) throw e;
      await e.promise;
    }
  }
}
