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
