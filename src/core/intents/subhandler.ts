/**
 * `kopf.subhandler(options, fn)`: the declarative form of `kopf.register`,
 * for sub-handlers defined inline inside a running handler.
 *
 * @module
 */

import type { HandlerFn } from "./handlers.ts";
import { registerSubhandler, type SubhandlerOptions } from "./registration.ts";

/**
 * Registers a sub-handler of the running handler; same as `kopf.register(fn, options)`.
 *
 * @param args `(fn)` or `(options, fn)`.
 * @returns The function.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "../../../mod.ts";
 * kopf.on.create("kopfexamples", ({ spec }) => {
 *   for (const item of spec.items ?? []) {
 *     kopf.subhandler({ id: item }, ({ logger }) => logger.info(`Handling ${item}`));
 *   }
 * });
 * ```
 */
export function subhandler(...args: [HandlerFn] | [SubhandlerOptions, HandlerFn]): HandlerFn {
  if (args.length === 1) return registerSubhandler(args[0]);
  return registerSubhandler(args[1], args[0]);
}
