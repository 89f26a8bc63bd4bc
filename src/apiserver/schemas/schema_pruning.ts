/**
 * Pruning by a CRD's structural schema: fields the schema does not declare are
 * dropped (their paths feed `fieldValidation=Strict|Warn`), copy-on-write, as
 * kube-apiserver prunes on every write.
 *
 * @module
 */

import type { JsonSchema } from "../shared/types.ts";
import {
  childPath,
  copyUntil,
  EMBEDDED,
  isMetaField,
  isObject,
  type Json,
  mapItems,
  PRESERVE,
  type Segment,
  setKey,
} from "./schema_common.ts";

/**
 * Removes the fields that the schema does not declare, as kube-apiserver does
 * before defaulting and validation. Kept: root (and embedded-resource)
 * `apiVersion`/`kind` strings and `metadata` objects; everything under a
 * level with `x-kubernetes-preserve-unknown-fields: true` (declared
 * properties below it are still pruned by their own schemas); and keys allowed
 * by `additionalProperties` (a schema prunes inside their values; `true` keeps
 * the values as they are). Inside an object whose schema declares nothing, and
 * in array items without an `items` schema, every key is removed.
 *
 * @param schema The root schema (`openAPIV3Schema`).
 * @param obj The object (parsed JSON); never mutated.
 * @returns `value`: the input itself when nothing was pruned, otherwise a
 * copy-on-write result sharing unchanged subtrees; `pruned`: the dotted paths
 * removed, in document order (for `fieldValidation=Strict`, reply 400
 * `strict decoding error: unknown field "<path>"`; for `Warn`, one warning
 * per path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pruneUnknownFields } from "./schema_pruning.ts";
 *
 * const schema = {
 *   type: "object" as const,
 *   properties: {
 *     spec: { type: "object" as const, properties: { size: { type: "integer" as const } } },
 *   },
 * };
 * const { value, pruned } = pruneUnknownFields(schema, {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   metadata: { name: "kex" },
 *   spec: { size: 1, x: true },
 * });
 * assert.deepEqual(pruned, ["spec.x"]);
 * assert.deepEqual(value, {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   metadata: { name: "kex" },
 *   spec: { size: 1 },
 * });
 * ```
 */
export function pruneUnknownFields(
  schema: JsonSchema,
  obj: unknown,
): { value: unknown; pruned: string[] } {
  const pruned: string[] = [];
  const value = pruneValue(schema, obj, [], pruned, true);
  return { value, pruned };
}

function pruneValue(
  s: JsonSchema | undefined,
  v: unknown,
  path: Segment[],
  pruned: string[],
  resource: boolean,
): unknown {
  if (s !== undefined && s[PRESERVE] === true) return skipPrune(s, v, path, pruned, resource);
  if (Array.isArray(v)) {
    const items = s?.items;
    return mapItems(v, (child, i) => {
      path.push(i);
      const next = pruneValue(items, child, path, pruned, false);
      path.pop();
      return next;
    });
  }
  if (!isObject(v)) return v;
  const embedded = s !== undefined && (resource || s[EMBEDDED] === true);
  let out: Json | undefined;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const child = v[key];
    if (embedded && keptMetaField(key, child)) {
      if (out !== undefined) setKey(out, key, child);
      continue;
    }
    const sub = s === undefined ? undefined : childSchema(s, key);
    let next: unknown = child;
    if (sub === undefined) {
      pruned.push(childPath(path, key));
      out ??= copyUntil(v, key);
      continue;
    }
    if (sub !== true) {
      path.push(key);
      next = pruneValue(sub, child, path, pruned, false);
      path.pop();
    }
    if (out === undefined && next !== child) out = copyUntil(v, key);
    if (out !== undefined) setKey(out, key, next);
  }
  return out ?? v;
}

/** Under `x-kubernetes-preserve-unknown-fields`: keeps unknown keys, prunes declared ones. */
function skipPrune(
  s: JsonSchema | undefined,
  v: unknown,
  path: Segment[],
  pruned: string[],
  resource: boolean,
): unknown {
  if (s === undefined) return v;
  if (Array.isArray(v)) {
    const items = s.items;
    if (items === undefined) return v;
    return mapItems(v, (child, i) => {
      path.push(i);
      const next = skipPrune(items, child, path, pruned, false);
      path.pop();
      return next;
    });
  }
  if (!isObject(v)) return v;
  const embedded = resource || s[EMBEDDED] === true;
  let out: Json | undefined;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const child = v[key];
    const sub = embedded && isMetaField(key) ? undefined : childSchema(s, key);
    let next: unknown = child;
    if (sub !== undefined && sub !== true) {
      path.push(key);
      next = pruneValue(sub, child, path, pruned, false);
      path.pop();
    }
    if (out === undefined && next !== child) out = copyUntil(v, key);
    if (out !== undefined) setKey(out, key, next);
  }
  return out ?? v;
}

/** The schema of a key: declared property, `additionalProperties` schema, `true` (keep), or none. */
function childSchema(s: JsonSchema, key: string): JsonSchema | true | undefined {
  const props = s.properties;
  if (props !== undefined && Object.hasOwn(props, key)) return props[key];
  const extra = s.additionalProperties;
  if (typeof extra === "object") return extra;
  return extra === true ? true : undefined;
}

function keptMetaField(key: string, value: unknown): boolean {
  if (key === "apiVersion" || key === "kind") return typeof value === "string";
  return key === "metadata" && isObject(value);
}
