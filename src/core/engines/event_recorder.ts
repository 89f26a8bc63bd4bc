/**
 * Writing an operator's Kubernetes Events as client-go's event recorder
 * writes them: each occurrence goes through the {@link EventCorrelator}
 * (aggregation, counting, the per-object spam filter) where it occurs, and
 * what is left is written in the background by a few concurrent writers
 * (`settings.posting.concurrency`): a POST for a new Event, a PATCH of
 * `count`/`lastTimestamp` for a repeat.
 *
 * Why it never delays handling: `post()` is synchronous and cheap, nothing
 * awaits the writes but the exit, and the writes are low-priority requests:
 * they take a slot of `settings.networking.maxConcurrentRequests` only while
 * no handling request waits for one and the handling's requests in flight
 * hold at most a quarter of the slots, and they leave a quarter free.
 * So in a burst they wait, and when the handling's requests ebb they go at
 * full speed. Why it keeps up in a burst: writes
 * to one Event are coalesced — while one is queued or in flight, further
 * repeats only raise the count that the next write carries — so no Event
 * ever has two requests in flight, and a storm of repeats costs one PATCH
 * per round trip, not one per line. Why it is bounded: at most `maxPending`
 * Events wait (50,000, some 15 MB), beyond them new ones are dropped, and at
 * exit the writes get `settings.posting.flushTimeout` seconds, no more.
 *
 * Every occurrence ends as exactly one of: posted (it created an Event),
 * folded (it raised an Event's count), or dropped (`spam`, `failed`,
 * `overflow`, `unflushed`) — counted in `counts` and, with metrics, on
 * `/metrics`; `aggregated` additionally counts the occurrences that went
 * into a "(combined from similar events)" Event. Nothing is lost uncounted.
 *
 * Caveat: a write costs about as much as a handler's PATCH (some 50–60 µs
 * of the operator's CPU with the lean HTTP client, as much again on the server), and in a
 * burst every object's lines are distinct Events: nothing folds. So in a
 * burst that keeps the CPU busy, the Events trail the handling and are
 * written over the seconds after it (the operator bench's events phase
 * measures how many within 5 s); at exit, what is left after the flush
 * timeout is dropped and counted. `settings.posting.level` or `loggers`
 * thin them out at the source.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { within } from "../../cogs/aio/within.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { cutMessage, patchEvent, postEvent } from "../../cogs/clients/events.ts";
import type { RawBody } from "../../cogs/clients/types.ts";
import { PostingSettings } from "../../cogs/configs/posting.ts";
import type { ObjectReference } from "../../cogs/structs/bodies.ts";
import { EventCorrelator, type EventLogEntry } from "./event_correlator.ts";

/** How an occurrence of an event ended (see the module doc). */
export type EventOutcome =
  | "posted"
  | "folded"
  | "aggregated"
  | "spam"
  | "failed"
  | "overflow"
  | "unflushed";

/** Where the recorder counts its outcomes (implemented by `OperatorMetrics`). */
export interface EventMetrics {
  /**
   * Counts occurrences of events by outcome.
   *
   * @param outcome The outcome.
   * @param n How many.
   */
  countEvents(outcome: EventOutcome, n: number): void;
}

/** One write of an Event: what it says now. */
export interface EventDraft {
  /** The object. */
  ref: ObjectReference;
  /** The type. */
  type: string;
  /** The reason. */
  reason: string;
  /** The message. */
  message: string;
  /** The count. */
  count: number;
  /** When it first occurred. */
  firstTimestamp: Date;
  /** When it last occurred. */
  lastTimestamp: Date;
}

/** Writes Events to the API; failures are the writer's to log, and end as `undefined`/`"failed"`. */
export interface EventWriter {
  /** Creates an Event; resolves to its namespace and name, or undefined when it failed. */
  create(
    draft: EventDraft,
    signal: AbortSignal,
  ): Promise<{ namespace: string; name: string } | undefined>;
  /** Bumps an existing Event; `"gone"` when it no longer exists (it is created anew then). */
  patch(
    target: { namespace: string; name: string },
    draft: EventDraft,
    signal: AbortSignal,
  ): Promise<"patched" | "gone" | "failed">;
}

/** The posting settings the recorder reads (at every use). */
export type RecorderSettings = Pick<
  PostingSettings,
  | "concurrency"
  | "flushTimeout"
  | "spamBurst"
  | "spamRefill"
  | "reportingComponent"
  | "reportingInstance"
  | "eventNamePrefix"
>;

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** The posting settings (default: the defaults). */
  settings?: RecorderSettings | undefined;
  /** Where outcomes are counted. */
  metrics?: EventMetrics | undefined;
  /** The time source of the correlator and the exit deadline (default: the real clock). */
  clock?: Clock | undefined;
  /** Receives errors thrown by the writer (default: ignored). */
  onError?: ((error: unknown) => void) | undefined;
  /** Receives the one line about events dropped at exit (default: ignored). */
  warn?: ((message: string) => void) | undefined;
  /** Events waiting to be written at most; new ones beyond are dropped (default 50,000). */
  maxPending?: number | undefined;
}

