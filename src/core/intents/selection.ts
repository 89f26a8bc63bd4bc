/**
 * Which changing handlers apply to one cause of one object: the cause's own,
 * resume handlers in an object's first cycle, field handlers whose field
 * changed, each function under one id once. Used by the registry for the
 * object's handlers and by sub-handlers for theirs.
 *
 * @module
 */

import type { Diff } from "../../cogs/structs/diffs.ts";
import { matchesChange } from "./filters.ts";
import type { AnyObject, ChangingHandler } from "./handlers.ts";

/**
 * Selects, from a list of changing handlers, those that apply to a cause:
 * the cause's own handlers, resume handlers in the first cycle of an object
 * noticed by the initial listing (also mixed into its creation, when it was
 * created while the operator was down; not during deletion unless
 * `deleted: true`), and field handlers whose field changed. A function
 * registered under one id for several causes runs once per cycle.
 *
 * @param handlers The candidates.
 * @param cause The cause.
 * @param context The handler context, for callback filters.
 * @returns The applicable handlers, in order.
 */
export function selectForCause(
  handlers: readonly ChangingHandler[],
  cause: {
    reason: string;
    initial: boolean;
    body: AnyObject;
    old: unknown;
    new: unknown;
    diff: Diff;
  },
  context: unknown,
): ChangingHandler[] {
  // A plain loop (this runs on every cycle): no filtered arrays, no maps or sets of seen ids.
  const selected: ChangingHandler[] = [];
  for (let i = 0; i < handlers.length; i++) {
    const h = handlers[i]!;
    if (h.initial) {
      if (!cause.initial) continue;
      if (cause.reason === "delete" && !h.deleted) continue;
    } else if (h.reason !== undefined && h.reason !== cause.reason) continue;
    else if (h.reason === undefined && !(cause.reason === "update" || cause.reason === "create")) {
      continue;
    }
    if (!matchesChange(h, cause, context)) continue;
    // The same function with the same id registered for several causes (e.g. create and resume,
    // for an object created while the operator was down) runs once per cycle: the first wins.
    // The same function with other ids (e.g. other fields) runs once per id, as in Kopf.
    if (!selectedAlready(selected, h)) selected.push(h);
  }
  return selected;
}

/** Whether the same function under the same id is selected already. */
function selectedAlready(selected: readonly ChangingHandler[], h: ChangingHandler): boolean {
  for (let i = 0; i < selected.length; i++) {
    if (selected[i]!.fn === h.fn && selected[i]!.id === h.id) return true;
  }
  return false;
}
