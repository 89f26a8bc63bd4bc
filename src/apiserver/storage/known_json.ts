/**
 * The JSON text of shared parts of stored objects, kept with them, so that encoding an object
 * that holds one copies its text instead of encoding it again.
 *
 * Why: a Pod's spec with kube's defaults is most of its JSON (750 of 1,100 characters for the
 * bench's Pod), and its defaulted spec is one object shared by every Pod created from the same
 * spec and by every later version of each (`builtins/pod_spec_memo.ts`); so is the status of the
 * Pods created from it within a second (`builtins/pod_strategy.ts`). Every write of such a Pod
 * encoded them again (`store.ts` encodes each version once, for the data directory, its watchers
 * and the write's answer): 3.2 µs a Pod, 1.3 µs with their texts copied.
 *
 * Guarantees: {@linkcode encodeObject} gives exactly `JSON.stringify`'s text. A part's text is
 * its own `JSON.stringify` taken when it is kept, and a kept part is never changed (stored
 * objects are never mutated: `store.ts`). Only the object's own members are looked up (one level).
 *
 * @module
 */

/** The text of each kept part. Few parts (the memo's specs and their statuses), long-lived. */
const KNOWN = new WeakMap<object, string>();

/**
 * Keeps the JSON text of a part shared by stored objects; it must never change afterwards.
 *
 * @param part An object shared by stored objects (a kept pod spec, a created status).
 * @returns The same object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeObject, keepJson } from "./known_json.ts";
 * const spec = keepJson({ containers: [{ name: "c" }] });
 * assert.equal(encodeObject({ spec }), '{"spec":{"containers":[{"name":"c"}]}}');
 * ```
 */
export function keepJson<T extends object>(part: T): T {
  KNOWN.set(part, JSON.stringify(part));
  return part;
}

/**
 * An object's JSON text, as `JSON.stringify` writes it, with the texts of its kept members
 * ({@linkcode keepJson}) copied rather than encoded again.
 *
 * @param obj A plain object (a stored object).
 * @returns Its JSON text.
 * @throws {TypeError} Where `JSON.stringify` throws (a cycle, a BigInt).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeObject, keepJson } from "./known_json.ts";
 * const status = keepJson({ phase: "Pending" });
 * const pod = { kind: "Pod", skipped: undefined, status, "a\"b": [1] };
 * assert.equal(encodeObject(pod), JSON.stringify(pod));
 * ```
 */
export function encodeObject(obj: Record<string, unknown>): string {
  let kept = false;
  for (const key in obj) {
    const v = obj[key];
    if (v !== null && typeof v === "object" && KNOWN.has(v)) {
      kept = true;
      break;
    }
  }
  if (!kept) return JSON.stringify(obj);
  let out = "";
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    const text = (v !== null && typeof v === "object" ? KNOWN.get(v) : undefined) ??
      JSON.stringify(v);
    // Members JSON has no text for (undefined, functions, symbols) are left out, as there.
    if (text === undefined) continue;
    out += `${out ? "," : "{"}${JSON.stringify(key)}:${text}`;
  }
  return out ? out + "}" : "{}";
}
