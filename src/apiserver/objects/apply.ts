/**
 * Server-side apply, as far as `kubectl apply --server-side` and operators
 * need it: the applied configuration is merged into the live object, the
 * fields it sets are recorded for its field manager in `managedFields`
 * (`fieldsV1`), fields the same manager applied before and no longer applies
 * are removed (unless another manager owns them), and a field owned by another
 * applier with a different value is a conflict unless `force` is set.
 *
 * Not modelled: ownership by plain updates (`operation: Update`), so only
 * appliers conflict with each other; lists of custom resources are atomic.
 *
 * @module
 */

import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { isObject } from "../../cogs/structs/_json.ts";
import { apiVersionOf, type ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import { mergeKeyFor } from "./strategic_merge.ts";

/** A `fieldsV1` tree: `f:<field>`, `k:<json key>`, `v:<json value>`, and `.` for the item itself. */
export type FieldsV1 = { [key: string]: FieldsV1 };

/** One `managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: FieldsV1;
  subresource?: string;
}

/** The outcome of an apply. */
export interface ApplyOutcome {
  /** The merged object, with managedFields updated. */
  object: KObject;
  /** Conflicts: the field path and the manager that owns it (empty when forced or clean). */
  conflicts: ApplyConflict[];
}

/** A field another manager owns with another value, as kube's structured-merge-diff names it. */
export interface ApplyConflict {
  /** The other manager, e.g. `"kubectl"` (only Apply managers conflict here). */
  manager: string;
  /** The field, e.g. `.data.k`. */
  path: string;
}

const SKIP_META = new Set([
  "managedFields",
  "resourceVersion",
  "uid",
  "creationTimestamp",
  "generation",
]);

/**
 * Applies a configuration for a field manager.
 *
 * @param live The live object, or undefined when it is to be created.
 * @param applied The applied configuration.
 * @param manager The field manager.
 * @param def The resource.
 * @param now The timestamp for the managedFields entry.
 * @param force Take over conflicting fields.
 * @returns The merged object and any conflicts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyConfiguration } from "./apply.ts";
 * import { ResourceRegistry } from "./registry.ts";
 * const cm = new ResourceRegistry().find("", "v1", "configmaps")!;
 * const live = { metadata: { name: "x" }, data: { a: "1", b: "2" } };
 * const out = applyConfiguration(live, { metadata: { name: "x" }, data: { a: "9" } }, "me", cm, "now");
 * assert.deepEqual(out.object.data, { a: "9", b: "2" });
 * ```
 */
export function applyConfiguration(
  live: KObject | undefined,
  applied: KObject,
  manager: string,
  def: ResourceDef,
  now: string,
  force = false,
): ApplyOutcome {
  const kind = def.kind;
  const keyOf = (
    path: string[],
  ) => (def.builtin ? mergeKeyFor(kind, path) ?? undefined : undefined);
  const owned = fieldsOf(applied, [], keyOf, true);
  const entries = ((live?.metadata.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) =>
    e && typeof e === "object"
  );
  const mine = entries.find((e) => e.manager === manager && e.operation === "Apply");
  const others = entries.filter((e) => e !== mine);
  const conflicts: ApplyConflict[] = [];
  let base: KObject = live ?? { metadata: {} };
  if (live) {
    for (const other of others) {
      if (other.operation !== "Apply") continue;
      for (const path of leaves(intersect(owned, other.fieldsV1))) {
        const a = valueAt(applied, path, keyOf);
        const b = valueAt(live, path, keyOf);
        if (!deepEqual(a, b)) {
          conflicts.push({ manager: other.manager, path: `.${path.map(pretty).join(".")}` });
        }
      }
    }
    if (conflicts.length && !force) return { object: live, conflicts };
    if (conflicts.length && force) {
      for (const other of others) other.fieldsV1 = subtract(other.fieldsV1, owned);
    }
    // Fields this manager applied before and no longer applies, that nobody else owns, go away.
    if (mine) {
      let dropped = subtract(mine.fieldsV1, owned);
      for (const other of others) dropped = subtract(dropped, other.fieldsV1);
      base = removeFields(base, dropped, [], keyOf) as KObject;
    }
  }
  const merged = mergeApplied(base, applied, [], keyOf) as KObject;
  // A no-op apply keeps its entry as it was (time and place), so nothing is written.
  const unchanged = !!mine && !!live && deepEqual(mine.fieldsV1, owned) &&
    deepEqual(withoutManagedFields(merged), withoutManagedFields(live));
  const entry: ManagedFieldsEntry = {
    manager,
    operation: "Apply",
    apiVersion: apiVersionOf(def),
    time: unchanged ? mine.time : now,
    fieldsType: "FieldsV1",
    fieldsV1: owned,
  };
  const kept = entries.filter((e) => e === mine || Object.keys(e.fieldsV1 ?? {}).length)
    .map((e) => e === mine ? entry : e);
  const managedFields = mine ? kept : [...kept, entry];
  return { object: { ...merged, metadata: { ...merged.metadata, managedFields } }, conflicts: [] };
}

type KeyOf = (path: string[]) => string | undefined;

function withoutManagedFields(obj: KObject): KObject {
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

function fieldsOf(value: unknown, path: string[], keyOf: KeyOf, root = false): FieldsV1 {
  const out: FieldsV1 = {};
  if (!isObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (root && (k === "apiVersion" || k === "kind")) continue;
    if (root && k === "metadata") {
      const meta: FieldsV1 = {};
      for (const [mk, mv] of Object.entries(v as Record<string, unknown>)) {
        if (SKIP_META.has(mk) || mk === "name" || mk === "namespace") continue;
        meta[`f:${mk}`] = fieldsOf(mv, [...path, k, mk], keyOf);
      }
      if (Object.keys(meta).length) out["f:metadata"] = meta;
      continue;
    }
    const sub = [...path, k];
    if (Array.isArray(v)) {
      const mk = keyOf(sub);
      if (mk) {
        const items: FieldsV1 = {};
        for (const item of v) {
          if (!isObject(item) || item[mk] === undefined) continue;
          items[`k:${JSON.stringify({ [mk]: item[mk] })}`] = {
            ".": {},
            ...fieldsOf(item, sub, keyOf),
          };
        }
        out[`f:${k}`] = items;
      } else out[`f:${k}`] = {};
    } else out[`f:${k}`] = fieldsOf(v, sub, keyOf);
  }
  return out;
}

function mergeApplied(live: unknown, applied: unknown, path: string[], keyOf: KeyOf): unknown {
  if (!isObject(applied) || !isObject(live)) return applied;
  const out: Record<string, unknown> = { ...live };
  for (const [k, v] of Object.entries(applied)) {
    const sub = [...path, k];
    if (path.length === 1 && path[0] === "metadata" && SKIP_META.has(k)) continue;
    const mk = Array.isArray(v) ? keyOf(sub) : undefined;
    if (mk && Array.isArray(live[k])) {
      const items = [...(live[k] as unknown[])];
      for (const item of v as unknown[]) {
        const idx = isObject(item)
          ? items.findIndex((x) => isObject(x) && deepEqual(x[mk], item[mk]))
          : -1;
        if (idx >= 0) items[idx] = mergeApplied(items[idx], item, sub, keyOf);
        else items.push(item);
      }
      out[k] = items;
    } else out[k] = mergeApplied(live[k], v, sub, keyOf);
  }
  return out;
}

function removeFields(value: unknown, fields: FieldsV1, path: string[], keyOf: KeyOf): unknown {
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [fk, sub] of Object.entries(fields)) {
    if (!fk.startsWith("f:")) continue;
    const k = fk.slice(2);
    if (!(k in out)) continue;
    const childPath = [...path, k];
    const keys = Object.keys(sub);
    if (keys.length === 0) {
      delete out[k];
    } else if (Array.isArray(out[k]) && keyOf(childPath)) {
      let items = out[k] as unknown[];
      for (const [ik, isub] of Object.entries(sub)) {
        if (!ik.startsWith("k:")) continue;
        const key = JSON.parse(ik.slice(2)) as Record<string, unknown>;
        const match = (x: unknown) =>
          isObject(x) && Object.entries(key).every(([kk, kv]) => deepEqual(x[kk], kv));
        if ("." in isub) items = items.filter((x) => !match(x));
        else items = items.map((x) => match(x) ? removeFields(x, isub, childPath, keyOf) : x);
      }
      out[k] = items;
    } else {
      out[k] = removeFields(out[k], sub, childPath, keyOf);
    }
  }
  return out;
}

function intersect(a: FieldsV1, b: FieldsV1): FieldsV1 {
  const out: FieldsV1 = {};
  for (const [k, v] of Object.entries(a)) {
    if (!(k in b)) continue;
    const bv = b[k]!;
    const av = Object.keys(v).length, bl = Object.keys(bv).length;
    if (av === 0 || bl === 0) out[k] = {};
    else {
      const sub = intersect(v, bv);
      if (Object.keys(sub).length) out[k] = sub;
    }
  }
  return out;
}

function subtract(a: FieldsV1, b: FieldsV1): FieldsV1 {
  const out: FieldsV1 = {};
  for (const [k, v] of Object.entries(a)) {
    const bv = b[k];
    if (bv === undefined) {
      out[k] = v;
      continue;
    }
    if (Object.keys(v).length === 0) continue;
    const sub = subtract(v, bv);
    if (Object.keys(sub).length) out[k] = sub;
  }
  return out;
}

function leaves(tree: FieldsV1, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(tree)) {
    if (k === ".") continue;
    if (Object.keys(v).length === 0) out.push([...prefix, k]);
    else out.push(...leaves(v, [...prefix, k]));
  }
  return out;
}

function valueAt(obj: unknown, path: string[], keyOf: KeyOf): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (seg.startsWith("f:")) cur = isObject(cur) ? cur[seg.slice(2)] : undefined;
    else if (seg.startsWith("k:")) {
      const key = JSON.parse(seg.slice(2)) as Record<string, unknown>;
      cur = Array.isArray(cur)
        ? cur.find((x) =>
          isObject(x) && Object.entries(key).every(([kk, kv]) => deepEqual(x[kk], kv))
        )
        : undefined;
    }
  }
  void keyOf;
  return cur;
}

function pretty(seg: string): string {
  return seg.startsWith("f:") ? seg.slice(2) : `[${seg.slice(2)}]`;
}
