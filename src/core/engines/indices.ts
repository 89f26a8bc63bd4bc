/**
 * The in-memory indices themselves (`kopf.Index`, `kopf.Store`): keys to
 * stores of values, one value per object, read-only for handlers; and the
 * bookkeeping of which keys each object has in an index, so that an object's
 * new result replaces exactly its old values. The indexing engine
 * (indexing.ts) decides when objects are indexed; this module only holds.
 *
 * @module
 */

const MUTATE = Symbol("kopf.index.mutate");

/** A canonical text of a key, so that tuple-like keys (`["ns", "name"]`) are found by value. */
function canonical(key: unknown): string {
  if (typeof key === "string") return `s:${key}`;
  if (key === undefined || key === null) return "null";
  try {
    return `j:${JSON.stringify(key)}`;
  } catch {
    return `o:${String(key)}`;
  }
}

/**
 * The values of one key of an index: one value per indexed object, never
 * empty (an emptied store leaves its index). Read-only for handlers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Index } from "@kopf/kopf";
 * const index = new Index();
 * for (const value of index.get("missing") ?? []) console.log(value);
 * assert.deepEqual(index.size, 0);
 * ```
 */
export class Store<V = unknown> implements Iterable<V> {
  #items = new Map<string, V>();

  /** How many values (objects) the store holds. */
  get size(): number {
    return this.#items.size;
  }

  /** Iterates over the values. */
  [Symbol.iterator](): IterableIterator<V> {
    return this.#items.values();
  }

  /** The values. @returns An iterator of the values. */
  values(): IterableIterator<V> {
    return this.#items.values();
  }

  /** The values as an array (for JSON and tests). @returns The array. */
  toJSON(): V[] {
    return [...this.#items.values()];
  }

  /** @internal */
  [MUTATE](objectKey: string, value: V | typeof REMOVE): void {
    if (value === REMOVE) this.#items.delete(objectKey);
    else this.#items.set(objectKey, value);
  }
}

const REMOVE = Symbol("kopf.index.remove");

/**
 * An in-memory index (`kopf.Index`): a read-only mapping of keys to stores of
 * values. Keys are the keys of the objects (or `Map`s) that indexing
 * functions return, or `null` for non-dict results; array keys are matched by
 * value (`index.get(["ns", "name"])`). As in Kopf's mapping, iterating an
 * index yields its keys; `entries()` yields `[key, store]` pairs.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.index("pods", { registry }, function byApp({ labels, name }) {
 *   return { [labels.app ?? ""]: name };
 * });
 * kopf.on.create("kopfexamples", { registry }, ({ indices, logger }) => {
 *   const byApp = indices.byApp as kopf.Index<string, string>;
 *   logger.info(`web pods: ${[...(byApp.get("web") ?? [])].join(", ")}`);
 * });
 * ```
 */
export class Index<K = unknown, V = unknown> implements Iterable<K> {
  #stores = new Map<string, { key: K; store: Store<V> }>();

  /** How many keys. */
  get size(): number {
    return this.#stores.size;
  }

  /**
   * The store of a key.
   *
   * @param key The key (arrays and objects are matched by value).
   * @returns The store, or undefined when no object has this key.
   */
  get(key: K): Store<V> | undefined {
    return this.#stores.get(canonical(key))?.store;
  }

  /**
   * Whether some object has this key.
   *
   * @param key The key.
   * @returns True when the key is in the index.
   */
  has(key: K): boolean {
    return this.#stores.has(canonical(key));
  }

  /** Iterates over the keys. */
  *[Symbol.iterator](): IterableIterator<K> {
    for (const { key } of this.#stores.values()) yield key;
  }

  /** The keys. @returns An iterator of the keys. */
  keys(): IterableIterator<K> {
    return this[Symbol.iterator]();
  }

  /** The stores. @returns An iterator of the stores. */
  *values(): IterableIterator<Store<V>> {
    for (const { store } of this.#stores.values()) yield store;
  }

  /** The keys with their stores. @returns An iterator of `[key, store]`. */
  *entries(): IterableIterator<[K, Store<V>]> {
    for (const { key, store } of this.#stores.values()) yield [key, store];
  }

  /** A plain view for JSON and tests: `[[key, [values…]], …]`. @returns The pairs. */
  toJSON(): Array<[K, V[]]> {
    return [...this.entries()].map(([k, s]) => [k, s.toJSON()]);
  }

  /** @internal */
  [MUTATE](canon: string, key: K, objectKey: string, value: V | typeof REMOVE): void {
    let entry = this.#stores.get(canon);
    if (!entry) {
      if (value === REMOVE) return;
      this.#stores.set(canon, entry = { key, store: new Store<V>() });
    }
    entry.store[MUTATE](objectKey, value);
    if (!entry.store.size) this.#stores.delete(canon);
  }
}

/**
 * Splits an indexing result into keys and values, as the docs say (dict → keys; else → null). */
export function resultEntries(result: unknown): Map<string, [unknown, unknown]> {
  const out = new Map<string, [unknown, unknown]>();
  if (result instanceof Map) {
    for (const [k, v] of result) out.set(canonical(k), [k, v]);
  } else if (
    result !== null && typeof result === "object" &&
    [Object.prototype, null].includes(Object.getPrototypeOf(result))
  ) {
    for (const [k, v] of Object.entries(result)) out.set(canonical(k), [k, v]);
  } else {
    out.set(canonical(null), [null, result]);
  }
  return out;
}

/** One index with the bookkeeping of which keys each object has in it. */
export class IndexState<F = unknown> {
  readonly index = new Index();
  /** Object key → the canonical keys (with the original keys) the object has values under. */
  readonly objects = new Map<string, Map<string, unknown>>();
  /** Object key → its failure sequence or exclusion. */
  readonly failures = new Map<string, F>();

  replace(objectKey: string, entries: Map<string, [unknown, unknown]>): void {
    const before = this.objects.get(objectKey);
    for (const [canon, key] of before ?? []) {
      if (!entries.has(canon)) this.index[MUTATE](canon, key, objectKey, REMOVE);
    }
    const keys = new Map<string, unknown>();
    for (const [canon, [key, value]] of entries) {
      this.index[MUTATE](canon, key, objectKey, value);
      keys.set(canon, key);
    }
    if (keys.size) this.objects.set(objectKey, keys);
    else this.objects.delete(objectKey);
  }

  remove(objectKey: string): void {
    this.replace(objectKey, new Map());
  }
}
