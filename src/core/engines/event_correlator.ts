/**
 * Which Kubernetes Events to write, and how: client-go's `EventCorrelator`
 * (`tools/record/events_cache.go`), so that an operator that logs a lot about
 * its objects loads the API no more than a controller built on client-go does.
 *
 * Every occurrence of an event passes three stages, in client-go's order:
 * 1. Aggregation: events that differ only by message (same object, type,
 *    reason, source) are "similar"; when 10 different messages of one group
 *    are seen within 10 minutes, the 10th and those after it become one
 *    Event, "(combined from similar events): <the latest message>".
 * 2. Counting: an identical event (same object, type, reason and message, or
 *    the same aggregate) is not a new Event: the existing one gets its
 *    `count` bumped and a new `lastTimestamp` — a PATCH instead of a POST.
 * 3. The spam filter: a token bucket per source and object (25 events at
 *    once, then one more every 5 minutes); an occurrence without a token is
 *    dropped. As in client-go, the count of stage 2 has already moved, so the
 *    next occurrence that does get through carries the full count.
 *
 * What it remembers is bounded as client-go's caches are: 4096 groups and
 * 4096 Events in all, the least recently used objects forgotten first (an
 * object's groups, Events and bucket together), and at most 64 groups and
 * 64 Events per object. It keeps them per object — one cache entry per
 * object, found by a key (source and object) kept per object reference, and
 * the object's few groups and Events beside it — rather than in three caches
 * keyed by long joined strings, which hashed a new key of some 150 characters
 * at every occurrence and kept three of them per object.
 *
 * The correlator only decides; it writes nothing (see `event_recorder.ts`).
 * It is synchronous and cheap, so it runs where the event occurs, and it
 * takes its time from a {@link Clock}, so its windows and buckets are tested
 * on a fake clock.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import type { ObjectReference } from "../../cogs/structs/bodies.ts";
import { Lru, type LruNode } from "../../cogs/structs/lru.ts";

/** The prefix of aggregated messages (client-go's). */
export const COMBINED_PREFIX = "(combined from similar events): ";

/** One occurrence of an event, as the correlator sees it. */
export interface CorrelatedEvent {
  /** The object the event is about. */
  ref: ObjectReference;
  /** `Normal`, `Warning`, … */
  type: string;
  /** The reason, e.g. `Logging`. */
  reason: string;
  /** The message (already cut to the API's limit). */
  message: string;
  /** The reporting component (`source.component`), e.g. `kopf`. */
  component: string;
  /** The reporting instance. */
  instance: string;
}

/**
 * One Event as the correlator counts it (client-go's `eventLog`). The
 * recorder notes on it the name the API gave the Event once it is created, so
 * that later occurrences patch that Event.
 */
export interface EventLogEntry {
  /** How many times the Event has occurred (spam-dropped occurrences included). */
  count: number;
  /**
   * When it first occurred, in milliseconds since the epoch (a number: a `Date` kept per entry
   * would cost some 100 bytes more in each of the 4,096 entries).
   */
  first: number;
  /** The Event's name on the server, once created. */
  name?: string | undefined;
  /** The Event's namespace on the server, once created. */
  namespace?: string | undefined;
}

/** What to write for one occurrence that passed the spam filter. */
export interface Correlation {
  /** The Event it lands in: a new one (`count` 1, nothing on the server yet) or an existing one. */
  entry: EventLogEntry;
  /** The message to write (the combined one when aggregated). */
  message: string;
  /** The Event's count after this occurrence. */
  count: number;
  /** When the Event first occurred. */
  firstTimestamp: Date;
  /** When this occurrence happened. */
  lastTimestamp: Date;
  /** Whether it was aggregated with similar events. */
  aggregated: boolean;
  /** The key of its source and object (the spam filter's): events about one object share it. */
  source: string;
}

/** The correlator's limits; read at every use (settings may change while running). */
export interface CorrelatorLimits {
  /** Events a source may post about one object at once (client-go: 25). */
  spamBurst: number;
  /** Seconds until one more is allowed once the burst is spent (client-go: 300). */
  spamRefill: number;
}

