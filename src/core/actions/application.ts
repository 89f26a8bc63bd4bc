/**
 * Applying the outcome of a processing cycle to the object: one merge patch
 * with everything the handlers and the framework changed (results, progress,
 * diff base), and finalizer edits as JSON patches guarded by a test of the
 * resourceVersion — so that another controller's finalizers are never lost —
 * retried on a conflict with a fresh read of the object.
 *
 * @module
 */

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
 * Applies a merge patch unless it is empty, logging it as Kopf does.
 *
 * @param api The object API.
 * @param body The object.
 * @param patch The merge patch (as JSON).
 * @param logger The object's logger.
 * @param signal Stops the request.
 * @returns The patched object, the same body when there was nothing to patch, or undefined if gone.
 */
export async function applyPatch(
  api: ObjectApi,
  body: AnyObject,
  patch: AnyObject,
  logger: OperatorLogger,
  signal?: AbortSignal,
): Promise<AnyObject | undefined> {
  if (!Object.keys(patch).length) return body;
  if (logger.isEnabledFor("debug")) logger.debug(`Patching with: ${JSON.stringify(patch)}`);
  const patched = await api.patch(
    body.metadata.name,
    body.metadata.namespace,
    patch,
    "merge",
    signal,
  );
  if (!patched) logger.debug("Patching failed: the object is gone (404); nothing to do.");
  return patched;
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
  return editFinalizers(api, body, signal, (finalizers) => {
    if (finalizers === undefined) {
      return [{ op: "add", path: "/metadata/finalizers", value: [finalizer] }];
    }
    if (finalizers.includes(finalizer)) return [];
    return [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }];
  });
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
  return editFinalizers(api, body, signal, (finalizers) => {
    const index = finalizers?.indexOf(finalizer) ?? -1;
    return index < 0 ? [] : [{ op: "remove", path: `/metadata/finalizers/${index}` }];
  });
}

async function editFinalizers(
  api: ObjectApi,
  body: AnyObject,
  signal: AbortSignal | undefined,
  ops: (finalizers: string[] | undefined) => AnyObject[],
): Promise<AnyObject | undefined> {
  let current: AnyObject | undefined = body;
  for (let attempt = 0; current; attempt++) {
    const edit = ops(current.metadata?.finalizers);
    if (!edit.length) return current;
    const patch = [{
      op: "test",
      path: "/metadata/resourceVersion",
      value: current.metadata.resourceVersion,
    }, ...edit];
    try {
      return await api.patch(
        current.metadata.name,
        current.metadata.namespace,
        patch,
        "json",
        signal,
      );
    } catch (e) {
      const code = (e as { code?: number }).code;
      if ((code !== 422 && code !== 409) || attempt >= CONFLICT_RETRIES) throw e;
      current = await api.get(current.metadata.name, current.metadata.namespace, signal);
    }
  }
  return undefined;
}

/** What a cycle writes, in layers that can be dropped one by one if the API refuses them. */
export interface CycleWrite {
  /** The framework's own bookkeeping: progress records, the diff-base. Always written. */
  own: AnyObject;
  /** The handlers' edits through their `patch`. */
  edits: AnyObject;
  /** The handlers' results, by handler id (they go to `status.<id>`). */
  results: ReadonlyMap<string, unknown>;
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
 * @returns The patched object (or `body` if nothing was written), or undefined if it is gone.
 * @throws The API's error when even the bookkeeping alone is refused, or for other errors.
 */
export async function applyCycleWrite(
  api: ObjectApi,
  body: AnyObject,
  write: CycleWrite,
  logger: OperatorLogger,
  signal?: AbortSignal,
): Promise<AnyObject | undefined> {
  const results = write.results.size ? { status: Object.fromEntries(write.results) } : undefined;
  const edits = isEmpty(write.edits) ? undefined : write.edits;
  // Nothing at all (a cycle that changed nothing): no patch, as applyPatch() skips an empty one.
  if (!results && !edits && isEmpty(write.own)) return body;
  // The common path is one try with everything; the layers to drop are built only on a refusal.
  let refusal: unknown;
  try {
    return await applyPatch(api, body, mergeAll(write.edits, results, write.own), logger, signal);
  } catch (e) {
    if (!isRefusal(e) || (!results && !edits)) throw refusing(e, logger);
    refusal = e;
  }
  const tries: Array<{ patch: AnyObject; dropped: string }> = [];
  if (results) {
    const ids = [...write.results.keys()].map((id) => `'${id}'`).join(", ");
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
      const patched = await applyPatch(api, body, patch, logger, signal);
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
