/**
 * Lifecycles (Kopf's `kopf.lifecycles`): which of the ready handlers of a
 * cause run in one processing cycle. A policy only orders and picks; the
 * protocol of running each picked handler is the executor's (execution.ts).
 *
 * @module
 */

import type { BaseHandler } from "./invocation.ts";
import type { State } from "./progression.ts";

/** A handler-choosing policy per cycle (Kopf's lifecycles). */
export type Lifecycle = <H extends BaseHandler>(handlers: H[], state: State) => H[];

/**
 * All ready handlers, in order, one after another within one cycle — the
 * default here, as it needs the fewest API writes.
 *
 * @param handlers The ready handlers.
 * @param _state Their state.
 * @returns All of them.
 *
 * @example
 * ```ts
 * import * as kopf from "../../../mod.ts";
 * import { State } from "./progression.ts";
 * console.log(kopf.allAtOnce([], new State("create"))); // []
 * ```
 */
export function allAtOnce<H extends BaseHandler>(handlers: H[], _state: State): H[] {
  return handlers;
}

/**
 * Only the first ready handler per cycle (Kopf's `one_by_one`).
 *
 * @param handlers The ready handlers.
 * @param _state Their state.
 * @returns The first.
 */
export function oneByOne<H extends BaseHandler>(handlers: H[], _state: State): H[] {
  return handlers.slice(0, 1);
}

/**
 * The ready handler with the fewest retries first, one per cycle (Kopf's `asap`).
 *
 * @param handlers The ready handlers.
 * @param state Their state.
 * @returns One handler.
 */
export function asap<H extends BaseHandler>(handlers: H[], state: State): H[] {
  return [...handlers].sort((a, b) =>
    (state.get(a.id)?.retries ?? 0) - (state.get(b.id)?.retries ?? 0)
  ).slice(0, 1);
}

/**
 * All ready handlers in random order (Kopf's `shuffled`).
 *
 * @param handlers The ready handlers.
 * @param _state Their state.
 * @returns A shuffled copy.
 */
export function shuffled<H extends BaseHandler>(handlers: H[], _state: State): H[] {
  const out = [...handlers];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
