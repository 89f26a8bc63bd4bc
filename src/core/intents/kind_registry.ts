/**
 * One list of handlers per kind, keyed by the kind's name and typed by a map
 * of kind → handler record ({@link KindRegistry}): one way in
 * ({@link KindRegistry.add}, which refuses a duplicate by the kind's own rule)
 * and one way out ({@link KindRegistry.list}). The operator's registry
 * (`registry.ts`) keeps all its kinds in one of these, so a new kind of
 * handler is an entry in the map and a duplicate rule, not a new pair of
 * accessors.
 *
 * @module
 */

/** A handler id was registered twice for the same resource and kind. */
export class DuplicateHandlerError extends Error {
  /** Always `"DuplicateHandlerError"`. */
  override name = "DuplicateHandlerError";
}

/**
 * When two handlers of one kind may not both be registered: the message of the refusal (what
 * clashes and what to do), or undefined when they may.
 */
export type ClashRule<H> = (existing: H, added: H) => string | undefined;

/** The duplicate rule of each kind of a map of kind → handler record. */
export type ClashRules<M> = { readonly [K in keyof M]: ClashRule<M[K]> };

/**
 * Handlers by kind, in registration order, typed by a map of kind → handler record.
 *
 * @typeParam M The map of kind names to handler records.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DuplicateHandlerError, KindRegistry } from "./kind_registry.ts";
 * type Kinds = { timer: { id: string; every: number }; probe: { id: string } };
 * const kinds = new KindRegistry<Kinds>({
 *   timer: (a, b) => a.id === b.id ? `timer "${b.id}" twice` : undefined,
 *   probe: () => undefined,
 * });
 * kinds.add("timer", { id: "tick", every: 5 });
 * kinds.add("probe", { id: "alive" });
 * assert.deepEqual(kinds.list("timer").map((t) => t.every), [5]);
 * assert.throws(() => kinds.add("timer", { id: "tick", every: 1 }), DuplicateHandlerError);
 * assert.equal(kinds.isEmpty, false);
 * ```
 */
export class KindRegistry<M> {
  #lists: { [K in keyof M]?: M[K][] } = {};
  #rules: ClashRules<M>;

  /**
   * Makes an empty registry.
   *
   * @param rules The duplicate rule of each kind.
   */
  constructor(rules: ClashRules<M>) {
    this.#rules = rules;
  }

  /**
   * Adds a handler of a kind, after those registered before it.
   *
   * @param kind The kind.
   * @param handler The handler.
   * @throws {DuplicateHandlerError} When the kind's rule refuses it next to a registered one.
   */
  add<K extends keyof M>(kind: K, handler: M[K]): void {
    const list = this.#lists[kind] ??= [];
    const rule = this.#rules[kind];
    for (const existing of list) {
      const clash = rule(existing, handler);
      if (clash !== undefined) throw new DuplicateHandlerError(clash);
    }
    list.push(handler);
  }

  /**
   * The handlers of a kind, in registration order (the registry's own array: do not change it).
   *
   * @param kind The kind.
   * @returns The handlers.
   */
  list<K extends keyof M>(kind: K): readonly M[K][] {
    return this.#lists[kind] ?? [];
  }

  /** Whether no handler of any kind is registered. */
  get isEmpty(): boolean {
    return Object.values(this.#lists).every((list) => !(list as unknown[]).length);
  }
}
