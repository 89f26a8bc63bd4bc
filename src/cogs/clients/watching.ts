/**
 * Watching: one watch request as a stream of raw events
 * ({@link watchObjects}), and the continuous, self-healing watch that the
 * operator runs per resource and namespace ({@link infiniteWatch}).
 *
 * `infiniteWatch` is a small state machine (as kube-rs' watcher):
 *
 * 1. **List** the objects; yield each as `{ type: null, object }` (Kopf's
 *    raw events of the initial listing); after a *re*list, also yield
 *    `{ type: "DELETED", object }` for every object seen before that is gone
 *    now (its deletion happened while no stream was open); then yield the
 *    marker `{ type: "LISTED", resourceVersion, count }` — "the state is
 *    complete now" (Kopf's `Bookmark.LISTED`; indices become ready on it).
 *    The state is read in one of two ways (`settings.watching.streamingLists`):
 *    - *streamed* over the watch itself (`sendInitialEvents=true`, KEP-3157):
 *      the objects come as ADDED events, then a bookmark annotated
 *      `k8s.io/initial-events-end` ends the state, and the same stream goes on
 *      with the changes (step 2 without a second request). Changes that come
 *      before the end bookmark are yielded as they are (MODIFIED, DELETED).
 *    - *paginated* LIST (`settings.watching.listPageSize` per page, each page
 *      yielded as it comes), then a watch from the list's resourceVersion.
 *    With `"auto"` (the default), a watcher streams; when the server refuses
 *    (400 or 422: no WatchList feature, an older Kubernetes), ends the stream
 *    or sends anything but the state before the end bookmark, the watcher
 *    lists instead, for the rest of its life — as client-go's reflector falls
 *    back when its watch-list request fails.
 * 2. **Watch** from the list's resourceVersion; yield ADDED, MODIFIED and
 *    DELETED events as they come. Bookmarks advance the resourceVersion and
 *    are *not* yielded. Unknown event types are ignored.
 * 3. When a stream ends — the server closed it, `serverTimeout` or
 *    `clientTimeout` passed, the connection broke, or nothing (not even a
 *    bookmark) arrived for `inactivityTimeout` seconds — sleep
 *    `reconnectBackoff` and **resume** watching from the last seen
 *    resourceVersion.
 * 4. When the resourceVersion is too old — an in-stream `ERROR` with code 410
 *    or an HTTP 410 answer — go back to 1 (**relist**).
 *
 * Guarantees: a consumer that applies the events to a map (null, ADDED,
 * MODIFIED: set; DELETED: remove) holds exactly the server's state after each
 * LISTED marker, and follows it afterwards. Events may repeat (a relist
 * repeats every object), never go missing.
 *
 * Recovery: connection errors, 429 and 5xx when opening a stream or listing
 * are retried by the API client (`networking.errorBackoffs`); when those run
 * out, or on any other error answer, or an in-stream ERROR other than 410
 * ({@link WatchingError}), the generator throws and the caller decides.
 *
 * Stopping: the generators end quietly (no error) when the signal aborts,
 * promptly, also in the middle of a silent stream.
 *
 * Memory: `infiniteWatch` keeps a stub of every live object (its apiVersion,
 * kind and metadata, without managedFields and the last-applied annotation:
 * `stubBody()`), to report deletions missed between streams; such a DELETED
 * event's object is that stub — its names, labels, annotations, finalizers and
 * owners as last seen, no spec or status.
 * A listing is never held whole a second time: pages and streamed objects are
 * yielded as they arrive. A line of a stream over `watching.maxLineSize` ends
 * the watch with a `ResponseTooLargeError` (it names the setting); a line that
 * is not an event (an object with a type) with a {@link WatchingError}. The
 * body of an error answer (e.g. 410, 5xx) is read within
 * `networking.errorBodySize` and `networking.errorBodyTimeout`, so a server
 * that stalls in it ends the attempt instead of hanging the watch.
 *
 * @module
 */

