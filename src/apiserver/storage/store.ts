/**
 * The object store: every object of every resource, one cluster-wide
 * monotonic resourceVersion, a bounded history of changes for watches that
 * resume from a resourceVersion, and the live watchers of each resource.
 *
 * Stored objects are never mutated: a write stores a new object, so history
 * entries, watchers and in-flight responses can share them without copies.
 * JavaScript's single thread makes each commit atomic: a watch that starts
 * replays history and registers itself within one synchronous step, so it can
 * neither miss nor repeat a change.
 *
 * A commit is all or nothing: the new object is encoded (and its size held to
 * etcd's limit) and every guard (the data directory's append) runs before the
 * store, the history or any watcher sees it. A refused write leaves the
 * resourceVersion, readers and watchers exactly as they were.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { Change, EventType, KObject } from "../shared/types.ts";
import { utf8Length } from "../shared/utf8.ts";
import { encodeObject } from "./known_json.ts";

/** A live watch on one resource. */
export interface Watcher {
  /** The storage key it watches. */
  key: string;
  /** Called synchronously for every change of that resource, in order. */
  deliver(change: Change): void;
}

/**
 * A check that runs before a change is applied, with the object's JSON
 * encoding; throwing refuses the change and nothing is applied.
 */
export type CommitGuard = (change: Change, encoded: string) => void;

/** The options of a {@link Store}. */
export interface StoreOptions {
  /** How many changes to keep for watches that resume from a resourceVersion (default 20,000; at least 1). */
  historySize?: number;
  /**
   * The largest stored object, in bytes of its JSON encoding (default
   * {@link MAX_OBJECT_BYTES}, etcd's request limit); a larger write is 413.
   */
  maxObjectBytes?: number;
}

/** etcd's default request limit, 1.5 MiB: no stored object may be larger. */
export const MAX_OBJECT_BYTES = 1_572_864;

/** Changes (commits and loads) counted over every store of the process ({@link Store.revisionOf}). */
let changes = 0;

/**
 * How many of the latest commits' encodings a store keeps ({@linkcode Store.encodingOf}): more
 * than the writes in flight at once, so that a write's answer finds its own.
 */
const RECENT_ENCODINGS = 64;
/**
 * The longest encoding kept among the recent ones (characters): at most a few MiB kept in all;
 * a larger object's answer encodes it again (its writer's answer is the only one that can miss).
 */
const RECENT_ENCODING_CHARS = 32_768;

/**
 * The in-memory object store with history and watchers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * const store = api.server.store;
 * const obj = store.commit("ADDED", "configmaps", { metadata: { name: "a", namespace: "default" } });
 * assert.deepEqual([Number(obj.metadata.resourceVersion) > 0, store.get("configmaps", "default", "a") === obj], [true, true]);
 * ```
 */
export class Store {
  #rv = 0;
  #collections = new Map<string, Map<string, Map<string, KObject>>>();
  #history: Change[] = [];
  #historyStart = 0;
  #historySize: number;
  /** Changes with an RV at or below this are gone from history: watching from them is 410. */
  #compactedRv = 0;
  #watchers = new Map<string, Set<Watcher>>();
  #listeners: Array<(change: Change) => void> = [];
  #guards: CommitGuard[] = [];
  #maxObjectBytes: number;
  /** The last committed object and its JSON, of any size (the watch fan-out sends the same text). */
  #lastObject: KObject | undefined;
  #lastEncoded = "";
  /**
   * The latest commits' objects and their JSON (those up to `RECENT_ENCODING_CHARS`), a ring of
   * `RECENT_ENCODINGS` slots: a write's answer goes out after other writes have committed
   * (concurrent clients, each waiting on its own admission and conversion turns), and still
   * finds its object's text here.
   */
  #recentObjects: (KObject | undefined)[] = new Array(RECENT_ENCODINGS).fill(undefined);
  #recentEncoded: string[] = new Array(RECENT_ENCODINGS).fill("");
  #recentNext = 0;
  /** By storage key: the process-wide count of changes ({@link changes}) at that key's latest one. */
  #revisions = new Map<string, number>();

  /**
   * Creates an empty store.
   *
   * @param options History size.
   */
  constructor(options: StoreOptions = {}) {
    this.#historySize = Math.max(1, options.historySize ?? 20_000);
    this.#maxObjectBytes = options.maxObjectBytes ?? MAX_OBJECT_BYTES;
  }

  /** The last resourceVersion issued. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** The oldest resourceVersion from which a watch can still resume. */
  get compactedResourceVersion(): number {
    return this.#compactedRv;
  }

