/**
 * One processing cycle of one object: raw-event handlers, then cause
 * detection and the resource-changing handlers, then one merge patch with
 * everything the cycle changed, and the finalizer edits that deletion and
 * blocking need. Returns how long to wait before the next cycle when some
 * handlers sleep (retries, delays).
 *
 * The log lines are Kopf's, so that operators and their tests read the same:
 * `Handler 'create_fn' succeeded.`, `All handlers succeeded for creation.`,
 * `Adding the finalizer, thus preventing the actual deletion.`,
 * `Deleted, really deleted, and we are notified.`, and so on.
 *
 * @module
 */

import { diff as computeDiff, reduceDiff } from "../../cogs/structs/diffs.ts";
import { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/references.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import {
  addFinalizer,
  applyPatch,
  type ObjectApi,
  removeFinalizer,
} from "../actions/application.ts";
import { type HandlerMetrics, type Lifecycle, runHandlersOnce } from "../actions/execution.ts";
import { type EventPoster, type Level, type LogSink, ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import {
  detectChangingCause,
  isDeletionBlocked,
  REASON_PROGRESS,
  REASON_TITLES,
} from "../intents/causes.ts";
import { getField } from "../intents/filters.ts";
import type {
  AnyObject,
  ChangingContext,
  ChangingHandler,
  ObjectContext,
} from "../intents/handlers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import { objectContext } from "../intents/contexts.ts";
import type { OperatorIndexers } from "../engines/indexing.ts";
import { objectMemo } from "../engines/memos.ts";
import { type Daemons, DaemonStoppingReason, type SpawnedObject } from "../engines/daemons.ts";

/** What the operator keeps in memory about one object between cycles. */
export interface ObjectMemory {
  /** All changing handlers ran to the end at least once in this process (no more resume handlers). */
  fullyHandledOnce: boolean;
  /** The object was first seen in a listing (it existed when the watch started), not as a change. */
  noticedByListing: boolean | undefined;
  /** The resourceVersion of our own last patch: events older than it are stale. */
  expectedVersion: string | undefined;
  /** The per-object memo: handlers' `memo`, a shallow copy of the operator's (engines/memos.ts). */
  memo: AnyObject;
  /** Daemons and timers of the object (engines/daemons.ts), while any were spawned. */
  spawned?: SpawnedObject | undefined;
}

/**
 * A fresh memory of an object.
 *
 * @returns The memory.
 *
 * @example
 * ```ts
 * import { newMemory } from "./processing.ts";
 * console.log(newMemory().fullyHandledOnce); // false
 * ```
 */
export function newMemory(): ObjectMemory {
  return {
    fullyHandledOnce: false,
    noticedByListing: undefined,
    expectedVersion: undefined,
    memo: {},
  };
}

/** The operator-wide parts a cycle needs. */
export interface OperatorContext {
  registry: OperatorRegistry;
  settings: OperatorSettings;
  memo: AnyObject;
  indices: AnyObject;
  sink: LogSink;
  post: EventPoster;
  lifecycle: Lifecycle;
  /** Records handler runs (metrics; daemons and timers record theirs here too), if given. */
  metrics?: HandlerMetrics | undefined;
  /** In-memory indices: no handler runs while `indexers.whenReady()` waits (indices listing). */
  indexers?: OperatorIndexers | undefined;
  /** Daemons and timers (`kopf.daemon`, `kopf.timer`), if the operator runs them. */
  daemons?: Daemons | undefined;
}

/** A watch event as the queue hands it over: type null for listings and re-checks. */
export interface RawEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | null;
  object: AnyObject;
}

/** The result of a cycle. */
export interface CycleResult {
  /** Seconds until handlers wake up and the object must be processed again. */
  delay?: number;
}

/**
 * Processes one event of one object.
 *
 * @param op The operator's registry, settings, logging and posting.
 * @param resource The object's resource.
 * @param api Patching and reading this object.
 * @param event The event (its object is the latest state).
 * @param memory The object's memory across cycles.
 * @param signal Aborts the cycle's API calls at operator exit.
 * @returns When to come back.
 */
export async function processEvent(
  op: OperatorContext,
  resource: Resource,
  api: ObjectApi,
  event: RawEvent,
  memory: ObjectMemory,
  signal?: AbortSignal,
): Promise<CycleResult> {
  const body = event.object;
  const settings = op.settings;
  // Whether the object existed when the operator started watching (listed) or appeared later.
  memory.noticedByListing ??= event.type === null;
  const logger = new ObjectLogger(op.sink, body, {
    post: op.post,
    level: () => (settings.posting.enabled && settings.posting.loggers
      ? settings.posting.level as Level
      : undefined),
  });
  const patch = new Patch();
  const base = objectContext(body, resource, patch, logger, op);
  // Memos and indices: the per-object memo (a shallow copy of the operator's, kept across
  // events); no handler runs before every index is filled from its initial listing — also
  // the listings of watchers started later (new namespaces, new CRDs): the gate re-closes.
  base.memo = objectMemo(memory, op.memo);
  if (op.indexers?.active) await op.indexers.whenReady();

  for (
    const handler of op.registry.watchingHandlers(resource, body, {
      ...base,
      type: event.type,
      event,
    })
  ) {
    const context = { ...base, type: event.type, event, param: handler.param };
    const began = op.metrics ? performance.now() : 0;
    let failed = false;
    try {
      await handler.fn(context);
      logger.debug(`Handler '${handler.id}' succeeded.`);
    } catch (e) {
      failed = true;
      logger.exception(`Handler '${handler.id}' failed with an exception. Will ignore.`, e);
    }
    op.metrics?.handlerRun(handler.id, "event", (performance.now() - began) / 1000, failed);
  }

  // Daemons and timers: a deleted object's (or one being deleted) are asked to stop at once;
  // the delete cycle waits for them below, before its handlers and the finalizer's release.
  const deleting = event.type === "DELETED" || !!body.metadata?.deletionTimestamp;
  if (deleting && memory.spawned && op.daemons) {
    op.daemons.touch(memory.spawned, body);
    op.daemons.stopObject(memory.spawned, DaemonStoppingReason.RESOURCE_DELETED);
  }

  let result: CycleResult = {};
  if (op.registry.changingHandlers(resource).length || op.daemons?.serves(resource)) {
    result = await processChanging(
      op,
      resource,
      api,
      event,
      body,
      patch,
      logger,
      base,
      memory,
      signal,
    );
  } else {
    const applied = await applyPatch(api, body, patch.toJSON(), logger, signal);
    expectVersion(memory, body, applied);
  }
  // Daemons and timers: spawned for a matching object, stopped when it stops matching; they
  // see the object live (each event updates their view).
  if (!deleting && op.daemons) {
    memory.spawned = op.daemons.observe(memory.spawned, resource, api, body, base);
  }
  return result;
}

async function processChanging(
  op: OperatorContext,
  resource: Resource,
  api: ObjectApi,
  event: RawEvent,
  initialBody: AnyObject,
  patch: Patch,
  logger: ObjectLogger,
  base: ObjectContext,
  memory: ObjectMemory,
  signal: AbortSignal | undefined,
): Promise<CycleResult> {
  const { settings, registry } = op;
  const finalizer = settings.persistence.finalizer;
  const progress = settings.persistence.progressStorage;
  const diffbase = settings.persistence.diffbaseStorage;
  let body = initialBody;

  const old = (await diffbase.fetch(body)) ?? undefined;
  const essence = diffbase.build(body);
  const diff = computeDiff(old, essence);
  const cause = detectChangingCause({
    eventType: event.type,
    body,
    finalizer,
    old,
    new: essence,
    diff,
    initial: memory.noticedByListing === true && !memory.fullyHandledOnce,
  });
  const causeContext: ChangingContext = { ...base, reason: cause.reason, diff, old, new: essence };

  // Stealth mode: an object that no handler's filters match is not handled at all (nothing is
  // logged about it, no diff-base is stored), so when it comes into the scope later, it is "created".
  if (!registry.prematch(resource, { body, old, new: essence }, causeContext)) {
    if (isDeletionBlocked(body, finalizer)) {
      logger.debug("Removing the finalizer, as there are no handlers requiring it.");
      const updated = await removeFinalizer(api, body, finalizer, signal);
      if (!updated) return {};
      expectVersion(memory, body, updated);
      body = updated;
    }
    const applied = await applyPatch(api, body, patch.toJSON(), logger, signal);
    expectVersion(memory, body, applied);
    return {};
  }

  if (cause.reason === "gone") {
    logger.debug("Deleted, really deleted, and we are notified.");
    return {};
  }
  if (cause.reason === "free") {
    logger.debug("Deletion, but we are done with it, and we do not care.");
    return {};
  }

  // Daemons and timers: the deletion (its handlers, then the finalizer's release) waits until
  // they have exited or were abandoned after their cancellation timeout; meanwhile, re-checks.
  if (cause.reason === "delete" && memory.spawned && op.daemons) {
    if (!(await op.daemons.waitObject(memory.spawned, signal))) return { delay: 0.001 };
  }

  // Add or remove our finalizer as the handlers need it, before any handler runs.
  if (cause.reason !== "delete") {
    const requires = registry.requiresFinalizer(resource, body, causeContext);
    const blocked = isDeletionBlocked(body, finalizer);
    if (requires && !blocked) {
      logger.debug("Adding the finalizer, thus preventing the actual deletion.");
      const updated = await addFinalizer(api, body, finalizer, signal);
      if (!updated) return {};
      expectVersion(memory, body, updated);
      body = updated;
    } else if (!requires && blocked) {
      logger.debug("Removing the finalizer, as there are no handlers requiring it.");
      const updated = await removeFinalizer(api, body, finalizer, signal);
      if (!updated) return {};
      expectVersion(memory, body, updated);
      body = updated;
    }
  }

  let done = false;
  let skip = false;
  let delays: number[] = [];
  if (cause.reason === "noop") {
    logger.debug("Something has changed, but we are not interested (the essence is the same).");
    skip = true;
  } else {
    const current = {
      ...causeContext,
      body,
      meta: body.metadata,
      labels: body.metadata?.labels ?? {},
    };
    const handlers = registry.causeHandlers(
      resource,
      { reason: cause.reason, initial: cause.initial, body, old, new: essence, diff },
      current,
    );
    if (!handlers.length) {
      skip = true;
    } else {
      const reasonTitle = REASON_TITLES[cause.reason];
      if (logger.isEnabledFor("debug")) {
        logger.debug(`${REASON_PROGRESS[cause.reason]} is in progress: ${JSON.stringify(body)}`);
      }
      const ids = handlers.map((h) => h.id);
      const state = await State.fromStorage(body, progress, ids, cause.reason);
      await runHandlersOnce<ChangingHandler>({
        handlers,
        state,
        lifecycle: op.lifecycle,
        metrics: op.metrics,
        logger,
        context: (handler, retry, started, runtime) =>
          handlerContext(current, handler, retry, started, runtime),
        onResult: (handler, value) => {
          patch.status[handler.id] = value;
        },
      });
      done = state.done(ids);
      if (done) {
        const counts = state.counts(ids);
        if (counts.failure === 0) logger.info(`All handlers succeeded for ${reasonTitle}.`);
        else {
          const title = reasonTitle[0]!.toUpperCase() + reasonTitle.slice(1);
          logger.info(
            `${title} is processed: ${counts.success} succeeded; ${counts.failure} failed.`,
          );
        }
        await state.purge(body, patch, progress, ids);
      } else {
        // Finished handlers are remembered too, so that the next cycles do not run them again.
        await state.store(body, patch, progress);
        delays = state.delays(ids, new Date());
      }
    }
  }

  if (done || skip) {
    // Only for the changing handlers: a resource served by daemons/timers alone gets no diff-base
    // (as in Kopf), which saves one write per object.
    const changing = registry.changingHandlers(resource).length > 0;
    if (changing && cause.reason !== "delete" && (old === undefined || diff.length > 0)) {
      await diffbase.store(body, patch, essence);
    }
    memory.fullyHandledOnce = true;
  }

  const patched = await applyPatch(api, body, patch.toJSON(), logger, signal);
  if (!patched) return {};
  expectVersion(memory, body, patched);
  body = patched;

  if (cause.reason === "delete" && (done || skip)) {
    logger.debug("Removing the finalizer, thus allowing the actual deletion.");
    const released = await removeFinalizer(api, body, finalizer, signal);
    expectVersion(memory, body, released);
  }
  return delays.length ? { delay: Math.min(...delays) } : {};
}

/** Remembers the resourceVersion of our own write, if it changed anything. */
function expectVersion(
  memory: ObjectMemory,
  before: AnyObject,
  after: AnyObject | undefined,
): void {
  const rv = after?.metadata?.resourceVersion;
  if (rv && rv !== before.metadata?.resourceVersion) memory.expectedVersion = rv;
}

function handlerContext(
  cause: ChangingContext,
  handler: ChangingHandler,
  retry: number,
  started: Date,
  runtime: number,
): ChangingContext {
  const ctx: ChangingContext = { ...cause, param: handler.param, retry, started, runtime };
  if (handler.field) {
    ctx.old = getField(cause.old, handler.field);
    ctx.new = getField(cause.new, handler.field);
    ctx.diff = reduceDiff(cause.diff, handler.field);
  }
  return ctx;
}
