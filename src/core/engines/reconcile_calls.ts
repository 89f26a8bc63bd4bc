/**
 * One call of a reconciler (`kopf.on.reconcile`) for one parent: its context
 * (the parent's body as the call starts, its children, `api`, `memo`,
 * `patch`…), the one handler protocol (actions/execution.ts) with errors
 * `"temporary"` by default, and the parent's patch (with a result in
 * `status.<id>`) applied after it as one merge patch. The engine
 * (reconciling.ts) decides when a call happens; this module is what happens.
 *
 * Why the parent record remembers our own write: the write's watch event is
 * no change of the parent to react to (it would call again for nothing, and a
 * call that always writes would call forever).
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { KubeClient } from "../../cogs/clients/kube_client.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import { applyPatch, type ObjectApi, type PatchMemory } from "../actions/application.ts";
import { executeHandler, type HandlerMetrics, withAttempt } from "../actions/execution.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import type { State } from "../actions/progression.ts";
import { objectContext } from "../intents/contexts.ts";
import type { AnyObject } from "../intents/handlers.ts";
import type { ReconcileContext, ReconcilingHandler } from "../intents/reconcilers.ts";

/** The shortest wait before calling again after a retryable outcome: never a hot loop. */
const MIN_RERUN_DELAY = 0.001;

/** What the engine keeps about one parent (what a call reads and updates). */
export interface ParentRecord extends PatchMemory {
  /** The parent's uid. */
  uid: string;
  /** The parent's resource. */
  resource: Resource;
  /** The parent as last seen (or as our own last patch returned it). */
  body: AnyObject;
  /** Patching the parent. */
  api: ObjectApi;
  /** The parent's logger. */
  logger: ObjectLogger;
  /** The per-object memo (shared with the parent's other handlers). */
  memo: AnyObject;
  /** The resourceVersion last observed. */
  seen: unknown;
  /** The resourceVersion our own last patch produced: its event is no change to react to. */
  own: unknown;
}

/** The operator-wide parts of a call. */
export interface CallEnv {
  /** The operator's settings (backoff, result size limit). */
  settings: OperatorSettings;
  /** The in-memory indices. */
  indices: AnyObject;
  /** Records each call, if given. */
  metrics: HandlerMetrics | undefined;
  /** The time source of retries and timeouts. */
  clock: Clock;
  /** The operator's API client (the handlers' `api`). */
  api: KubeClient;
}

/**
 * Calls a reconciler once for a parent, and applies its patch.
 *
 * @param env The operator-wide parts.
 * @param parent The parent's record (its body is read now; `own` and `body` are updated after
 *   our own write).
 * @param handler The reconciler.
 * @param state Its attempts so far (retries, started), updated with the outcome.
 * @param children The owned children, by the names of `owns`.
 * @param signal Aborts the call (the parent's deletion, the operator's exit).
 * @returns Seconds until the next attempt (a retry), or undefined when done (success or
 *   permanent failure).
 */
export async function reconcileOnce(
  env: CallEnv,
  parent: ParentRecord,
  handler: ReconcilingHandler,
  state: State,
  children: Record<string, AnyObject[]>,
  signal: AbortSignal,
): Promise<number | undefined> {
  const { settings, indices } = env;
  const body = parent.body;
  const patch = new Patch();
  const shared = { memo: parent.memo, settings, indices };
  const outcome = await executeHandler(handler, {
    state,
    kind: "reconcile",
    noun: "Reconciler",
    defaultErrors: "temporary",
    defaultBackoff: settings.execution.defaultBackoff,
    resultLimit: settings.persistence.resultSizeLimit,
    clock: env.clock,
    metrics: env.metrics,
    logger: parent.logger,
    signal,
    context: (h, attempt): ReconcileContext => {
      const base = objectContext(body, parent.resource, patch, parent.logger, shared);
      return withAttempt({ ...base, api: env.api, param: h.param, children }, attempt);
    },
    onResult: (h, result) => void (patch.status[h.id] = result),
  });
  if (!patch.isEmpty()) await flush(parent, handler, body, patch);
  return outcome.final ? undefined : Math.max(MIN_RERUN_DELAY, outcome.delay ?? 0);
}

/** Applies a call's patch; our own write's event will be no change to react to. */
async function flush(
  parent: ParentRecord,
  handler: ReconcilingHandler,
  body: AnyObject,
  patch: Patch,
): Promise<void> {
  try {
    const patched = await applyPatch(
      parent.api,
      body,
      patch.toJSON(),
      parent.logger,
      undefined,
      parent,
    );
    const version = patched?.metadata?.resourceVersion;
    if (patched && version !== body.metadata?.resourceVersion) {
      parent.own = version;
      if (parent.body === body) parent.body = patched;
    }
  } catch (e) {
    parent.logger.exception(
      `Reconciler '${handler.id}' could not apply its patch: ${e instanceof Error ? e.message : e}`,
      e,
    );
  }
}
