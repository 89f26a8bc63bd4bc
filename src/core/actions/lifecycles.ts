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
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * // The default already; a lifecycle of one's own can fall back to it:
 * // the handlers never tried yet all at once, then the fewest retries first.
 * const freshFirst: kopf.Lifecycle = (handlers, state) => {
 *   const fresh = handlers.filter((h) => !state.get(h.id)?.retries);
 *   return fresh.length ? kopf.allAtOnce(fresh, state) : kopf.asap(handlers, state);
 * };
 * kopf.setDefaultLifecycle(freshFirst);
 * kopf.setDefaultLifecycle(kopf.allAtOnce);
 * assert.deepEqual(kopf.getDefaultLifecycle() === kopf.allAtOnce, true);
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

let defaultLifecycle: Lifecycle = allAtOnce;

/**
 * The lifecycle used when an operator (`kopf.run`, `kopf.operator`) is given none
 * (Kopf's `kopf.get_default_lifecycle()`): {@link allAtOnce} unless set.
 *
 * @returns The default lifecycle.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * assert.deepEqual(kopf.getDefaultLifecycle() === kopf.allAtOnce, true);
 * ```
 */
export function getDefaultLifecycle(): Lifecycle {
  return defaultLifecycle;
}

/**
 * Sets the lifecycle used when an operator is given none (Kopf's
 * `kopf.set_default_lifecycle()`); `null`/`undefined` restores {@link allAtOnce}.
 * Call it before the operator starts.
 *
 * @param lifecycle The lifecycle: `kopf.allAtOnce`, `kopf.oneByOne`, `kopf.asap`,
 *   `kopf.shuffled`, or a function of the same shape.
 * @throws {TypeError} If it is not a function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * kopf.setDefaultLifecycle(kopf.oneByOne);
 * assert.deepEqual(kopf.getDefaultLifecycle() === kopf.oneByOne, true);
 * kopf.setDefaultLifecycle(null);
 * ```
 */
export function setDefaultLifecycle(lifecycle: Lifecycle | null | undefined): void {
  if (lifecycle !== null && lifecycle !== undefined && typeof lifecycle !== "function") {
    throw new TypeError(
      `setDefaultLifecycle(): the lifecycle must be a function such as kopf.asap, not ${typeof lifecycle}.`,
    );
  }
  defaultLifecycle = lifecycle ?? allAtOnce;
}
