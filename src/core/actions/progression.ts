/**
 * The progress of handlers across processing cycles: when each handler
 * started, how often it was retried, until when it sleeps, whether it
 * finished — read from and written to the object in Kopf's progress-record
 * format (through the configured progress storage), so that work survives
 * restarts and can be taken over from (or by) Python Kopf.
 *
 * Records are only written while a cycle is unfinished (a retry, a delay,
 * sub-handlers, other handlers still to run): then every handler that ran is
 * remembered, the finished ones too, so that they are not run again. A cycle
 * whose handlers all finish at once leaves no trace, and all records are
 * purged when the cycle completes.
 *
 * @module
 */

import type { Patch } from "../../cogs/structs/patches.ts";
import {
  formatTimestamp,
  type MaybePromise,
  parseTimestamp,
  type ProgressRecord,
} from "../../cogs/configs/progress_records.ts";
import type { ProgressStorage } from "../../cogs/configs/progress_storage.ts";
import type { AnyObject } from "./invocation.ts";

/** The outcome of one handler run. */
export interface Outcome {
  /** True when the handler is done: succeeded, failed permanently, or ignored. */
  final: boolean;
  /** The handler's return value, for `status.<id>`. */
  result?: unknown;
  /** The error, if it failed (final: permanently; else: will retry). */
  error?: unknown;
  /** Seconds until the retry. */
  delay?: number;
  /** Ids of sub-handlers (for the `subrefs` of the record). */
  subrefs?: string[];
}

/** The state of one handler. */
export class HandlerState {
  /** When the handler first started (the first attempt, across retries and restarts). */
  started: Date;
  /** When it finished (succeeded or failed for good); undefined while running. */
  stopped: Date | undefined;
  /** Not before this time is it retried; undefined to run at once. */
  delayed: Date | undefined;
  /** The cause it runs for (the record's `purpose`). */
  purpose: string | undefined;
  /** How many attempts it has made so far. */
  retries: number;
  /** Whether it has succeeded. */
  success: boolean;
  /** Whether it has failed for good. */
  failure: boolean;
  /** The last error's message; undefined when the last attempt did not fail. */
  message: string | undefined;
  /** Ids of its sub-handlers (the record's `subrefs`). */
  subrefs: string[];
  /** Whether this state differs from what is stored (needs writing). */
  dirty: boolean;
  /** Whether a record exists in storage (needs purging at the end). */
  stored: boolean;
  /** The stored `started` text, rewritten as is (Kopf's microseconds survive a takeover). */
  startedText: string | undefined;

  /**
   * Creates a state; absent fields start empty (started now, no retries, not stored).
   *
   * @param init The fields.
   */
  constructor(
    init: Partial<Omit<HandlerState, "finished" | "awakened" | "toRecord" | "runtime">> = {},
  ) {
    this.started = init.started ?? new Date();
    this.stopped = init.stopped;
    this.delayed = init.delayed;
    this.purpose = init.purpose;
    this.retries = init.retries ?? 0;
    this.success = init.success ?? false;
    this.failure = init.failure ?? false;
    this.message = init.message;
    this.subrefs = init.subrefs ?? [];
    this.dirty = init.dirty ?? false;
    this.stored = init.stored ?? false;
    this.startedText = init.startedText;
  }

  /**
   * Reads a stored record.
   *
   * @param record The record, as the storage returns it.
   * @returns The state.
   */
  static fromRecord(record: ProgressRecord): HandlerState {
    return new HandlerState({
      started: parseTime(record.started) ?? new Date(),
      stopped: parseTime(record.stopped),
      delayed: parseTime(record.delayed),
      purpose: record.purpose ?? undefined,
      retries: record.retries ?? 0,
      success: record.success ?? false,
      failure: record.failure ?? false,
      message: record.message ?? undefined,
      subrefs: [...(record.subrefs ?? [])],
      stored: true,
      ...(record.started?.endsWith("+00:00") ? { startedText: record.started } : {}),
    });
  }

  /** The record to store, in Kopf's format. */
  toRecord(): ProgressRecord {
    return {
      started: this.startedText !== undefined &&
          parseTime(this.startedText)?.getTime() === this.started.getTime()
        ? this.startedText
        : formatTime(this.started),
      stopped: this.stopped ? formatTime(this.stopped) : null,
      delayed: this.delayed ? formatTime(this.delayed) : null,
      purpose: this.purpose ?? null,
      retries: this.retries,
      success: this.success,
      failure: this.failure,
      message: this.message ?? null,
      subrefs: this.subrefs.length ? [...this.subrefs].sort() : null,
    } as ProgressRecord;
  }

  /** Done: succeeded or failed for good. */
  get finished(): boolean {
    return this.success || this.failure;
  }

