/**
 * Private helpers of the hierarchy kit: walking `objs` (one object, an array,
 * or any iterable of them, nested to any depth), resolving nested field paths
 * in plain objects and in `@kubernetes/client-node` model instances alike, and
 * reading or creating `metadata` and its sub-fields with type checks.
 *
 * Why a separate file: the public functions all validate first and mutate
 * second (so a bad element at the end of a list leaves the earlier ones
 * untouched), and they share these steps.
 *
 * Model instances need no import of the client library: their properties
 * carry the JSON field names (`metadata.ownerReferences`, `generateName`), so
 * they are read and written like plain objects. The few model properties whose
 * names differ from the JSON (`_default`, `_from`, …) are found through the
 * class's static `attributeTypeMap`, as the library's own serializer does.
 * That is also why the structs' `isObject()` serves here as is: it takes any
 * non-array object, class instances included.
 *
 * @module
 */

import { isObject, type JsonObject } from "../cogs/structs/_json.ts";
import type { FieldSpec } from "../cogs/structs/dicts.ts";

/** One object to work on, with where it came from for error messages. */
export interface Target {
  /** The object itself (a plain object or a model instance), edited in place. */
  obj: JsonObject;
  /** A path for messages, e.g. `objs[1]` or `objs[0].spec.template`. */
  where: string;
}

/**
 * A nested field inside each child, as `label()` and `adopt()` take it: a
 * {@link FieldSpec} that names a field — dotted or an array of keys (for keys
 * with dots) — never the root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { label, type NestedFieldPath } from "@kopf/kopf";
 *
 * const paths: NestedFieldPath[] = ["spec.template", ["spec", "jobTemplate"]];
 * const job = { kind: "Job", spec: { template: {} } };
 * label(job, { app: "web" }, { nested: paths });
 * assert.deepEqual(job.spec.template, { metadata: { labels: { app: "web" } } });
 * ```
 */
export type NestedFieldPath = NonNullable<FieldSpec>;

/** A short phrase for a value of the wrong type: "a string", "null", "an array". */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof value === "object" && value !== null &&
    typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function";
}

/**
 * Flattens `objs` into the objects to edit. Arrays and other iterables are
 * walked recursively (and only once, so a generator works for every step of
 * `adopt()`); anything that is neither an object nor an iterable is an error.
 */
export function collectObjects(fn: string, objs: unknown): Target[] {
  const targets: Target[] = [];
  const ancestors = new Set<unknown>();
  const visit = (value: unknown, where: string): void => {
    if (isIterable(value)) {
      if (ancestors.has(value)) {
        throw new TypeError(`${fn}(): ${where} contains itself; pass a list without cycles.`);
      }
      ancestors.add(value);
      let index = 0;
      for (const item of value) visit(item, `${where}[${index++}]`);
      ancestors.delete(value);
    } else if (isObject(value)) {
      targets.push({ obj: value, where });
    } else {
      throw new TypeError(
        `${fn}(): ${where} is ${describe(value)}, not a Kubernetes object; ` +
          `pass an object (plain or a client-node model) or an array of objects.`,
      );
    }
  };
  visit(objs, "objs");
  return targets;
}

/** Splits each nested field spec into its keys: `"spec.template"` → `["spec", "template"]`. */
export function parseNested(
  fn: string,
  nested: NestedFieldPath | Iterable<NestedFieldPath> | undefined,
): string[][] {
  if (nested === undefined) return [];
  const specs: Iterable<NestedFieldPath> = typeof nested === "string" ? [nested] : nested;
  const paths: string[][] = [];
  for (const spec of specs) {
    const path = typeof spec === "string" ? spec.split(".") : Array.isArray(spec) ? [...spec] : [];
    if (path.length === 0 || path.some((key) => typeof key !== "string" || key === "")) {
      throw new TypeError(
        `${fn}(): nested field ${JSON.stringify(spec)} is not a field path; ` +
          `use a dotted string like "spec.template" or an array of keys.`,
      );
    }
    paths.push(path);
  }
  return paths;
}

