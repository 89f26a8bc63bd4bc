/**
 * The `patch` argument of handlers: what the handlers of one processing cycle
 * want changed on the object, gathered into one JSON merge patch (RFC 7386)
 * that the framework sends once at the end of the cycle.
 *
 * Handlers write into it like a plain object — `patch.status.phase = "Done"`,
 * `patch.metadata.labels.app = "x"`, `patch.metadata.annotations.k = null`
 * (`null` deletes in a merge patch). For that, the well-known branches
 * (`metadata`, `spec`, `status`, and `metadata.labels`/`annotations`) spring
 * into being when first read; the ones that stay empty are pruned from the
 * final patch, so reading `patch.status.x` never sends `{"status":{}}`.
 *
 * @module
 */

import { isObject, type JsonObject, setOwn } from "./_json.ts";
import { deepCopy, ensure, type FieldSpec, hasPath, parseField, remove, resolve } from "./dicts.ts";

/** Label or annotation values in a patch: a string sets, `null` deletes. */
export type PatchStrings = Record<string, string | null>;

/**
 * The `metadata` branch of a patch; `labels` and `annotations` are created when first read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type MetaPatch, Patch } from "@kopf/kopf";
 * const patch = new Patch();
 * const meta: MetaPatch = patch.metadata;
 * meta.labels.app = "x";
 * assert.deepEqual(JSON.parse(JSON.stringify(patch)), {"metadata":{"labels":{"app":"x"}}});
 * ```
 */
export interface MetaPatch extends JsonObject {
  /** The labels to change: a string sets, `null` deletes. */
  labels: PatchStrings;
  /** The annotations to change: a string sets, `null` deletes. */
  annotations: PatchStrings;
}

/** One operation of a JSON patch (RFC 6902), as {@link Patch.toJsonPatch} produces. */
export interface JsonPatchOperation {
  /** The operation (`toJsonPatch` produces `add`, `replace` and `remove`). */
  op: "add" | "replace" | "remove" | "test";
  /** The JSON pointer (RFC 6901) of the field, e.g. `"/metadata/labels/app"`. */
  path: string;
  /** The new value (for `add` and `replace`). */
  value?: unknown;
}

const LAZY_META_KEYS = new Set(["labels", "annotations"]);
const LAZY_ROOT_KEYS = new Set(["metadata", "spec", "status"]);
/** What a metadata proxy answers `true` for (and nothing else does): it is wrapped already. */
const LAZY_META = Symbol("lazy metadata");

/** What a metadata proxy answers with its target (the plain object it wraps). */
const RAW_META = Symbol("raw metadata");

/** The handler of every metadata proxy: reading an absent `labels`/`annotations` creates it. */
const META_HANDLER: ProxyHandler<JsonObject> = {
  get(obj, prop, receiver) {
    if (prop === LAZY_META) return true;
    if (prop === RAW_META) return obj;
    if (typeof prop === "string" && LAZY_META_KEYS.has(prop) && !Object.hasOwn(obj, prop)) {
      setOwn(obj, prop, {});
    }
    return Reflect.get(obj, prop, receiver);
  },
};

/** The plain object under a metadata proxy (or the object itself, if not wrapped). */
function rawMeta(value: JsonObject): JsonObject {
  return ((value as Record<symbol, unknown>)[RAW_META] as JsonObject | undefined) ?? value;
}

/** Wraps a metadata object so that reading an absent `labels`/`annotations` creates it. */
function lazyMeta(target: JsonObject): MetaPatch {
  if ((target as Record<symbol, unknown>)[LAZY_META] === true) return target as MetaPatch;
  return new Proxy(target, META_HANDLER) as MetaPatch;
}

/** Deep-merges `src` into `dst` in place: objects into objects, anything else (null too) replaces. */
function mergeInto(dst: JsonObject, src: JsonObject): void {
  for (const [key, value] of Object.entries(src)) {
    if (value === undefined) continue;
    const existing = Object.hasOwn(dst, key) ? dst[key] : undefined;
    if (isObject(value) && isObject(existing)) mergeInto(existing, value);
    else setOwn(dst, key, deepCopy(value));
  }
}

