/**
 * Patching objects, the way the framework writes everything it stores on
 * objects (progress, diff-base, finalizers, handler results).
 *
 * Why split status: with the status subresource on, the main endpoint ignores
 * `status` and `/status` ignores everything else. A merge patch that touches
 * both is therefore sent as two patches — the rest to the main endpoint, the
 * status to `/status` — and the `/status` answer, the whole object after both,
 * is the result (the main one is not even parsed then); from a server whose
 * `/status` answer is not the whole object, the two are merged. A 404
 * means the object is gone (deleted by a handler or by someone else): that is
 * normal for an operator and is returned as `undefined`, not thrown.
 *
 * @module
 */

import type { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { NotFoundError } from "./errors.ts";
import type { RawBody } from "./types.ts";

/** Patch formats by short name. */
export const PATCH_CONTENT_TYPES = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
} as const;

/** A patch format: a short name, or a full content type. */
export type PatchContentType = keyof typeof PATCH_CONTENT_TYPES | (string & Record<never, never>);

/** Options of {@link patchObject}. */
export interface PatchOptions {
  /** Patch this subresource only (no status splitting then). */
  subresource?: string | undefined;
  /** The format (default `merge`). */
  contentType?: PatchContentType | undefined;
  /** `?fieldManager=` (required by server-side apply). */
  fieldManager?: string | undefined;
  /** `?force=true`: server-side apply takes over the fields other managers own. */
  force?: boolean | undefined;
  /** A 404 returns `undefined` (default `true`); `false` throws the {@link NotFoundError}. */
  ignoreNotFound?: boolean | undefined;
  /** Stops the request. */
  signal?: AbortSignal | undefined;
}

/**
 * Patches an object.
 *
 * @param api The API client.
 * @param resource The resource (its `subresources` decide the status split).
 * @param namespace The namespace (null/undefined for cluster-scoped objects).
 * @param name The object's name.
 * @param patch A merge patch (object), a JSON patch (array of operations), …
 * @param options Subresource, format, signal.
 * @returns The patched body — for a split patch, the main answer with the
 *   `/status` answer's status; `{}` if there was nothing to patch;
 *   `undefined` if the object does not exist (404; unless `ignoreNotFound: false`).
 * @throws {ApiError} For other error answers (e.g. 422 on a failed JSON
 *   patch `test`), after retries.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { patchObject } from "./patching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", namespaced: false, subresources: ["status"] });
 * const patched = await patchObject(api, namespaces, null, "default", { metadata: { labels: { a: "b" } } });
 * assert.equal(patched?.metadata?.labels && (patched.metadata.labels as Record<string, string>).a, "b");
 * assert.equal(await patchObject(api, namespaces, null, "absent", { metadata: { labels: { a: "b" } } }), undefined);
 * ```
 */
export async function patchObject(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  name: string,
  patch: unknown,
  options: PatchOptions = {},
): Promise<RawBody | undefined> {
  const format = options.contentType ?? "merge";
  const contentType = format in PATCH_CONTENT_TYPES
    ? PATCH_CONTENT_TYPES[format as keyof typeof PATCH_CONTENT_TYPES]
    : format;
  const params = options.fieldManager !== undefined || options.force
    ? { fieldManager: options.fieldManager, force: options.force || undefined }
    : undefined;
  // A factory's closure, not a named arrow: a bundle keeps names (`kopf bundle`, --keep-names),
  // and names a function bound to a name at each creation — here one per patch.
  const send = patchSender(api, resource, namespace, name, params, contentType, options.signal);

  const splittable = contentType === PATCH_CONTENT_TYPES.merge &&
    options.subresource === undefined && resource.subresources.has("status") &&
    typeof patch === "object" && patch !== null && !Array.isArray(patch) &&
    Object.hasOwn(patch, "status");
  try {
    if (!splittable) return await send(patch, options.subresource);
    const { status, ...rest } = patch as Record<string, unknown>;
    const empty = typeof status === "object" && status !== null && !hasKeys(status);
    if (status === undefined || empty) return hasKeys(rest) ? await send(rest, undefined) : {};
    // The main answer is kept as text, parsed only if the /status answer is not the whole object.
    const main = hasKeys(rest) ? await send<string>(rest, undefined, "text") : undefined;
    const answer = await send({ status }, "status");
    // The /status answer is the whole object after both writes (the newest resourceVersion);
    // a status-only patch must not return a body without metadata (finalizers, version).
    if (answer.metadata) return answer;
    const patched = main === undefined || !main.trim() ? {} : JSON.parse(main) as RawBody;
    return { ...patched, status: answer.status };
  } catch (error) {
    if (error instanceof NotFoundError && options.ignoreNotFound !== false) return undefined;
    throw error;
  }
}

/** What {@link patchObject} sends its PATCH requests with (the object's URL, or a subresource's). */
function patchSender(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  name: string,
  params: { fieldManager: string | undefined; force: true | undefined } | undefined,
  contentType: string,
  signal: AbortSignal | undefined,
) {
  return <T = RawBody>(body: unknown, subresource: string | undefined, text?: "text") =>
    api.request<T>(
      "PATCH",
      resource.getUrl({ namespace, name, subresource, params }),
      { body, contentType, signal, expect: text },
    );
}

/** Whether an object has an own enumerable string key (as `Object.keys(o).length`, without the array). */
function hasKeys(o: object): boolean {
  for (const key in o) if (Object.hasOwn(o, key)) return true;
  return false;
}
