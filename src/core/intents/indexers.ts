/**
 * Turning `kopf.index(...)` calls into registered indexing handlers. Kept
 * apart from `registration.ts` because indexing handlers have their own
 * registry list (index ids are operator-wide, one id — one index) and their
 * own default errors mode (`"ignored"`, as in Kopf's "Errors in indexing").
 *
 * @module
 */

import type {
  BaseOptions,
  FilterOptions,
  HandlerFn,
  IndexingHandler,
  ObjectContext,
} from "./handlers.ts";
import { getDefaultRegistry, parseResourceArgs, resourceHandlerBase } from "./registration.ts";
import type { OperatorRegistry } from "./registry.ts";

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

/** Options of `kopf.index`. */
export interface IndexingOptions extends BaseOptions, FilterOptions {
  /** Register in this registry instead of the default one. */
  registry?: OperatorRegistry;
}

/**
 * Registers an indexing handler: `(…resource, options?, fn)`. The function's
 * name (or `id`) is the index's name, under which handlers find it in `indices`.
 *
 * @param args The call's arguments.
 * @returns The handler function.
 * @throws {RegistrationError} For bad arguments.
 *
 * @example
 * ```ts
 * import { registerIndexing } from "./indexers.ts";
 * import { OperatorRegistry } from "./registry.ts";
 * const registry = new OperatorRegistry();
 * registerIndexing(["pods", { registry }, function byName({ name }: { name: string }) {
 *   return { [name]: true };
 * }]);
 * console.log(registry.indexingHandlers().map((h) => h.id)); // ["byName"]
 * ```
 */
export function registerIndexing(args: unknown[]): HandlerFn {
  const what = "kopf.index";
  const { selector, options: o, fn } = parseResourceArgs<IndexingOptions>(what, "index", args);
  const handler: IndexingHandler = {
    kind: "indexing",
    ...resourceHandlerBase(o, fn, selector, "index", false),
  };
  (o.registry ?? getDefaultRegistry()).registerIndexing(handler);
  return fn;
}
