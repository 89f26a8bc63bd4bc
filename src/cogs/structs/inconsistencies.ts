/**
 * What a merge patch asked for and the API's answer did not keep: the check
 * behind Kopf's "Patching failed with inconsistencies" warning.
 *
 * Why: a CRD whose structural schema does not declare a field (and does not
 * set `x-kubernetes-preserve-unknown-fields`) has the server prune it silently
 * — the patch succeeds, the answer lacks the field. A handler's result in
 * `status.<id>`, or the progress kept in `status.kopf`, vanish, and without
 * this check the operator would say nothing.
 *
 * Only what the patch names is compared (everything else in the answer may
 * change freely). What is not an inconsistency:
 * - a `null` (a merge patch's deletion) whose field is absent in the answer;
 * - an empty object or list whose field is absent (Kubernetes drops empty
 *   labels, annotations, finalizers; a patch that only deletes leaves nothing);
 * - fields that the server owns and rewrites (`metadata.resourceVersion`,
 *   `generation`, `managedFields`, `uid`, timestamps, …; `apiVersion`, `kind`);
 * - fields that the answer's list items or objects have in addition (defaults).
 *
 * Lists are replaced whole by a merge patch: they are compared item by item,
 * each item as a patch of its own (so defaults added to items are fine, a
 * pruned field of an item is lost), and a list of another length is changed.
 *
 * @module
 */

import { isObject, type JsonObject } from "./_json.ts";
import { deepEqual } from "./deep_equal.ts";

/** How the answer differs from the patch at one field. */
export type InconsistencyKind =
  /** The patch sets the field; the answer lacks it (pruned, or dropped by a webhook). */
  | "lost"
  /** The patch sets the field; the answer has another value. */
  | "changed"
  /** The patch deletes the field (`null`); the answer still has it. */
  | "kept";

/** One field of a patch that the API's answer does not reflect. */
export interface Inconsistency {
  /** The field's path, key by key (list items by their index). */
  path: readonly (string | number)[];
  /** How it differs. */
  kind: InconsistencyKind;
  /** What the patch asked for (`null` for a deletion). */
  patched: unknown;
  /** What the answer has (`undefined` when absent). */
  stored: unknown;
}

/** The fields of `metadata` that the server sets and rewrites; a patch cannot set them. */
const SERVER_METADATA = new Set([
  "resourceVersion",
  "generation",
  "managedFields",
  "uid",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
]);

/** The top-level fields that the server rewrites (a patch body may carry them as identity). */
const SERVER_TOP = new Set(["apiVersion", "kind"]);

/**
 * The fields of a merge patch that the API's answer does not reflect. A lost
 * object is named once at its highest absent field — but never as a whole
 * top-level field (`status`): its fields are named instead, so that the
 * result of a handler reads as `status.<handler id>`.
 *
 * @param patch The merge patch as sent (RFC 7386: `null` deletes).
 * @param answer The object as the API answered the patch.
 * @returns The inconsistencies, in the patch's key order; empty when consistent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findInconsistencies } from "./inconsistencies.ts";
 * const patch = { status: { create_fn: { message: "hi" }, kopf: { progress: { create_fn: null } } } };
 * const answer = { metadata: { resourceVersion: "2" }, status: {} };
 * const found = findInconsistencies(patch, answer).map((i) => `${i.kind} ${i.path.join(".")}`);
 * assert.deepEqual(found, ["lost status.create_fn"]);
 * ```
 */
export function findInconsistencies(patch: JsonObject, answer: unknown): Inconsistency[] {
  // The walk's two lists (it calls nothing back: never two at once), kept between the walks:
  // the path popped, never cut (it keeps its capacity); the findings, mostly none, emptied.
  const out = FOUND;
  const path = PATH;
  try {
    walkPatch(patch, isObject(answer) ? answer : undefined, path, out);
    return out.length ? out.slice() : NONE;
  } finally {
    out.length = 0;
    while (path.length) path.pop();
  }
}

/** The inconsistencies found by the walk under way (emptied after it). */
const FOUND: Inconsistency[] = [];
/** The path of the field compared: one stack for every walk, copied for an inconsistency. */
const PATH: (string | number)[] = [];
/** No inconsistency: shared, frozen. */
const NONE: Inconsistency[] = Object.freeze([]) as unknown as Inconsistency[];

