/**
 * Reading objects: listing a resource (in pages, following `continue`) and
 * reading one object. The list's resourceVersion is where a watch resumes.
 *
 * Which resourceVersion: the first page's. Kubernetes serves all pages of a
 * list from one snapshot, so every page carries the same version; a server
 * that does not can only have changed objects *after* the first page's
 * version, and a watch from there replays those changes — duplicates, never
 * gaps.
 *
 * {@link listPages} gives the pages as they come (a watcher keeps no second
 * copy of a large list); {@link listObjects} collects them.
 *
 * @module
 */

import type { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { ApiError, GoneError, NotFoundError } from "./errors.ts";
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
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
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
  let items: RawBody[] = [];
  let resourceVersion = "";
  for await (const page of listPages(api, resource, namespace, options)) {
    if (page.restarted) items = [];
    items.push(...page.items);
    resourceVersion = page.resourceVersion;
  }
  return { items, resourceVersion };
}

/** One page of {@link listPages}. */
export interface ObjectListPage {
  /** The objects of this page, each with `apiVersion` and `kind` filled in. */
  items: RawBody[];
  /** The list's resourceVersion (the first page's): where to start watching. */
  resourceVersion: string;
  /** The listing started over (an expired `continue` token): earlier pages are void. */
  restarted: boolean;
}

/**
 * Lists the objects of a resource page by page, yielding each page as it
 * comes. An expired `continue` token (410) restarts the listing from the
 * start: the next page is marked `restarted`.
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace A namespace, or null/undefined for cluster-wide.
 * @param options Selectors, page size, signal.
 * @returns The pages.
 * @throws {ApiError} On error answers (after retries).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { listPages } from "./fetching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", namespaced: false });
 * let pages = 0;
 * for await (const page of listPages(new ApiClient({ vault }), namespaces, null, { limit: 1 })) {
 *   assert.equal(page.items.length, 1);
 *   pages++;
 * }
 * assert.ok(pages > 1);
 * ```
 */
export async function* listPages(
  api: ApiClient,
  resource: Resource,
  namespace?: string | null,
  options: ListOptions = {},
): AsyncGenerator<ObjectListPage, void, undefined> {
  let restarted = false;
  restart: for (;;) {
    let resourceVersion: string | undefined;
    let token: string | undefined;
    do {
      let page: ListedPage;
      try {
        page = await listPage(api, resource, namespace, { ...options, continue: token });
      } catch (error) {
        if (error instanceof GoneError && token !== undefined) {
          restarted = true;
          continue restart;
        }
        throw error;
      }
      resourceVersion ??= page.resourceVersion;
      token = page.continue;
      yield { items: page.items, resourceVersion, restarted };
      restarted = false;
    } while (token !== undefined);
    return;
  }
}

/** One page of {@link listPage}, as the server sent it. */
export interface ListedPage {
  /** The objects of this page, each with `apiVersion` and `kind` filled in. */
  items: RawBody[];
  /** This page's resourceVersion ("" if it has none). */
  resourceVersion: string;
  /** The next page's token, if there is one. */
  continue: string | undefined;
}

/**
 * Lists one page of the objects of a resource: the first, or the one of a
 * `continue` token. An expired token is a {@link GoneError}; whoever pages
 * decides what then ({@link listPages} starts over).
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace A namespace, or null/undefined for cluster-wide.
 * @param options Selectors, page size, the page's token, signal.
 * @returns The page.
 * @throws {ApiError} On error answers (after retries), and for items that are not objects.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { listPage } from "./fetching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", namespaced: false });
 * const first = await listPage(api, namespaces, null, { limit: 1 });
 * assert.equal(first.items.length, 1);
 * assert.ok(first.continue);
 * const second = await listPage(api, namespaces, null, { limit: 1, continue: first.continue });
 * assert.notEqual(second.items[0]?.metadata?.name, first.items[0]?.metadata?.name);
 * ```
 */
export async function listPage(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  options: ListOptions & { continue?: string | undefined } = {},
): Promise<ListedPage> {
  const limit = options.limit ?? 500;
  const url = resource.getUrl({
    namespace,
    params: {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      limit: limit > 0 ? limit : undefined,
      continue: options.continue,
    },
  });
  const page = await api.request<ListBody>("GET", url, {
    signal: options.signal,
    expect: "object",
  });
  const kind = page.kind?.endsWith("List") ? page.kind.slice(0, -4) : page.kind;
  const items = page.items ?? [];
  if (!Array.isArray(items) || items.some((item) => typeof item !== "object" || !item)) {
    throw new ApiError({
      code: 200,
      method: "GET",
      path: url,
      text: "the list's items are not JSON objects: the server is broken",
    });
  }
  for (const item of items) {
    if (kind !== undefined) item.kind ??= kind;
    if (page.apiVersion !== undefined) item.apiVersion ??= page.apiVersion;
  }
  return {
    items,
    resourceVersion: page.metadata?.resourceVersion ?? "",
    continue: page.metadata?.continue || undefined,
  };
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
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
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
    const url = resource.getUrl({ namespace, name });
    return await api.request<RawBody>("GET", url, { signal: options.signal, expect: "object" });
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
