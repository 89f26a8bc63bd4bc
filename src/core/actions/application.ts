/**
 * Applying the outcome of a processing cycle to the object: one merge patch
 * with everything the handlers and the framework changed (results, progress,
 * diff base), and finalizer edits as JSON patches guarded by a test of the
 * resourceVersion — so that another controller's finalizers are never lost —
 * retried on a conflict with a fresh read of the object.
 *
 * Why every merge patch's answer is checked against the patch: a CRD whose
 * structural schema does not declare a field has the server prune it, and the
 * patch still succeeds — a handler's result or the progress in `status` would
 * vanish silently. Kopf warns "Patching failed with inconsistencies"; so do we,
 * once per object and set of fields (cogs/structs/inconsistencies.ts decides
 * what counts). Finalizer edits (JSON patches guarded by a `test`) are not
 * checked: they either apply exactly or fail.
 *
 * @module
 */

import {
  findInconsistencies,
  formatPath,
  type Inconsistency,
} from "../../cogs/structs/inconsistencies.ts";
import type { AnyObject } from "./invocation.ts";
import type { OperatorLogger } from "./loggers.ts";

/** The API calls the cycle needs (implemented over the Kubernetes client). */
export interface ObjectApi {
  /**
   * Patches an object; resolves to the patched object, or undefined if it is gone (404).
   * A JSON patch whose `test` fails rejects with an error whose `code` is 422 or 409.
   */
  patch(
    name: string,
    namespace: string | undefined,
    body: unknown,
    type: "merge" | "json",
    signal?: AbortSignal,
  ): Promise<AnyObject | undefined>;
  /** Reads an object; undefined if gone. */
  get(
    name: string,
    namespace: string | undefined,
    signal?: AbortSignal,
  ): Promise<AnyObject | undefined>;
}

const CONFLICT_RETRIES = 5;

/**
 * What the patching remembers of one object between its patches (kept with the object's other
 * memories): the inconsistencies last warned about, so that a retrying handler whose progress
 * the schema prunes on every cycle is one warning, not one per retry.
 */
export interface PatchMemory {
  /** The fields of the last inconsistencies warned about (one line; a new set warns again). */
  inconsistencies?: string | undefined;
}

/**
 * Applies a merge patch unless it is empty, logging it as Kopf does, and checks the API's
 * answer against it: fields of the patch that the answer does not reflect (most often pruned
 * by a CRD's structural schema) are one warning, `Patching failed with inconsistencies: …`,
 * naming them and the fix. With a `memory`, the same fields of the same object are warned
 * about once (again at debug level), a different set warns again.
 *
 * @param api The object API.
 * @param body The object.
 * @param patch The merge patch (as JSON).
 * @param logger The object's logger.
 * @param signal Stops the request.
 * @param memory The object's memory of the inconsistencies warned about.
 * @returns The patched object, the same body when there was nothing to patch, or undefined if gone.
 */