  /**
   * Ready to run now (not finished, not sleeping).
   *
   * @param now The current time.
   * @returns True when it may run.
   */
  awakened(now: Date): boolean {
    return !this.finished && (!this.delayed || this.delayed.getTime() <= now.getTime());
  }

  /**
   * Seconds since the first start.
   *
   * @param now The current time.
   * @returns The runtime.
   */
  runtime(now: Date): number {
    return Math.max(0, (now.getTime() - this.started.getTime()) / 1000);
  }

  /**
   * Applies an outcome.
   *
   * @param outcome The outcome.
   * @param now The current time.
   */
  apply(outcome: Outcome, now: Date): void {
    const failed = outcome.error !== undefined;
    this.retries += 1;
    if (outcome.final) {
      this.stopped = now;
      this.success = !failed;
      this.failure = failed;
      this.delayed = undefined;
    } else {
      this.delayed = new Date(now.getTime() + (outcome.delay ?? 0) * 1000);
    }
    this.message = failed ? messageOf(outcome.error) : undefined;
    if (outcome.subrefs) this.subrefs = outcome.subrefs;
    this.dirty = true;
  }
}

/**
 * The states of the handlers of one cause of one object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type * as kopf from "@kopf/kopf";
 * // A lifecycle reads the State of the cause's handlers: here, the least retried first.
 * const leastRetried: kopf.Lifecycle = (handlers, state: kopf.State) =>
 *   [...handlers].sort((a, b) => (state.get(a.id)?.retries ?? 0) - (state.get(b.id)?.retries ?? 0));
 * // What the operator passes: "a" retried once, "b" not yet run.
 * const retries: Record<string, number> = { a: 1 };
 * const state = { get: (id: string) => ({ retries: retries[id] ?? 0 }) } as unknown as kopf.State;
 * const handlers = [{ id: "a" }, { id: "b" }] as kopf.BaseHandler[];
 * assert.deepEqual(leastRetried(handlers, state).map((h) => h.id), ["b", "a"]);
 * ```
 */
export class State {
  /** The cause the handlers run for (stored as the records' `purpose`). */
  readonly purpose: string;
  readonly #states = new Map<string, HandlerState>();

  /**
   * Creates an empty state (no handler records yet).
   *
   * @param purpose The cause's reason.
   */
  constructor(purpose: string) {
    this.purpose = purpose;
  }

  /**
   * Reads the stored records of handlers (and their sub-handlers, by subrefs).
   *
   * @param body The object.
   * @param storage The progress storage.
   * @param ids The handler ids.
   * @param purpose The cause's reason.
   * @returns The state.
   */
  static async fromStorage(
    body: AnyObject,
    storage: ProgressStorage,
    ids: string[],
    purpose: string,
  ): Promise<State> {
    return await State.read(body, storage, ids, purpose);
  }

  /**
   * Reads the stored records as {@link State.fromStorage} does, without a promise when the
   * storage answers synchronously (the built-in ones do): a cycle awaits only a storage that
   * returns promises.
   *
   * @param body The object.
   * @param storage The progress storage.
   * @param ids The handler ids.
   * @param purpose The cause's reason.
   * @returns The state, or a promise of it (only from an asynchronous storage).
   */
  static read(
    body: AnyObject,
    storage: ProgressStorage,
    ids: string[],
    purpose: string,
  ): MaybePromise<State> {
    return State.#readFrom(new State(purpose), body, storage, ids.slice(), 0);
  }

