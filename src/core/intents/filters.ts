/**
 * Matching handlers against objects and changes: label and annotation
 * filters, field/value filters, `when` callbacks, and the change filters
 * (`old`/`new`) of update handlers — with Kopf's semantics, including the
 * rule that a field filter of an update handler requires the field to be
 * affected by the change, and that `value` then applies to either side.
 *
 * @module
 */

import { type Diff, diff as computeDiff } from "../../cogs/structs/diffs.ts";
import { ABSENT, PRESENT } from "./markers.ts";
import type {
  AnyObject,
  ChangingHandler,
  MetaFilter,
  ResourceHandler,
  ValueFilter,
} from "./handlers.ts";

/** A field path of a handler, or nothing. */
type Field = readonly string[] | undefined;

/**
 * Reads a nested field of an object.
 *
 * @param obj The object.
 * @param path The field path.
 * @returns The value, or undefined when any part is absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { getField } from "./filters.ts";
 * assert.deepEqual(getField({ spec: { a: { b: 1 } } }, ["spec", "a", "b"]), 1);
 * ```
 */
export function getField(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    cur = (cur as AnyObject)[key];
  }
  return cur;
}

/**
 * Checks one value against a value filter.
 *
 * @param filter The filter (exact value, PRESENT, ABSENT, or callback).
 * @param present Whether the value exists at all.
 * @param value The value.
 * @param context The handler context, for callbacks.
 * @returns Whether it matches.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchValue } from "./filters.ts";
 * import { PRESENT } from "@kopf/kopf";
 * assert.deepEqual([matchValue(PRESENT, true, ""), matchValue("x", true, "y")], [true, false]);
 * ```
 */
export function matchValue(
  filter: ValueFilter,
  present: boolean,
  value: unknown,
  context?: unknown,
): boolean {
  if (filter === PRESENT) return present;
  if (filter === ABSENT) return !present;
  if (typeof filter === "function") return !!filter(value, context);
  if (!present) return false;
  return JSON.stringify(filter) === JSON.stringify(value);
}

function matchMeta(
  filters: MetaFilter | undefined,
  actual: Record<string, string> | undefined,
  context: unknown,
): boolean {
  if (!filters) return true;
  const values = actual ?? {};
  for (const [key, filter] of Object.entries(filters)) {
    const present = Object.hasOwn(values, key);
    if (!matchValue(filter, present, values[key], context)) return false;
  }
  return true;
}

/**
 * Whether an object matches a handler's metadata, field/value and `when` filters,
 * in its current state (for all handlers except the change semantics of updates).
 *
 * @param handler The handler.
 * @param body The object.
 * @param context The handler context (for callbacks).
 * @returns Whether the handler applies.
 */
export function matchesObject(
  handler: ResourceHandler,
  body: AnyObject,
  context: unknown,
): boolean {
  const meta = (body.metadata ?? {}) as AnyObject;
  if (!matchMeta(handler.labels, meta.labels, context)) return false;
  if (!matchMeta(handler.annotations, meta.annotations, context)) return false;
  if (handler.field && !isChanging(handler)) {
    const v = getField(body, handler.field);
    if (!matchValue(handler.value ?? PRESENT, v !== undefined && v !== null, v, context)) {
      return false;
    }
  }
  if (handler.when && !handler.when(context)) return false;
  return true;
}

/**
 * Whether an object is in a changing handler's scope at all, whatever the cause
 * (Kopf's pre-matching): labels, annotations and `when` on the object, and the
 * field's value on either side of the change. When no handler of a resource
 * pre-matches an object, the object is processed in the stealth mode.
 *
 * @param handler The handler.
 * @param cause The object, and the old and new essences.
 * @param context The handler context (for callbacks).
 * @returns Whether the object is in the handler's scope.
 */
export function prematches(
  handler: ChangingHandler,
  cause: { body: AnyObject; old: unknown; new: unknown },
  context: unknown,
): boolean {
  if (!matchesObject(handler, cause.body, context)) return false;
  const field = handler.field;
  if (!field) return true;
  return [cause.body, cause.new, cause.old].some((side) => {
    const v = getField(side, field);
    return matchValue(handler.value ?? PRESENT, present(v), v, context);
  });
}