interface Write {
  entry: EventLogEntry;
  lane: Lane;
  draft: EventDraft;
  /** Occurrences not yet sent. */
  waiting: number;
  queued: boolean;
  inFlight: boolean;
}

/** The writes about one object, one at a time and in order. */
interface Lane {
  key: string;
  writes: Write[];
  queued: boolean;
  busy: boolean;
}

/**
 * An event writer over the API client: {@link postEvent} and {@link patchEvent}, at low
 * priority — an Event's request takes a request slot only while no handling request waits for
 * one and the handling is calm (see `ApiClient`'s `priority`), so posting never delays handling.
 *
 * @param api The client.
 * @param posting The reporting component and instance, the name prefix (read at each write).
 * @returns The writer.
 */
export function apiEventWriter(
  api: ApiClient,
  posting: Pick<RecorderSettings, "reportingComponent" | "reportingInstance" | "eventNamePrefix">,
): EventWriter {
  return {
    create: (draft, signal) =>
      postEvent(api, draft, { posting, signal, priority: "low" }).then(createdAt),
    async patch(target, draft, signal) {
      const body = await patchEvent(api, target, draft, { signal, priority: "low" });
      return body === null ? "gone" : body ? "patched" : "failed";
    },
  };
}

/** Where a created Event is: its namespace and name, if the answer has them. */
function createdAt(body: RawBody | undefined): { namespace: string; name: string } | undefined {
  const meta = body?.metadata;
  return meta?.name && meta.namespace ? { name: meta.name, namespace: meta.namespace } : undefined;
}

/**
 * An operator's event recorder: correlates occurrences at once, writes Events
 * in the background with bounded concurrency, flushes within a deadline at exit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventRecorder } from "./event_recorder.ts";
 * const written: string[] = [];
 * const recorder = new EventRecorder({
 *   create: async (d) => (written.push(`POST ${d.message} ×${d.count}`), { namespace: "ns", name: "e1" }),
 *   patch: async (_, d) => (written.push(`PATCH ×${d.count}`), "patched"),
 * });
 * const ref = { apiVersion: "v1", kind: "Pod", name: "p", namespace: "ns", uid: "u" };
 * for (let i = 0; i < 3; i++) recorder.post(ref, "Normal", "Logging", "Hello.");
 * await recorder.close();
 * assert.deepEqual([written, recorder.counts.posted, recorder.counts.folded], [[ "POST Hello. ×1", "PATCH ×3" ], 1, 2]);
 * ```
 */
export class EventRecorder {
  /** Occurrences by outcome (see the module doc), and how many wait now. */
  readonly counts: Record<EventOutcome, number> & { pending: number } = {
    posted: 0,
    folded: 0,
    aggregated: 0,
    spam: 0,
    failed: 0,
    overflow: 0,
    unflushed: 0,
    pending: 0,
  };
  #writer: EventWriter;
  #settings: RecorderSettings;
  #metrics: EventMetrics | undefined;
  #clock: Clock;
  #onError: (error: unknown) => void;
  #warn: (message: string) => void;
  #maxPending: number;
  #correlator: EventCorrelator;
  #writes = new Map<EventLogEntry, Write>();
  #lanes = new Map<string, Lane>();
  #ready: Lane[] = [];
  #head = 0;
  #workers = 0;
  #idle: Array<() => void> = [];
  #stop = new AbortController();
  #closing: Promise<void> | undefined;
  #closed = false;

  /**
   * Creates the recorder; it does nothing until events are posted.
   *
   * @param writer Writes the Events (see {@link apiEventWriter}).
   * @param options Settings, metrics, clock, error and warning receivers.
   */
  constructor(writer: EventWriter, options: EventRecorderOptions = {}) {
    this.#writer = writer;
    this.#settings = options.settings ?? new PostingSettings();
    this.#metrics = options.metrics;
    this.#clock = options.clock ?? realClock;
    this.#onError = options.onError ?? (() => {});
    this.#warn = options.warn ?? (() => {});
    this.#maxPending = options.maxPending ?? 50_000;
    this.#correlator = new EventCorrelator({ limits: this.#settings, clock: this.#clock });
  }

  /**
   * Records an occurrence of an event (never blocks, never throws).
   *
   * @param ref The object.
   * @param type Normal, Warning, or Error.
   * @param reason The reason.
   * @param message The message (cut to 1024 characters).
   */
  post(ref: ObjectReference, type: string, reason: string, message: string): void {
    if (this.#closed) return this.#count("unflushed", 1);
    if (ref.apiVersion === "v1" && ref.kind === "Event") return; // events about events would loop
    const settings = this.#settings;
    const found = this.#correlator.correlate({
      ref,
      type,
      reason,
      message: cutMessage(message),
      component: settings.reportingComponent,
      instance: settings.reportingInstance,
    });
    if (!found) return this.#count("spam", 1);
    if (found.aggregated) this.#count("aggregated", 1);
    let write = this.#writes.get(found.entry);
    if (!write) {
      if (this.#writes.size >= this.#maxPending) return this.#count("overflow", 1);
      let lane = this.#lanes.get(found.source);
      if (!lane) {
        lane = { key: found.source, writes: [], queued: false, busy: false };
        this.#lanes.set(found.source, lane);
      }
      const { message, count, firstTimestamp, lastTimestamp } = found;
      const draft = { ref, type, reason, message, count, firstTimestamp, lastTimestamp };
      write = { entry: found.entry, lane, draft, waiting: 0, queued: false, inFlight: false };
      this.#writes.set(found.entry, write);
    }
    write.draft.message = found.message;
    write.draft.count = found.count;
    write.draft.lastTimestamp = found.lastTimestamp;
    write.waiting++;
    this.counts.pending++;
    if (!write.queued && !write.inFlight) this.#enqueue(write);
  }