  /**
   * Restores the counter on load (persistence): later writes continue from it.
   *
   * @param rv The last resourceVersion issued before the restart.
   */
  restoreResourceVersion(rv: number): void {
    this.#rv = Math.max(this.#rv, rv);
    this.#compactedRv = this.#rv;
  }

  /**
   * Puts an object as-is (persistence load): no RV bump, no event.
   *
   * @param key The storage key.
   * @param obj The object, with its resourceVersion.
   */
  load(key: string, obj: KObject): void {
    this.#bucket(key, obj.metadata.namespace ?? "", true).set(obj.metadata.name!, obj);
    this.#revisions.set(key, ++changes);
  }

  /**
   * A number that changes whenever an object of a resource is stored, changed or removed, for
   * what is derived from a resource's objects and kept between writes (a Pod's default
   * PriorityClass): while it stays the same, so do the objects. Counted over every store of
   * the process, so that two stores never share a non-zero revision of different objects (what
   * is kept by revision may be kept process-wide, as `builtins/pod_spec_memo.ts` does).
   *
   * @param key The storage key.
   * @returns The resource's revision (0 before its first object).
   */
  revisionOf(key: string): number {
    return this.#revisions.get(key) ?? 0;
  }

  /**
   * One object, or undefined.
   *
   * @param key The storage key.
   * @param namespace The namespace ("" for cluster-scoped).
   * @param name The name.
   * @returns The stored object.
   */
  get(key: string, namespace: string, name: string): KObject | undefined {
    return this.#collections.get(key)?.get(namespace)?.get(name);
  }

  /**
   * All objects of a resource, in one namespace or in all.
   *
   * @param key The storage key.
   * @param namespace A namespace, or undefined for all.
   * @returns The objects, namespace by namespace, in insertion order.
   */
  *list(key: string, namespace?: string): Generator<KObject> {
    const byNs = this.#collections.get(key);
    if (!byNs) return;
    if (namespace !== undefined) {
      const names = byNs.get(namespace);
      if (names) yield* names.values();
      return;
    }
    for (const names of byNs.values()) yield* names.values();
  }

  /**
   * How many objects a resource has (in a namespace, or in all).
   *
   * @param key The storage key.
   * @param namespace A namespace, or undefined for all.
   * @returns The count.
   */
  count(key: string, namespace?: string): number {
    const byNs = this.#collections.get(key);
    if (!byNs) return 0;
    if (namespace !== undefined) return byNs.get(namespace)?.size ?? 0;
    let n = 0;
    for (const names of byNs.values()) n += names.size;
    return n;
  }

  /** The storage keys that have (or had) objects. */
  keys(): IterableIterator<string> {
    return this.#collections.keys();
  }

