/**
 * Reading objects: listing a resource (in pages, following `continue`) and
 * reading one object. The list's resourceVersion is where a watch resumes.
 *
 * Which resourceVersion: the first page's. Kubernetes serves all pages of a
 * list from one snapshot, so every page carries the same version; a server
 * that does not (the embedded one answers each page from its current state)
 * can only have changed objects *after* the first page's version, and a watch
 * from there replays those changes — duplicates, never gaps.
 *
 * @module
 */

import type { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { GoneError, NotFoundError } from "./errors.ts";
import type { RawBody } from "./types.ts";

/** Options of {@link listObjects}. */
export interface ListOptions {
  /** A label selector, e.g. `app=x,tier!=db`. */
  labelSelector?: string | undefined;
  /** A field selector, e.g. `metadata.name=x`. */
  fieldSelector?: string | undefined;
  /** The page size (default 500; 0 for one unpaginated request). */
  limit?: number | undefined;
  /** Stops the listing. */
  signal?: AbortSignal | undefined;
}

/** The result of {@link listObjects}. */
export interface ObjectList {
  /** The objects, each with `apiVersion` and `kind` filled in. */
  items: RawBody[];
  /** Where to start watching. */
  resourceVersion: string;
}

/**
 * Lists the objects of a resource, in one namespace or cluster-wide, page by
 * page. An expired `continue` token (410) restarts the listing from the start.
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace A namespace, or null/undefined for cluster-wide.
 * @param options Selectors, page size, signal.
 * @returns The objects and the list's resourceVersion.
 * @throws {ApiError} On error answers (after retries).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../structs/credentials.ts";
 * import { Resource } from "../structs/references.ts";
 * import { ApiClient } from "./api.ts";
 * import { listObjects } from "./fetching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false });
 * const { items, resourceVersion } = await listObjects(new ApiClient({ vault }), namespaces);
 * assert.ok(items.some((ns) => ns.metadata?.name === "default" && ns.kind === "Namespace"));
 * assert.ok(resourceVersion);
 * ```
 */
export async function listObjects(
  api: ApiClient,
  resource: Resource,
  namespace?: string | null,
  options: ListOptions = {},
): Promise<ObjectList> {
  const limit = options.limit ?? 500;
  restart: for (;;) {
    const items: RawBody[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    do {
      const url = resource.getUrl({
        namespace,
        params: {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          limit: limit > 0 ? limit : undefined,
          continue: token,
        },
      });
      let page: ListBody;
      try {
        page = await api.request<ListBody>("GET", url, { signal: options.signal });
      } catch (error) {
        if (error instanceof GoneError && token !== undefined) continue restart;
        throw error;
      }
      resourceVersion ??= page.metadata?.resourceVersion ?? "";
      const kind = page.kind?.endsWith("List") ? page.kind.slice(0, -4) : page.kind;
      for (const item of page.items ?? []) {
        if (kind !== undefined) item.kind ??= kind;
        if (page.apiVersion !== undefined) item.apiVersion ??= page.apiVersion;
        items.push(item);
      }
      token = page.metadata?.continue || undefined;
    } while (token !== undefined);
    return { items, resourceVersion };
  }
}

/**
 * Reads one object.
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace The namespace (null/undefined for cluster-scoped objects).
 * @param name The name.
 * @param options `signal` stops the request.
 * @returns The object, or undefined if it does not exist.
 * @throws {ApiError} On other error answers (after retries).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../structs/credentials.ts";
 * import { Resource } from "../structs/references.ts";
 * import { ApiClient } from "./api.ts";
 * import { readObject } from "./fetching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", namespaced: false });
 * assert.equal((await readObject(api, namespaces, null, "default"))?.metadata?.name, "default");
 * assert.equal(await readObject(api, namespaces, null, "absent"), undefined);
 * ```
 */
export async function readObject(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  name: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<RawBody | undefined> {
  try {
    return await api.request<RawBody>("GET", resource.getUrl({ namespace, name }), options);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

interface ListBody {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: RawBody[];
}
