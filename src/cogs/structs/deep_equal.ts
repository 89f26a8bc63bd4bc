/**
 * Structural equality of JSON values, key order ignored: the test behind
 * "did this write change anything" (no-op writes must not bump the
 * resourceVersion) and behind diffs of object essences.
 *
 * @module
 */

/**
 * Whether two JSON values are structurally equal (objects compare key by key,
 * regardless of key order; arrays element by element).
 *
 * @param a One value.
 * @param b The other value.
 * @returns True when equal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deepEqual } from "./deep_equal.ts";
 * assert.deepEqual(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), true);
 * assert.deepEqual(deepEqual({ a: 1 }, { a: 1, b: undefined }), true);
 * ```
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let na = 0;
  for (const k in ao) {
    if (ao[k] === undefined) continue;
    na++;
    if (!deepEqual(ao[k], bo[k])) return false;
  }
  let nb = 0;
  for (const k in bo) if (bo[k] !== undefined) nb++;
  return na === nb;
}