  /**
   * Writes what is pending within `settings.posting.flushTimeout` seconds, then
   * stops: what is still pending is dropped, counted as `unflushed`, and logged in one line.
   *
   * @returns When stopped.
   */
  close(): Promise<void> {
    return this.#closing ??= this.#close();
  }

  async #close(): Promise<void> {
    const timeout = this.#settings.flushTimeout;
    const flushed = await within(this.#drained(), timeout, this.#clock);
    this.#closed = true;
    if (flushed) return;
    this.#stop.abort(); // in-flight writes end as unflushed; nothing new starts
    let left = 0;
    for (const write of this.#writes.values()) {
      left += write.waiting;
      write.waiting = 0;
    }
    this.#settle(left, "unflushed");
    this.#ready = [];
    this.#head = 0;
    await this.#drained();
    this.#writes.clear();
    this.#lanes.clear();
    this.#warn(
      `${this.counts.unflushed} event(s) were not posted within settings.posting.flushTimeout ` +
        `(${timeout}s) at exit and are dropped (counted in kopf_events_dropped_total).`,
    );
  }

  /** Settles when nothing is queued or in flight. */
  #drained(): Promise<void> {
    if (!this.#workers) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #count(outcome: EventOutcome, n: number): void {
    if (n <= 0) return;
    this.counts[outcome] += n;
    this.#metrics?.countEvents(outcome, n);
  }

  #settle(n: number, outcome: EventOutcome): void {
    this.counts.pending -= n;
    this.#count(outcome, n);
  }

  /** Puts a write at the end of its object's lane, and the lane in line if it is idle. */
  #enqueue(write: Write): void {
    write.queued = true;
    const lane = write.lane;
    lane.writes.push(write);
    if (lane.busy || lane.queued) return;
    lane.queued = true;
    this.#ready.push(lane);
    if (this.#workers < Math.max(1, this.#settings.concurrency)) {
      this.#workers++;
      void this.#work();
    }
  }

  /**
   * A worker: one write of the next ready lane at a time, until no lane is ready. A write is one
   * request (two when a patched Event is gone): PATCH a known Event, else POST a new one — made
   * here, in the worker's own loop, rather than in async helpers of their own (a trickle writes
   * each Event alone: a helper is one more promise and frame per write).
   */
  async #work(): Promise<void> {
    const signal = this.#stop.signal;
    try {
      while (this.#head < this.#ready.length && !signal.aborted) {
        const lane = this.#ready[this.#head++]!;
        if (this.#head > 1024 && this.#head * 2 > this.#ready.length) {
          this.#ready = this.#ready.slice(this.#head); // drop the consumed part now and then
          this.#head = 0;
        }
        lane.queued = false;
        lane.busy = true;
        const write = lane.writes.shift()!;
        write.queued = false;
        const taken = write.waiting;
        write.waiting = 0;
        write.inFlight = true;
        const entry = write.entry;
        const draft = { ...write.draft };
        let outcome: "posted" | "folded" | "failed" = "failed";
        try {
          let gone = false;
          if (entry.name && entry.namespace) {
            const target = { namespace: entry.namespace, name: entry.name };
            const result = await this.#writer.patch(target, draft, signal);
            if (result === "patched") outcome = "folded";
            else if (result === "gone") {
              gone = true;
              entry.name = entry.namespace = undefined; // deleted meanwhile: created anew, as client-go does
            }
          } else gone = true;
          if (gone) {
            const created = await this.#writer.create(draft, signal);
            if (created) {
              entry.name = created.name;
              entry.namespace = created.namespace;
              outcome = "posted";
            }
          }
        } catch (error) {
          if (!signal.aborted) this.#onError(error);
          outcome = "failed";
        }
        write.inFlight = false;
        if (outcome === "failed") this.#settle(taken, signal.aborted ? "unflushed" : "failed");
        else if (outcome === "folded") this.#settle(taken, "folded");
        else {
          this.#settle(1, "posted");
          this.#settle(taken - 1, "folded");
        }
        if (write.waiting && !signal.aborted) this.#enqueue(write);
        else this.#writes.delete(write.entry);
        lane.busy = false;
        if (signal.aborted) continue;
        if (lane.writes.length) {
          lane.queued = true;
          this.#ready.push(lane); // to the back: other objects' events go first
        } else this.#lanes.delete(lane.key);
      }
    } finally {
      this.#workers--;
      if (!this.#workers) { for (const resolve of this.#idle.splice(0)) resolve(); }
    }
  }
}