import type { Resource } from "../structs/references.ts";
import { stubBody } from "../structs/trimming.ts";
import { sleep } from "../aio/sleep.ts";
import { type CancelTimer, realClock } from "../aio/clock.ts";
import type { ApiClient } from "./api.ts";
import type { TransportStream } from "./transport.ts";
import {
  ApiConnectionError,
  ApiError,
  GoneError,
  type KubeStatus,
  ResponseTooLargeError,
} from "./errors.ts";
import { listPages } from "./fetching.ts";
import { JsonLineSplitter } from "./jsonlines.ts";
import type { RawBody } from "./types.ts";
import { DEFAULTS, setting } from "./_settings.ts";

/**
 * The watch stream said something the client cannot continue from (an
 * `ERROR` event other than 410 Gone, or a line that is not JSON).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WatchingError } from "./watching.ts";
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

/** The event types of a raw watch stream. */
export type RawWatchType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

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

/** Options of {@link watchObjects}. Timeouts default to `api.settings.watching`. */
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
}

/**
 * One watch request: yields the raw events until the stream ends (server
 * close, timeouts, inactivity, a broken connection, or the signal). Errors
 * when opening (e.g. {@link GoneError} for a too-old resourceVersion) are
 * thrown; in-stream `ERROR` events are yielded as they are.
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace A namespace, or null/undefined for cluster-wide.
 * @param options Where to start, selectors, timeouts, signal.
 * @returns The raw events.
 * @throws {WatchingError} For a line that is not JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../../../mod.ts";
 * import { Resource } from "../../../mod.ts";
 * import { ApiClient } from "./api.ts";
 * import { watchObjects } from "./watching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const configmaps = new Resource({ group: "", version: "v1", plural: "configmaps", namespaced: true });
 * const stop = new AbortController();
 * const stream = watchObjects(api, configmaps, "default", { signal: stop.signal });
 * await api.request("POST", configmaps.getUrl({ namespace: "default" }), { body: { metadata: { name: "cm1" } } });
 * for await (const event of stream) {
 *   assert.equal(event.type, "ADDED");
 *   assert.equal(event.object.metadata?.name, "cm1");
 *   stop.abort();
 * }
 * ```
 */
export async function* watchObjects(
  api: ApiClient,
  resource: Resource,
  namespace?: string | null,
  options: WatchOptions = {},
): AsyncGenerator<RawWatchEvent, void, undefined> {
  for await (const batch of watchBatches(api, resource, namespace, options)) {
    for (let i = 0; i < batch.length; i++) yield batch[i]!;
  }
}

/**
 * {@link watchObjects}' events as the batches of the chunks they came in: one array, reused (valid
 * until the next batch is asked for). {@link infiniteWatch} reads these: one generator step per
 * chunk between the connection and its loop, not one per event.
 */
