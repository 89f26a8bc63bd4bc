/**
 * The resource-changing part of a cycle: cause detection, the finalizer that deletion handlers
 * need, the handlers of the cause through the one executor, then one write with everything the
 * cycle changed, and the finalizer's release after deletion.
 *
 * Why the cause is detected again after the finalizer is added: the write that adds it may come
 * back with a newer object (a conflict re-reads it), and the handlers must run for what the object
 * is now, not for what it was.
 *
 * Why the write comes in layers (actions/application.ts `applyCycleWrite`): when the API refuses a
 * result or an edit as invalid, the handlers' outcomes are stored anyway, so a value that cannot be
 * written never makes finished handlers run again.
 *
 * The log lines are Kopf's: `Handler 'create_fn' succeeded.`, `All handlers succeeded for
 * creation.`, `Adding the finalizer, thus preventing the actual deletion.`, `Deleted, really
 * deleted, and we are notified.`, and so on.
 *
 * @module
 */

import { realClock } from "../../cogs/aio/clock.ts";
import {
  type Diff,
  diff as computeDiff,
  EMPTY_DIFF,
  reduceDiff,
} from "../../cogs/structs/diffs.ts";
import type { BodyEssence } from "../../cogs/structs/bodies.ts";
import { setOwn } from "../../cogs/structs/_json.ts";
import { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import {
  addFinalizer,
  applyCycleWrite,
  applyPatch,
  changed,
  type ObjectApi,
  removeFinalizer,
} from "../actions/application.ts";
import { type Attempt, runHandlers } from "../actions/execution.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import {
  detectChangingCause,
  isDeletionBlocked,
  REASON_PROGRESS,
  REASON_TITLES,
} from "../intents/causes.ts";
import { getField } from "../intents/filters.ts";
import { currentApi } from "../actions/handler_api.ts";
import { currentClock } from "../../cogs/aio/clock_scope.ts";
import type {
  AnyObject,
  ChangingContext,
  ChangingHandler,
  ObjectContext,
} from "../intents/handlers.ts";
import type { CycleResult, ObjectMemory, OperatorContext, RawEvent } from "./cycle_types.ts";
import { spanAttribute, TRACING } from "../../cogs/tracing/tracing.ts";
import { echoCheck, NOOP_LINE } from "./echoes.ts";

/** Everything the changing part of one cycle works with. */
export interface ChangingCycle {
  op: OperatorContext;
  resource: Resource;
  api: ObjectApi;
  event: RawEvent;
  /** The handlers' patch (their edits), shared with the event handlers of the cycle. */
  patch: Patch;
  logger: ObjectLogger;
  /** The cycle's object context (made at the first call: only a callback or a daemon needs it). */
  context(): ObjectContext;
  /** The object's memo (what the contexts' `memo` is). */
  memo: AnyObject;
  memory: ObjectMemory;
  signal: AbortSignal | undefined;
  /** Whether the object's events need this changing part alone (echoes.ts); absent: no. */
  plain?(): boolean;
}

/**
 * Runs the changing handlers of the object's cause and writes the outcome.
 *
 * The cycle that changes nothing — our own write's echo, as a rule: the essence as stored, the
 * finalizer as the handlers need it, no edits — is decided here without an async frame: its
 * promise is a resolved one.
 *
 * @param cycle The cycle.
 * @returns When to come back, and the object as our last write returned it.
 */
