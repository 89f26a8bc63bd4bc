/**
 * A map that forgets its least recently used entries beyond a size, whose
 * entries a user may keep and use again without a look-up (the event
 * correlator's cache of objects).
 *
 * @module
 */

/** An entry of an {@link Lru}: kept by a user to use it again without looking its key up. */
export interface LruNode<V> {
  /** The key. */
  readonly key: string;
  /** The value. */
  value: V;
  /** False once it is forgotten (then {@link Lru.use} refuses it). */
  live: boolean;
  /** The next older entry. */
  older: LruNode<V> | undefined;
  /** The next newer entry. */
  newer: LruNode<V> | undefined;
}

/**
 * A map that forgets its least recently used entries beyond a size. The
 * order is a linked list through the entries, so that using an entry moves
 * pointers only: the map itself changes only when an entry comes or goes (a
 * `Map` kept in order by deleting and re-adding every used key rehashes its
 * table again and again, and that cost most of the correlator's time). The
 * entries are nodes that a user may keep and use again while they are live,
 * with no look-up of their key at all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Lru } from "./lru.ts";
 * const lru = new Lru<number>(2);
 * lru.set("a", 1);
 * const b = lru.add("b", 2);
 * lru.get("a"); // now "b" is the least recently used
 * lru.set("c", 3);
 * assert.deepEqual([lru.get("a"), lru.get("b"), lru.get("c"), b.live], [1, undefined, 3, false]);
 * ```
 */
export class Lru<V> {
  #map = new Map<string, LruNode<V>>();
  #oldest: LruNode<V> | undefined;
  #newest: LruNode<V> | undefined;

  /**
   * Creates an empty cache.
   *
   * @param size The entries kept at most.
   */
  constructor(
    readonly size: number,
    readonly onEvict: ((node: LruNode<V>) => void) | undefined = undefined,
  ) {}

  /**
   * The value of a key, which becomes the most recently used.
   *
   * @param key The key.
   * @returns The value, or undefined when absent.
   */
  get(key: string): V | undefined {
    return this.entry(key)?.value;
  }

  /**
   * Sets a key's value and makes it the most recently used; forgets the least
   * recently used entry when there are more than {@link Lru.size}.
   *
   * @param key The key.
   * @param value The value.
   */
  set(key: string, value: V): void {
    const found = this.entry(key);
    if (found !== undefined) found.value = value;
    else this.add(key, value);
  }

  /**
   * The entry of a key, which becomes the most recently used.
   *
   * @param key The key.
   * @returns The entry, or undefined when absent.
   */
  entry(key: string): LruNode<V> | undefined {
    const node = this.#map.get(key);
    if (node !== undefined) this.#touch(node);
    return node;
  }

  /**
   * Adds an entry for a key that is absent, as the most recently used;
   * forgets the least recently used entry when there are more than {@link Lru.size}.
   *
   * @param key The key (not in the cache).
   * @param value The value.
   * @returns The new entry.
   */
  add(key: string, value: V): LruNode<V> {
    const node: LruNode<V> = { key, value, live: true, older: this.#newest, newer: undefined };
    if (this.#newest) this.#newest.newer = node;
    else this.#oldest = node;
    this.#newest = node;
    this.#map.set(key, node);
    if (this.#map.size > this.size) this.delete(this.#oldest!);
    return node;
  }

  /**
   * Forgets an entry (calling `onEvict` with it).
   *
   * @param node A live entry of this cache.
   */
  delete(node: LruNode<V>): void {
    this.#unlink(node);
    node.live = false;
    this.#map.delete(node.key);
    this.onEvict?.(node);
  }

  /** The least recently used entry, if any. */
  get oldest(): LruNode<V> | undefined {
    return this.#oldest;
  }

  /**
   * Uses a kept entry again (it becomes the most recently used), if it is still live.
   *
   * @param node The entry, or undefined.
   * @returns Whether it is live (else the caller looks its key up anew).
   */
  use(node: LruNode<V> | undefined): node is LruNode<V> {
    if (node === undefined || !node.live) return false;
    this.#touch(node);
    return true;
  }

  /** How many entries there are. */
  get length(): number {
    return this.#map.size;
  }

  #touch(node: LruNode<V>): void {
    if (node === this.#newest) return;
    this.#unlink(node);
    node.older = this.#newest;
    node.newer = undefined;
    this.#newest!.newer = node; // not undefined: the node was not the newest
    this.#newest = node;
  }

  #unlink(node: LruNode<V>): void {
    if (node.older) node.older.newer = node.newer;
    else this.#oldest = node.newer;
    if (node.newer) node.newer.older = node.older;
    else this.#newest = node.older;
    node.older = node.newer = undefined;
  }
}