async function* watchBatches(
  api: ApiClient,
  resource: Resource,
  namespace: string | null | undefined,
  options: WatchOptions,
): AsyncGenerator<readonly RawWatchEvent[], void, undefined> {
  const { networking, watching } = api.settings;
  const serverTimeout = pick(
    options.serverTimeout,
    setting(watching, DEFAULTS.watching, "serverTimeout"),
  );
  const clientTimeout = pick(
    options.clientTimeout,
    setting(watching, DEFAULTS.watching, "clientTimeout"),
  );
  // Kopf: watching.connectTimeout, else networking.connectTimeout, else networking.requestTimeout.
  const connectTimeout = pick(
    options.connectTimeout,
    setting(watching, DEFAULTS.watching, "connectTimeout") ??
      setting(networking, DEFAULTS.networking, "connectTimeout") ??
      setting(networking, DEFAULTS.networking, "requestTimeout"),
  );
  const inactivityTimeout = pick(
    options.inactivityTimeout,
    setting(watching, DEFAULTS.watching, "inactivityTimeout"),
  );
  const outer = options.signal;
  if (outer?.aborted) return;

  const stopper = new AbortController();
  const signal = outer ? AbortSignal.any([outer, stopper.signal]) : stopper.signal;
  const url = resource.getUrl({
    namespace,
    params: {
      watch: "true",
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: (options.bookmarks ?? true) ? "true" : undefined,
      sendInitialEvents: options.sendInitialEvents ? "true" : undefined,
      resourceVersionMatch: options.sendInitialEvents ? "NotOlderThan" : undefined,
      timeoutSeconds: serverTimeout ?? undefined,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
    },
  });

  let answer: TransportStream;
  try {
    answer = await api.stream(url, { signal, connectTimeout, clientTimeout });
  } catch (error) {
    if (outer?.aborted) return;
    throw error;
  }

  // The inactivity timeout counts only while waiting for the server, not while the consumer
  // works on an event: a slow consumer is not a silent stream. No timer per chunk: a read
  // notes when it started waiting; one timer, armed when needed, checks how long the current
  // wait has lasted and re-arms for the rest (or stays off while the consumer works).
  const limit = inactivityTimeout !== null && inactivityTimeout > 0 ? inactivityTimeout * 1000 : 0;
  let waitingSince: number | undefined;
  let timer: CancelTimer | undefined;
  const check = () => {
    timer = undefined;
    if (waitingSince === undefined) return;
    const silent = realClock.now() - waitingSince;
    if (silent < limit) {
      timer = realClock.timer(limit - silent, check);
      return;
    }
    api.logger.debug(`The watch-stream for ${resource} is silent; reconnecting.`);
    stopper.abort(new DOMException("The watch-stream is inactive", "TimeoutError"));
  };
  let broken = false; // reading failed: the connection broke (or a timeout or abort closed it)
  // The lean stream's chunks straight from its reads (no iterator result per chunk).
  const read = answer.read;
  const source = read ? undefined : answer.chunks[Symbol.asyncIterator]();
  const onStop = () => answer.cancel();
  signal.addEventListener("abort", onStop, { once: true });
  // The chunks are read here and their lines split here: no iterator or generator between the
  // connection and this loop (one step per chunk; a chunk may be a view of the connection's
  // buffer, decoded before the next is read).
  const lines = new JsonLineSplitter({
    maxLine: setting(watching, DEFAULTS.watching, "maxLineSize"),
    setting: "watching.maxLineSize",
  });
  const batch: RawWatchEvent[] = [];
  try {
    for (;;) {
      if (limit) {
        waitingSince = realClock.now();
        timer ??= realClock.timer(limit, check);
      }
      let chunk: Uint8Array | null;
      try {
        if (read) chunk = await read();
        else {
          const next = await source!.next();
          chunk = next.done ? null : next.value;
        }
      } catch (error) {
        broken = true;
        throw error;
      } finally {
        waitingSince = undefined;
      }
      let failure: unknown;
      if (chunk === null) lines.end(batch);
      else {
        try {
          lines.feed(chunk, batch); // a line that is not JSON: after the lines before it
        } catch (error) {
          failure = error;
        }
      }
      // Each line must be an event (an object with a type): a framing byte taken for a line
      // (e.g. a broken chunk size that lets "0" through) must not become an event.
      for (let i = 0; i < batch.length; i++) {
        const event = batch[i] as Partial<RawWatchEvent> | null;
        if (typeof event !== "object" || event === null || typeof event.type !== "string") {
          batch.length = i;
          failure = new WatchingError(
            `The watch-stream for ${resource} sent a line that is not a watch event: ${
              JSON.stringify(event)?.slice(0, 80)
            } — the server or a proxy between is broken`,
          );
          break;
        }
      }
      if (batch.length) yield batch;
      batch.length = 0;
      if (failure !== undefined) throw failure;
      if (chunk === null) break;
    }
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ResponseTooLargeError) throw error.of("GET", url);
    if (error instanceof SyntaxError) {
      throw new WatchingError(`The watch-stream for ${resource} sent a line that is not JSON`, {
        cause: error,
      });
    }
    if (broken || error instanceof ApiConnectionError) return; // a broken connection, timeouts
    if (error instanceof TypeError || error instanceof DOMException) return;
    throw error;
  } finally {
    timer?.();
    signal.removeEventListener("abort", onStop);
    answer.cancel();
  }
}