export function processChanging(cycle: ChangingCycle): Promise<CycleResult> {
  try {
    const { op, resource } = cycle;
    const registry = op.registry;
    // The filters read a context only through their callbacks: without any, none is built.
    const callbacks = registry.filterCallbacks(resource);
    const first = detect(cycle, cycle.event.object, callbacks);
    if (!isPromise(first) && first.matched && first.cause.reason === "noop") {
      const { body, causeContext } = first;
      first.requires = registry.requiresFinalizer(resource, body, causeContext);
      const finalizer = op.settings.persistence.finalizer;
      if (first.requires === isDeletionBlocked(body, finalizer) && cycle.patch.isEmpty()) {
        cycle.logger.debug(NOOP_LINE);
        cycle.memory.fullyHandledOnce = true;
        return NOTHING_DONE;
      }
    }
    return processFully(cycle, callbacks, first);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** What one pass of a cycle found: the essence, the diff, the cause, whether any filter matches. */
interface Detection {
  body: AnyObject;
  essence: BodyEssence;
  old: BodyEssence | undefined;
  diff: Diff;
  cause: ReturnType<typeof detectChangingCause>;
  /** The cause's context, for the filters' callbacks (made only when there are some). */
  causeContext: ChangingContext | undefined;
  /** Whether any handler's filters match the object at all (else: stealth mode). */
  matched: boolean;
  /** Whether the handlers need the finalizer (asked once per pass, when it is asked). */
  requires?: boolean | undefined;
}

/** One pass's detection: synchronous, unless the diff-base storage answers with a promise. */
function detect(
  cycle: ChangingCycle,
  body: AnyObject,
  callbacks: boolean,
): Detection | Promise<Detection> {
  const diffbase = cycle.op.settings.persistence.diffbaseStorage;
  const essence = diffbase.build(body);
  // (A storage made without the base class, in plain JavaScript, may lack `unchanged`.)
  if (typeof diffbase.unchanged === "function" && diffbase.unchanged(body, essence)) {
    // The stored essence is this one (our own last write's, as a rule): nothing to compare.
    return detected(cycle, body, callbacks, essence, essence, EMPTY_DIFF);
  }
  // The built-in storages answer synchronously: a promise only from a storage that returns one.
  const fetched = diffbase.fetch(body);
  if (isPromise(fetched)) {
    return fetched.then((old) =>
      detected(cycle, body, callbacks, essence, old ?? undefined, computeDiff(old, essence))
    );
  }
  const old = fetched ?? undefined;
  return detected(cycle, body, callbacks, essence, old, computeDiff(old, essence));
}

function detected(
  cycle: ChangingCycle,
  body: AnyObject,
  callbacks: boolean,
  essence: BodyEssence,
  old: BodyEssence | undefined,
  diff: Diff,
): Detection {
  const { op, event, memory } = cycle;
  const cause = detectChangingCause({
    eventType: event.type,
    body,
    finalizer: op.settings.persistence.finalizer,
    old,
    new: essence,
    diff,
    initial: memory.noticedByListing === true && !memory.fullyHandledOnce,
  });
  if (TRACING) spanAttribute("kopf.cause", cause.reason); // the cycle's span (cycle_tracing.ts)
  // The cause's context, for the filters' callbacks (the handlers get their own).
  const causeContext: ChangingContext | undefined = callbacks
    ? {
      ...cycle.context(),
      body,
      meta: body.metadata,
      labels: body.metadata?.labels ?? {},
      reason: cause.reason,
      diff,
      old,
      new: essence,
    }
    : undefined;
  const matched = op.registry.prematch(cycle.resource, { body, old, new: essence }, causeContext);
  return { body, essence, old, diff, cause, causeContext, matched };
}

/** The result of a cycle that wrote nothing and need not come back: shared, never changed. */
const NOTHING_DONE: Promise<CycleResult> = Promise.resolve(Object.freeze({ patched: undefined }));

/** The cycle with all it may do: the finalizer, the handlers, the write, a retry's delay. */
async function processFully(
  cycle: ChangingCycle,
  callbacks: boolean,
  first: Detection | Promise<Detection>,
): Promise<CycleResult> {
  const { op, resource, api, patch, logger, memory, signal } = cycle;
  const { settings, registry } = op;
  const clock = op.clock ?? realClock;
  const finalizer = settings.persistence.finalizer;
  const progress = settings.persistence.progressStorage;
  const diffbase = settings.persistence.diffbaseStorage;
  /** The object as our last write returned it (kept by `newer()` after every write). */
  let patched: AnyObject | undefined;
  let next: Detection | Promise<Detection> = first;

  for (let pass = 0;; pass++) {
    const found = isPromise(next) ? await next : next;
    let body = found.body;
    const { essence, old, diff, cause, causeContext } = found;

    // Stealth mode: an object that no handler's filters match is not handled at all (nothing is
    // logged about it, no diff-base is stored), so when it comes into the scope later, it is
    // "created".
    if (!found.matched) {
      if (isDeletionBlocked(body, finalizer)) {
        logger.debug("Removing the finalizer, as there are no handlers requiring it.");
        const updated = await removeFinalizer(api, body, finalizer, signal);
        patched = newer(body, updated, patched);
        if (!updated) return { patched };
        body = updated;
      }
      const applied = await applyPatch(api, body, patch.toJSON(), logger, signal, memory);
      patched = newer(body, applied, patched);
      return { patched };
    }

    if (cause.reason === "gone") {
      logger.debug("Deleted, really deleted, and we are notified.");
      return { patched };
    }
    if (cause.reason === "free") {
      logger.debug("Deletion, but we are done with it, and we do not care.");
      return { patched };
    }

    // Daemons and timers: the deletion (its handlers, then the finalizer's release) waits until
    // they have exited or were abandoned after their cancellation timeout; meanwhile, re-checks.
    if (cause.reason === "delete" && memory.spawned && op.daemons) {
      if (!(await op.daemons.waitObject(memory.spawned, signal))) {
        return { delay: 0.001, patched };
      }
    }

    // Add or remove our finalizer as the handlers need it, before any handler runs.
    if (cause.reason !== "delete") {
      const requires = found.requires ?? registry.requiresFinalizer(resource, body, causeContext);
      const blocked = isDeletionBlocked(body, finalizer);
      if (requires && !blocked) {
        logger.debug("Adding the finalizer, thus preventing the actual deletion.");
        const updated = await addFinalizer(api, body, finalizer, signal);
        patched = newer(body, updated, patched);
        if (!updated) return { patched };
        body = updated;
        // The object may have changed meanwhile (a conflict re-reads it): detect its cause anew.
        if (pass === 0) {
          next = detect(cycle, body, callbacks);
          continue;
        }
      } else if (!requires && blocked) {
        logger.debug("Removing the finalizer, as there are no handlers requiring it.");
        const updated = await removeFinalizer(api, body, finalizer, signal);
        patched = newer(body, updated, patched);
        if (!updated) return { patched };
        body = updated;
      }
    }

    const own = new Patch();
    /** The handlers' results by id: made at the first result (a noop cycle has none). */
    let results: Record<string, unknown> | undefined;
    let done = false;
    let skip = false;
    let delays: Array<[string, number]> | undefined;
    if (cause.reason === "noop") {
      logger.debug(NOOP_LINE);
      skip = true;
    } else {
      const handlers = registry.causeHandlers(
        resource,
        { reason: cause.reason, initial: cause.initial, body, old, new: essence, diff },
        causeContext,
      );
      if (!handlers.length) {
        skip = true;
      } else {
        const reasonTitle = REASON_TITLES[cause.reason];
        if (logger.isEnabledFor("debug")) {
          logger.debug(`${REASON_PROGRESS[cause.reason]} is in progress: ${JSON.stringify(body)}`);
        }
        const ids: string[] = new Array(handlers.length);
        for (let i = 0; i < handlers.length; i++) ids[i] = handlers[i]!.id;
        const read = State.read(body, progress, ids, cause.reason);
        const state = read instanceof State ? read : await read;
        await runHandlers<ChangingHandler>(handlers, {
          state,
          kind: "changing",
          subhandlers: true,
          running: op.running,
          defaultErrors: "temporary",
          defaultBackoff: settings.execution.defaultBackoff,
          resultLimit: settings.persistence.resultSizeLimit,
          lifecycle: op.lifecycle,
          metrics: op.metrics,
          clock: op.clock,
          signal: op.exiting ?? signal,
          logger,
          // Methods, not arrows: a bundle (--keep-names) would name an arrow at each creation.
          context(h, attempt) {
            return new HandlerContext(cycle, body, cause.reason, diff, old, essence, h, attempt);
          },
          onResult(handler, value) {
            setOwn(results ??= {}, handler.id, value);
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
          const purged = state.purgeNow(body, own, progress, ids);
          if (purged) await purged;
        } else {
          // Finished handlers are remembered too, so that the next cycles do not run them again.
          await state.store(body, own, progress);
          const now = clock.date();
          delays = ids.flatMap((id) => {
            const [delay] = state.delays([id], now);
            return delay === undefined ? [] : [[id, delay] as [string, number]];
          });
        }
      }
    }

    if (done || skip) {
      // Only for the changing handlers: a resource served by daemons/timers alone gets no
      // diff-base (as in Kopf), which saves one write per object.
      const changing = registry.changingHandlers(resource).length > 0;
      if (changing && cause.reason !== "delete" && (old === undefined || diff.length > 0)) {
        const stored = diffbase.store(body, own, essence);
        if (isPromise(stored)) await stored;
      }
      memory.fullyHandledOnce = true;
    }

    // A cycle that changed nothing (our own write's echo) writes nothing: not even its copies
    // of the empty patches are made (applyCycleWrite would return the body as it is).
    const written = !results && own.isEmpty() && patch.isEmpty() ? body : await applyCycleWrite(
      api,
      body,
      { own: own.toJSON(), edits: patch.toJSON(), results },
      logger,
      signal,
      memory,
    );
    patched = newer(body, written, patched);
    if (!written) return { patched };
    body = written;

    if (cause.reason === "delete" && (done || skip)) {
      logger.debug("Removing the finalizer, thus allowing the actual deletion.");
      patched = newer(body, await removeFinalizer(api, body, finalizer, signal), patched);
    }
    if (!delays?.length) {
      // Our last write's echo, when it comes alone, may need no cycle: the queue asks (echoes.ts).
      if (!patched || cause.reason === "delete") return { patched };
      return { patched, echo: echoCheck(cycle, TRACING) };
    }
    const delay = Math.min(...delays.map(([, d]) => d));
    logger.info(`Processing is postponed: ${describeDelays(delays)}.`);
    return { delay, patched };
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * The object as our last write returned it: the write's result when it changed the object
 * (a new resourceVersion), else the one kept so far.
 */
function newer(
  body: AnyObject,
  after: AnyObject | undefined,
  patched: AnyObject | undefined,
): AnyObject | undefined {
  return changed(body, after) ? after : patched;
}

/** "handler 'a' will run in 1s, 'b' in 30s" — what waits and for how long. */
function describeDelays(delays: Array<[string, number]>): string {
  const sorted = [...delays].sort((a, b) => a[1] - b[1]);
  return sorted.map(([id, delay], i) =>
    `${i === 0 ? "handler " : ""}'${id}' ${i === 0 ? "will run " : ""}in ${
      Math.round(delay * 100) / 100
    }s`
  ).join(", ");
}

/**
 * The context of one changing handler's attempt: the object context of the cycle with the
 * cause's fields (`body`, `meta`, `labels` as the cause found them; `reason`, `diff`, `old`,
 * `new`, reduced to the handler's field if it has one), its `param`, and the attempt's `retry`,
 * `started`, `runtime` and `signal` — every field an own enumerable property, in the order of
 * `{ ...objectContext, body, meta, labels, reason, diff, old, new }`, so that handlers that
 * spread or list their context see what they always saw.
 *
 * A class, not a spread of the cause's context: the `signal` stays a lazy getter (made on first
 * read) without turning each context into a dictionary — the accessor is one shared descriptor,
 * defined in the same place of every context, and reads the attempt from a private field.
 */
class HandlerContext implements ChangingContext {
  declare body: AnyObject;
  declare spec: AnyObject;
  declare meta: AnyObject;
  declare status: AnyObject;
  declare uid: string;
  declare name: string;
  declare namespace: string | undefined;
  declare labels: Record<string, string>;
  declare annotations: Record<string, string>;
  declare resource: ObjectContext["resource"];
  declare patch: ObjectContext["patch"];
  declare logger: ObjectContext["logger"];
  declare memo: AnyObject;
  declare settings: ObjectContext["settings"];
  declare indices: AnyObject;
  declare api: ObjectContext["api"];
  declare clock: ObjectContext["clock"];
  declare param: unknown;
  declare retry: number;
  declare started: Date;
  declare runtime: number;
  declare readonly signal: AbortSignal;
  declare reason: ChangingContext["reason"];
  declare diff: ChangingContext["diff"];
  declare old: unknown;
  declare new: unknown;
  readonly #attempt: Attempt;

  constructor(
    cycle: ChangingCycle,
    body: AnyObject,
    reason: ChangingContext["reason"],
    diff: ChangingContext["diff"],
    old: unknown,
    essence: unknown,
    handler: ChangingHandler,
    attempt: Attempt,
  ) {
    // The object context's fields (intents/contexts.ts `objectContext`) as the cycle's event
    // brought the object, without building that context: only a callback or a daemon needs it.
    const seen = cycle.event.object;
    const seenMeta = seen.metadata ?? {};
    this.#attempt = attempt;
    this.body = body;
    this.spec = seen.spec ?? {};
    this.meta = body.metadata;
    this.status = seen.status ?? {};
    this.uid = seenMeta.uid;
    this.name = seenMeta.name;
    this.namespace = seenMeta.namespace;
    this.labels = body.metadata?.labels ?? {};
    this.annotations = seenMeta.annotations ?? {};
    this.resource = cycle.resource;
    this.patch = cycle.patch;
    this.logger = cycle.logger;
    this.memo = cycle.memo;
    this.settings = cycle.op.settings;
    this.indices = cycle.op.indices;
    this.api = currentApi();
    this.clock = cycle.op.clock ?? currentClock();
    this.param = handler.param;
    this.retry = attempt.retry;
    this.started = attempt.started;
    this.runtime = attempt.runtime;
    Object.defineProperty(this, "signal", HandlerContext.#signal);
    this.reason = reason;
    const field = handler.field;
    this.diff = field ? reduceDiff(diff, field) : diff;
    this.old = field ? getField(old, field) : old;
    this.new = field ? getField(essence, field) : essence;
  }

  /** The attempt's signal, made on first read: one descriptor shared by all contexts. */
  static readonly #signal: PropertyDescriptor = {
    get(this: HandlerContext): AbortSignal {
      return this.#attempt.signal;
    },
    enumerable: true,
    configurable: true,
  };
}