/**
 * Whether a handler's filters call back into user code (a `when`, or a function as a label,
 * annotation, `value`, `old` or `new` filter): only those read the handler context given to
 * the matching — without any, the reactor need not build one.
 *
 * @param handler The handler.
 * @returns True when some filter is a callback.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasCallbacks } from "./filters.ts";
 * const handler = { labels: { app: (v: unknown) => !!v } } as never;
 * assert.deepEqual([hasCallbacks(handler), hasCallbacks({ labels: { app: "web" } } as never)], [true, false]);
 * ```
 */
export function hasCallbacks(handler: ResourceHandler): boolean {
  const h = handler as ResourceHandler & { old?: ValueFilter; new?: ValueFilter };
  return typeof h.when === "function" || typeof h.value === "function" ||
    typeof h.old === "function" || typeof h.new === "function" ||
    metaCallbacks(h.labels) || metaCallbacks(h.annotations);
}

function metaCallbacks(filters: MetaFilter | undefined): boolean {
  if (!filters) return false;
  for (const key in filters) if (typeof filters[key] === "function") return true;
  return false;
}

function isChanging(handler: ResourceHandler): handler is ChangingHandler {
  return (handler as ChangingHandler).kind === "changing";
}

/**
 * Whether a change matches a resource-changing handler: the metadata and
 * `when` filters on the current object, and the field semantics: for update
 * causes the field must be affected by the diff, `value` may match either side,
 * and `old`/`new` must match their sides; for other causes the field filters
 * check the current state.
 *
 * @param handler The handler.
 * @param change The cause's body, reason, old and new essences, and diff.
 * @param context The handler context (for callbacks).
 * @returns Whether the handler applies.
 */
export function matchesChange(
  handler: ChangingHandler,
  change: { body: AnyObject; reason: string; old: unknown; new: unknown; diff: Diff },
  context: unknown,
): boolean {
  if (!matchesObject(handler, change.body, context)) return false;
  const field: Field = handler.field;
  // Update semantics: on.update, and on.field (reason undefined, not a resume handler).
  const updateSemantics = handler.reason === "update" ||
    (handler.reason === undefined && !handler.initial);
  if (!updateSemantics) {
    if (!field) return true;
    const v = getField(change.body, field);
    return matchValue(handler.value ?? PRESENT, present(v), v, context);
  }
  const oldValue = field ? getField(change.old, field) : change.old;
  const newValue = field ? getField(change.new, field) : change.new;
  // The field itself must change (added, removed, modified), as Kopf's `field_needs_change`:
  // a diff at a parent (e.g. the whole essence added on creation) with no value on either side is none.
  if (field && computeDiff(oldValue, newValue).length === 0) return false;
  if (field && handler.value !== undefined) {
    const either = matchValue(handler.value, present(oldValue), oldValue, context) ||
      matchValue(handler.value, present(newValue), newValue, context);
    if (!either) return false;
  }
  return sideMatches(handler.old, oldValue, context) && sideMatches(handler.new, newValue, context);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function sideMatches(filter: ValueFilter | undefined, value: unknown, context: unknown): boolean {
  if (filter === undefined) return true;
  return matchValue(filter, present(value), value, context);
}

/**
 * Whether a diff touches a field: the field itself, a parent of it, or a child.
 *
 * @param diff The diff.
 * @param field The field path.
 * @returns True when affected.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { affects } from "./filters.ts";
 * assert.deepEqual(affects([["change", ["spec", "a"], 1, 2]], ["spec"]), true);
 * ```
 */
export function affects(diff: Diff, field: readonly string[]): boolean {
  for (const item of diff) {
    const path = item[1];
    const n = Math.min(path.length, field.length);
    let same = true;
    for (let i = 0; i < n; i++) {
      if (path[i] !== field[i]) {
        same = false;
        break;
      }
    }
    if (same) return true;
  }
  return false;
}
