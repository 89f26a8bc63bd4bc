/**
 * Defaulting by a CRD's structural schema: `default`s filled in where a declared
 * property is absent (and non-nullable nulls dropped), copy-on-write, as
 * kube-apiserver does on create, update and read.
 *
 * @module
 */

import { deepCopy } from "../../cogs/structs/dicts.ts";
import type { JsonSchema } from "../shared/types.ts";
import { isObject, type Json, mapItems, setKey } from "./schema_common.ts";

/**
 * Fills in `default`s where a declared property is absent, recursively (also
 * inside array items, `additionalProperties` values and defaults themselves),
 * as kube-apiserver does on create, update and read. Like kube-apiserver, a
 * `null` where the schema is not `nullable` is replaced by the default, or
 * removed when there is no default (object properties only; `null` array items
 * without a default stay and fail validation).
 *
 * @param schema The root schema (`openAPIV3Schema`).
 * @param obj The object (parsed JSON); never mutated.
 * @returns The input itself when nothing was defaulted; otherwise a copy of
 * the changed path that shares unchanged subtrees with the input. Default
 * values are copied, never shared with the schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyDefaults } from "./schema_defaults.ts";
 *
 * const schema = {
 *   type: "object" as const,
 *   properties: {
 *     spec: {
 *       type: "object" as const,
 *       default: {},
 *       properties: { replicas: { type: "integer" as const, default: 1 } },
 *     },
 *   },
 * };
 * assert.deepEqual(applyDefaults(schema, { kind: "Kex" }), { kind: "Kex", spec: { replicas: 1 } });
 * const complete = { spec: { replicas: 3 } };
 * assert.equal(applyDefaults(schema, complete), complete); // unchanged: the same object
 * ```
 */
export function applyDefaults(schema: JsonSchema, obj: unknown): unknown {
  return defaultValue(schema, obj);
}

/** Fills in defaults; each default is a deep copy, never shared with the schema or other objects. */
function defaultValue(s: JsonSchema, v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = s.items;
    if (items === undefined) return v;
    return mapItems(v, (child) => {
      const filled = child === null && items.nullable !== true && items.default !== undefined
        ? deepCopy(items.default)
        : child;
      return defaultValue(items, filled);
    });
  }
  if (!isObject(v)) return v;
  const props = s.properties;
  const extra = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined;
  if (props === undefined && extra === undefined) return v;

  // Absent (or non-nullable null) properties with a default get it first, so
  // the walk below also defaults inside the defaults.
  let out: Json | undefined;
  if (props !== undefined) {
    for (const key in props) {
      const prop = props[key];
      if (prop === undefined || prop.default === undefined || !Object.hasOwn(props, key)) continue;
      const current = Object.hasOwn(v, key) ? v[key] : undefined;
      if (current === undefined || (current === null && prop.nullable !== true)) {
        out ??= { ...v };
        setKey(out, key, deepCopy(prop.default));
      }
    }
  }
  const src = out ?? v;
  for (const key in src) {
    if (!Object.hasOwn(src, key)) continue;
    const sub = props !== undefined && Object.hasOwn(props, key) ? props[key] : extra;
    if (sub === undefined) continue;
    const child = src[key];
    let next = child;
    let remove = false;
    if (child === null && sub.nullable !== true) {
      if (sub.default === undefined) remove = true;
      else next = deepCopy(sub.default);
    }
    if (!remove) next = defaultValue(sub, next);
    if (!remove && next === child) continue;
    out ??= { ...v };
    if (remove) delete out[key];
    else setKey(out, key, next);
  }
  return out ?? v;
}
