/**
 * The events of watching: the lines of a raw watch stream
 * ({@link RawWatchEvent}), the events the watcher yields ({@link WatchEvent}),
 * the error of a stream that cannot be continued from ({@link WatchingError}),
 * and the {@link Inventory} of the objects yielded — how a relisting finds the
 * deletions that happened while no stream was open.
 *
 * @module
 */

import { stubBody } from "../structs/trimming.ts";
import type { KubeStatus } from "./errors.ts";
import type { RawBody } from "./types.ts";

/**
 * The watch stream said something the client cannot continue from (an
 * `ERROR` event other than 410 Gone, or a line that is not JSON).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WatchingError } from "./watch_events.ts";
 * assert.deepEqual(new WatchingError("Error in the watch-stream: 500").name, "WatchingError");
 * ```
 */
export class WatchingError extends Error {
  /**
   * Creates the error.
   *
   * @param message What the stream said.
   * @param options The usual error options.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "WatchingError";
  }
}

/**
 * The event types of a raw watch stream; `SKIPPED` is no server's: an event left undecoded (an
 * object another replica owns, watch_skipping.ts), with only its resourceVersion, if any.
 */
export type RawWatchType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR" | "SKIPPED";

/**
 * One line of a watch stream, as sent. For `ERROR`, the object is a Status;
 * for `BOOKMARK`, only `metadata.resourceVersion` is meaningful.
 */
export interface RawWatchEvent {
  /** The event type. */
  type: RawWatchType;
  /** The object (a Status for ERROR). */
  object: RawBody & KubeStatus;
}

/** What the watcher yields (see `infiniteWatch`'s module doc). */
export type WatchEvent =
  | {
    /** An object of a (re)listing: not a change, but the state. */
    type: null;
    /** The object. */
    object: RawBody;
  }
  | {
    /** A change. DELETED also comes for objects gone between a stream and a relist. */
    type: "ADDED" | "MODIFIED" | "DELETED";
    /** The object (for DELETED: its last state). */
    object: RawBody;
  }
  | {
    /** The (re)listing is complete: the objects yielded so far are the whole state. */
    type: "LISTED";
    /** The list's resourceVersion. */
    resourceVersion: string;
    /** How many objects the list had. */
    count: number;
  };

/**
 * The objects the watcher has yielded and not seen deleted since (their stubs,
 * `stubBody()`). During a (re)listing, those of before that the listing has
 * not shown yet wait as unconfirmed: what is left of them at its end is gone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Inventory, type WatchEvent } from "./watch_events.ts";
 * const inventory = new Inventory();
 * inventory.seen({ metadata: { name: "a" } });
 * inventory.seen({ metadata: { name: "b" } });
 * inventory.begin(); // a relisting: only "b" is listed again
 * inventory.seen({ metadata: { name: "b" } });
 * const out: WatchEvent[] = [];
 * inventory.end("7", out);
 * assert.deepEqual(out, [
 *   { type: "DELETED", object: { metadata: { name: "a" } } },
 *   { type: "LISTED", resourceVersion: "7", count: 1 },
 * ]);
 * ```
 */
export class Inventory {
  #known = new Map<string, RawBody>();
  readonly #unconfirmed = new Map<string, RawBody>();

  /** How many objects are known (listed or seen, not deleted). */
  get size(): number {
    return this.#known.size;
  }

  /** A (re)listing begins: every object known so far is unconfirmed until listed again. */
  begin(): void {
    for (const [key, object] of this.#known) this.#unconfirmed.set(key, object);
    this.#known = new Map();
  }

  /**
   * An object was listed, added or modified: keep its stub.
   *
   * @param object The object.
   */
  seen(object: RawBody): void {
    this.#known.set(keyOf(object), stubBody(object));
  }

  /**
   * An object was deleted: forget it (and do not report it again at the end of a listing).
   *
   * @param object The object.
   */
  deleted(object: RawBody): void {
    const key = keyOf(object);
    this.#known.delete(key);
    this.#unconfirmed.delete(key);
  }

  /**
   * The (re)listing is complete: DELETED for each object not listed again, then LISTED.
   *
   * @param resourceVersion The listing's resourceVersion.
   * @param out Where the events go.
   */
  end(resourceVersion: string, out: WatchEvent[]): void {
    for (const [key, object] of this.#unconfirmed) {
      if (!this.#known.has(key)) out.push({ type: "DELETED", object });
    }
    this.#unconfirmed.clear();
    out.push({ type: "LISTED", resourceVersion, count: this.#known.size });
  }
}

function keyOf(body: RawBody): string {
  return `${body.metadata?.namespace ?? ""}/${body.metadata?.name ?? ""}`;
}
