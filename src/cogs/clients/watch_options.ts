/**
 * The options of the watch functions of ./watching.ts: one stream ({@link WatchOptions}) and the
 * infinite watch ({@link InfiniteWatchOptions}).
 *
 * @module
 */

/** Options of `watchObjects` (./watching.ts). Timeouts default to `api.settings.watching`. */
export interface WatchOptions {
  /** Where to start; absent: "from now" (the server sends the current objects as ADDED). */
  resourceVersion?: string | undefined;
  /**
   * Ask for the state first (`sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
   * KEP-3157): ADDED events, then a BOOKMARK annotated `k8s.io/initial-events-end`.
   */
  sendInitialEvents?: boolean | undefined;
  /** Ask for BOOKMARK events (default true). */
  bookmarks?: boolean | undefined;
  /** A label selector. */
  labelSelector?: string | undefined;
  /** A field selector. */
  fieldSelector?: string | undefined;
  /** `timeoutSeconds` for the server; `null`: the server's default. */
  serverTimeout?: number | null | undefined;
  /** Seconds for the whole request, client-side; `null`: none. */
  clientTimeout?: number | null | undefined;
  /** Seconds to the response headers; `null`: none. */
  connectTimeout?: number | null | undefined;
  /** Seconds of silence after which the stream is closed; `null`: none. */
  inactivityTimeout?: number | null | undefined;
  /** Ends the stream (quietly). */
  signal?: AbortSignal | undefined;
  /**
   * Objects (by uid) whose ADDED and MODIFIED events are not decoded: each comes as a `SKIPPED`
   * event with only its resourceVersion (watch_skipping.ts). Sharding skips so the objects
   * another replica owns.
   */
  skip?: ((uid: string) => boolean) | undefined;
}

/** Options of `infiniteWatch` (./watching.ts). Timeouts default to `api.settings.watching`. */
export interface InfiniteWatchOptions {
  /** A label selector, for the list and the watches. */
  labelSelector?: string | undefined;
  /** A field selector, for the list and the watches. */
  fieldSelector?: string | undefined;
  /** Ask for bookmarks (default true; they keep silent streams alive). */
  bookmarks?: boolean | undefined;
  /** `timeoutSeconds` for each watch request. */
  serverTimeout?: number | null | undefined;
  /** Seconds for each watch request, client-side. */
  clientTimeout?: number | null | undefined;
  /** Seconds to each watch response's headers. */
  connectTimeout?: number | null | undefined;
  /** Seconds of silence after which a stream is reopened; `null`: never (default: the setting). */
  inactivityTimeout?: number | null | undefined;
  /** Seconds between watch requests (default: the setting). */
  reconnectBackoff?: number | undefined;
  /** The list page size (default: `settings.watching.listPageSize`, 500). */
  limit?: number | undefined;
  /** How to read the state (default: `settings.watching.streamingLists`, "auto"). */
  streamingLists?: "auto" | "always" | "never" | undefined;
  /** Stops watching (quietly). */
  signal?: AbortSignal | undefined;
  /**
   * Objects (by uid) whose ADDED and MODIFIED events are neither decoded nor yielded (nor kept
   * in the inventory); they only advance the resourceVersion (see {@link WatchOptions.skip}).
   * Listed ones are left out of the listing. An object known from before that a relist skips
   * comes as DELETED at the relist's end (its stub goes): for a consumer that keeps nothing of
   * what it skips, that is nothing to do.
   */
  skip?: ((uid: string) => boolean) | undefined;
  /**
   * Subscribes the watcher to requests to read the state anew (relist): the open stream is cut
   * and the state read at once (after a listing in progress, when it is over) — for a consumer
   * whose `skip` now lets through objects it skipped before. A request may say what to call once
   * a listing that started after it is over (its events taken, LISTED included). Called once,
   * as the watcher starts, before its first listing begins. Returns the unsubscription.
   */
  onRelist?: ((request: (listed?: () => void) => void) => () => void) | undefined;
}
