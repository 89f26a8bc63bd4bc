/**
 * Per-object queues: events of one object are processed one at a time, in order, while different
 * objects are processed concurrently (up to a limit).
 *
 * Why queues per object: a cycle of one object may take long (handlers, retries, API calls); its
 * later events must wait for it and are then collapsed — within a short batching window only the
 * latest state matters.
 *
 * The stages a batch of one object's events goes through, in this order — each a unit of its
 * own, tested on its own; the worker loop here is the scheduling between them (waiting for
 * events, batching, the idle timeout and parking, wake-ups of sleeping handlers, the worker
 * limit, closing):
 *
 * 1. **Own writes** ({@link OwnWrites}, own_writes.ts): never process a body older than our own
 *    last write. The processor returns the body its last write produced (`patched`); the worker
 *    alone keeps it (as Kopf's worker alone keeps `expected_version`), and holds older events
 *    back until the event of that version arrives — waiting up to the consistency timeout, then
 *    reading the object anew, with the one re-read policy. The worker does not end while its
 *    write is still to come back (a new one would not know of it). A write that let the object
 *    go (its last finalizer removed) is not waited for nor re-read: only DELETED is processed.
 * 2. **The gate** ({@link QueueGate}, queue_gate.ts): the operator's pause (the batch waits for
 *    the resume, batched with what comes meanwhile), sharding's ownership (an object not admitted
 *    gets no worker; its latest body is kept in its entry and goes through a cycle — `type: null`,
 *    as after a listing — when the gate admits it), and the take-over (read anew first, with the
 *    same re-read policy, when another replica may have handled it last). When an object goes to
 *    another replica, the gate asks the queues to {@link ObjectQueues.release} it.
 * 3. **The cycle, throttled** ({@link ThrottledProcessor}, throttling.ts): the processor
 *    under the worker limit; after an unexpected error, the next try waits for the error delays.
 *    Our own last write's echo, alone, runs none if the write's check says so (echoes.ts).
 *
 * Why queues are destroyed when idle: thousands of objects must not keep thousands of sleeping
 * workers; their memories stay until the object is gone. Until then an idle worker with nothing
 * to remember (no own write pending, no handler sleeping, no error streak) — every object of a
 * start-up over already handled objects — ends at once and leaves its queue parked on one shared
 * timer ({@link Reaper}) for the idle timeout: an event starts a worker on it as it would have
 * woken the old one, and no object holds a timer of its own while it waits.
 *
 * One inventory: what the operator knows of an object of this watcher is one entry under one key
 * (the uid): its memory (handled-once flags, memo, the daemons' and timers' record with the live
 * body) and, while a worker lives, its queue ({@link ObjectQueue}). The worker keeps its own
 * writes to itself. The indexers keep index values by namespace/name (indexing.ts).
 *
 * Time comes from a {@link Clock}: windows, timeouts and delays are tested on a fake clock.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { Limiter } from "../../cogs/aio/limiter.ts";
import { Reaper } from "../../cogs/aio/reaper.ts";
import type { AnyObject } from "../actions/invocation.ts";
import type { Releaser } from "../engines/sharding.ts";
import { newMemory, type ObjectMemory, type RawEvent } from "./processing.ts";
import { ObjectQueue } from "./object_queue.ts";
import { type AfterRead, OwnWrites, type Reader } from "./own_writes.ts";
import { QueueGate } from "./queue_gate.ts";
import { type Processor, Throttle, ThrottledProcessor } from "./throttling.ts";
import { OwnEcho } from "./echoes.ts";
import { deletedAt, keyOf, type ObjectEntry, type QueueOptions } from "./queue_types.ts";
import type { QueueSettings } from "./queue_types.ts";

export type { Processor } from "./throttling.ts";
export type { QueueOptions, QueueSettings } from "./queue_types.ts";

/**
 * The per-object queues of one watched resource (and namespace).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ObjectQueues } from "./queueing.ts";
 * const seen: string[] = [];
 * const queues = new ObjectQueues(async (e) => { seen.push(e.object.metadata.name); return {}; },
 *   { batchWindow: 0, idleTimeout: 0.01, workerLimit: null, consistencyTimeout: 1, errorDelays: [1] });
 * queues.push({ type: "ADDED", object: { metadata: { uid: "1", name: "a", resourceVersion: "1" } } });
 * await queues.close();
 * assert.deepEqual(seen, ["a"]);
 * ```
 */
