/**
 * JSON merge patch (RFC 7386), the `application/merge-patch+json` content
 * type: the patch Kopf sends for status and annotations, and one the embedded
 * API server applies thousands of times a second.
 *
 * Why it is written this way: the result shares every subtree the patch does
 * not touch with the target (only the objects on the way to a change are
 * copied), so a patch of one annotation on a large object costs a few shallow
 * copies rather than a deep clone. Neither input is ever mutated; treat the
 * result as immutable too, since parts of it may belong to the target or the
 * patch.
 *
 * Why ours and not a library: the rule itself is a dozen lines, and what the
 * API server needs around it — this sharing, and `__proto__` kept as a
 * plain key so that a patch can never reach a prototype — is not what general
 * merge-patch packages promise.
 *
 * @module
 */

import { isObject, type JsonObject, setOwn } from "./_json.ts";

/**
 * Applies a JSON merge patch (RFC 7386): an object patch merges key by key
 * into the target (recursively), a `null` value deletes a key, and anything
 * else (a string, a number, an array, `null` itself) replaces the target.
 *
 * @param target The document to patch; never mutated.
 * @param patch The merge patch; never mutated.
 * @returns The patched document: a new value that shares untouched subtrees
 * with `target` and non-object values with `patch`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyMergePatch } from "./merge_patch.ts";
 *
 * const target = { metadata: { labels: { app: "web", tier: "fe" } }, spec: { replicas: 1 } };
 * const patched = applyMergePatch(target, { metadata: { labels: { tier: null, env: "prod" } } });
 * assert.deepEqual(patched, {
 *   metadata: { labels: { app: "web", env: "prod" } },
 *   spec: { replicas: 1 },
 * });
 * assert.deepEqual(target.metadata.labels, { app: "web", tier: "fe" }); // untouched
 * ```
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      delete result[key];
    } else {
      const current = Object.hasOwn(result, key) ? result[key] : undefined;
      setOwn(result, key, applyMergePatch(current, value));
    }
  }
  return result;
}
