/**
 * Creating objects (children of handled objects, peering records, webhook
 * configurations, events).
 *
 * @module
 */

import type { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import type { RawBody } from "./types.ts";

/** Options of {@link createObject}. */
export interface CreateOptions {
  /** `?fieldManager=`. */
  fieldManager?: string | undefined;
  /** Stops the request. */
  signal?: AbortSignal | undefined;
}

/**
 * Creates an object. A given namespace is written into the body's metadata
 * (as Kopf does); otherwise the body's own namespace decides the URL.
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace The namespace, or null/undefined to use the body's (or none).
 * @param body The object (the server fills `apiVersion`/`kind` if absent).
 * @param options Field manager, signal.
 * @returns The created object, as the server stored it.
 * @throws {ConflictError} If it already exists (409).
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
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const configmaps = new Resource({ group: "", version: "v1", plural: "configmaps", namespaced: true });
 * const created = await createObject(new ApiClient({ vault }), configmaps, "default", {
 *   metadata: { name: "cm1" }, data: { a: "1" },
 * });
 * assert.equal(created.metadata?.namespace, "default");
 * assert.ok(created.metadata?.uid);
 * ```
 */
export async function createObject(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  body: RawBody,
  options: CreateOptions = {},
): Promise<RawBody> {
  const metadata = { ...body.metadata };
  if (namespace !== null && namespace !== undefined) metadata.namespace = namespace;
  const ns = resource.namespaced ? metadata.namespace : undefined;
  const url = resource.getUrl({ namespace: ns, params: { fieldManager: options.fieldManager } });
  return await api.request<RawBody>("POST", url, {
    body: { ...body, metadata },
    signal: options.signal,
  });
}
