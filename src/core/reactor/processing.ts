/**
 * One processing cycle of one object: raw-event handlers, then the
 * resource-changing handlers (changing.ts), daemons and timers. Returns how
 * long to wait before the next cycle when some handlers sleep (retries,
 * delays), and the object as the cycle's own last write left it — the queue
 * (queueing.ts) keeps that to itself, so that no later cycle starts from an
 * older body.
 *
 * The log lines are Kopf's, so that operators and their tests read the same:
 * `Handler 'create_fn' succeeded.`, `All handlers succeeded for creation.`,
 * `Adding the finalizer, thus preventing the actual deletion.`,
 * `Deleted, really deleted, and we are notified.`, and so on.
 *
 * @module
 */

import { Patch } from "../../cogs/structs/patches.ts";
import { trimBody } from "../../cogs/structs/trimming.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { applyPatch, changed, type ObjectApi } from "../actions/application.ts";
import { executeHandlers, withAttempt } from "../actions/execution.ts";
import { type Level, ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import type {
  AnyObject,
  EventContext,
  ObjectContext,
  WatchingHandler,
} from "../intents/handlers.ts";
import { objectContext } from "../intents/contexts.ts";
import { objectMemo } from "../engines/memos.ts";
import { DaemonStoppingReason } from "../intents/daemon_stopping.ts";
import { type ChangingCycle, processChanging } from "./changing.ts";
import type { CycleResult, ObjectMemory, OperatorContext, RawEvent } from "./cycle_types.ts";

export type { CycleResult, ObjectMemory, OperatorContext, RawEvent } from "./cycle_types.ts";
export { newMemory } from "./cycle_types.ts";

/**
 * Processes one event of one object.
 *
 * The usual cycle — no index to wait for, no raw-event handlers, daemons, timers or reconcilers
 * of the resource — is its changing part alone: that part's promise is returned as it is, with
 * no async frame (and no await) of this function around it.
 *
 * @param op The operator's registry, settings, logging and posting.
 * @param resource The object's resource.
 * @param api Patching and reading this object.
 * @param event The event (its object is the latest state).
 * @param memory The object's memory across cycles.
 * @param signal Aborts the cycle's API calls at operator exit.
 * @returns When to come back.
 */
export function processEvent(
  op: OperatorContext,
  resource: Resource,
  api: ObjectApi,
  event: RawEvent,
  memory: ObjectMemory,
  signal?: AbortSignal,
): Promise<CycleResult> {
  try {
    // Whether the object existed when the operator started watching (listed) or appeared later.
    memory.noticedByListing ??= event.type === null;
    const cycle = new Cycle(op, resource, api, event, memory, signal);
    if (!cycle.plain()) return processFully(cycle);
    if (op.registry.changingHandlers(resource).length) return processChanging(cycle);
    return writeEdits(cycle);
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * One cycle's parts: what {@link processChanging} works with, and the object context, made at
 * the first call (only a callback, a raw-event handler, a daemon or a reconciler needs it — not
 * the no-op cycle on our own write's echo of a plain operator).
 */
class Cycle implements ChangingCycle {
  readonly op: OperatorContext;
  readonly resource: Resource;
  readonly api: ObjectApi;
  readonly event: RawEvent;
  readonly memory: ObjectMemory;
  readonly signal: AbortSignal | undefined;
  readonly patch: Patch = new Patch();
  readonly logger: ObjectLogger;
  /**
   * The per-object memo (a shallow copy of the operator's, kept across events). Memos and
   * indices: no handler runs before every index is filled from its initial listing — also the
   * listings of watchers started later (new namespaces, new CRDs): the gate re-closes.
   */
  readonly memo: AnyObject;
  #base: ObjectContext | undefined;

  constructor(
    op: OperatorContext,
    resource: Resource,
    api: ObjectApi,
    event: RawEvent,
    memory: ObjectMemory,
    signal: AbortSignal | undefined,
  ) {
    this.op = op;
    this.resource = resource;
    this.api = api;
    this.event = event;
    this.memory = memory;
    this.signal = signal;
    this.logger = new ObjectLogger(op.sink, event.object, {
      post: op.post,
      level: postingLevel(op.settings),
    });
    this.memo = objectMemo(memory, op.memo);
  }

  /**
   * Whether the object's events need the changing part alone: no index to wait for, no raw-event
   * handlers, daemons, timers or reconcilers of the resource.
   */
  plain(): boolean {
    const { op, resource } = this;
    const registry = op.registry;
    return !op.indexers?.active && !this.memory.spawned && !op.daemons?.serves(resource) &&
      !registry.watchingHandlers(resource).length && !registry.spawningHandlers(resource).length &&
      !(op.reconcilers && registry.reconciles(resource));
  }

  context(): ObjectContext {
    if (!this.#base) {
      const op = this.op;
      this.#base = objectContext(this.event.object, this.resource, this.patch, this.logger, {
        memo: op.memo,
        settings: op.settings,
        indices: op.indices,
        signal: this.signal,
        clock: op.clock,
      });
      this.#base.memo = this.memo;
    }
    return this.#base;
  }
}

/** A cycle of a resource with no changing handlers: only the raw-event handlers' edits. */
async function writeEdits(cycle: Cycle): Promise<CycleResult> {
  const { api, event: { object: body }, patch, logger, signal, memory } = cycle;
  const applied = await applyPatch(api, body, patch.toJSON(), logger, signal, memory);
  return changed(body, applied) ? { patched: applied } : NOTHING_WRITTEN;
}

/** A cycle with everything a resource may have: indices, raw-event handlers, daemons, timers… */
async function processFully(cycle: Cycle): Promise<CycleResult> {
  const { op, resource, event, memory, signal, logger } = cycle;
  const body = event.object;
  if (op.indexers?.active) await op.indexers.whenReady();
  // Daemons and timers: their engine is loaded by the first cycle that needs it (not once the
  // operator exits: the exit has closed the daemons it had, and spawns none).
  if (!op.daemons && !op.exiting?.aborted && op.registry.spawningHandlers(resource).length) {
    await loadDaemons(op);
  }

  // The context for the filters only when the resource has raw-event handlers at all.
  const watching = op.registry.watchingHandlers(resource).length
    ? op.registry.watchingHandlers(resource, body, { ...cycle.context(), type: event.type, event })
    : NO_HANDLERS;
  if (watching.length) {
    await runEventHandlers(op, watching, cycle.context(), event, logger, signal);
  }

  // Daemons and timers: a deleted object's (or one being deleted) are asked to stop at once;
  // the delete cycle waits for them below, before its handlers and the finalizer's release.
  const deleting = event.type === "DELETED" || !!body.metadata?.deletionTimestamp;
  if (deleting && memory.spawned && op.daemons) {
    op.daemons.touch(memory.spawned, trimBody(body));
    op.daemons.stopObject(memory.spawned, DaemonStoppingReason.RESOURCE_DELETED);
  }

  const result = op.registry.changingHandlers(resource).length || op.daemons?.serves(resource)
    ? await processChanging(cycle)
    : await writeEdits(cycle);
  // Daemons and timers: spawned for a matching object, stopped when it stops matching; they
  // see the object live (each event updates their view).
  // Bodies kept between cycles (daemons', timers' and reconcilers' views) are trimmed of
  // managedFields and the last-applied annotation (cogs/structs/trimming.ts).
  // (Only for a resource with daemons or timers: observe() keeps nothing of any other.)
  if (!deleting && op.daemons && op.registry.spawningHandlers(resource).length) {
    memory.spawned = op.daemons.observe(
      memory.spawned,
      resource,
      cycle.api,
      trimBody(body),
      cycle.context(),
    );
  }
  // Reconcilers: the parent's current state after its own cycle (none once it is deleting).
  // (Only for a resource with reconcilers: no trimmed copy of every other object's body.)
  if (op.reconcilers && op.registry.reconciles(resource)) {
    op.reconcilers.observe(
      resource,
      cycle.api,
      trimBody(result.patched ?? body),
      deleting,
      cycle.context(),
    );
  }
  return result;
}

const NO_HANDLERS: readonly WatchingHandler[] = Object.freeze([]);

const loadingDaemons = new WeakMap<OperatorContext, Promise<void>>();

/**
 * Gives an operator its daemons and timers (`op.daemons`, engines/daemons.ts), importing their
 * engine the first time: at the start when the registry has daemons or timers (startup.ts), else
 * at the first cycle of a resource that has some. An operator with none never loads the engine.
 *
 * @param op The operator's context.
 * @returns When `op.daemons` is set.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorRegistry, OperatorSettings } from "@kopf/kopf";
 * import { loadDaemons, type OperatorContext } from "./processing.ts";
 * const op = { registry: new OperatorRegistry(), settings: new OperatorSettings(), memo: {}, indices: {}, sink: () => {} } as unknown as OperatorContext; // the fields loadDaemons reads
 * await loadDaemons(op);
 * const daemons = op.daemons;
 * await loadDaemons(op);
 * assert.ok(daemons !== undefined && op.daemons === daemons);
 * ```
 */
export function loadDaemons(op: OperatorContext): Promise<void> {
  let loading = loadingDaemons.get(op);
  if (!loading) {
    loading = import("../engines/daemons.ts").then(({ Daemons }) => {
      op.daemons ??= new Daemons(op);
    });
    loadingDaemons.set(op, loading);
  }
  return loading;
}

/** The result of a cycle that wrote nothing and need not come back: shared, never changed. */
const NOTHING_WRITTEN: CycleResult = Object.freeze({});

/** The current posting level of the object loggers: one function per settings, not per event. */
const postingLevels = new WeakMap<OperatorSettings, () => Level | undefined>();

function postingLevel(settings: OperatorSettings): () => Level | undefined {
  let level = postingLevels.get(settings);
  if (!level) {
    level = () => (settings.posting.enabled && settings.posting.loggers
      ? settings.posting.level as Level
      : undefined);
    postingLevels.set(settings, level);
  }
  return level;
}

/**
 * Raw-event handlers (`kopf.on.event`): the one protocol, with errors ignored by default and no
 * retries (Kopf's); success is logged at debug level (they run on every event).
 */
async function runEventHandlers(
  op: OperatorContext,
  handlers: readonly WatchingHandler[],
  base: ReturnType<typeof objectContext>,
  event: RawEvent,
  logger: ObjectLogger,
  signal: AbortSignal | undefined,
): Promise<void> {
  await executeHandlers<WatchingHandler>(handlers, {
    state: new State("event"),
    kind: "event",
    defaultErrors: "ignored",
    running: op.running,
    defaultBackoff: op.settings.execution.defaultBackoff,
    successLevel: "debug",
    logger,
    metrics: op.metrics,
    clock: op.clock,
    signal: op.exiting ?? signal,
    context: (handler, attempt): EventContext =>
      withAttempt({ ...base, type: event.type, event, param: handler.param }, attempt),
  });
}
