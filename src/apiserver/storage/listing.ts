/**
 * Lists as kube-apiserver serves them: the `ListOptions` query checked with
 * its exact refusals (422 `ListOptions.meta.k8s.io "" is invalid: …`), pages
 * of `limit` items in key order with a `continue` token in Kubernetes' own
 * format, every page of one list served from the same snapshot (the first
 * page's resourceVersion, as etcd serves a revision), `remainingItemCount`
 * when no selector filters, and `resourceVersion` / `resourceVersionMatch`
 * (`Exact`, `NotOlderThan`, and the legacy "exact when paginated").
 *
 * Why snapshots: a client that pages through 100,000 objects while they
 * change must get one consistent state, or it sees an object twice or never.
 * etcd keeps old revisions until it compacts them; here a snapshot is the
 * sorted array of the objects at one resourceVersion — references, since
 * stored objects are never mutated — cached for the pages that follow, or
 * rebuilt from the store's history of changes. A token whose revision is
 * neither cached nor within history (or was compacted explicitly) is 410
 * Expired with kube-apiserver's message and a token to continue inconsistently.
 *
 * Not like etcd: a snapshot stays usable while it is cached (a few per
 * server, five minutes at most) even after the history ring has moved past it,
 * where etcd keeps every revision until its periodic compaction.
 *
 * @module
 */

import { ApiError, type StatusCause } from "../shared/errors.ts";
import type { Decoded } from "../wire/query_params.ts";
import type { Store } from "./store.ts";
import type { KObject } from "../shared/types.ts";

/** The `ListOptions` of a list or watch request that this module reads. */
export interface ListOptions {
  /** `resourceVersion`, as given (`undefined` when absent or empty). */
  resourceVersion: string | undefined;
  /** `resourceVersionMatch`. */
  resourceVersionMatch: "Exact" | "NotOlderThan" | undefined;
  /** `continue`. */
  continueToken: string | undefined;
  /** `limit` (0: no paging). */
  limit: number;
  /** `sendInitialEvents`, when given (watch only). */
  sendInitialEvents: boolean | undefined;
}

const META = "meta.k8s.io";
const TOKEN_VERSION = "meta.k8s.io/v1";

/** How long a request for a resourceVersion ahead of the store waits for it (kube-apiserver: 3 s). */
export const FRESHNESS_WAIT_SECONDS = 3;

/**
 * Reads and validates the `ListOptions` of a request as kube-apiserver's
 * `ValidateListOptions` does (with the WatchList feature on or off).
 *
 * @param p The request's decoded parameters (`decodeQuery` of `query_params.ts`).
 * @param options Whether it is a watch; whether `sendInitialEvents` is served.
 * @returns The options.
 * @throws {ApiError} 422 Invalid with kube-apiserver's causes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseListOptions } from "./listing.ts";
 * const p = { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" };
 * assert.deepEqual(parseListOptions(p, { watch: true, watchList: true }).sendInitialEvents, true);
 * try {
 *   parseListOptions({ sendInitialEvents: true }, { watch: true, watchList: true });
 * } catch (e) {
 *   assert.deepEqual((e as Error).message, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
 * }
 * ```
 */