export class ObjectQueues implements Releaser {
  /** The inventory: one entry per object (by uid), kept until the object is deleted. */
  #objects = new Map<string, ObjectEntry>();
  /** How many entries have a live worker. */
  #workers = 0;
  /** The processor, its errors throttled. */
  #cycles: ThrottledProcessor;
  #settings: QueueSettings;
  #stop = new AbortController();
  #limiter: Limiter;
  #clock: Clock;
  #options: QueueOptions;
  /** The queues' clock, and whether they close (shared with every object's queue). */
  #context: { clock: Clock; closing: boolean };
  /** The stage in front of the cycles: pause, shard ownership, take-over. */
  #gate: QueueGate;
  #unsubscribes: (() => void)[];
  /** Reads objects anew (errors reported); none without `options.refresh`. */
  #reader: Reader | undefined;
  /**
   * Parked queues: idle with nothing to remember, no worker running; destroyed on one shared
   * timer when their idle timeout has passed, not one timer per object.
   */
  #parked: Reaper<ObjectEntry>;

  /**
   * @param processor Processes one object's event.
   * @param settings Batching window, idle timeout, worker limit, consistency timeout.
   * @param options The clock, the error callback, the re-reading of objects; or just the error
   *   callback.
   */
  constructor(
    processor: Processor,
    settings: QueueSettings,
    options: QueueOptions | QueueOptions["onError"] = {},
  ) {
    this.#settings = settings;
    this.#options = typeof options === "function" ? { onError: options } : options ?? {};
    this.#cycles = new ThrottledProcessor(processor, this.#stop.signal, this.#options.onError);
    const refresh = this.#options.refresh;
    this.#reader = refresh && ((body) => this.#read(refresh, body));
    this.#clock = this.#options.clock ?? realClock;
    this.#context = { clock: this.#clock, closing: false };
    this.#limiter = new Limiter(() => settings.workerLimit);
    // Expired in groups up to a fifth of the idle timeout (at most 1 s) late: a trickle of
    // objects parks one queue after another, and would otherwise cost a timer's wake-up each.
    this.#parked = new Reaper(
      (entry) => {
        entry.queue = undefined;
        this.#workers--;
      },
      this.#clock,
      { coalesce: Math.min(1, settings.idleTimeout / 5) },
    );
    this.#gate = new QueueGate({
      paused: this.#options.paused,
      shards: this.#options.gate,
      releaser: this,
      reads: this.#reader !== undefined,
    });
    this.#unsubscribes = [
      this.#gate.onResume(() => this.#resumed()),
      this.#gate.onAdmit(() => this.#admitted()),
      this.#gate.onView(() => this.#prune()),
    ];
  }

  /** How many objects have a live worker. */
  get size(): number {
    return this.#workers;
  }

  /** How many objects are known (a memory kept, with or without a live worker). */
  get known(): number {
    return this.#objects.size;
  }

  /**
   * The memory of a known object by its uid, for lookups from outside the queues (admission
   * memos); nothing is added to the inventory for an object never seen or already deleted.
   *
   * @param uid The object's uid.
   * @returns Its memory, or undefined if no entry exists.
   */
  memoryOf(uid: string): ObjectMemory | undefined {
    return this.#objects.get(uid)?.memory;
  }

  /** How many events wait in all queues (for metrics). */
  get depth(): number {
    return this.#objects.values().reduce((n, { queue }) => n + (queue?.events.length ?? 0), 0);
  }

  /**
   * Lets the cycles that wait for a worker slot go on as far as the worker limit, read anew, now
   * allows: a raised or lifted limit (a backlogged API's, backlog.ts, lifts when it is calm).
   */
  admitWaiting(): void {
    this.#limiter.wake();
  }

  /**
   * Queues an event for its object, starting a worker if needed.
   *
   * @param event The event.
   */
  push(event: RawEvent): void {
    if (this.#stop.signal.aborted) return;
    const key = keyOf(event.object);
    let entry = this.#objects.get(key);
    // Deleted by our own write: what comes before its DELETED event is older than that write.
    if (entry?.gone && event.type !== "DELETED") return;
    let queue = entry?.queue;
    if (this.#gate.sharded && !queue && !this.#gate.admits(key)) {
      // Not ours (or not handed over yet): not processed; gone when deleted. Another replica's:
      // nothing is kept (a view that gives it to us reads the state anew).
      if (event.type === "DELETED" || (this.#gate.foreign(key) && !this.#gate.keeps(key))) {
        if (entry) this.#forget(key, entry);
        return;
      }
      // Ours, not handed over yet: its latest body waits for the gate.
      if (!entry) this.#objects.set(key, entry = { memory: newMemory(), queue: undefined });
      entry.latest = event.object;
      return;
    }
    if (!entry) this.#objects.set(key, entry = { memory: newMemory(), queue: undefined });
    if (this.#gate.sharded) entry.latest = event.object;
    if (!queue) {
      queue = entry.queue = new ObjectQueue(this.#context, event);
      this.#workers++;
      queue.worker = this.#work(key, entry, queue);
      return;
    }
    queue.add(event);
    if (this.#parked.delete(entry)) {
      // A parked queue: its worker starts again, as a waiting one would wake up — a microtask
      // later, so that the events pushed with this one count for the batching (a burst).
      queue.worker = RESOLVED.then(() => this.#work(key, entry, queue!));
      return;
    }
    queue.wake();
  }

  /**
   * Stops all workers after their current cycle and waits for them.
   *
   * @param graceSeconds How long to let current cycles finish before aborting their API calls.
   */
  async close(graceSeconds = 5): Promise<void> {
    this.#context.closing = true;
    for (const unsubscribe of this.#unsubscribes) unsubscribe();
    this.#parked.expireAll();
    const queues = [...this.#objects.values()].flatMap((e) => e.queue ? [e.queue] : []);
    const workers = queues.map((q) => q.worker);
    for (const q of queues) q.wake();
    const cancel = this.#clock.timer(graceSeconds * 1000, () => this.#stop.abort());
    await Promise.allSettled(workers);
    cancel();
    this.#stop.abort();
  }

  /**
   * The worker of one object: the scheduling between the stages (see the module doc) — waits for
   * events (or a sleeping handler's wake-up), batches them, and passes each batch through the
   * own-write tracker, the gate and the throttled cycle, until it idles out or the object goes.
   */
  async #work(key: string, entry: ObjectEntry, queue: ObjectQueue): Promise<void> {
    const s = this.#settings;
    const writes = new OwnWrites();
    const throttle = new Throttle(s.errorDelays);
    /** The latest event processed, and the seconds until its handlers wake up (if they sleep). */
    let last: RawEvent | undefined;
    let delay: number | undefined;
    const echo = new OwnEcho();
    try {
      while (true) {
        // Wait for events: up to the idle timeout, or until a sleeping handler wakes up.
        if (!queue.events.length) {
          if (this.#context.closing) return;
          if (delay === undefined && !writes.pending && !throttle.engaged) {
            // Nothing to remember but the queue: it waits parked, with no worker and no timer.
            this.#parked.add(entry, s.idleTimeout);
            return;
          }
          const woke = await queue.wait(
            delay !== undefined ? Math.min(delay, 86400) : s.idleTimeout,
          );
          if (this.#context.closing && !queue.events.length) return;
          if (!woke && !queue.events.length) {
            // Our own write is not back yet (a late watch): the worker waits on, as a new one
            // would not know of that write and would act on the older events still to come.
            if (writes.pending && delay === undefined) continue;
            if (delay === undefined || !last || last.type === "DELETED") return;
            // Handlers wake up with no news: continue from our own last write, if it is not
            // back yet — never from the older body the previous cycle started from.
            queue.recheck(writes.own ?? last.object);
          }
        }
        // Batch: when events of this object come in a burst (the last two within the window),
        // wait the window for more; only the latest matters. A lone event is processed at once,
        // and so is a burst of our own making — the echoes of a cycle's writes, up to our own
        // last write: nothing newer is queued (our write's own event is awaited below, not for a
        // window), and a trickle of objects would otherwise wait out a window — a timer, a
        // wake-up, 0.1 s more of a live worker — per object.
        if (
          s.batchWindow > 0 && queue.burst(s.batchWindow) && !writes.onlyOwn(queue.events) &&
          !this.#context.closing
        ) {
          await queue.wait(s.batchWindow, false);
        }
        const deleted = deletedAt(queue.events) >= 0;
        // 1. Own writes: what is older than our own last write goes, or waits for it.
        const batch = writes.sift(queue.events.splice(0), deleted);
        if (!batch.length) continue;
        if (writes.awaiting && !deleted && !this.#context.closing) {
          queue.events.unshift(...batch);
          const next = await writes.awaitWrite(queue, s.consistencyTimeout, this.#reader);
          if (next) this.#goOn(entry, queue, next);
          continue;
        }
        // 2. The gate: paused, not ours, or taken over (read anew first).
        switch (this.#gate.pass(key, deleted)) {
          case "paused":
            if (this.#context.closing) return; // Paused at the exit: what waits is not processed.
            queue.events.unshift(...batch);
            await queue.waitResumed((signal) => this.#gate.waitResumed(signal));
            continue;
          case "refused":
            // Not ours any more (or not yet): the latest body waits in the entry for the gate —
            // unless another replica owns it now: then nothing is kept.
            if (deleted || (this.#gate.foreign(key) && !this.#gate.keeps(key))) {
              this.#forget(key, entry);
            } else entry.latest = batch[batch.length - 1]!.object;
            return;
          case "read":
            await this.#takeOver(key, entry, queue, writes, throttle, batch);
            continue;
        }
        // Our own last write's echo, alone: no cycle if the write's check finds nothing to do.
        if (echo.skips(batch, deleted)) {
          last = batch[0];
          continue;
        }
        // 3. The cycle, throttled, under the worker limit.
        let ended: (() => void) | undefined;
        if (this.#gate.sharded) entry.busy = new Promise<void>((resolve) => (ended = resolve));
        last = batch[batch.length - 1]!;
        const event = deleted ? batch[deletedAt(batch)]! : last;
        delay = undefined;
        // A free slot is taken at once: no promise and no microtask hop per cycle.
        if (!this.#limiter.tryAcquire()) await this.#limiter.acquire();
        let result;
        try {
          result = await this.#cycles.cycle(event, entry.memory);
          throttle.succeeded();
        } catch (e) {
          result = this.#cycles.failed(e, event, throttle);
        } finally {
          this.#limiter.release();
          ended?.();
        }
        if (result) {
          delay = result.delay;
          echo.wrote(result);
          // Our write released the last finalizer: the object is gone; nothing waits for a
          // version of it (no re-read), and only its DELETED event is still processed.
          if (writes.wrote(result.patched)) this.#goOn(entry, queue, "gone");
        } else if (throttle.delay !== undefined && !deleted) {
          // Events arriving meanwhile are batched: only the latest is processed after the pause.
          await queue.wait(throttle.delay, false);
          if (!queue.events.length && !this.#context.closing) {
            queue.recheck(writes.own ?? event.object);
          }
        }
        if (deleted) {
          this.#forget(key, entry);
          return;
        }
      }
    } finally {
      // Parked, the queue stays (its worker ends); otherwise it goes with its worker.
      const parked = this.#parked.has(entry);
      if (!parked && entry.queue === queue) {
        entry.queue = undefined;
        this.#workers--;
      }
      // Events pushed after the worker decided to exit get a new worker.
      if (!parked && queue.events.length && !this.#context.closing) {
        const events = queue.events.splice(0);
        for (const e of events) this.push(e);
      }
    }
  }

  /**
   * Taken over from another replica: its last write may not have reached our watch yet (it came
   * as a release through the Leases); the object is read anew before its first cycle here.
   */
  async #takeOver(
    key: string,
    entry: ObjectEntry,
    queue: ObjectQueue,
    writes: OwnWrites,
    throttle: Throttle,
    batch: RawEvent[],
  ): Promise<void> {
    const fresh = await this.#reader!(batch[batch.length - 1]!.object);
    if (this.#context.closing) return;
    this.#gate.read(key, fresh !== null);
    queue.events.unshift(...batch);
    if (fresh === null) {
      // The read failed (and was reported): no cycle on the older body; read again after the
      // error delays, as a failed cycle would be retried.
      await queue.wait(throttle.failed() ?? 1, false);
      return;
    }
    this.#goOn(entry, queue, writes.afterRead(fresh, queue.events));
  }

  /** The queue goes on as the own-write tracker says (after a write, or a fresh read). */
  #goOn(entry: ObjectEntry, queue: ObjectQueue, next: AfterRead): void {
    if (next !== "gone") queue.events = next;
    else {
      // Gone: only its DELETED event is still processed (what comes before it is older).
      entry.gone = true;
      queue.events = queue.events.filter((e) => e.type === "DELETED");
    }
  }

  /**
   * Releases an object to another replica (sharding's gate calls this once it stopped admitting
   * it): waits for its in-flight cycle, stops its daemons and timers (the `release` hook), and
   * forgets what this replica remembered of it — the memory starts afresh if it comes back.
   *
   * @param uid The object's uid.
   * @returns When nothing of the object runs any more.
   */
  async release(uid: string): Promise<void> {
    const entry = this.#objects.get(uid);
    if (!entry) return;
    await entry.busy;
    await this.#options.release?.(uid, entry.memory);
    Object.assign(entry.memory, newMemory(), { spawned: undefined });
    // Another replica's now: nothing is kept (a view that gives it back reads the state anew). A
    // worker still alive has no cycle to run (the gate refuses it) and ends at its next batch.
    if (this.#gate.foreign(uid)) this.#forget(uid, entry);
  }

  /**
   * Whether the watch may leave this object's ADDED and MODIFIED events undecoded: another
   * replica owns it under the current shard view, and nothing of it is kept here (see
   * cogs/clients/watch_skipping.ts).
   *
   * @param uid The object's uid.
   * @returns True if so (never without sharding).
   */
  skips(uid: string): boolean {
    return this.#gate.foreign(uid) && !this.#objects.has(uid);
  }

  /**
   * Has the watch stream read the state anew at sharding's fresh points (QueueGate.relists).
   * @param request Asks the stream to read the state anew; `listed` once it has.
   * @returns Unsubscribes.
   */
  relists(request: (listed: () => void) => void): () => void {
    return this.#gate.relists(request);
  }

  /** A new shard view: what is kept of objects that are others' now, idle and released, goes. */
  #prune(): void {
    for (const [key, entry] of this.#objects) {
      if (entry.queue || !this.#gate.foreign(key) || this.#gate.keeps(key)) continue;
      this.#forget(key, entry);
    }
  }

  /** The gate admits more objects: those kept without a worker start with their latest body. */
  #admitted(): void {
    if (this.#context.closing) return;
    for (const [key, entry] of this.#objects) {
      if (entry.queue || !entry.latest || !this.#gate.admits(key)) continue;
      this.push({ type: null, object: entry.latest });
    }
  }

  /** The object is deleted, or another replica's: its entry goes (if it is still this one). */
  #forget(key: string, entry: ObjectEntry): void {
    if (this.#objects.get(key) === entry) this.#objects.delete(key);
    this.#gate.forget(key);
  }

  /**
   * The pause is over: objects whose daemons and timers it stopped (or that were observed during
   * it) go through a cycle with their latest body — unless a newer event waits for them anyway.
   */
  #resumed(): void {
    if (this.#context.closing) return;
    for (const entry of this.#objects.values()) {
      const spawned = entry.memory.spawned;
      if (!spawned?.paused || spawned.deleting || entry.queue?.events.length) continue;
      this.push({ type: null, object: spawned.body });
    }
  }

  /** A fresh read of the object: the body, undefined when gone, null when it cannot be read. */
  async #read(
    refresh: NonNullable<QueueOptions["refresh"]>,
    body: AnyObject,
  ): Promise<AnyObject | undefined | null> {
    try {
      return await refresh(body, this.#stop.signal);
    } catch (e) {
      this.#options.onError?.(e, { type: null, object: body }, undefined);
      return null;
    }
  }
}

const RESOLVED: Promise<void> = Promise.resolve();