export function applyPatch(
  api: ObjectApi,
  body: AnyObject,
  patch: AnyObject,
  logger: OperatorLogger,
  signal?: AbortSignal,
  memory?: PatchMemory,
): Promise<AnyObject | undefined> {
  // A promise chain, not an async function: no frame of its own in every cycle's write.
  try {
    if (isEmpty(patch)) return Promise.resolve(body);
    if (logger.isEnabledFor("debug")) logger.debug(`Patching with: ${JSON.stringify(patch)}`);
    return api.patch(body.metadata.name, body.metadata.namespace, patch, "merge", signal)
      .then((patched) => {
        if (!patched) logger.debug("Patching failed: the object is gone (404); nothing to do.");
        else checkPatched(patch, patched, logger, memory);
        return patched;
      });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** At most this many fields are named per kind of inconsistency (the rest are counted). */
const NAMED_FIELDS = 10;

/** Warns (once per object and set of fields, with a memory) when the answer lacks the patch. */
function checkPatched(
  patch: AnyObject,
  patched: AnyObject,
  logger: OperatorLogger,
  memory: PatchMemory | undefined,
): void {
  const found = findInconsistencies(patch, patched);
  if (!found.length) {
    // Only when set: the common, consistent patch adds no property to the object's memory.
    if (memory?.inconsistencies !== undefined) memory.inconsistencies = undefined;
    return;
  }
  const fields = found.map((i) => `${i.kind} ${formatPath(i.path)}`).join(", ");
  const again = memory !== undefined && memory.inconsistencies === fields;
  if (memory) memory.inconsistencies = fields;
  const message = describeInconsistencies(found);
  if (again) logger.debug(`${message} (as in the previous patch)`);
  else logger.warning(message);
}

/**
 * The warning's text: the fields by kind, and what to do about the lost ones.
 *
 * @param found The inconsistencies (not empty).
 * @returns One line.
 */
function describeInconsistencies(found: readonly Inconsistency[]): string {
  const named = (kind: Inconsistency["kind"], show: (i: Inconsistency) => string) => {
    const of = found.filter((i) => i.kind === kind);
    const shown = of.slice(0, NAMED_FIELDS).map(show);
    if (of.length > NAMED_FIELDS) shown.push(`and ${of.length - NAMED_FIELDS} more`);
    return shown.join(", ");
  };
  const parts: string[] = [];
  const lost = named("lost", (i) => formatPath(i.path));
  const changed = named(
    "changed",
    (i) => `${formatPath(i.path)} (${brief(i.patched)} was stored as ${brief(i.stored)})`,
  );
  const kept = named("kept", (i) => formatPath(i.path));
  if (lost) parts.push(`the API did not store ${lost}`);
  if (changed) parts.push(`it stored ${changed}`);
  if (kept) parts.push(`it did not remove ${kept}`);
  let text = `Patching failed with inconsistencies: ${parts.join("; ")}.`;
  if (lost) {
    const where = found.some((i) => i.kind === "lost" && i.path[0] === "status")
      ? "on .status (or on the whole object)"
      : "on the part of the schema that holds them";
    text += " If the CRD's schema prunes them, declare them in the schema or set " +
      `"x-kubernetes-preserve-unknown-fields: true" ${where}; Kopf's own progress and ` +
      "diff-base can be kept in annotations instead (AnnotationsProgressStorage, " +
      "AnnotationsDiffBaseStorage).";
  }
  return text;
}

/** A value for a message, cut to a few dozen characters. */
function brief(value: unknown): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Adds a finalizer with a JSON patch guarded by the resourceVersion; re-reads and retries on conflicts.
 *
 * @param api The object API.
 * @param body The object as last seen.
 * @param finalizer The finalizer.
 * @param signal Stops the requests.
 * @returns The patched object, or undefined if it is gone.
 */
export function addFinalizer(
  api: ObjectApi,
  body: AnyObject,
  finalizer: string,
  signal?: AbortSignal,
): Promise<AnyObject | undefined> {
  return editFinalizers(api, body, signal, finalizer, true, 0);
}

/**
 * Removes a finalizer with a JSON patch guarded by the resourceVersion; re-reads and retries on conflicts.
 *
 * @param api The object API.
 * @param body The object as last seen.
 * @param finalizer The finalizer.
 * @param signal Stops the requests.
 * @returns The patched object, or undefined if it is gone (which is what deletion wants).
 */
export function removeFinalizer(
  api: ObjectApi,
  body: AnyObject,
  finalizer: string,
  signal?: AbortSignal,
): Promise<AnyObject | undefined> {
  return editFinalizers(api, body, signal, finalizer, false, 0);
}

/** The one operation that adds or removes the finalizer; undefined when there is nothing to do. */
function finalizerEdit(
  finalizers: string[] | undefined,
  finalizer: string,
  add: boolean,
): AnyObject | undefined {
  if (add) {
    if (finalizers === undefined) {
      return { op: "add", path: "/metadata/finalizers", value: [finalizer] };
    }
    return finalizers.includes(finalizer)
      ? undefined
      : { op: "add", path: "/metadata/finalizers/-", value: finalizer };
  }
  const index = finalizers?.indexOf(finalizer) ?? -1;
  return index < 0 ? undefined : { op: "remove", path: `/metadata/finalizers/${index}` };
}

/**
 * The finalizer's edit, guarded by the resourceVersion; on a conflict (or a failed test), the
 * object is read anew and the edit made again, up to {@link CONFLICT_RETRIES} times. A promise
 * chain, not an async function: no frame of its own in every creation's first write.
 */
function editFinalizers(
  api: ObjectApi,
  current: AnyObject,
  signal: AbortSignal | undefined,
  finalizer: string,
  add: boolean,
  attempt: number,
): Promise<AnyObject | undefined> {
  try {
    const edit = finalizerEdit(current.metadata?.finalizers, finalizer, add);
    if (!edit) return Promise.resolve(current);
    const { name, namespace, resourceVersion } = current.metadata;
    const patch = [{ op: "test", path: "/metadata/resourceVersion", value: resourceVersion }, edit];
    return api.patch(name, namespace, patch, "json", signal).catch((e) => {
      const code = (e as { code?: number }).code;
      if ((code !== 422 && code !== 409) || attempt >= CONFLICT_RETRIES) throw e;
      return api.get(name, namespace, signal).then((again) =>
        again && editFinalizers(api, again, signal, finalizer, add, attempt + 1)
      );
    });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** What a cycle writes, in layers that can be dropped one by one if the API refuses them. */
export interface CycleWrite {
  /** The framework's own bookkeeping: progress records, the diff-base. Always written. */
  own: AnyObject;
  /** The handlers' edits through their `patch`. */
  edits: AnyObject;
  /** The handlers' results, by handler id (they go to `status.<id>`); undefined for none. */
  results: Readonly<Record<string, unknown>> | undefined;
}

/**
 * Applies a cycle's write as one merge patch. When the API refuses it as invalid (422, or 413
 * for a body too large), the refusal is logged once as a warning (which posts a Warning event)
 * with the API's causes, and the patch is retried without the results, then without the
 * handlers' edits: the handlers' outcomes (their success) are stored all the same, so nothing
 * runs again because of a value that cannot be written. A refusal of the bookkeeping itself is
 * thrown (the queue retries the object with backoff).
 *
 * @param api The object's API.
 * @param body The object as last known.
 * @param write The layers.
 * @param logger The object's logger.
 * @param signal Aborts the requests.
 * @param memory The object's memory of the inconsistencies warned about (see {@link applyPatch}).
 * @returns The patched object (or `body` if nothing was written), or undefined if it is gone.
 * @throws The API's error when even the bookkeeping alone is refused, or for other errors.
 */
export function applyCycleWrite(
  api: ObjectApi,
  body: AnyObject,
  write: CycleWrite,
  logger: OperatorLogger,
  signal?: AbortSignal,
  memory?: PatchMemory,
): Promise<AnyObject | undefined> {
  // The common path is one try with everything, a promise chain (no async frame of its own);
  // the layers to drop are built only on a refusal.
  try {
    const results = write.results ? { status: write.results } : undefined;
    const edits = isEmpty(write.edits) ? undefined : write.edits;
    // Nothing at all (a cycle that changed nothing): no patch, as applyPatch() skips an empty one.
    if (!results && !edits && isEmpty(write.own)) return Promise.resolve(body);
    const patch = mergeAll(write.edits, results, write.own);
    return applyPatch(api, body, patch, logger, signal, memory).catch((e) => {
      if (!isRefusal(e) || (!results && !edits)) throw refusing(e, logger);
      return writeLayers(api, body, write, e, logger, signal, memory);
    });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** After a refusal of the whole write: the write without the results, then without the edits. */
async function writeLayers(
  api: ObjectApi,
  body: AnyObject,
  write: CycleWrite,
  refusal: unknown,
  logger: OperatorLogger,
  signal?: AbortSignal,
  memory?: PatchMemory,
): Promise<AnyObject | undefined> {
  const results = write.results;
  const edits = isEmpty(write.edits) ? undefined : write.edits;
  const tries: Array<{ patch: AnyObject; dropped: string }> = [];
  if (results) {
    const ids = Object.keys(results).map((id) => `'${id}'`).join(", ");
    tries.push({
      patch: mergeAll(write.edits, write.own),
      dropped: `the results of ${ids} are not stored`,
    });
  }
  if (edits) {
    tries.push({ patch: mergeAll(write.own), dropped: "the handlers' patch edits are dropped" });
  }
  for (const [i, { patch, dropped }] of tries.entries()) {
    try {
      const patched = await applyPatch(api, body, patch, logger, signal, memory);
      logger.warning(
        `The API refused the patch as invalid (${describeRefusal(refusal)}); ${dropped}. ` +
          "The handlers' outcomes are stored.",
      );
      return patched;
    } catch (e) {
      if (!isRefusal(e) || i === tries.length - 1) throw refusing(e, logger);
    }
  }
  return body; // not reached: the last try returns or throws
}

/** The error of the last try, logged first when it is a refusal. */
function refusing(e: unknown, logger: OperatorLogger): unknown {
  if (isRefusal(e)) logger.error(`The API refused the patch as invalid (${describeRefusal(e)}).`);
  return e;
}

function mergeAll(
  a: AnyObject | undefined,
  b?: AnyObject | undefined,
  c?: AnyObject | undefined,
): AnyObject {
  const out: AnyObject = {};
  if (a) mergeInto(out, a);
  if (b) mergeInto(out, b);
  if (c) mergeInto(out, c);
  return out;
}

function mergeInto(dst: AnyObject, src: AnyObject): void {
  // for-in with the own-key check: Object.keys()' keys and order, without an array of them.
  for (const key in src) {
    if (!Object.hasOwn(src, key)) continue;
    const value = src[key];
    const here = dst[key];
    if (isPlain(value) && isPlain(here)) mergeInto(here, value);
    else dst[key] = isPlain(value) ? mergeAll(value) : value;
  }
}

/** No own enumerable key (without listing them). */
function isEmpty(obj: AnyObject): boolean {
  for (const key in obj) if (Object.hasOwn(obj, key)) return false;
  return true;
}

function isPlain(value: unknown): value is AnyObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRefusal(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 422 || code === 413;
}

/** The API's message and causes, on one line. */
function describeRefusal(e: unknown): string {
  const error = e as {
    code?: number;
    message?: string;
    status?: {
      message?: string;
      details?: { causes?: Array<{ field?: string; message?: string }> };
    };
  };
  const causes = (error.status?.details?.causes ?? [])
    .map((c) => [c.field, c.message].filter(Boolean).join(": "))
    .filter(Boolean);
  const message = error.status?.message ?? error.message ?? String(e);
  const text = causes.length && !causes.every((c) => message.includes(c))
    ? `${message}; causes: ${causes.join("; ")}`
    : message;
  return `${error.code}: ${text.split("\n")[0]}`;
}

/**
 * Whether a write changed the object (a new resourceVersion): only then is there a version of
 * our own to wait for.
 *
 * @param before The object before the write.
 * @param after The object the write returned.
 * @returns True when the resourceVersion changed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { changed } from "./application.ts";
 * const before = { metadata: { resourceVersion: "1" } };
 * assert.deepEqual([changed(before, before), changed(before, { metadata: { resourceVersion: "2" } })], [false, true]);
 * ```
 */
export function changed(before: AnyObject, after: AnyObject | undefined): after is AnyObject {
  const rv = after?.metadata?.resourceVersion;
  return !!rv && rv !== before.metadata?.resourceVersion;
}
