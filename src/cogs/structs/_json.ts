/**
 * Small helpers shared by the patch modules and the layers above (configs,
 * the hierarchies kit): the JSON object type, its guard, and a property
 * setter that is safe for `__proto__` keys (a patch must never be able to
 * change an object's prototype).
 *
 * @module
 */

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/**
 * Whether a value is a JSON object (not null, not an array). Class instances
 * count too — `@kubernetes/client-node` models carry the JSON field names as
 * their properties, so they are read and written like plain objects.
 *
 * @param value Any value.
 * @returns True for plain objects and class instances; false for arrays, null, scalars.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isObject } from "./_json.ts";
 * assert.deepEqual([isObject({}), isObject([]), isObject(null)], [true, false, false]);
 * assert.deepEqual(isObject(new (class Pod {})()), true);
 * ```
 */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Sets an own property, even one named `__proto__`, without touching prototypes.
 *
 * @param target The object to set on.
 * @param key The key.
 * @param value The value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { setOwn } from "./_json.ts";
 * const o: Record<string, unknown> = {};
 * setOwn(o, "__proto__", 1);
 * assert.deepEqual(Object.keys(o), ["__proto__"]);
 * ```
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}