export function parseListOptions(
  p: Decoded<"list">,
  options: { watch: boolean; watchList: boolean },
): ListOptions {
  const rv = p.resourceVersion || undefined;
  const match = p.resourceVersionMatch || undefined;
  const token = p.continue || undefined;
  const limit = p.limit ?? 0;
  const sendInitialEvents = p.sendInitialEvents;
  const causes: StatusCause[] = [];
  const forbidden = (field: string, detail: string) =>
    causes.push({ reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field });
  const notSupported = (field: string, value: string, supported: string[]) =>
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${
        supported.map((s) => JSON.stringify(s)).join(", ")
      }`,
      field,
    });
  if (options.watch) {
    if (sendInitialEvents !== undefined) {
      if (match !== "NotOlderThan") {
        forbidden(
          "resourceVersionMatch",
          "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        );
      }
      if (!options.watchList) {
        forbidden(
          "sendInitialEvents",
          "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        );
      }
    }
    if (match !== undefined) {
      if (sendInitialEvents === undefined) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        );
      }
      if (match !== "NotOlderThan") notSupported("resourceVersionMatch", match, ["NotOlderThan"]);
      if (token) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden when continue is provided",
        );
      }
    }
  } else {
    if (match !== undefined) {
      if (rv === undefined) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden unless resourceVersion is provided",
        );
      }
      if (token) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden when continue is provided",
        );
      }
      if (match !== "Exact" && match !== "NotOlderThan") {
        notSupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]);
      }
      if (match === "Exact" && rv === "0") {
        forbidden(
          "resourceVersionMatch",
          `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`,
        );
      }
    }
    if (sendInitialEvents !== undefined) {
      forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
    }
  }
  if (causes.length) throw ApiError.invalid("ListOptions", META, "", causes);
  return {
    resourceVersion: rv,
    resourceVersionMatch: match as ListOptions["resourceVersionMatch"],
    continueToken: token,
    limit: limit > 0 ? limit : 0,
    sendInitialEvents,
  };
}

/**
 * Parses a resourceVersion as kube-apiserver does (a decimal integer).
 *
 * @param rv The resourceVersion.
 * @returns The number.
 * @throws {ApiError} 400 for anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseResourceVersion } from "./listing.ts";
 * assert.deepEqual(parseResourceVersion("42"), 42);
 * ```
 */
export function parseResourceVersion(rv: string): number {
  if (!/^\d+$/.test(rv)) {
    throw ApiError.badRequest(
      `resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${
        JSON.stringify(rv)
      }: invalid syntax`,
    );
  }
  return Number(rv);
}

/**
 * kube-apiserver's 504 for a resourceVersion the store has not reached within
 * {@link FRESHNESS_WAIT_SECONDS}.
 *
 * @param rv The resourceVersion asked for.
 * @param current The store's resourceVersion.
 * @returns The error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tooLargeResourceVersion } from "./listing.ts";
 * assert.deepEqual(tooLargeResourceVersion(105, 100).message, "Timeout: Too large resource version: 105, current: 100");
 * ```
 */
export function tooLargeResourceVersion(rv: number, current: number): ApiError {
  return new ApiError(
    504,
    "Timeout",
    `Timeout: Too large resource version: ${rv}, current: ${current}`,
    {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: 1,
    },
  );
}

/**
 * Waits until the store's resourceVersion reaches `rv` (a read "not older
 * than" a version from the future), for at most {@link FRESHNESS_WAIT_SECONDS}.
 *
 * @param store The store.
 * @param rv The resourceVersion needed.
 * @returns Whether the store reached it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Store } from "./store.ts";
 * import { waitForResourceVersion } from "./listing.ts";
 * assert.deepEqual(await waitForResourceVersion(new Store(), 0), true);
 * ```
 */
export async function waitForResourceVersion(store: Store, rv: number): Promise<boolean> {
  const deadline = performance.now() + FRESHNESS_WAIT_SECONDS * 1000;
  while (store.resourceVersion < rv) {
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** One page of a list. */
export interface ListPage {
  /** The items (stored objects, not copies). */
  items: KObject[];
  /** The list's resourceVersion: the snapshot's. */
  resourceVersion: string;
  /** The token for the next page, if there is more. */
  continueToken?: string;
  /** How many objects follow this page, when no selector filters. */
  remainingItemCount?: number;
}

interface Snapshot {
  items: KObject[];
  keys: string[];
  at: number;
}

/**
 * Sorted states of a resource at given resourceVersions, for the pages of
 * lists. A few are cached for five minutes; the rest is rebuilt from history.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Store } from "./store.ts";
 * import { ListSnapshots } from "./listing.ts";
 * const store = new Store();
 * store.commit("ADDED", "configmaps", { metadata: { name: "b", namespace: "default" } });
 * store.commit("ADDED", "configmaps", { metadata: { name: "a", namespace: "default" } });
 * const page = await new ListSnapshots(store).page("configmaps", undefined, true, {
 *   resourceVersion: undefined, resourceVersionMatch: undefined, continueToken: undefined,
 *   limit: 1, sendInitialEvents: undefined,
 * }, () => true, false);
 * assert.deepEqual([page.items[0]!.metadata.name, page.remainingItemCount], ["a", 1]);
 * ```
 */
export class ListSnapshots {
  #store: Store;
  #cache = new Map<string, Snapshot>();
  #size: number;
  #ttlMs: number;

  /**
   * @param store The store.
   * @param options How many snapshots to cache (default 8) and for how long (default 300 s).
   */
  constructor(store: Store, options: { size?: number; ttlSeconds?: number } = {}) {
    this.#store = store;
    this.#size = options.size ?? 8;
    this.#ttlMs = (options.ttlSeconds ?? 300) * 1000;
  }

  /** Forgets every cached snapshot (an explicit compaction: their tokens expire). */
  clear(): void {
    this.#cache.clear();
  }

  /**
   * One page of a list.
   *
   * @param key The storage key of the resource.
   * @param namespace A namespace, or undefined for all (or for a cluster-scoped resource).
   * @param namespaced Whether the resource is namespaced (the token's key includes the namespace).
   * @param options The list options (validated by {@link parseListOptions}).
   * @param filter The selectors, as a predicate.
   * @param filtered Whether any selector is given (then no `remainingItemCount`).
   * @returns The page.
   * @throws {ApiError} 400 for a bad token or a resourceVersion with a token, 410 for an expired
   *   token or a compacted exact resourceVersion, 504 for a resourceVersion the store never reached.
   */
  async page(
    key: string,
    namespace: string | undefined,
    namespaced: boolean,
    options: ListOptions,
    filter: (obj: KObject) => boolean,
    filtered: boolean,
  ): Promise<ListPage> {
    const store = this.#store;
    const nameOnly = !namespaced || namespace !== undefined;
    const relKey = (o: KObject) =>
      nameOnly ? o.metadata.name! : `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    let rv: number;
    let startKey: string | undefined;
    let snapshot: Snapshot | undefined;
    if (options.continueToken) {
      const given = options.resourceVersion;
      if (given !== undefined && given !== "0") {
        throw ApiError.badRequest("specifying resource version is not allowed when using continue");
      }
      const token = decodeContinue(options.continueToken);
      startKey = token.start;
      if (token.rv < 0) {
        rv = store.resourceVersion;
        snapshot = this.#at(key, namespace, relKey, rv);
      } else {
        rv = token.rv;
        snapshot = this.#at(key, namespace, relKey, rv);
        if (!snapshot) {
          const expired = new ApiError(410, "Expired", INCONSISTENT_CONTINUE);
          expired.listMeta = { continue: encodeContinue(token.start, -1) };
          throw expired;
        }
      }
    } else {
      const given = options.resourceVersion;
      const exact = given !== undefined && given !== "0" &&
        (options.resourceVersionMatch === "Exact" ||
          (options.resourceVersionMatch === undefined && options.limit > 0));
      rv = store.resourceVersion;
      if (given !== undefined && given !== "0") {
        const wanted = parseResourceVersion(given);
        if (wanted > store.resourceVersion && !(await waitForResourceVersion(store, wanted))) {
          throw tooLargeResourceVersion(wanted, store.resourceVersion);
        }
        if (exact) rv = wanted;
        else rv = store.resourceVersion;
      }
      snapshot = this.#at(key, namespace, relKey, rv);
      if (!snapshot) {
        throw new ApiError(410, "Expired", "The resourceVersion for the provided list is too old.");
      }
    }
    const { items, keys } = snapshot!;
    let i = startKey === undefined ? 0 : lowerBound(keys, startKey);
    const out: KObject[] = [];
    const limit = options.limit;
    let last = -1;
    for (; i < items.length; i++) {
      if (limit > 0 && out.length >= limit) break;
      const obj = items[i]!;
      if (filter(obj)) out.push(obj);
      last = i;
    }
    const page: ListPage = { items: out, resourceVersion: String(rv) };
    if (limit > 0 && out.length >= limit && last + 1 < items.length) {
      page.continueToken = encodeContinue(keys[last]! + "\u0000", rv);
      if (!filtered) page.remainingItemCount = items.length - last - 1;
      this.#remember(key, namespace, rv, snapshot!);
    }
    return page;
  }

  /** The sorted state at `rv`: cached, current, or rebuilt from history; undefined when gone. */
  #at(
    key: string,
    namespace: string | undefined,
    relKey: (o: KObject) => string,
    rv: number,
  ): Snapshot | undefined {
    const store = this.#store;
    const id = cacheId(key, namespace, rv);
    const cached = this.#cache.get(id);
    const now = performance.now();
    if (cached && now - cached.at < this.#ttlMs) return cached;
    if (cached) this.#cache.delete(id);
    let objects: KObject[];
    if (rv >= store.resourceVersion) {
      objects = [...store.list(key, namespace)];
    } else {
      const changes = store.changesSince(key, rv);
      if (!changes) return undefined;
      // The state at rv: what is stored now, except objects changed since — those were as
      // their first later change found them (absent if that change created them).
      const touched = new Map<string, KObject | undefined>();
      const idOf = (o: KObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
      for (const c of changes) {
        if (namespace !== undefined && (c.object.metadata.namespace ?? "") !== namespace) continue;
        const k = idOf(c.object);
        if (!touched.has(k)) touched.set(k, c.previous);
      }
      objects = [];
      for (const o of store.list(key, namespace)) if (!touched.has(idOf(o))) objects.push(o);
      for (const o of touched.values()) if (o) objects.push(o);
    }
    const pairs = objects.map((o) => [relKey(o), o] as const);
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return { items: pairs.map((p) => p[1]), keys: pairs.map((p) => p[0]), at: now };
  }

  #remember(key: string, namespace: string | undefined, rv: number, snapshot: Snapshot): void {
    const id = cacheId(key, namespace, rv);
    this.#cache.delete(id);
    this.#cache.set(id, snapshot);
    while (this.#cache.size > this.#size) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
  }
}

const INCONSISTENT_CONTINUE = "The provided continue parameter is too old " +
  "to display a consistent list result. You can start a new list without " +
  "the continue parameter, or use the continue token in this response to " +
  "retrieve the remainder of the results. Continuing with the provided " +
  "token results in an inconsistent list - objects that were created, " +
  "modified, or deleted between the time the first chunk was returned " +
  "and now may show up in the list.";

function cacheId(key: string, namespace: string | undefined, rv: number): string {
  return `${key}\u0000${namespace ?? "*"}\u0000${rv}`;
}

function lowerBound(keys: string[], key: string): number {
  let lo = 0, hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A continue token as kube-apiserver writes it: unpadded URL-safe base64 of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the last item>"}`
 * (rv -1: continue at the latest resourceVersion).
 *
 * @param start The key to start from (the last key and a NUL).
 * @param rv The snapshot's resourceVersion, or -1.
 * @returns The token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeContinue, encodeContinue } from "./listing.ts";
 * assert.deepEqual(decodeContinue(encodeContinue("default/a\u0000", 7)), { rv: 7, start: "default/a\u0000" });
 * ```
 */
export function encodeContinue(start: string, rv: number): string {
  const json = JSON.stringify({ v: TOKEN_VERSION, rv, start });
  const bytes = new TextEncoder().encode(json);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Reads a continue token, with kube-apiserver's refusals.
 *
 * @param token The token.
 * @returns Its resourceVersion and start key.
 * @throws {ApiError} 400 `invalid continue token: continue key is not valid…`.
 */
export function decodeContinue(token: string): { rv: number; start: string } {
  const invalid = (why: string) => ApiError.badRequest(`invalid continue token: ${why}`);
  let parsed: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(token)) throw new Error("illegal base64 data");
    const binary = atob(token.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    if (typeof parsed !== "object" || parsed === null) throw new Error("not an object");
  } catch (e) {
    throw invalid(`continue key is not valid: ${(e as Error).message}`);
  }
  if (parsed.v !== TOKEN_VERSION) {
    throw invalid(
      `continue key is not valid: server does not recognize this encoded version ${
        String(parsed.v ?? "")
      }`,
    );
  }
  const rv = typeof parsed.rv === "number" && Number.isInteger(parsed.rv) ? parsed.rv : 0;
  if (rv === 0) {
    throw invalid(
      "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    );
  }
  const start = typeof parsed.start === "string" ? parsed.start : "";
  if (!start) {
    throw invalid("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)");
  }
  // As path.Clean: a key that climbs out of the resource (../) or is not in canonical form.
  const path = start.startsWith("/") ? start : `/${start}`;
  if (/\/\.{1,2}(\/|$)|\/\/|.\/$/.test(path)) throw invalid(`continue key is not valid: ${start}`);
  return { rv, start: path.slice(1) };
}