/** Options of {@link EventCorrelator}. */
export interface EventCorrelatorOptions {
  /** The spam filter's limits (default: client-go's, 25 and 300 s). */
  limits?: CorrelatorLimits | undefined;
  /** Different messages of similar events before they are aggregated (default 10). */
  aggregateLimit?: number | undefined;
  /** Seconds after the last similar event that a group is forgotten (default 600). */
  aggregateWindow?: number | undefined;
  /** Groups, Events and objects kept at most, each (default 4096, client-go's cache size). */
  cacheSize?: number | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
}

/** One group of similar events of an object (they differ only by message). */
interface Group {
  type: string;
  reason: string;
  instance: string;
  /** The different messages seen (fewer than the aggregation's limit), oldest first. */
  messages: string[];
  /** When the last one occurred (ms). */
  at: number;
}

/** An Event as the correlator counts it: an identical event's, or a group's aggregate. */
interface Logged extends EventLogEntry {
  readonly type: string;
  readonly reason: string;
  readonly aggregate: boolean;
  /** The message of an identical event; the instance of an aggregate (its group's). */
  readonly text: string;
}

/**
 * What the correlator keeps about one object for one source: the spam filter's token bucket
 * (its tokens kept as milliseconds of refill, so fake time adds up exactly), its groups and its
 * Events, each list least recently used first.
 */
interface ObjectState {
  credit: number;
  at: number;
  groups: Group[];
  log: Logged[];
}

/** An object reference's key (source and object) and its entry, for its next occurrences. */
interface ObjectKeys {
  component: string;
  source: string;
  node: LruNode<ObjectState> | undefined;
}

/** Groups and Events kept per object at most (the least recently used go first). */
const PER_OBJECT = 64;

const CLIENT_GO: CorrelatorLimits = { spamBurst: 25, spamRefill: 300 };

/**
 * Filters, aggregates and counts events as client-go's `EventCorrelator` does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventCorrelator } from "./event_correlator.ts";
 * const correlator = new EventCorrelator();
 * const event = {
 *   ref: { apiVersion: "v1", kind: "Pod", name: "p", namespace: "ns", uid: "u" },
 *   type: "Normal", reason: "Logging", message: "Hello.", component: "kopf", instance: "dev",
 * };
 * const first = correlator.correlate(event)!;
 * const again = correlator.correlate(event)!;
 * assert.deepEqual([first.count, again.count, first.entry === again.entry], [1, 2, true]);
 * ```
 */
export class EventCorrelator {
  #limits: CorrelatorLimits;
  #aggregateLimit: number;
  #aggregateWindow: number;
  #clock: Clock;
  #size: number;
  #objects: Lru<ObjectState>;
  /** Groups and Events kept in all (each bounded by the cache size, as client-go's caches). */
  #groups = 0;
  #events = 0;
  #keys = new WeakMap<ObjectReference, ObjectKeys>();

