/**
 * The watcher's types (./watcher.ts): its states, inputs, commands, notes, steps and
 * configuration, as values a caller builds and reads.
 *
 * @module
 */

import type { RawBody } from "./types.ts";
import type { Inventory, RawWatchEvent, WatchEvent } from "./watch_events.ts";

/** What every state carries. */
export interface Common {
  /** The last resourceVersion seen (a list's, an event's, a bookmark's): where a watch resumes. */
  readonly resourceVersion: string | undefined;
  /** The state is read streamed (`sendInitialEvents`); false for "never" and after a fallback. */
  readonly streamed: boolean;
  /** The objects seen (the mutable part, shared by the states of one watcher). */
  readonly inventory: Inventory;
}

/** A state of the watcher (see the module doc); `phase` tells which. */
export type WatcherState =
  | Common & {
    /** Listing page by page. */
    readonly phase: "listing";
    /** The token of the page asked for; undefined for the first. */
    readonly continue: string | undefined;
    /** The listing's resourceVersion (its first page's), once a page came. */
    readonly listVersion: string | undefined;
  }
  | Common & {
    /** A streamed listing, awaiting the bookmark that ends the state. */
    readonly phase: "streaming";
  }
  | Common & {
    /** Following the changes from `resourceVersion`. */
    readonly phase: "watching";
  }
  | Common & {
    /** Waiting after a stream ended, then resuming from `resourceVersion`. */
    readonly phase: "backoff";
  }
  | Common & {
    /** Waiting after a 410 Gone (or a streamed listing that did not complete), then reading the state again. */
    readonly phase: "relisting";
  }
  | Common & {
    /** Ended by an error that is not retried. */
    readonly phase: "failed";
    /** The error. */
    readonly error: unknown;
  };

/** What the watcher is told ({@link stepWatcher}). */
export type WatcherInput =
  | {
    /** A page of the LIST came. */
    readonly type: "page";
    /** Its objects. */
    readonly items: readonly RawBody[];
    /** Its resourceVersion. */
    readonly resourceVersion: string;
    /** The next page's token, if there is one. */
    readonly continue: string | undefined;
  }
  | {
    /** A chunk of the watch stream came. */
    readonly type: "events";
    /** Its events (changes, bookmarks, errors). */
    readonly events: readonly RawWatchEvent[];
  }
  | {
    /** The stream ended: closed by the server, a timeout, silence, a broken connection. */
    readonly type: "ended";
  }
  | {
    /** The request (a LIST page, opening or reading a stream) failed. */
    readonly type: "failed";
    /** The error. */
    readonly error: unknown;
  }
  | {
    /** The backoff's time passed. */
    readonly type: "slept";
  }
  | {
    /** The consumer asks for the state anew (it lets through objects it skipped before). */
    readonly type: "relist";
  };

/** What to do next ({@link WatcherStep.command}). */
export type WatcherCommand =
  | {
    /** Ask for a LIST page (the open stream, if any, is dropped). */
    readonly do: "list";
    /** The page's token; undefined for the first. */
    readonly continue: string | undefined;
    /** The page size (0: unpaginated). */
    readonly limit: number;
  }
  | {
    /** Open a watch (the open stream, if any, is dropped). */
    readonly do: "watch";
    /** Where to start; undefined: from now (or the state, for a streamed listing). */
    readonly resourceVersion: string | undefined;
    /** Stream the state first (KEP-3157). */
    readonly sendInitialEvents: boolean;
    /** Ask for bookmarks; undefined: the default (yes). */
    readonly bookmarks: boolean | undefined;
  }
  | {
    /** Read on from the open stream. */
    readonly do: "read";
  }
  | {
    /** Wait (the open stream, if any, is dropped). */
    readonly do: "sleep";
    /** How long, in seconds. */
    readonly seconds: number;
  }
  | {
    /** Stop with this error (the open stream, if any, is dropped). */
    readonly do: "fail";
    /** The error to throw. */
    readonly error: unknown;
  };

/** A note for the log. */
export interface WatcherNote {
  /** The level. */
  readonly level: "debug" | "warn";
  /** The message. */
  readonly message: string;
}

/** The outcome of one step: the next state, what to yield, what to do, what to log. */
export interface WatcherStep {
  /** The next state. */
  readonly state: WatcherState;
  /** The events to yield, in order (before the command is carried out). */
  readonly events: WatchEvent[];
  /** What to do next. */
  readonly command: WatcherCommand;
  /** What to log. */
  readonly notes: WatcherNote[];
}

/** What does not change over a watcher's life. */
export interface WatcherConfig {
  /** How to read the state: streamed, falling back to LIST ("auto"); streamed only; listed only. */
  readonly streamingLists: "auto" | "always" | "never";
  /** The LIST page size. */
  readonly limit: number;
  /** Ask for bookmarks when watching (undefined: yes). */
  readonly bookmarks: boolean | undefined;
  /** Seconds to wait before the next watch request after a stream ended or a 410. */
  readonly reconnectBackoff: number;
  /** The resource, for messages (e.g. `configmaps`). */
  readonly resource: string;
  /** Where, for messages (e.g. `in default`, `cluster-wide`). */
  readonly where: string;
}
