/**
 * Per-object queues: events of one object are processed one at a time, in
 * order, while different objects are processed concurrently (up to a limit).
 *
 * Why queues per object: a cycle of one object may take long (handlers,
 * retries, API calls); its later events must wait for it and are then
 * collapsed — within a short batching window only the latest state matters.
 * Why the wait for our own patch: right after we patch an object, the watch
 * stream may still deliver older events that do not yet include our changes;
 * acting on them would re-run finished handlers, so they are skipped until
 * the event with our patch's resourceVersion arrives (or a timeout passes).
 * Why queues are destroyed when idle: thousands of objects must not keep
 * thousands of sleeping workers; their memories stay until the object is gone.
 *
 * @module
 */

import type { CycleResult, ObjectMemory, RawEvent } from "./processing.ts";
import { newMemory } from "./processing.ts";

/** Timing and limits of the queues. */
export interface QueueSettings {
  /**
   * Seconds to wait for more events of the same object before processing, when its events
   * come in a burst (default 0.1); a lone event is processed at once.
   */
  batchWindow: number;
  /** Seconds an idle worker lives before it is destroyed (default 5). */
  idleTimeout: number;
  /** How many objects may be processed at once (null: unlimited). */
  workerLimit: number | null;
  /** Seconds to wait for our own patch to come back before processing anyway (default 5). */
  consistencyTimeout: number;
  /** Delays after unexpected errors of a cycle, one per consecutive error; the last repeats. */
  errorDelays: Iterable<number>;
}

/** Processes one object's latest event; the queue owns the object's memory. */
export type Processor = (
  event: RawEvent,
  memory: ObjectMemory,
  signal: AbortSignal,
) => Promise<CycleResult>;

interface Queue {
  events: RawEvent[];
  wake: (() => void) | undefined;
  worker: Promise<void>;
  /** When the last two events of this object arrived (ms), to tell a burst from a lone event. */
  arrivals: [number, number];
}

/**
 * The per-object queues of one watched resource (and namespace).
 *
 * @example
 * ```ts
 * import { ObjectQueues } from "./queueing.ts";
 * const seen: string[] = [];
 * const queues = new ObjectQueues(async (e) => { seen.push(e.object.metadata.name); return {}; },
 *   { batchWindow: 0, idleTimeout: 0.01, workerLimit: null, consistencyTimeout: 1, errorDelays: [1] });
 * queues.push({ type: "ADDED", object: { metadata: { uid: "1", name: "a", resourceVersion: "1" } } });
 * await queues.close();
 * console.log(seen); // ["a"]
 * ```
 */
export class ObjectQueues {
  #queues = new Map<string, Queue>();
  #memories = new Map<string, ObjectMemory>();
  #processor: Processor;
  #settings: QueueSettings;
  #stop = new AbortController();
  #active = 0;
  #waiting: Array<() => void> = [];
  #errors: (error: unknown, event: RawEvent, delay: number | undefined) => void;

  /**
   * @param processor Processes one object's event.
   * @param settings Batching window, idle timeout, worker limit, consistency timeout.
   * @param onError Receives unexpected errors of a cycle, the event, and the throttling delay.
   */
  constructor(
    processor: Processor,
    settings: QueueSettings,
    onError: (error: unknown, event: RawEvent, delay: number | undefined) => void = () => {},
  ) {
    this.#processor = processor;
    this.#settings = settings;
    this.#errors = onError;
  }

  /** How many objects have a live worker. */
  get size(): number {
    return this.#queues.size;
  }

  /** How many events wait in all queues (for metrics). */
  get depth(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.events.length;
    return n;
  }

  /**
   * Queues an event for its object, starting a worker if needed.
   *
   * @param event The event.
   */
  push(event: RawEvent): void {
    if (this.#stop.signal.aborted) return;
    const key = keyOf(event.object);
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = { events: [], wake: undefined, worker: Promise.resolve(), arrivals: [0, Date.now()] };
      this.#queues.set(key, queue);
      queue.events.push(event);
      queue.worker = this.#work(key, queue);
      return;
    }
    queue.arrivals = [queue.arrivals[1], Date.now()];
    queue.events.push(event);
    queue.wake?.();
  }