  /**
   * Commits a change: assigns the next resourceVersion, stores (or removes)
   * the object, records it in history, and delivers it to every watcher.
   * The object is encoded and every guard run first: when either throws,
   * nothing has changed.
   *
   * @param type ADDED, MODIFIED or DELETED.
   * @param key The storage key.
   * @param draft The new object (not yet stored; its resourceVersion is set here).
   * @returns The stored object.
   * @throws {ApiError} 413 when the encoded object is over the size limit, 500
   *   when it cannot be encoded; whatever a guard throws.
   */
  commit(type: EventType, key: string, draft: KObject): KObject {
    const rv = this.#rv + 1;
    const object: KObject = {
      ...draft,
      metadata: { ...draft.metadata, resourceVersion: String(rv) },
    };
    const ns = object.metadata.namespace ?? "";
    const name = object.metadata.name!;
    const previous = this.#collections.get(key)?.get(ns)?.get(name);
    const change: Change = { type, key, object, previous, rv };
    const encoded = this.#encode(object, type);
    for (const guard of this.#guards) guard(change, encoded);
    this.#rv = rv;
    this.#revisions.set(key, ++changes);
    this.#lastObject = object;
    this.#lastEncoded = encoded;
    if (encoded.length <= RECENT_ENCODING_CHARS) {
      const slot = this.#recentNext;
      this.#recentObjects[slot] = object;
      this.#recentEncoded[slot] = encoded;
      this.#recentNext = (slot + 1) % RECENT_ENCODINGS;
    }
    const bucket = this.#bucket(key, ns, type !== "DELETED");
    if (type === "DELETED") bucket?.delete(name);
    else bucket!.set(name, object);
    this.#remember(change);
    for (const listener of this.#listeners) listener(change);
    const watchers = this.#watchers.get(key);
    if (watchers) { for (const w of watchers) w.deliver(change); }
    return object;
  }

  /**
   * The JSON of an object of the latest commits, as encoded for it (watchers of that change
   * and the answer to its write send the same text instead of encoding it again).
   *
   * @param object A stored object.
   * @returns Its JSON if it is the latest committed object, or one of the last
   *   `RECENT_ENCODINGS` of at most `RECENT_ENCODING_CHARS`; else undefined.
   */
  encodingOf(object: KObject): string | undefined {
    // The watchers of a change ask during its commit; its writer soon after, newest first.
    if (object === this.#lastObject) return this.#lastEncoded;
    const objects = this.#recentObjects;
    for (let i = 0, slot = this.#recentNext; i < RECENT_ENCODINGS; i++) {
      slot = slot === 0 ? RECENT_ENCODINGS - 1 : slot - 1;
      if (objects[slot] === object) return this.#recentEncoded[slot];
    }
    return undefined;
  }

  /**
   * Adds a check run before every change is applied (the data directory's
   * append): it gets the change and the object's JSON; throwing refuses the
   * change, which then leaves no trace.
   *
   * @param guard The check.
   */
  guard(guard: CommitGuard): void {
    this.#guards.push(guard);
  }

  #encode(object: KObject, type: EventType): string {
    let encoded: string;
    try {
      // Kept parts (a Pod's defaulted spec and created status) copied as their text.
      encoded = encodeObject(object as unknown as Record<string, unknown>);
    } catch (e) {
      throw new ApiError(
        500,
        "InternalError",
        `the object cannot be stored: ${(e as Error).message}`,
      );
    }
    // A deletion stores nothing new: the object was within the limit when written.
    if (
      type !== "DELETED" && encoded.length > this.#maxObjectBytes / 3 &&
      utf8Length(encoded) > this.#maxObjectBytes
    ) {
      throw new ApiError(
        413,
        "RequestEntityTooLarge",
        `etcdserver: request is too large: the object is ${utf8Length(encoded)} bytes, ` +
          `the limit is ${this.#maxObjectBytes}`,
      );
    }
    return encoded;
  }

  /**
   * Subscribes to every committed change of every resource (persistence,
   * garbage collection); called synchronously after the commit.
   *
   * @param listener The callback.
   */
  onCommit(listener: (change: Change) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * The changes of a resource after a resourceVersion, from history.
   *
   * @param key The storage key.
   * @param afterRv Changes with a greater RV are returned.
   * @returns The changes in order, or `undefined` if history no longer reaches back that far (410).
   */
  changesSince(key: string, afterRv: number): Change[] | undefined {
    if (afterRv < this.#compactedRv) return undefined;
    const out: Change[] = [];
    const h = this.#history;
    // Binary search the first change with rv > afterRv in the live part of the ring.
    let lo = this.#historyStart, hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h[mid]!.rv <= afterRv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < h.length; i++) {
      const c = h[i]!;
      if (c.key === key) out.push(c);
    }
    return out;
  }

  /**
   * Forgets all history: any watch resuming from an older resourceVersion gets 410 Gone.
   */
  compact(): void {
    this.#history = [];
    this.#historyStart = 0;
    this.#compactedRv = this.#rv;
  }

  /**
   * Registers a watcher; it gets every later change of its resource.
   *
   * @param watcher The watcher.
   * @returns A function that unregisters it.
   */
  watch(watcher: Watcher): () => void {
    let set = this.#watchers.get(watcher.key);
    if (!set) this.#watchers.set(watcher.key, set = new Set());
    set.add(watcher);
    return () => {
      set.delete(watcher);
    };
  }

  /** How many watchers are registered, over all resources. */
  get watcherCount(): number {
    let n = 0;
    for (const set of this.#watchers.values()) n += set.size;
    return n;
  }

  #bucket(key: string, ns: string, create: true): Map<string, KObject>;
  #bucket(key: string, ns: string, create: boolean): Map<string, KObject> | undefined;
  #bucket(key: string, ns: string, create: boolean): Map<string, KObject> | undefined {
    let byNs = this.#collections.get(key);
    if (!byNs) {
      if (!create) return undefined;
      this.#collections.set(key, byNs = new Map());
    }
    let names = byNs.get(ns);
    if (!names) {
      if (!create) return undefined;
      byNs.set(ns, names = new Map());
    }
    return names;
  }

  #remember(change: Change): void {
    const h = this.#history;
    h.push(change);
    if (h.length - this.#historyStart > this.#historySize) {
      const dropped = h[this.#historyStart]!;
      h[this.#historyStart] = undefined as unknown as Change;
      this.#historyStart++;
      this.#compactedRv = dropped.rv;
      // Reclaim the dead prefix now and then, so the array does not grow forever.
      if (this.#historyStart > 4096 && this.#historyStart * 2 > h.length) {
        this.#history = h.slice(this.#historyStart);
        this.#historyStart = 0;
      }
    }
  }
}
