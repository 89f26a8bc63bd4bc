/**
 * Per-object memos ("In-memory containers"): every object's handlers share
 * one `memo` that lives as long as the object is known to the operator (its
 * memory in the per-object queue; a deleted and re-created object gets a new
 * one). It starts as a shallow copy of the operator's memo, made when the
 * object is first processed: the operator memo's keys are copied in, later
 * changes to the operator memo's keys are not replicated, but mutable values
 * (arrays, objects, memos) are shared by reference — exactly as Kopf's
 * `copy.copy(memo)`.
 *
 * Custom memo classes (for embedding): the copy keeps the class (prototype);
 * a memo with a method under `Symbol.for("kopf.copy")` makes its own copy —
 * return `this` there for one global memo shared by all objects (Kopf's
 * `__copy__` returning `self`).
 *
 * @module
 */

import type { AnyObject } from "../intents/handlers.ts";

/** The well-known method of custom memos that makes a per-object copy. */
export const COPY: unique symbol = Symbol.for("kopf.copy") as never;

/**
 * A shallow copy of a memo: the same class, the same own keys and values.
 *
 * @param memo The operator memo.
 * @returns The copy (or what the memo's `Symbol.for("kopf.copy")` method returns).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copyMemo } from "./memos.ts";
 * const shared = { items: [] as number[] };
 * const copy = copyMemo({ counter: 1, shared });
 * copy.counter = 2;
 * assert.deepEqual(copy.shared === shared, true);
 * ```
 */
export function copyMemo(memo: AnyObject): AnyObject {
  const custom = (memo as Record<symbol, unknown>)[COPY];
  if (typeof custom === "function") return custom.call(memo);
  return Object.assign(Object.create(Object.getPrototypeOf(memo)), memo);
}

/**
 * Marks a memory whose memo was made from the operator's ({@link objectMemo}): a property of the
 * memory itself (a fresh memory declares it unset), not a weak set holding every object's memory.
 */
export const MEMO_MADE: unique symbol = Symbol("kopf.memoMade") as never;

/**
 * The per-object memo of an object's memory: on the first call, a shallow
 * copy of the operator memo (keeping whatever was already put into the
 * object's memo); the same container on every later call.
 *
 * @param memory The object's memory (its `memo` field is replaced once).
 * @param operatorMemo The operator's memo.
 * @returns The per-object memo.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { objectMemo } from "./memos.ts";
 * const memory = { memo: {} };
 * const memo = objectMemo(memory, { greeting: "hi" });
 * memo.counter = 1;
 * assert.deepEqual([objectMemo(memory, {}).counter, memo.greeting], [1, "hi"]);
 * ```
 */
export function objectMemo(
  memory: { memo: AnyObject; [MEMO_MADE]?: boolean | undefined },
  operatorMemo: AnyObject,
): AnyObject {
  if (!memory[MEMO_MADE]) {
    memory[MEMO_MADE] = true;
    const own = memory.memo;
    const copy = copyMemo(operatorMemo);
    memory.memo = copy === operatorMemo ? copy : Object.assign(copy, own);
  }
  return memory.memo;
}
