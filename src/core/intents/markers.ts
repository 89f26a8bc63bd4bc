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
export { EVERYTHING } from "../../cogs/structs/selector_specs.ts";

/** A callback filter over any arguments. */
// deno-lint-ignore no-explicit-any
export type Predicate = (...args: any[]) => boolean;

/**
 * Negates a callback filter (also `kopf.not_`, Kopf's name).
 *
 * @param fn The filter.
 * @returns A filter that is true when `fn` is false.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { not } from "@kopf/kopf";
 * const isEmpty = (v: string) => v === "";
 * assert.deepEqual(not(isEmpty)("x"), true);
 * ```
 */
export function not<F extends Predicate>(fn: F): F {
  return ((...args: unknown[]) => !fn(...args)) as F;
}

/**
 * True when all filters are true (also `kopf.all_`, Kopf's name).
 *
 * @param fns The filters.
 * @returns The combined filter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { all } from "@kopf/kopf";
 * assert.deepEqual(all([(v: number) => v > 1, (v: number) => v < 5])(3), true);
 * ```
 */
export function all<F extends Predicate>(fns: F[]): F {
  return ((...args: unknown[]) => fns.every((fn) => fn(...args))) as F;
}

/**
 * True when any filter is true (also `kopf.any_`, Kopf's name).
 *
 * @param fns The filters.
 * @returns The combined filter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { any } from "@kopf/kopf";
 * assert.deepEqual(any([(v: number) => v > 10, (v: number) => v < 0])(-1), true);
 * ```
 */
export function any<F extends Predicate>(fns: F[]): F {
  return ((...args: unknown[]) => fns.some((fn) => fn(...args))) as F;
}

/**
 * True when no filter is true (also `kopf.none_`, Kopf's name).
 *
 * @param fns The filters.
 * @returns The combined filter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { none } from "@kopf/kopf";
 * assert.deepEqual(none([(v: number) => v > 10])(3), true);
 * ```
 */
export function none<F extends Predicate>(fns: F[]): F {
  return ((...args: unknown[]) => !fns.some((fn) => fn(...args))) as F;
}

/**
 * Kopf's Python name of {@link not} (`kopf.not_`: `not` is a Python keyword or
 * built-in), the same function — so handlers ported from Kopf keep their spelling.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * assert.equal(kopf.not_, kopf.not);
 * ```
 */
export const not_: typeof not = not;

/**
 * Kopf's Python name of {@link all} (`kopf.all_`: `all` is a Python keyword or
 * built-in), the same function — so handlers ported from Kopf keep their spelling.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * assert.equal(kopf.all_, kopf.all);
 * ```
 */
export const all_: typeof all = all;

/**
 * Kopf's Python name of {@link any} (`kopf.any_`: `any` is a Python keyword or
 * built-in), the same function — so handlers ported from Kopf keep their spelling.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * assert.equal(kopf.any_, kopf.any);
 * ```
 */
export const any_: typeof any = any;

/**
 * Kopf's Python name of {@link none} (`kopf.none_`: `none` is a Python keyword or
 * built-in), the same function — so handlers ported from Kopf keep their spelling.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * assert.equal(kopf.none_, kopf.none);
 * ```
 */
export const none_: typeof none = none;
