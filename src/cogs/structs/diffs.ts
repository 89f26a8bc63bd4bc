/**
 * Kopf's diffs: what changed between the last handled state of an object and
 * its current one, as a list of `[operation, field, old, new]` items. Handlers
 * get it as their `diff` argument; field handlers get it scoped to their field
 * with relative paths ({@link reduceDiff}).
 *
 * The rules are Kopf's, so that handlers see the same diffs in both ports:
 * objects are compared key by key, recursively; arrays and scalars are
 * compared whole (an appended item is a `change` of the whole array); `null`
 * and `undefined` mean "absent", so a field going from absent to a value is
 * an `add` of the whole value, and from a value to absent a `remove`.
 *
 * The items are plain readonly tuples, so a diff is JSON as it is
 * (`JSON.stringify(diff)` gives `[["add",["spec","x"],null,1]]`) and reads
 * by destructuring: `for (const [op, field, old, now] of diff)`.
 *
 * @module
 */

import { deepEqual } from "./deep_equal.ts";
import { isObject } from "./_json.ts";
import { type FieldSpec, parseField, resolve } from "./dicts.ts";

/**
 * What happened to a field: it appeared, its value changed, or it disappeared.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type DiffOperation } from "@kopf/kopf";
 * const op: DiffOperation = "add";
 * assert.deepEqual(op, "add");
 * ```
 */
export type DiffOperation = "add" | "change" | "remove";

/**
 * One change: the operation, the field's path, the old and the new value (`null` when absent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type DiffItem } from "@kopf/kopf";
 * const item: DiffItem = ["change", ["spec", "size"], "1G", "2G"];
 * const [op, field] = item;
 * assert.deepEqual([op, field.join(".")], ["change", "spec.size"]);
 * ```
 */
export type DiffItem = readonly [
  operation: DiffOperation,
  field: readonly string[],
  old: unknown,
  new: unknown,
];

/**
 * A whole diff: the changes in a stable order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Diff } from "@kopf/kopf";
 * const d: Diff = [["add", ["metadata", "labels", "a"], null, "1"]];
 * for (const [op, field, , now] of d) assert.deepEqual([op, field, now], ["add", ["metadata", "labels", "a"], "1"]);
 * ```
 */
export type Diff = readonly DiffItem[];

/**
 * Which side's fields a diff looks at: `"full"` (both, the default), `"left"`
 * (only fields present in the old value: additions are ignored), `"right"`
 * (only fields present in the new value: removals are ignored).
 */
export type DiffScope = "full" | "left" | "right";

/** Options of {@link diff}. */
export interface DiffOptions {
  /** A path to prefix every item's field with (default: the root). */
  path?: FieldSpec;
  /** Which side's fields to look at (default `"full"`). */
  scope?: DiffScope;
}

/**
 * The empty diff.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EMPTY_DIFF } from "./diffs.ts";
 * assert.deepEqual(EMPTY_DIFF.length, 0);
 * ```
 */
export const EMPTY_DIFF: Diff = Object.freeze([]);

/**
 * Builds one diff item (`undefined` values are stored as `null`, as JSON would).
 *
 * @param operation The operation.
 * @param field The field's path.
 * @param old The old value.
 * @param now The new value.
 * @returns A frozen item.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diffItem } from "./diffs.ts";
 * assert.deepEqual(JSON.parse(JSON.stringify(diffItem("add", ["spec", "x"], undefined, 1))), ["add",["spec","x"],null,1]);
 * ```
 */
export function diffItem(
  operation: DiffOperation,
  field: readonly string[],
  old: unknown,
  now: unknown,
): DiffItem {
  return Object.freeze(
    [operation, Object.freeze([...field]), old ?? null, now ?? null] as const,
  );
}

/**
 * The operation of a diff item.
 *
 * @param item The item.
 * @returns `"add"`, `"change"` or `"remove"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "@kopf/kopf";
 * import { opOf } from "./diffs.ts";
 * assert.deepEqual(opOf(diff({}, { a: 1 })[0]!), "add");
 * ```
 */
export function opOf(item: DiffItem): DiffOperation {
  return item[0];
}

/**
 * The field path of a diff item.
 *
 * @param item The item.
 * @returns The keys from the diff's root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "@kopf/kopf";
 * import { fieldOf } from "./diffs.ts";
 * assert.deepEqual(fieldOf(diff({ a: { b: 1 } }, { a: { b: 2 } })[0]!), ["a", "b"]);
 * ```
 */
export function fieldOf(item: DiffItem): readonly string[] {
  return item[1];
}

/**
 * The old value of a diff item (`null` for additions).
 *
 * @param item The item.
 * @returns The old value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "@kopf/kopf";
 * import { oldOf } from "./diffs.ts";
 * assert.deepEqual(oldOf(diff({ a: 1 }, { a: 2 })[0]!), 1);
 * ```
 */
export function oldOf(item: DiffItem): unknown {
  return item[2];
}

/**
 * The new value of a diff item (`null` for removals).
 *
 * @param item The item.
 * @returns The new value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "@kopf/kopf";
 * import { newOf } from "./diffs.ts";
 * assert.deepEqual(newOf(diff({ a: 1 }, { a: 2 })[0]!), 2);
 * ```
 */
export function newOf(item: DiffItem): unknown {
  return item[3];
}

