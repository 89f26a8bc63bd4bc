/**
 * The queue of one object while its worker lives (queueing.ts): its waiting events, when they
 * came (to tell a burst from a lone event), and the worker's waits — for time to pass, for an
 * event, for a condition on the events, or for the operator's resume. Closing the queues cuts
 * every wait short.
 *
 * Why a type of its own: the waits are the worker's only suspension points besides the cycle,
 * and their wake-up rules (which waits an event ends, which only time or closing ends) are what
 * the batching and the own-write wait rest on. The wake and expiry functions are made once per
 * queue, not per wait (a burst of objects waits several times each).
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { RawEvent } from "./processing.ts";
import type { AnyObject } from "../actions/invocation.ts";

/** What the queues of one watched resource share: their clock, and whether they close. */
export interface QueueContext {
  /** The time source. */
  readonly clock: Clock;
  /** Whether the queues close: no wait lasts then. */
  readonly closing: boolean;
}

/**
 * The queue of one object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "../../cogs/aio/fake_clock.ts";
 * import { ObjectQueue } from "./object_queue.ts";
 * const clock = new FakeClock();
 * const queue = new ObjectQueue({ clock, closing: false }, { type: "ADDED", object: {} });
 * const woke = queue.wait(5); // an event ends it
 * await clock.advance(1);
 * queue.add({ type: "MODIFIED", object: {} });
 * queue.wake();
 * assert.deepEqual([await woke, queue.events.length, queue.burst(2)], [true, 2, true]);
 * ```
 */
export class ObjectQueue {
  /** The events not processed yet, oldest first. */
  events: RawEvent[];
  /** The object's worker (settled when none runs). */
  worker: Promise<void> = RESOLVED;
  readonly #context: QueueContext;
  /** When the event before the latest one arrived (clock ms). */
  #previous = -Infinity;
  /** When the latest event arrived (clock ms). */
  #latest: number;
  /** Wakes the current wait (an event came, or the queues close); unset when none. */
  #wake: (() => void) | undefined;
  /** The current wait's settling: its promise's resolve, whether an event ends it, its timer. */
  #settle: ((woke: boolean) => void) | undefined;
  #wakeOnEvent = false;
  /** With {@link waitFor}: the events it looks for; other events do not end its wait. */
  #until: ((events: RawEvent[]) => boolean) | undefined;
  #cancel: (() => void) | undefined;
  #waker: (() => void) | undefined;
  #expire: (() => void) | undefined;

  /**
   * @param context The clock, and whether the queues close.
   * @param first The event that starts the queue.
   */
  constructor(context: QueueContext, first: RawEvent) {
    this.#context = context;
    this.events = [first];
    this.#latest = context.clock.now();
  }

  /**
   * An event came: queued, its arrival noted (the caller wakes the worker).
   *
   * @param event The event.
   */
  add(event: RawEvent): void {
    this.#previous = this.#latest;
    this.#latest = this.#context.clock.now();
    this.events.push(event);
  }

  /**
   * Handlers wake up with no news: a re-check of this body, which is no arrival (not a burst).
   *
   * @param body The body to process again.
   */
  recheck(body: AnyObject): void {
    this.events.push({ type: null, object: body });
    this.#previous = this.#latest = -Infinity;
  }

  /**
   * Whether the latest two events came within this window: a burst, to be batched.
   *
   * @param seconds The batching window.
   * @returns True if so.
   */
  burst(seconds: number): boolean {
    return this.#latest - this.#previous < seconds * 1000;
  }

  /** Whether the queues close (no wait lasts). */
  get closing(): boolean {
    return this.#context.closing;
  }

  /** Wakes the current wait, if an event (or closing) ends it. */
  wake(): void {
    this.#wake?.();
  }

  /**
   * Waits for the time to pass (false), or for an event (true) if `wakeOnEvent`; closing the
   * queues always cuts the wait short.
   *
   * @param seconds How long at most.
   * @param wakeOnEvent Whether an event ends the wait.
   * @returns Whether it was woken before the time passed.
   */
  wait(seconds: number, wakeOnEvent = true): Promise<boolean> {
    return new Promise((resolve) => {
      this.#settle = resolve;
      this.#wakeOnEvent = wakeOnEvent;
      this.#cancel = this.#context.clock.timer(
        Math.max(0, seconds) * 1000,
        this.#expire ??= () => this.#end(false),
      );
      this.#wake = this.#waker ??= () => {
        if (this.#context.closing) this.#end(true);
        else if (this.#wakeOnEvent && (!this.#until || this.#until(this.events))) this.#end(true);
      };
    });
  }

  /**
   * Waits until the events hold what `arrived` looks for, up to `seconds`, or the queues close:
   * one wait, judged at every event — the others do not wake the worker (e.g. the echoes of a
   * cycle's earlier writes, while its last write is awaited).
   *
   * @param arrived Judges the queued events.
   * @param seconds How long at most.
   * @returns Whether it arrived.
   */
  async waitFor(arrived: (events: RawEvent[]) => boolean, seconds: number): Promise<boolean> {
    if (arrived(this.events) || this.#context.closing || !(seconds > 0)) {
      return arrived(this.events);
    }
    this.#until = arrived;
    try {
      await this.wait(seconds);
    } finally {
      this.#until = undefined;
    }
    return arrived(this.events);
  }

  /**
   * Waits until a pause is over, or the queues close (new events do not end it).
   *
   * @param resumed Waits for the resume, cut short by the signal.
   * @returns When resumed, or closing.
   */
  async waitResumed(resumed: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const stop = new AbortController();
    this.#wake = () => {
      if (this.#context.closing) stop.abort();
    };
    await resumed(stop.signal);
    this.#wake = undefined;
  }

  /** Ends the current wait: its timer cancelled, its promise resolved. */
  #end(woke: boolean): void {
    const resolve = this.#settle;
    if (!resolve) return;
    this.#cancel?.();
    this.#settle = this.#cancel = this.#wake = undefined;
    resolve(woke);
  }
}

const RESOLVED: Promise<void> = Promise.resolve();