  /**
   * Creates a correlator with empty caches.
   *
   * @param options Limits, cache size, clock.
   */
  constructor(options: EventCorrelatorOptions = {}) {
    const size = this.#size = options.cacheSize ?? 4096;
    this.#limits = options.limits ?? CLIENT_GO;
    this.#aggregateLimit = options.aggregateLimit ?? 10;
    this.#aggregateWindow = (options.aggregateWindow ?? 600) * 1000;
    this.#clock = options.clock ?? realClock;
    this.#objects = new Lru<ObjectState>(size, ({ value }) => {
      this.#groups -= value.groups.length;
      this.#events -= value.log.length;
    });
  }

  /**
   * Correlates one occurrence: aggregates, counts, and filters it.
   *
   * @param event The occurrence.
   * @returns What to write, or undefined when the spam filter drops it.
   */
  correlate(event: CorrelatedEvent): Correlation | undefined {
    const now = this.#clock.now();
    const date = this.#clock.date();
    const { type, reason, instance, message: original } = event;
    const token = this.#limits.spamRefill * 1000;
    const full = this.#limits.spamBurst * token;
    const keys = this.#keysOf(event);
    let node = keys.node;
    if (!this.#objects.use(node)) {
      node = this.#objects.entry(keys.source) ??
        this.#objects.add(keys.source, { credit: full, at: now, groups: [], log: [] });
      keys.node = node;
    }
    const state = node.value;

    // 1. Aggregation of similar events (they differ only by message).
    let group = recent(
      state.groups,
      (g) => g.type === type && g.reason === reason && g.instance === instance,
    );
    if (!group) {
      group = { type, reason, instance, messages: [], at: now };
      state.groups = append(state.groups, group);
      this.#groups++;
      this.#bound(state);
    } else if (now - group.at > this.#aggregateWindow) group.messages = [];
    if (!group.messages.includes(original)) group.messages = append(group.messages, original);
    group.at = now;
    let message = original;
    const aggregated = group.messages.length >= this.#aggregateLimit;
    if (aggregated) {
      group.messages.shift(); // below the limit again (client-go pops any; the oldest here)
      message = COMBINED_PREFIX + original;
    }

    // 2. Counting of identical events (or of the group's aggregate): the same Event, bumped.
    const text = aggregated ? instance : original;
    let entry = recent(
      state.log,
      (e) =>
        e.aggregate === aggregated && e.text === text && e.type === type && e.reason === reason,
    );
    if (entry) entry.count++;
    else {
      entry = {
        type,
        reason,
        aggregate: aggregated,
        text,
        count: 1,
        first: date.getTime(),
        name: undefined, // set once created, in the object itself rather than in a store of its own
        namespace: undefined,
      };
      state.log = append(state.log, entry);
      this.#events++;
      this.#bound(state);
    }

    // 3. The spam filter: a token bucket per source and object.
    state.credit = Math.min(full, state.credit + (now - state.at));
    state.at = now;
    if (token > 0) {
      if (state.credit < token) return undefined;
      state.credit -= token;
    }

    return {
      entry,
      message,
      count: entry.count,
      firstTimestamp: entry.count === 1 ? date : new Date(entry.first),
      lastTimestamp: date,
      aggregated,
      source: keys.source,
    };
  }

  /**
   * Keeps the groups and Events within the cache size in all (the least recently used objects
   * forgotten first, then the object's own oldest) and within {@link PER_OBJECT} per object.
   */
  #bound(state: ObjectState): void {
    for (; state.groups.length > PER_OBJECT; this.#groups--) state.groups.shift();
    for (; state.log.length > PER_OBJECT; this.#events--) state.log.shift();
    while (this.#groups > this.#size || this.#events > this.#size) {
      const oldest = this.#objects.oldest;
      if (oldest && oldest.value !== state) this.#objects.delete(oldest);
      else if (this.#groups > this.#size && state.groups.length) {
        state.groups.shift();
        this.#groups--;
      } else if (this.#events > this.#size && state.log.length) {
        state.log.shift();
        this.#events--;
      } else return; // a cache of size 0: nothing to forget but what was just added
    }
  }

  /**
   * The key of an occurrence's source and object (client-go's), kept per object reference, so
   * that an object's lines do not join and hash it again and again (a reference is not changed
   * once posted: loggers and `kopf.event` build their own).
   */
  #keysOf(event: CorrelatedEvent): ObjectKeys {
    const { ref, component } = event;
    let keys = this.#keys.get(ref);
    if (keys?.component !== component) {
      const source = [
        component,
        ref.kind ?? "",
        ref.namespace ?? "",
        ref.name ?? "",
        ref.uid ?? "",
        ref.apiVersion ?? "",
      ].join("\u0000");
      keys = { component, source, node: undefined };
      this.#keys.set(ref, keys);
    }
    return keys;
  }
}

/**
 * A list with one more item, its store as long as the list: a push grows a list's store to 17
 * items at least, and an object's lists are short (most hold one or two).
 */
function append<T>(list: T[], item: T): T[] {
  const out = new Array<T>(list.length + 1);
  for (let i = 0; i < list.length; i++) out[i] = list[i]!;
  out[list.length] = item;
  return out;
}

/** The first item that matches, made the most recently used (moved to the end). */
function recent<T>(list: T[], match: (item: T) => boolean): T | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i]!;
    if (!match(item)) continue;
    if (i !== list.length - 1) {
      list.splice(i, 1);
      list.push(item);
    }
    return item;
  }
  return undefined;
}
