/**
 * Turning `kopf.index(...)` calls into registered indexing handlers. Kept
 * apart from `registration.ts` because indexing handlers have their own
 * registry list (index ids are operator-wide, one id — one index) and their
 * own default errors mode (`"ignored"`, as in Kopf's "Errors in indexing").
 *
 * @module
 */

import type { HandlerFn, IndexingHandler, ObjectContext } from "./handlers.ts";
import {
  getDefaultRegistry,
  parseResourceArgs,
  RegistrationError,
  resourceHandlerBase,
} from "./registration.ts";
import type { OptionsOf } from "./option_types.ts";
import type { RegistryOption } from "./options.ts";

/**
 * The context of indexing handlers: the object, plus the raw event. `memo` is the operator's
 * memo; `patch` is discarded (indexing does not write to objects); `retry`, `started` and
 * `runtime` count the failures since the first failed indexing of the object.
 */
export interface IndexingContext extends ObjectContext {
  /** ADDED, MODIFIED, or null for listings and re-indexing. */
  type: "ADDED" | "MODIFIED" | null;
  /** The raw watch event. */
  event: { type: string | null; object: Record<string, unknown> };
}

/** Options of `kopf.index` (option_specs.ts declares each). */
export interface IndexingOptions extends OptionsOf<"index">, RegistryOption {}

/**
 * Registers an indexing handler: `(…resource, options?, fn)`. The function's
 * name (or `id`) is the index's name, under which handlers find it in `indices`.
 *
 * @param args The call's arguments.
 * @returns The index's handle: the function (callable as before), its id, and `of(indices)`.
 * @throws {RegistrationError} For bad arguments.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registerIndexing } from "./indexers.ts";
 * import { OperatorRegistry } from "@kopf/kopf";
 * const registry = new OperatorRegistry();
 * registerIndexing(["pods", { registry }, function byName({ name }: { name: string }) {
 *   return { [name]: true };
 * }]);
 * assert.deepEqual(registry.indexingHandlers().map((h) => h.id), ["byName"]);
 * ```
 */
export function registerIndexing(args: unknown[]): IndexHandle<unknown, unknown, unknown> {
  const what = "kopf.index";
  const { selector, options: o, fn } = parseResourceArgs<IndexingOptions>(what, "index", args);
  const handler: IndexingHandler = {
    kind: "indexing",
    ...resourceHandlerBase(o, fn, selector, "index", false),
  };
  (o.registry ?? getDefaultRegistry()).register(handler);
  return indexHandle(handler.id, fn);
}

/** A read-only store of one key's values (`kopf.Store`, as typed index handles give it). */
export interface ReadonlyStore<V> extends Iterable<V> {
  /** How many values (objects) the store holds. */
  readonly size: number;
  /** The values. @returns An iterator of the values. */
  values(): IterableIterator<V>;
  /** The values as an array. @returns The array. */
  toJSON(): V[];
}

/**
 * A read-only index (`kopf.Index`, as typed index handles give it): keys to stores of values.
 * `kopf.Index<K, V>` has this shape; the interface lets the handler layer name it.
 */
export interface ReadonlyIndex<K, V> extends Iterable<K> {
  /** How many keys. */
  readonly size: number;
  /** The store of a key (arrays and objects are matched by value). @returns It, or undefined. */
  get(key: K): ReadonlyStore<V> | undefined;
  /** Whether some object has this key. @returns True when the key is in the index. */
  has(key: K): boolean;
  /** The keys. @returns An iterator of the keys. */
  keys(): IterableIterator<K>;
  /** The stores. @returns An iterator of the stores. */
  values(): IterableIterator<ReadonlyStore<V>>;
  /** The keys with their stores. @returns An iterator of `[key, store]`. */
  entries(): IterableIterator<[K, ReadonlyStore<V>]>;
  /** `[[key, [values…]], …]`. @returns The pairs. */
  toJSON(): Array<[K, V[]]>;
}

/**
 * The `[key, value]` pair(s) an indexing function's result gives, as the indices keep it: a
 * `Map` by its keys, a plain object by its keys, `null`/`undefined` nothing (the object is
 * skipped), anything else one value under the key `null`.
 */
export type IndexEntryOf<R> = 0 extends 1 & R ? [unknown, unknown] // any
  : unknown extends R ? [unknown, unknown]
  : R extends null | undefined | void ? never
  : R extends ReadonlyMap<infer K, infer V> ? [K, V]
  : R extends
    | string
    | number
    | boolean
    | bigint
    | symbol
    | readonly unknown[]
    | ((...args: never[]) => unknown) ? [null, R]
  : R extends object ? [keyof R & string, R[keyof R & string]]
  : [null, R];

/** The key type of the index an indexing function with this return type fills. */
export type IndexKeyOf<R> = IndexEntryOf<Awaited<R>>[0];

/** The value type of the index an indexing function with this return type fills. */
export type IndexValueOf<R> = IndexEntryOf<Awaited<R>>[1];

/**
 * What `kopf.index(...)` returns: the indexing function (callable as before) that also knows
 * its index — its id and, statically, its keys and values (from the function's return type).
 * `handle.of(indices)` is the index, typed, in any handler's `indices`; `indices[handle.id]`
 * (or `indices.byName`) is the same index, untyped, as in Kopf.
 *
 * @typeParam K The keys (from the function's return type).
 * @typeParam V The values.
 * @typeParam C The context the function takes.
 */
export interface IndexHandle<K, V, C = IndexingContext> {
  /** The indexing function itself. */
  (context: C): unknown;
  /** The index's id (the function's name, or the `id` option): its name in `indices`. */
  readonly id: string;
  /**
   * This index in a handler's `indices`, typed.
   *
   * @param indices The handler's `indices`.
   * @returns The index.
   * @throws {RegistrationError} When `indices` has no such index (the handle was registered in
   *   another registry than the operator runs).
   */
  of(indices: Readonly<Record<string, unknown>>): ReadonlyIndex<K, V>;
}

/** The handle of an index: a callable forwarding to the function, with the id and `of()`. */
function indexHandle(id: string, fn: HandlerFn): IndexHandle<unknown, unknown, unknown> {
  const handle = (context: unknown): unknown => fn(context);
  Object.defineProperty(handle, "name", { value: fn.name });
  return Object.assign(handle, {
    id,
    of(indices: Readonly<Record<string, unknown>>): ReadonlyIndex<unknown, unknown> {
      const index = indices?.[id];
      if (index === undefined) {
        throw new RegistrationError(
          `No index '${id}' in these indices: register kopf.index(...) in the registry the ` +
            `operator runs (indices: ${Object.keys(indices ?? {}).join(", ") || "none"})`,
        );
      }
      return index as ReadonlyIndex<unknown, unknown>;
    },
  });
}