/** What {@link infiniteWatch} yields (see the module doc). */
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

/** Options of {@link infiniteWatch}. Timeouts default to `api.settings.watching`. */
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
}

/**
 * Lists and watches a resource forever, healing disconnects and expired
 * resourceVersions (see the module doc for the events and the guarantees).
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace A namespace, or null/undefined for cluster-wide.
 * @param options Selectors, timeouts, backoff, signal.
 * @returns The events, until the signal aborts.
 * @throws {ApiError} When listing or opening a stream fails for good.
 * @throws {WatchingError} For an in-stream error other than 410.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../../../mod.ts";
 * import { Resource } from "../../../mod.ts";
 * import { ApiClient } from "./api.ts";
 * import { infiniteWatch } from "./watching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", namespaced: false });
 * const stop = new AbortController();
 * const seen = new Set<string>();
 * for await (const event of infiniteWatch(api, namespaces, null, { signal: stop.signal })) {
 *   if (event.type === null) seen.add(event.object.metadata?.name ?? "");
 *   if (event.type === "LISTED") stop.abort(); // the initial state is complete
 * }
 * assert.ok(seen.has("default"));
 * ```
 */
export async function* infiniteWatch(
  api: ApiClient,
  resource: Resource,
  namespace?: string | null,
  options: InfiniteWatchOptions = {},
): AsyncGenerator<WatchEvent, void, undefined> {
  const signal = options.signal;
  const where = namespace ? `in ${namespace}` : "cluster-wide";
  const watching = api.settings.watching;
  const limit = pick(options.limit, setting(watching, DEFAULTS.watching, "listPageSize"));
  const strategy = pick(
    options.streamingLists,
    setting(watching, DEFAULTS.watching, "streamingLists"),
  );
  let streaming = strategy !== "never";
  // The objects yielded and not deleted since (their stubs). During a (re)listing, `unconfirmed`
  // holds those of before that the listing has not shown yet: what is left of it at the end is gone.
  let known = new Map<string, RawBody>();
  const unconfirmed = new Map<string, RawBody>();
  const keyOf = (body: RawBody) => `${body.metadata?.namespace ?? ""}/${body.metadata?.name ?? ""}`;
  const beginListing = () => {
    for (const [key, object] of known) unconfirmed.set(key, object);
    known = new Map();
  };
  function* endListing(resourceVersion: string): Generator<WatchEvent> {
    for (const [key, object] of unconfirmed) {
      if (!known.has(key)) yield { type: "DELETED", object };
    }
    unconfirmed.clear();
    yield { type: "LISTED", resourceVersion, count: known.size };
  }
  const fallBack = (why: string) => {
    streaming = false;
    api.logger.debug(
      `The API server does not stream the state of ${resource} ${where} (${why}); ` +
        `listing it instead (LIST, then WATCH).`,
    );
  };
  let resourceVersion: string | undefined;
  let relist = true;
  api.logger.debug(`Starting the watch-stream for ${resource} ${where}.`);
  try {
    while (!signal?.aborted) {
      if (relist && !streaming) {
        try {
          beginListing();
          let rv = "";
          for await (
            const page of listPages(api, resource, namespace, {
              labelSelector: options.labelSelector,
              fieldSelector: options.fieldSelector,
              limit,
              signal,
            })
          ) {
            if (page.restarted) beginListing();
            rv = page.resourceVersion;
            for (const object of page.items) {
              known.set(keyOf(object), stubBody(object));
              yield { type: null, object };
            }
          }
          resourceVersion = rv || undefined;
          relist = false;
          yield* endListing(rv);
        } catch (error) {
          if (signal?.aborted) return;
          throw error;
        }
      }

      // A streamed listing: the state comes first in this very stream, up to its end bookmark.
      let initial = relist && streaming;
      if (initial) beginListing();
      try {
        const batches = watchBatches(api, resource, namespace, {
          resourceVersion: initial ? undefined : resourceVersion,
          sendInitialEvents: initial,
          bookmarks: initial ? true : options.bookmarks,
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          serverTimeout: options.serverTimeout,
          clientTimeout: options.clientTimeout,
          connectTimeout: options.connectTimeout,
          inactivityTimeout: options.inactivityTimeout,
          signal,
        });
        // The events of a chunk come together (one generator step per chunk, not per event).
        stream: for await (const batch of batches) {
          for (let i = 0; i < batch.length; i++) {
            const { type, object } = batch[i]!;
            if (type === "ERROR") {
              const what = `${object.code ?? "?"} ${object.reason ?? ""}: ${
                object.message ?? JSON.stringify(object)
              }`;
              if (initial && strategy === "auto") {
                fallBack(`an error in the stream: ${what}`);
                break stream;
              }
              if (object.code === 410) {
                relist = true;
                break stream;
              }
              throw new WatchingError(
                `Error in the watch-stream for ${resource} ${where}: ${what}`,
              );
            }
            const rv = object.metadata?.resourceVersion;
            if (type === "BOOKMARK") {
              if (initial) {
                const annotations = object.metadata?.annotations as
                  | Record<string, string>
                  | undefined;
                if (annotations?.[INITIAL_EVENTS_END] !== "true") {
                  if (strategy === "auto") {
                    fallBack("a bookmark before the end of the state");
                    break stream;
                  }
                  continue;
                }
                initial = false;
                relist = false;
                if (rv) resourceVersion = rv;
                yield* endListing(rv ?? "");
                continue;
              }
              if (rv) resourceVersion = rv;
              continue;
            }
            if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") {
              api.logger.warn(
                `Ignoring an unsupported event type ${JSON.stringify(type)} for ${resource}.`,
              );
              continue;
            }
            if (rv) resourceVersion = rv;
            const key = keyOf(object);
            if (type === "DELETED") {
              known.delete(key);
              unconfirmed.delete(key); // reported now: not again at the end of the listing
            } else known.set(key, stubBody(object));
            // The state's objects are a listing's (type null), as when listed.
            yield { type: initial && type === "ADDED" ? null : type, object };
          }
        }
        if (initial && !signal?.aborted && strategy === "auto" && streaming) {
          fallBack("the stream ended before the end of the state");
        }
      } catch (error) {
        if (signal?.aborted) return;
        if (
          initial && strategy === "auto" && error instanceof ApiError && REFUSALS.has(error.code)
        ) {
          fallBack(`${error.code} ${error.reason}`);
        } else if (error instanceof GoneError) {
          relist = true;
        } else throw error;
      }
      if (relist && !initial) {
        api.logger.debug(`Restarting the watch-stream for ${resource} ${where} (410 Gone).`);
      }
      // Falling back lists at once; anything else waits a little before the next request.
      if (initial && !streaming) continue;
      await sleep(
        pick(
          options.reconnectBackoff,
          setting(api.settings.watching, DEFAULTS.watching, "reconnectBackoff"),
        ),
        signal,
      );
    }
  } finally {
    api.logger.debug(`Stopping the watch-stream for ${resource} ${where}.`);
  }
}

/** The annotation of the bookmark that ends the state of a streamed listing (KEP-3157). */
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** Answers of servers that do not stream listings: 400 (an unknown parameter), 422 (refused). */
const REFUSALS = new Set([400, 422]);

function pick<T>(given: T | undefined, fallback: T): T {
  return given !== undefined ? given : fallback;
}
