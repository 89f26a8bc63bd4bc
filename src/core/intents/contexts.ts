/**
 * Building the object context handlers receive: the object's parts (`spec`,
 * `meta`, `labels`, …) spread out for convenience, plus the operator-wide
 * memo, settings and indices, the operator's API client (`api`) and clock (`clock`). One builder, so that every kind of handler
 * (changing, event, index) sees the same shape.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import { currentClock } from "../../cogs/aio/clock_scope.ts";
import type { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import { currentApi } from "../actions/handler_api.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import type { AnyObject, ObjectContext } from "./handlers.ts";

/** The operator-wide parts of an object context. */
export interface SharedContext {
  memo: AnyObject;
  settings: ObjectContext["settings"];
  indices: AnyObject;
  /** The signal of the work the context is for (operator exit); a never-aborted one if absent. */
  signal?: AbortSignal | undefined;
  /** The operator's clock; the one of the operator the code runs in if absent. */
  clock?: Clock | undefined;
}

/** A signal that never aborts, for contexts built outside of any cancellable work. */
const NEVER: AbortSignal = new AbortController().signal;

/**
 * Builds the context of a handler for one object.
 *
 * @param body The object.
 * @param resource Its resource.
 * @param patch The cycle's patch.
 * @param logger The object's logger.
 * @param shared The memo, settings and indices.
 * @returns The context (param, retry, started and runtime at their defaults).
 *
 * @example
 * ```ts ignore
 * const ctx = objectContext(body, resource, new Patch(), logger, { memo, settings, indices });
 * ctx.spec.size;
 * ```
 */
export function objectContext(
  body: AnyObject,
  resource: Resource,
  patch: Patch,
  logger: ObjectLogger,
  shared: SharedContext,
): ObjectContext {
  const meta = body.metadata ?? {};
  return {
    body,
    spec: body.spec ?? {},
    meta,
    status: body.status ?? {},
    uid: meta.uid,
    name: meta.name,
    namespace: meta.namespace,
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    resource,
    patch,
    logger,
    memo: shared.memo,
    settings: shared.settings,
    indices: shared.indices,
    api: currentApi(),
    param: undefined,
    retry: 0,
    started: new Date(),
    runtime: 0,
    signal: shared.signal ?? NEVER,
    clock: shared.clock ?? currentClock(),
  };
}