  /**
   * Handlers first, in order, then their sub-handlers (by subrefs) as they are found; each once.
   * From the `i`-th id of `queue` on; a record that comes as a promise goes on when it comes.
   */
  static #readFrom(
    state: State,
    body: AnyObject,
    storage: ProgressStorage,
    queue: string[],
    from: number,
  ): MaybePromise<State> {
    for (let i = from; i < queue.length; i++) {
      const id = queue[i]!;
      if (state.#states.has(id) || queue.indexOf(id) < i) continue;
      const fetched = storage.fetch(id, body);
      if (isPromise(fetched)) {
        return fetched.then((record) => {
          state.#found(id, record, queue);
          return State.#readFrom(state, body, storage, queue, i + 1);
        });
      }
      state.#found(id, fetched, queue);
    }
    return state;
  }

  /** Keeps a handler's record that was read (none: nothing), queueing its sub-handlers' ids. */
  #found(id: string, record: ProgressRecord | null | undefined, queue: string[]): void {
    if (!record) return;
    const hs = HandlerState.fromRecord(record);
    this.#states.set(id, hs);
    for (const subref of hs.subrefs) queue.push(subref);
  }

  /**
   * The state of a handler, created (fresh) if missing.
   *
   * @param id The handler id.
   * @param now The current time.
   * @returns The handler's state.
   */
  ensure(id: string, now: Date): HandlerState {
    let hs = this.#states.get(id);
    if (!hs) {
      hs = new HandlerState({ started: now, purpose: this.purpose });
      this.#states.set(id, hs);
    }
    return hs;
  }

  /**
   * The state of a handler, if known.
   *
   * @param id The handler id.
   * @returns The state or undefined.
   */
  get(id: string): HandlerState | undefined {
    return this.#states.get(id);
  }

  /**
   * Whether all these handlers are finished.
   *
   * @param ids The handler ids of the cycle.
   * @returns True when done.
   */
  done(ids: string[]): boolean {
    return ids.every((id) => this.#states.get(id)?.finished === true);
  }

  /**
   * Seconds until the earliest sleeping handler among these wakes up.
   *
   * @param ids The handler ids.
   * @param now The current time.
   * @returns The delays of the unfinished handlers.
   */
  delays(ids: string[], now: Date): number[] {
    const out: number[] = [];
    for (const id of ids) {
      const hs = this.#states.get(id);
      if (!hs || hs.finished) continue;
      out.push(hs.delayed ? Math.max(0, (hs.delayed.getTime() - now.getTime()) / 1000) : 0);
    }
    return out;
  }

  /**
   * Counts of finished handlers among these.
   *
   * @param ids The handler ids.
   * @returns Successes and failures.
   */
  counts(ids: string[]): { success: number; failure: number } {
    let success = 0, failure = 0;
    for (const id of ids) {
      const hs = this.#states.get(id);
      if (hs?.success) success++;
      if (hs?.failure) failure++;
    }
    return { success, failure };
  }

  /**
   * Writes the changed states into the patch (call it only while the cycle is unfinished:
   * when all handlers are done, {@link State.purge} removes the records instead).
   *
   * @param body The object.
   * @param patch The patch.
   * @param storage The progress storage.
   */
  async store(body: AnyObject, patch: Patch, storage: ProgressStorage): Promise<void> {
    for (const [id, hs] of this.#states) {
      if (!hs.dirty) continue;
      await storage.store(id, hs.toRecord(), body, patch);
      hs.stored = true;
      hs.dirty = false;
    }
  }

  /**
   * Removes the records of all known handlers (the cycle is complete).
   *
   * @param body The object.
   * @param patch The patch.
   * @param storage The progress storage.
   * @param ids Extra ids to purge (e.g. handlers known only by id).
   */
  async purge(
    body: AnyObject,
    patch: Patch,
    storage: ProgressStorage,
    ids: string[] = [],
  ): Promise<void> {
    await this.purgeNow(body, patch, storage, ids);
  }

  /**
   * Removes the records as {@link State.purge} does, without a promise when the storage answers
   * synchronously (the built-in ones do).
   *
   * @param body The object.
   * @param patch The patch.
   * @param storage The progress storage.
   * @param ids Extra ids to purge (e.g. handlers known only by id).
   * @returns Nothing, or a promise (only from an asynchronous storage).
   */
  purgeNow(
    body: AnyObject,
    patch: Patch,
    storage: ProgressStorage,
    ids: string[] = [],
  ): MaybePromise<void> {
    // The known handlers, then the extra ids not known (each once), as a set of both would.
    const known = this.#states.size;
    const all = known ? [...this.#states.keys(), ...ids] : ids;
    return this.#purgeFrom(body, patch, storage, all, known, 0);
  }

  /** Purges the records of `all` from its `from`-th on (the first `known` are known handlers). */
  #purgeFrom(
    body: AnyObject,
    patch: Patch,
    storage: ProgressStorage,
    all: string[],
    known: number,
    from: number,
  ): MaybePromise<void> {
    for (let i = from; i < all.length; i++) {
      const id = all[i]!;
      if (i >= known && (this.#states.has(id) || all.indexOf(id, known) < i)) continue;
      const purged = this.#purgeOne(id, this.#states.get(id), body, patch, storage);
      if (purged) {
        return purged.then(() => this.#purgeFrom(body, patch, storage, all, known, i + 1));
      }
    }
  }

  /** Purges one record: unless it is known to be absent (never stored, and not found). */
  #purgeOne(
    id: string,
    hs: HandlerState | undefined,
    body: AnyObject,
    patch: Patch,
    storage: ProgressStorage,
  ): MaybePromise<void> {
    if (hs && !hs.stored) {
      const found = storage.fetch(id, body);
      if (isPromise(found)) {
        return found.then((record) => record ? storage.purge(id, body, patch) : undefined);
      }
      if (!found) return;
    }
    return storage.purge(id, body, patch);
  }
}

function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function formatTime(d: Date): string {
  return formatTimestamp(d);
}

function parseTime(s: string | null | undefined): Date | undefined {
  if (!s) return undefined;
  try {
    return parseTimestamp(s);
  } catch {
    return undefined;
  }
}
