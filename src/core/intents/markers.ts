/**
 * Filter markers and combinators: `PRESENT`/`ABSENT` for values that must be
 * there (with any value) or not there, and `not`/`all`/`any`/`none` to build
 * callback filters out of other callbacks — Kopf's `kopf.PRESENT`,
 * `kopf.ABSENT`, `kopf.not_`, `kopf.all_`, `kopf.any_`, `kopf.none_`.
 *
 * @module
 */

/** Matches when a label, annotation or field is present, with any value. */
export const PRESENT: unique symbol = Symbol.for("kopf.PRESENT");
/** Matches when a label, annotation or field is absent. */
export const ABSENT: unique symbol = Symbol.for("kopf.ABSENT");
export { EVERYTHING } from "../../cogs/structs/references.ts";

/** A callback filter over any arguments. */
// deno-lint-ignore no-explicit-any
export type Predicate = (...args: any[]) => boolean;

/**
 * Negates a callback filter (`kopf.not_`).
 *
 * @param fn The filter.
 * @returns A filter that is true when `fn` is false.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { not } from "../../../mod.ts";
 * const isEmpty = (v: string) => v === "";
 * assert.deepEqual(not(isEmpty)("x"), true);
 * ```
 */
export function not<F extends Predicate>(fn: F): F {
  return ((...args: unknown[]) => !fn(...args)) as F;
}

/**
 * True when all filters are true (`kopf.all_`).
 *
 * @param fns The filters.
 * @returns The combined filter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { all } from "../../../mod.ts";
 * assert.deepEqual(all([(v: number) => v > 1, (v: number) => v < 5])(3), true);
 * ```
 */
export function all<F extends Predicate>(fns: F[]): F {
  return ((...args: unknown[]) => fns.every((fn) => fn(...args))) as F;
}

/**
 * True when any filter is true (`kopf.any_`).
 *
 * @param fns The filters.
 * @returns The combined filter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { any } from "../../../mod.ts";
 * assert.deepEqual(any([(v: number) => v > 10, (v: number) => v < 0])(-1), true);
 * ```
 */
export function any<F extends Predicate>(fns: F[]): F {
  return ((...args: unknown[]) => fns.some((fn) => fn(...args))) as F;
}

/**
 * True when no filter is true (`kopf.none_`).
 *
 * @param fns The filters.
 * @returns The combined filter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { none } from "../../../mod.ts";
 * assert.deepEqual(none([(v: number) => v > 10])(3), true);
 * ```
 */
export function none<F extends Predicate>(fns: F[]): F {
  return ((...args: unknown[]) => !fns.some((fn) => fn(...args))) as F;
}