function walkPatch(
  patch: JsonObject,
  root: JsonObject | undefined,
  path: (string | number)[],
  out: Inconsistency[],
): void {
  for (const key in patch) {
    if (!Object.hasOwn(patch, key) || SERVER_TOP.has(key)) continue;
    const value = patch[key];
    const stored = root?.[key];
    if (isObject(value) && stored === undefined) {
      // A whole top-level field absent: name its fields (status.<id>), not just "status".
      for (const sub in value) {
        if (!Object.hasOwn(value, sub) || (key === "metadata" && SERVER_METADATA.has(sub))) {
          continue;
        }
        path.push(key, sub);
        compare(value[sub], undefined, path, out);
        path.pop();
        path.pop();
      }
    } else if (key === "metadata" && isObject(value) && isObject(stored)) {
      for (const sub in value) {
        if (!Object.hasOwn(value, sub) || SERVER_METADATA.has(sub)) continue;
        path.push(key, sub);
        compare(value[sub], stored[sub], path, out);
        path.pop();
        path.pop();
      }
    } else {
      path.push(key);
      compare(value, stored, path, out);
      path.pop();
    }
  }
}

/**
 * Compares one field of the patch with the answer's (merge-patch semantics: `null` deletes).
 * `path` is the field's, as a stack that the comparison of a sub-field pushes to and pops.
 */
function compare(
  patched: unknown,
  stored: unknown,
  path: (string | number)[],
  out: Inconsistency[],
): void {
  if (patched === null) {
    if (stored !== undefined && stored !== null) {
      out.push({ path: path.slice(), kind: "kept", patched, stored });
    }
  } else if (isObject(patched)) {
    if (isObject(stored)) {
      for (const key in patched) {
        if (!Object.hasOwn(patched, key)) continue;
        path.push(key);
        compare(patched[key], stored[key], path, out);
        path.pop();
      }
    } else if (stored === undefined || stored === null) {
      if (carriesData(patched)) out.push({ path: path.slice(), kind: "lost", patched, stored });
    } else {
      out.push({ path: path.slice(), kind: "changed", patched, stored });
    }
  } else {
    compareValue(patched, stored, path, out);
  }
}

/** A list or a scalar (a value set as it is: list items are not merge patches); `path` as in `compare`. */
function compareValue(
  patched: unknown,
  stored: unknown,
  path: (string | number)[],
  out: Inconsistency[],
): void {
  if (stored === undefined || stored === null) {
    if (carriesData(patched)) out.push({ path: path.slice(), kind: "lost", patched, stored });
  } else if (Array.isArray(patched)) {
    if (!Array.isArray(stored) || stored.length !== patched.length) {
      out.push({ path: path.slice(), kind: "changed", patched, stored });
      return;
    }
    for (let i = 0; i < patched.length; i++) {
      const item = patched[i];
      if (isObject(item) && isObject(stored[i])) {
        // A list item's fields: those the server adds (defaults) are fine, lost ones are not.
        for (const key in item) {
          if (Object.hasOwn(item, key) && item[key] !== null) {
            path.push(i, key);
            compareValue(item[key], stored[i][key], path, out);
            path.length -= 2;
          }
        }
      } else if (!deepEqual(item, stored[i])) {
        out.push({ path: [...path, i], kind: "changed", patched: item, stored: stored[i] });
      }
    }
  } else if (isObject(patched)) {
    if (!isObject(stored)) {
      out.push({ path: path.slice(), kind: "changed", patched, stored });
      return;
    }
    for (const key in patched) {
      if (Object.hasOwn(patched, key) && patched[key] !== null) {
        path.push(key);
        compareValue(patched[key], stored[key], path, out);
        path.pop();
      }
    }
  } else if (!deepEqual(patched, stored)) {
    out.push({ path: path.slice(), kind: "changed", patched, stored });
  }
}

/** Whether a value sets anything: not null, not an empty object/list, not only deletions. */
function carriesData(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (!isObject(value)) return true;
  for (const key in value) if (Object.hasOwn(value, key) && carriesData(value[key])) return true;
  return false;
}

/**
 * A field path for messages: `status.create_fn`, `metadata.annotations["kopf.zalando.org/x"]`,
 * `spec.items[0].name`.
 *
 * @param path The path, key by key.
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatPath } from "./inconsistencies.ts";
 * assert.equal(
 *   formatPath(["metadata", "annotations", "kopf.zalando.org/fn"]),
 *   'metadata.annotations["kopf.zalando.org/fn"]',
 * );
 * assert.equal(formatPath(["spec", "items", 0, "name"]), "spec.items[0].name");
 * ```
 */
export function formatPath(path: readonly (string | number)[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(key)) text += text ? `.${key}` : key;
    else text += `[${JSON.stringify(key)}]`;
  }
  return text;
}
