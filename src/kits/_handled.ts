/**
 * The object being handled, as the default owner of the hierarchy helpers.
 *
 * Why it exists: Kopf's `kopf.adopt(objs)` (and `label`, `harmonize_naming`,
 * `adjust_namespace`, `append_owner_reference`, `remove_owner_reference`)
 * take the owner from the handler being run, through a context variable, so
 * the walkthrough's one-liner `kopf.adopt(data)` just works. Here the same
 * comes from the handler's async context (core/actions/execution.ts), which
 * every handler kind runs in; outside of a handler, an omitted owner is one
 * line saying what to pass.
 *
 * @module
 */

import { currentContext } from "../core/actions/execution.ts";
import { isObject, type JsonObject } from "../cogs/structs/_json.ts";

/**
 * The body of the object whose handler runs now.
 *
 * @param fn The helper's name, for the message.
 * @param what What was omitted ("the owner", "the name"…).
 * @param form How to pass it explicitly, e.g. `adopt(objs, owner)`.
 * @returns The handled object's body.
 * @throws {TypeError} Outside of a handler, or in a handler without an object (activities).
 */
export function handledBody(fn: string, what: string, form: string): JsonObject {
  const context = currentContext();
  const [is, it] = what.endsWith("s") ? ["are", "them"] : ["is", "it"];
  if (context === undefined) {
    throw new TypeError(
      `${fn}(): ${what} ${is} omitted outside of a handler; pass ${it}: ${form} ` +
        `(${
          it === "it" ? "it defaults" : "they default"
        } to the handled object only inside a handler).`,
    );
  }
  const body: unknown = context.body;
  if (!isObject(body)) {
    throw new TypeError(
      `${fn}(): ${what} ${is} omitted, and the running handler has no object to default to ` +
        `(e.g. on.startup); pass ${it}: ${form}.`,
    );
  }
  return body;
}

/**
 * Tells `fn(objs, options)` from `fn(objs, owner, options?)`: the second argument is the
 * options if no third is given and it is an object with option keys only.
 *
 * @param second The second argument.
 * @param third The third argument.
 * @param keys The option keys of the helper.
 * @returns The owner-like argument (undefined if omitted) and the options.
 */
export function splitOptions<V, O extends object>(
  second: V | O | undefined,
  third: O | undefined,
  keys: readonly string[],
): [V | undefined, O] {
  if (third === undefined && isObject(second)) {
    const own = Object.keys(second);
    if (own.length && own.every((k) => keys.includes(k))) return [undefined, second as O];
  }
  return [second as V | undefined, third ?? ({} as O)];
}
