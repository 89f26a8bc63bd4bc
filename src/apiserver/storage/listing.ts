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
 * The options are read by `list_options.ts`, the tokens by `continue_tokens.ts`;
 * this module serves the pages.
 *
 * Not like etcd: a snapshot stays usable while it is cached (a few per
 * server, five minutes at most) even after the history ring has moved past it,
 * where etcd keeps every revision until its periodic compaction.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { Store } from "./store.ts";
import type { KObject } from "../shared/types.ts";
import { decodeContinue, encodeContinue } from "./continue_tokens.ts";
import {
  type ListOptions,
  parseResourceVersion,
  tooLargeResourceVersion,
  waitForResourceVersion,
} from "./list_options.ts";

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
