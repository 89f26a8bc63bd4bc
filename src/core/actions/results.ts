/**
 * Checking a handler's result before the handler is declared successful.
 *
 * Why: a result is stored on the object (`status.<handler id>`) by the same
 * patch that records the handler's success. A result that cannot be written —
 * a BigInt, a cyclic object, a value far too big for an object — used to be
 * logged as "succeeded", then the patch failed, and every handler of the cause
 * ran again, forever, repeating its side effects. Checked here, such a result
 * fails its handler once, permanently, with the handler named and the path of
 * the bad value; nothing is re-run because of it.
 *
 * What JSON silently drops (functions, `undefined`, symbols) is dropped here
 * too — that is what a JavaScript developer expects from a value that is
 * serialised — and said once at debug level. What JSON would silently turn
 * into something else (`NaN` into `null`, a `Map` into `{}`) or cannot write
 * at all (a BigInt, a cycle) is refused.
 *
 * @module
 */

/** Why a result cannot be stored: where the bad value is, and what it is. */
export interface ResultProblem {
  /** The path of the bad value, e.g. `result.items[2].size`. */
  path: string;
  /** What is wrong and what to do, e.g. "a BigInt (return it as a string or a number)". */
  reason: string;
}

/** A checked result: the JSON form to store, or the problem. */
export type CheckedResult =
  | { ok: true; value: unknown; dropped: string[]; bytes: number }
  | { ok: false; problem: ResultProblem };

/**
 * Checks that a result can be stored as JSON on the object, within a size limit.
 *
 * @param value The handler's result (not `null`/`undefined`: those are not stored at all).
 * @param limit The largest JSON size in bytes (UTF-8) a result may take.
 * @returns The value as it will be stored (a JSON copy) and the paths that JSON drops; or the
 *   problem: where and what.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkResult } from "./results.ts";
 * const cyclic: Record<string, unknown> = { a: 1 };
 * cyclic.self = cyclic;
 * const checked = checkResult({ n: 10n, ok: true }, 1024);
 * assert.deepEqual(checked.ok || checked.problem.path, "result.n");
 * assert.deepEqual(checkResult(cyclic, 1024).ok, false);
 * const fine = checkResult({ a: 1, f: () => {} }, 1024);
 * assert.deepEqual([fine.ok && fine.value, fine.ok && fine.dropped], [{ a: 1 }, [ "result.f" ]]);
 * ```
 */
export function checkResult(value: unknown, limit: number): CheckedResult {
  const dropped: string[] = [];
  // The walk's stacks: shared by the checks and kept with their capacity (popped, never cut) —
  // unless a value's toJSON() checks a result meanwhile: that check makes its own.
  const shared = !walking;
  const at = shared ? AT : [];
  const parents = shared ? PARENTS : [];
  walking = true;
  let problem: ResultProblem | undefined;
  try {
    problem = walk(value, at, parents, dropped);
  } finally {
    if (shared) {
      walking = false;
      while (at.length) at.pop();
      while (parents.length) parents.pop();
    }
  }
  if (problem) return { ok: false, problem };
  const text = JSON.stringify(value);
  if (text === undefined) {
    return { ok: true, value: undefined, dropped: dropped.length ? dropped : ["result"], bytes: 0 };
  }
  const bytes = utf8Length(text);
  if (bytes > limit) {
    return {
      ok: false,
      problem: {
        path: "result",
        reason: `${kib(bytes)} of JSON, more than the ${
          kib(limit)
        } a result may take on the object (settings.persistence.resultSizeLimit): store large data elsewhere (a ConfigMap, a Secret, a volume) and return a reference to it`,
      },
    };
  }
  // The JSON copy: what is stored, and later mutations of the handler's objects do not leak in.
  return { ok: true, value: JSON.parse(text), dropped, bytes };
}

/** The walk's stacks of keys and of parents, shared by the checks (see {@link checkResult}). */
const AT: (string | number)[] = [];
const PARENTS: object[] = [];
/** Whether a check is walking a value now (a toJSON() that checks a result gets its own stacks). */
let walking = false;

/**
 * The bytes of a text in UTF-8, as `TextEncoder` would write it (a lone surrogate as U+FFFD),
 * counted without writing it.
 */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // the pair: 4 bytes for its 2 units
        i++;
      } else bytes += 2; // a lone high surrogate: U+FFFD, 3 bytes
    } else bytes += 2; // 3 bytes: the BMP above U+07FF, a lone surrogate (U+FFFD)
  }
  return bytes;
}

/**
 * The path of a value in the result, as the messages name it: `result`, `result.items[2].size`,
 * `result["a-b"]` — made only for a problem or a dropped value (`at`: the keys and indices).
 */
function pathOf(at: readonly (string | number)[]): string {
  let path = "result";
  for (let i = 0; i < at.length; i++) {
    const step = at[i]!;
    path += typeof step === "number" ? `[${step}]` : pathKey(step);
  }
  return path;
}

function walk(
  value: unknown,
  at: (string | number)[],
  parents: object[],
  dropped: string[],
): ResultProblem | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : {
        path: pathOf(at),
        reason: `a non-finite number (${value}), which JSON would store as null`,
      };
    case "bigint":
      return {
        path: pathOf(at),
        reason: "a BigInt, which JSON cannot store (return it as a string)",
      };
    case "function":
    case "symbol":
    case "undefined":
      dropped.push(pathOf(at));
      return undefined;
  }
  if (value === null) return undefined;
  const obj = value as Record<string, unknown>;
  if (parents.includes(obj)) {
    return { path: pathOf(at), reason: "a cycle: the value refers back to itself" };
  }
  if (typeof (obj as { toJSON?: unknown }).toJSON === "function") {
    // Dates and the like: stored as what their toJSON() gives.
    let json: unknown;
    try {
      json = (obj as { toJSON: () => unknown }).toJSON();
    } catch (e) {
      return {
        path: pathOf(at),
        reason: `a value whose toJSON() fails: ${(e as Error)?.message ?? e}`,
      };
    }
    if (json === obj) return undefined;
    return walk(json, at, [...parents, obj], dropped);
  }
  if (obj instanceof Map || obj instanceof Set) {
    const name = obj instanceof Map ? "Map" : "Set";
    const fix = obj instanceof Map ? "Object.fromEntries(map)" : "[...set]";
    return { path: pathOf(at), reason: `a ${name}, which JSON would store as {} (return ${fix})` };
  }
  parents.push(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const item = obj[i];
        const t = typeof item;
        at.push(i);
        if (t === "function" || t === "symbol" || t === "undefined") {
          // JSON writes these as null inside arrays: a change of meaning, not a drop.
          return {
            path: pathOf(at),
            reason: `${
              t === "undefined" ? "undefined" : `a ${t}`
            } in an array, which JSON would store as null`,
          };
        }
        const problem = walk(item, at, parents, dropped);
        if (problem) return problem;
        at.pop();
      }
      return undefined;
    }
    // The own keys by for-in and the own-key check: Object.keys()' order, without its array.
    for (const key in obj) {
      if (!Object.hasOwn(obj, key)) continue;
      at.push(key);
      const problem = walk(obj[key], at, parents, dropped);
      if (problem) return problem;
      at.pop();
    }
    return undefined;
  } finally {
    parents.pop();
  }
}

function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function kib(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
}