  /**
   * Stops all workers after their current cycle and waits for them.
   *
   * @param graceSeconds How long to let current cycles finish before aborting their API calls.
   */
  async close(graceSeconds = 5): Promise<void> {
    this.#closing = true;
    const workers = [...this.#queues.values()].map((q) => q.worker);
    for (const q of this.#queues.values()) q.wake?.();
    const grace = setTimeout(() => this.#stop.abort(), graceSeconds * 1000);
    await Promise.allSettled(workers);
    clearTimeout(grace);
    this.#stop.abort();
  }

  #closing = false;

  async #work(key: string, queue: Queue): Promise<void> {
    const s = this.#settings;
    let memory = this.#memories.get(key);
    if (!memory) this.#memories.set(key, memory = newMemory());
    let last: RawEvent | undefined;
    let delay: number | undefined;
    // Throttling of unexpected errors: a fresh delay sequence after every success.
    let throttle: Iterator<number> | undefined;
    let lastThrottle: number | undefined;
    try {
      while (true) {
        // Wait for events: up to the idle timeout, or until a sleeping handler wakes up.
        if (!queue.events.length) {
          if (this.#closing) return;
          const waitFor = delay !== undefined ? Math.min(delay, 86400) : s.idleTimeout;
          const woke = await this.#wait(queue, waitFor);
          if (this.#closing && !queue.events.length) return;
          if (!woke && !queue.events.length) {
            if (delay !== undefined && last && last.type !== "DELETED") {
              // Handlers wake up: process the last known state again.
              queue.events.push({ type: null, object: last.object });
            } else return;
          }
        }
        // Batch: when events of this object come in a burst (the last two within the window),
        // wait the window for more; only the latest matters. A lone event is processed at once.
        const [previous, latest] = queue.arrivals;
        const burst = latest - previous < s.batchWindow * 1000;
        if (s.batchWindow > 0 && burst && !this.#closing) {
          await this.#wait(queue, s.batchWindow, false);
        }
        const batch = queue.events.splice(0);
        const deleted = batch.some((e) => e.type === "DELETED");
        if (memory.expectedVersion !== undefined && !deleted) {
          const expected = memory.expectedVersion;
          const reached = batch.some((e) => e.object.metadata?.resourceVersion === expected);
          if (reached) memory.expectedVersion = undefined;
          else if (!this.#closing) {
            // Our own patch is not back yet: these events are older; wait for it a bit.
            queue.events.unshift(...batch);
            const deadline = Date.now() + s.consistencyTimeout * 1000;
            let arrived = false;
            while (!arrived && Date.now() < deadline && !this.#closing) {
              await this.#wait(queue, (deadline - Date.now()) / 1000);
              arrived = queue.events.some((e) =>
                e.type === "DELETED" || e.object.metadata?.resourceVersion === expected
              );
            }
            memory.expectedVersion = undefined;
            continue;
          }
        }
        last = batch[batch.length - 1]!;
        const event = deleted ? batch.find((e) => e.type === "DELETED")! : last;
        delay = undefined;
        await this.#slot();
        let failed = false;
        try {
          const result = await this.#processor(event, memory, this.#stop.signal);
          delay = result.delay;
          throttle = undefined;
          lastThrottle = undefined;
        } catch (e) {
          failed = true;
          throttle ??= s.errorDelays[Symbol.iterator]();
          const next = throttle.next();
          if (!next.done) lastThrottle = next.value;
          this.#errors(e, event, lastThrottle);
        } finally {
          this.#release();
        }
        if (failed && lastThrottle !== undefined && !deleted) {
          // Events arriving meanwhile are batched: only the latest is processed after the pause.
          await this.#wait(queue, lastThrottle, false);
          if (!queue.events.length && !this.#closing) {
            queue.events.push({ type: null, object: event.object });
          }
        }
        if (deleted) {
          this.#memories.delete(key);
          return;
        }
      }
    } finally {
      if (this.#queues.get(key) === queue) this.#queues.delete(key);
      // Events pushed after the worker decided to exit get a new worker.
      if (queue.events.length && !this.#closing) {
        const events = queue.events.splice(0);
        for (const e of events) this.push(e);
      }
    }
  }

  /**
   * Waits for the time to pass (false), or for an event (true) if `wakeOnEvent`;
   * closing the queues always cuts the wait short.
   */
  #wait(queue: Queue, seconds: number, wakeOnEvent = true): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woke: boolean) => {
        clearTimeout(timer);
        queue.wake = undefined;
        resolve(woke);
      };
      const timer = setTimeout(() => done(false), Math.max(0, seconds) * 1000);
      queue.wake = () => {
        if (wakeOnEvent || this.#closing) done(true);
      };
    });
  }

  #slot(): Promise<void> {
    const limit = this.#settings.workerLimit;
    if (limit === null || this.#active < limit) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.#waiting.push(() => {
        this.#active++;
        resolve();
      })
    );
  }

  #release(): void {
    this.#active--;
    this.#waiting.shift()?.();
  }
}

function keyOf(body: { metadata?: { uid?: string; namespace?: string; name?: string } }): string {
  const m = body.metadata ?? {};
  return m.uid ?? `${m.namespace ?? ""}/${m.name ?? ""}`;
}