/**
 * Computes the diff from `a` (old) to `b` (new) by Kopf's rules: equal values
 * give nothing; absent (`null`/`undefined`) → value is an `add` of the whole
 * value; value → absent is a `remove`; two objects are compared key by key
 * (added keys first, then removed keys, then common keys, each in their
 * object's key order); anything else that differs (arrays, scalars, an object
 * against a scalar) is a `change` of the whole value.
 *
 * @param a The old value.
 * @param b The new value.
 * @param options The path prefix and the scope.
 * @returns The diff.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "@kopf/kopf";
 * const d = diff(
 *   { spec: { size: "1G", ports: [80] }, metadata: { labels: { a: "1", b: "2" } } },
 *   { spec: { size: "2G", ports: [80, 443] }, metadata: { labels: { a: "1", c: "3" } } },
 * );
 * assert.deepEqual(d, [
 *   ["change", ["spec", "size"], "1G", "2G"],
 *   ["change", ["spec", "ports"], [80], [80, 443]],
 *   ["add", ["metadata", "labels", "c"], null, "3"],
 *   ["remove", ["metadata", "labels", "b"], "2", null],
 * ]);
 * ```
 */
export function diff(a: unknown, b: unknown, options?: DiffOptions): Diff {
  const items: DiffItem[] = [];
  const prefix = options?.path === undefined ? undefined : parseField(options.path);
  // One path array for the walks, kept between them (taken meanwhile): a key is set at its
  // depth around each step, and an item copies the path up to its depth — no path array per
  // key, nor one per walk, for the usual empty diff of an echo.
  const path = walkPath ?? [];
  walkPath = undefined;
  try {
    const depth = prefix?.length ?? 0;
    for (let i = 0; i < depth; i++) path[i] = prefix![i]!;
    diffInto(items, a, b, path, depth, options?.scope ?? "full");
  } finally {
    walkPath = path;
  }
  // No change (an echo of our own write, mostly): the one frozen empty diff, not a new one.
  return items.length ? Object.freeze(items) : EMPTY_DIFF;
}

/** The path array of {@link diff}'s walks (see there). */
let walkPath: string[] | undefined = [];

/** An item of a walk: the path up to `depth`, copied. */
function itemAt(
  operation: DiffOperation,
  path: string[],
  depth: number,
  old: unknown,
  now: unknown,
): DiffItem {
  return Object.freeze(
    [operation, Object.freeze(path.slice(0, depth)), old ?? null, now ?? null] as const,
  );
}

function diffInto(
  out: DiffItem[],
  a: unknown,
  b: unknown,
  path: string[],
  depth: number,
  scope: DiffScope,
): void {
  const aAbsent = a === null || a === undefined;
  const bAbsent = b === null || b === undefined;
  if (aAbsent && bAbsent) return;
  if (aAbsent) {
    out.push(itemAt("add", path, depth, null, b));
  } else if (bAbsent) {
    out.push(itemAt("remove", path, depth, a, null));
  } else if (isObject(a) && isObject(b)) {
    // The own keys by for-in and the own-key check: Object.keys()' order, without its arrays.
    if (scope !== "left") {
      for (const key in b) {
        if (!Object.hasOwn(b, key) || Object.hasOwn(a, key)) continue;
        path[depth] = key;
        diffInto(out, undefined, b[key], path, depth + 1, scope);
      }
    }
    if (scope !== "right") {
      for (const key in a) {
        if (!Object.hasOwn(a, key) || Object.hasOwn(b, key)) continue;
        path[depth] = key;
        diffInto(out, a[key], undefined, path, depth + 1, scope);
      }
    }
    for (const key in a) {
      if (!Object.hasOwn(a, key) || !Object.hasOwn(b, key)) continue;
      path[depth] = key;
      diffInto(out, a[key], b[key], path, depth + 1, scope);
    }
  } else if (!deepEqual(a, b)) {
    out.push(itemAt("change", path, depth, a, b));
  }
}

/**
 * Scopes a diff to one field, with the fields made relative to it — the diff
 * a field handler (`on.field("spec.struct")`) sees. Items below the field keep
 * their tail; an item above it (e.g. the whole `spec` added) is re-diffed
 * on the field's old and new sub-values; unrelated items are dropped.
 *
 * @param d The full diff.
 * @param field The field to scope to; the root returns the diff as is.
 * @returns The scoped diff.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff, reduceDiff } from "@kopf/kopf";
 * const d = diff({ spec: { a: { x: 1 } } }, { spec: { a: { x: 2 } }, status: { y: 1 } });
 * assert.deepEqual(JSON.parse(JSON.stringify(reduceDiff(d, "spec.a"))), [["change",["x"],1,2]]);
 * const whole = diff({}, { spec: { a: { x: 2 } } });
 * assert.deepEqual(JSON.parse(JSON.stringify(reduceDiff(whole, "spec.a.x"))), [["add",[],null,2]]);
 * ```
 */
export function reduceDiff(d: Diff, field: FieldSpec): Diff {
  const path = parseField(field);
  const items: DiffItem[] = [];
  for (const [op, itemField, old, now] of d) {
    if (path.length === 0) {
      items.push(diffItem(op, itemField, old, now));
    } else if (startsWith(itemField, path)) {
      items.push(diffItem(op, itemField.slice(path.length), old, now));
    } else if (startsWith(path, itemField)) {
      const tail = path.slice(itemField.length);
      diffInto(items, resolve(old, tail, null), resolve(now, tail, null), [], 0, "full");
    }
  }
  return Object.freeze(items);
}

function startsWith(field: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= field.length && prefix.every((key, i) => field[i] === key);
}

/**
 * Whether a diff has no changes.
 *
 * @param d The diff.
 * @returns True when empty.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diff } from "@kopf/kopf";
 * import { isEmpty } from "./diffs.ts";
 * assert.deepEqual(isEmpty(diff({ a: [1] }, { a: [1], b: null })), true);
 * ```
 */
export function isEmpty(d: Diff): boolean {
  return d.length === 0;
}
