/**
 * Deleting objects. A 404 means it is gone already — the wanted outcome —
 * so it is returned as `undefined`, not thrown.
 *
 * @module
 */

import type { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { NotFoundError } from "./errors.ts";
import type { RawBody } from "./types.ts";

/** Options of {@link deleteObject}. */
export interface DeleteOptions {
  /** `Background` (default, as kubectl), `Foreground`, or `Orphan`. */
  propagationPolicy?: "Background" | "Foreground" | "Orphan" | undefined;
  /** Seconds of grace (pods); 0 for immediately. */
  gracePeriodSeconds?: number | undefined;
  /** Delete only this uid / resourceVersion (409 otherwise). */
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
  /** A 404 returns `undefined` (default `true`); `false` throws the {@link NotFoundError}. */
  ignoreNotFound?: boolean | undefined;
  /** Stops the request. */
  signal?: AbortSignal | undefined;
}

/**
 * Deletes an object (or marks it for deletion if it has finalizers).
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace The namespace (null/undefined for cluster-scoped objects).
 * @param name The name.
 * @param options Propagation, grace, preconditions, signal.
 * @returns The server's answer (the object with `deletionTimestamp` while
 *   finalizers hold it, else the last state or a Status), or `undefined` if
 *   it did not exist (unless `ignoreNotFound: false`).
 * @throws {ApiError} For other error answers, after retries.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { createObject } from "./creating.ts";
 * import { deleteObject } from "./deleting.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const configmaps = new Resource({ group: "", version: "v1", plural: "configmaps", namespaced: true });
 * await createObject(api, configmaps, "default", { metadata: { name: "cm1" } });
 * assert.ok(await deleteObject(api, configmaps, "default", "cm1"));
 * assert.equal(await deleteObject(api, configmaps, "default", "cm1"), undefined);
 * ```
 */
export async function deleteObject(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  name: string,
  options: DeleteOptions = {},
): Promise<RawBody | undefined> {
  const body: Record<string, unknown> = {
    kind: "DeleteOptions",
    apiVersion: "v1",
    propagationPolicy: options.propagationPolicy ?? "Background",
  };
  if (options.gracePeriodSeconds !== undefined) {
    body.gracePeriodSeconds = options.gracePeriodSeconds;
  }
  if (options.preconditions !== undefined) body.preconditions = options.preconditions;
  try {
    return await api.request<RawBody>("DELETE", resource.getUrl({ namespace, name }), {
      body,
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof NotFoundError && options.ignoreNotFound !== false) return undefined;
    throw error;
  }
}