/** The property that holds the JSON field `key`: the same name, except in a few models. */
function propertyOf(obj: JsonObject, key: string): string {
  if (Object.hasOwn(obj, key)) return key;
  const map = (obj.constructor as { attributeTypeMap?: unknown } | undefined)?.attributeTypeMap;
  if (Array.isArray(map)) {
    for (const attr of map) {
      if (isObject(attr) && attr.baseName === key && typeof attr.name === "string") {
        return attr.name;
      }
    }
  }
  return key;
}

/**
 * The object at a nested path, or undefined when the path (or a part of it)
 * is absent or null — such structures are skipped, as Kopf skips them. A
 * non-object on the way or at the end is an error, not silently ignored.
 */
export function resolveNested(fn: string, target: Target, path: string[]): Target | undefined {
  let value: unknown = target.obj;
  let where = target.where;
  for (const key of path) {
    if (!isObject(value)) {
      throw new TypeError(
        `${fn}(): ${where} is ${describe(value)}, so nested field "${path.join(".")}" ` +
          `cannot be labelled; fix the object or drop that nested path.`,
      );
    }
    value = value[propertyOf(value, key)];
    where = `${where}.${key}`;
    if (value === undefined || value === null) return undefined;
  }
  if (!isObject(value)) {
    throw new TypeError(
      `${fn}(): ${where} is ${describe(value)}, not an object with metadata; ` +
        `point nested at an object such as a pod template ("spec.template").`,
    );
  }
  return { obj: value, where };
}

/** What a field must hold when present. */
export type Shape = "object" | "array";

function matches(value: unknown, shape: Shape): boolean {
  return shape === "array" ? Array.isArray(value) : isObject(value);
}

function wrongShape(fn: string, where: string, value: unknown, shape: Shape): TypeError {
  const wanted = shape === "array" ? "an array" : "an object";
  return new TypeError(
    `${fn}(): ${where} is ${describe(value)}, but must be ${wanted}; ` +
      `fix or delete that field before calling ${fn}().`,
  );
}

/** Throws unless `metadata` (and `metadata.<field>`, if given) is absent or of the right shape. */
export function checkMetadata(fn: string, target: Target, field?: [string, Shape]): void {
  const meta = target.obj.metadata;
  if (meta === undefined || meta === null) return;
  if (!isObject(meta)) throw wrongShape(fn, `${target.where}.metadata`, meta, "object");
  if (field === undefined) return;
  const [name, shape] = field;
  const value = meta[name];
  if (value !== undefined && value !== null && !matches(value, shape)) {
    throw wrongShape(fn, `${target.where}.metadata.${name}`, value, shape);
  }
}

/** The object's `metadata`, created (as a plain object) when absent. Call `checkMetadata` first. */
export function ensureMetadata(obj: JsonObject): JsonObject {
  const meta = obj.metadata;
  if (isObject(meta)) return meta;
  const created: JsonObject = {};
  obj.metadata = created;
  return created;
}

/** `metadata.<name>` as an object, created when absent. Call `checkMetadata` first. */
export function ensureMetaObject(obj: JsonObject, name: string): Record<string, unknown> {
  const meta = ensureMetadata(obj);
  const value = meta[name];
  if (isObject(value)) return value;
  const created: JsonObject = {};
  meta[name] = created;
  return created;
}

/** `metadata.<name>` as an array, created when absent. Call `checkMetadata` first. */
export function ensureMetaArray(obj: JsonObject, name: string): unknown[] {
  const meta = ensureMetadata(obj);
  const value = meta[name];
  if (Array.isArray(value)) return value;
  const created: unknown[] = [];
  meta[name] = created;
  return created;
}

/** `metadata.<name>` of an object, if metadata is an object; never creates anything. */
export function peekMeta(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  const meta = obj.metadata;
  return isObject(meta) ? meta[name] : undefined;
}

/** Whether a name-like field has a usable value (a non-empty string). */
export function isSet(value: unknown): boolean {
  return typeof value === "string" && value !== "";
}