function isEmptyObject(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** A deep copy of an object without those of its `lazy` members that are empty objects. */
function hasOwnKeys(value: JsonObject): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

function copyWithoutEmpty(obj: JsonObject, lazy: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    const item = obj[key];
    if (item === undefined) continue;
    const copy = deepCopy(item);
    if (lazy.has(key) && isEmptyObject(copy)) continue;
    setOwn(out, key, copy);
  }
  return out;
}

function escapePointer(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * A JSON merge patch being collected for one object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Patch } from "@kopf/kopf";
 * const patch = new Patch();
 * patch.status.phase = "Running";
 * patch.metadata.annotations["kopf.zalando.org/touch-dummy"] = null;
 * assert.deepEqual(patch.spec.replicas, undefined); // — and `spec` will not be sent
 * assert.deepEqual(JSON.parse(JSON.stringify(patch)), {"status":{"phase":"Running"},"metadata":{"annotations":{"kopf.zalando.org/touch-dummy":null}}});
 * ```
 */
export class Patch {
  #root: JsonObject = {};

  /**
   * Creates a patch, optionally starting from another patch's or a plain object's content (copied).
   *
   * @param src The initial content.
   */
  constructor(src?: Patch | JsonObject | null) {
    if (src) this.merge(src);
  }

  #branch(key: "spec" | "status"): JsonObject {
    const value = Object.hasOwn(this.#root, key) ? this.#root[key] : undefined;
    if (value === undefined) {
      const created: JsonObject = {};
      this.#root[key] = created;
      return created;
    }
    if (!isObject(value)) {
      throw new TypeError(
        `patch.${key} is ${
          JSON.stringify(value)
        }, not an object; assign an object to write into it.`,
      );
    }
    return value;
  }

  /** The `metadata` branch (created when first read; pruned from the result if left empty). */
  get metadata(): MetaPatch {
    const value = Object.hasOwn(this.#root, "metadata") ? this.#root.metadata : undefined;
    if (value === undefined) {
      const created = lazyMeta({});
      this.#root.metadata = created;
      return created;
    }
    if (!isObject(value)) {
      throw new TypeError(
        `patch.metadata is ${
          JSON.stringify(value)
        }, not an object; assign an object to write into it.`,
      );
    }
    const wrapped = lazyMeta(value);
    this.#root.metadata = wrapped;
    return wrapped;
  }

  set metadata(value: JsonObject | null) {
    this.#root.metadata = isObject(value) ? lazyMeta(value) : value;
  }

  /** An alias of {@link Patch.metadata}, as in Kopf. */
  get meta(): MetaPatch {
    return this.metadata;
  }

  set meta(value: JsonObject | null) {
    this.metadata = value;
  }

  /** The `spec` branch (created when first read; pruned from the result if left empty). */
  get spec(): JsonObject {
    return this.#branch("spec");
  }

  set spec(value: JsonObject | null) {
    this.#root.spec = value;
  }

  /** The `status` branch (created when first read; pruned from the result if left empty). */
  get status(): JsonObject {
    return this.#branch("status");
  }

  set status(value: JsonObject | null) {
    this.#root.status = value;
  }

  /**
   * Reads a field of the patch (live, not copied), without creating anything.
   *
   * @param field The field, e.g. `"metadata.annotations.x"` or a list of keys.
   * @param fallback What to return when the field is absent.
   * @returns The value or `fallback`.
   */
  get(field: FieldSpec, fallback?: unknown): unknown {
    return parseField(field).length === 0 ? this.toJSON() : resolve(this.#root, field, fallback);
  }

  /**
   * Sets a field, creating its parents: `patch.set("data.key", "v")` for
   * top-level keys other than the three branches, or keys with dots
   * (`patch.set(["metadata", "annotations", "a.b/c"], null)`).
   *
   * @param field The field (not the root).
   * @param value The value; `null` deletes the field when the patch is applied.
   */
  set(field: FieldSpec, value: unknown): void {
    ensure(this.#root, field, value);
  }

  /**
   * Whether the field is present in the patch (also when `null`).
   *
   * @param field The field.
   * @returns True when present.
   */
  has(field: FieldSpec): boolean {
    return hasPath(this.#root, field);
  }

  /**
   * Removes a field from the patch itself (it will not be sent at all),
   * and the parents this leaves empty.
   *
   * @param field The field (not the root).
   */
  remove(field: FieldSpec): void {
    remove(this.#root, field);
  }

  /**
   * Deep-merges another patch or object into this one: objects merge key by
   * key, anything else (including `null`) overwrites.
   *
   * @param other The patch or object to merge in (copied, not referenced).
   * @returns This patch.
   */
  merge(other: Patch | JsonObject): this {
    mergeInto(this.#root, other instanceof Patch ? other.toJSON() : other);
    return this;
  }

  /** Forgets everything collected so far. */
  clear(): void {
    this.#root = {};
  }

  /**
   * Whether there is nothing to send (empty branches do not count).
   *
   * @returns True when the merge patch would be `{}`.
   */
  isEmpty(): boolean {
    // The usual answer without a copy: no key, or only undefined values and branches with no
    // keys at all (a cycle that changed nothing asks this); anything else is judged on the copy.
    const root = this.#root;
    for (const key in root) {
      if (!Object.hasOwn(root, key)) continue;
      const value = root[key];
      if (value === undefined) continue;
      if (
        LAZY_ROOT_KEYS.has(key) && isObject(value) &&
        !hasOwnKeys(key === "metadata" ? rawMeta(value) : value)
      ) continue;
      return Object.keys(this.toJSON()).length === 0;
    }
    return true;
  }

  /**
   * The merge patch to send: a deep copy with empty `metadata`, `spec`,
   * `status`, `metadata.labels` and `metadata.annotations` left out.
   *
   * @returns The JSON merge patch.
   */
  toJSON(): JsonObject {
    // One pass: the empty branches are left out as they are copied, not deleted afterwards
    // (a deletion turns the copy into a slow dictionary, and this runs on every cycle).
    const root = this.#root;
    const result: JsonObject = {};
    for (const key in root) {
      if (!Object.hasOwn(root, key)) continue;
      const value = root[key];
      if (value === undefined) continue;
      // The metadata proxy's target is copied, not the proxy: reading keys through the proxy's
      // traps makes a descriptor per key.
      const copy = key === "metadata" && isObject(value)
        ? copyWithoutEmpty(rawMeta(value), LAZY_META_KEYS)
        : deepCopy(value);
      if (LAZY_ROOT_KEYS.has(key) && isEmptyObject(copy)) continue;
      setOwn(result, key, copy);
    }
    return result;
  }

  /**
   * The same changes as a JSON patch (RFC 6902), as admission webhooks must
   * answer: `null` → `remove`; a field absent in `body` → `add` of the whole
   * value; objects recursed into; anything else → `replace`. Without a body,
   * every leaf is a `replace`.
   *
   * @param body The object the patch is for (to tell `add` from `replace`).
   * @returns The operations.
   */
  toJsonPatch(body?: JsonObject | null): JsonPatchOperation[] {
    const ops: JsonPatchOperation[] = [];
    const original = isObject(body) && Object.keys(body).length > 0 ? body : undefined;
    const walk = (value: unknown, keys: string[]): void => {
      const path = "/" + keys.map(escapePointer).join("/");
      if (value === null) {
        ops.push({ op: "remove", path });
      } else if (keys.length > 0 && original !== undefined && !hasPath(original, keys)) {
        ops.push({ op: "add", path, value });
      } else if (isObject(value) && Object.keys(value).length > 0) {
        for (const [key, item] of Object.entries(value)) walk(item, [...keys, key]);
      } else {
        ops.push({ op: "replace", path, value });
      }
    };
    const root = this.toJSON();
    for (const [key, item] of Object.entries(root)) walk(item, [key]);
    return ops;
  }

  /** Shows the merge patch in `console.log` and Deno's inspector. */
  [Symbol.for("Deno.customInspect")](): string {
    return `Patch ${JSON.stringify(this.toJSON())}`;
  }
}
