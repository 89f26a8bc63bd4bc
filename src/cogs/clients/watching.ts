/**
 * Watching: one watch request as a stream of raw events
 * ({@link watchObjects}), and the continuous, self-healing watch that the
 * operator runs per resource and namespace ({@link infiniteWatch}).
 *
 * `infiniteWatch` is a state machine (as kube-rs' watcher): its states and
 * transitions are values in ./watcher.ts (`WatcherState`, `stepWatcher`,
 * tested without sockets), its loop in ./watch_loop.ts (`runWatcher`); this
 * module gives the loop its HTTP (a LIST page, a watch stream, a sleep). The
 * phases, by the state's `phase`:
 *
 * 1. **List** the objects (`streaming` or `listing`); yield each as
 *    `{ type: null, object }` (Kopf's raw events of the initial listing);
 *    after a *re*list, also yield `{ type: "DELETED", object }` for every
 *    object seen before that is gone now (its deletion happened while no
 *    stream was open: the `Inventory` of ./watch_events.ts); then yield the
 *    marker `{ type: "LISTED", resourceVersion, count }` — "the state is
 *    complete now" (Kopf's `Bookmark.LISTED`; indices become ready on it).
 *    The state is read in one of two ways (`settings.watching.streamingLists`):
 *    - `streaming`: over the watch itself (`sendInitialEvents=true`, KEP-3157):
 *      the objects come as ADDED events, then a bookmark annotated
 *      `k8s.io/initial-events-end` ends the state, and the same stream goes on
 *      with the changes (`watching` without a second request). Changes that
 *      come before the end bookmark are yielded as they are (MODIFIED, DELETED).
 *    - `listing`: a paginated LIST (`settings.watching.listPageSize` per page,
 *      each page yielded as it comes; an expired `continue` token starts it
 *      over at once), then a watch from the list's (first page's)
 *      resourceVersion.
 *    With `"auto"` (the default), a watcher streams; when the server refuses
 *    (400 or 422: no WatchList feature, an older Kubernetes), ends the stream
 *    or sends anything but the state before the end bookmark, the watcher
 *    lists instead, at once and for the rest of its life — as client-go's
 *    reflector falls back when its watch-list request fails. With
 *    `"always"`, a plain bookmark within the state is ignored, and a stream
 *    that ends before the end bookmark is read again after the backoff.
 * 2. **Watch** (`watching`) from the last resourceVersion; yield ADDED,
 *    MODIFIED and DELETED events as they come. Every event and bookmark with
 *    a resourceVersion advances it; bookmarks are *not* yielded. Unknown
 *    event types are logged and ignored.
 * 3. When a stream ends — the server closed it, `serverTimeout` or
 *    `clientTimeout` passed, the connection broke, or nothing (not even a
 *    bookmark) arrived for `inactivityTimeout` seconds — sleep
 *    `reconnectBackoff` (`backoff`) and **resume** watching from the last
 *    seen resourceVersion.
 * 4. When the resourceVersion is too old — an in-stream `ERROR` with code 410
 *    or an HTTP 410 answer — sleep `reconnectBackoff` (`relisting`) and go
 *    back to 1 (**relist**).
 *
 * Guarantees: a consumer that applies the events to a map (null, ADDED,
 * MODIFIED: set; DELETED: remove) holds exactly the server's state after each
 * LISTED marker, and follows it afterwards. Events may repeat (a relist
 * repeats every object), never go missing.
 *
 * Recovery: connection errors, 429 and 5xx when opening a stream or listing
 * are retried by the API client (`networking.errorBackoffs`); the watcher
 * itself retries only what its states name: a stream's end (`backoff`), 410
 * (`relisting`), an expired `continue` token (`listing` anew) and a refusal
 * to stream (`listing` for good). When the client's retries run out, or on
 * any other error answer, or an in-stream ERROR other than 410
 * ({@link WatchingError}), the watcher is `failed`: the generator throws
 * after the events before it, and the caller decides.
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
import { type CancelTimer, realClock } from "../aio/clock.ts";
import type { ApiClient } from "./api.ts";
import type { TransportStream } from "./transport.ts";
import { ApiConnectionError, ResponseTooLargeError } from "./connection_errors.ts";
import { listPage } from "./fetching.ts";
import { JsonLineSplitter } from "./jsonlines.ts";
import { skippingLines } from "./watch_skipping.ts";
import { type RawWatchEvent, type WatchEvent, WatchingError } from "./watch_events.ts";
import type { WatcherConfig } from "./watcher.ts";
import { runWatcherBatches } from "./watch_loop.ts";
import { DEFAULTS, setting } from "./_settings.ts";
import type { InfiniteWatchOptions, WatchOptions } from "./watch_options.ts";

export type { InfiniteWatchOptions, WatchOptions } from "./watch_options.ts";
export {
  type RawWatchEvent,
  type RawWatchType,
  type WatchEvent,
  WatchingError,
} from "./watch_events.ts";

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
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
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
    prefilter: options.skip && skippingLines(options.skip),
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
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
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
  for await (const events of infiniteWatchBatches(api, resource, namespace, options)) {
    for (let i = 0; i < events.length; i++) yield events[i]!;
  }
}

/**
 * {@link infiniteWatch}'s events in the batches the watcher's steps make them (a page, a chunk
 * of the stream; never empty): one generator step per batch, which the operator's watch loop
 * takes whole (`core/reactor/orchestration.ts`) — in a burst, a chunk holds many events, and
 * a generator step per event was a handful of promises each.
 *
 * @param api The API client.
 * @param resource The resource.
 * @param namespace A namespace, or null/undefined for cluster-wide.
 * @param options Selectors, timeouts, backoff, signal.
 * @returns The batches of events, until the signal aborts (each valid until the next is asked for).
 * @throws {ApiError} When listing or opening a stream fails for good.
 * @throws {WatchingError} For an in-stream error other than 410.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Resource } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { infiniteWatchBatches } from "./watching.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const namespaces = new Resource({ group: "", version: "v1", plural: "namespaces", namespaced: false });
 * const stop = new AbortController();
 * const seen = new Set<string>();
 * for await (const events of infiniteWatchBatches(api, namespaces, null, { signal: stop.signal })) {
 *   assert.ok(events.length > 0);
 *   for (const event of events) {
 *     if (event.type === null) seen.add(event.object.metadata?.name ?? "");
 *     if (event.type === "LISTED") stop.abort(); // the initial state is complete
 *   }
 * }
 * assert.ok(seen.has("default"));
 * ```
 */
export function infiniteWatchBatches(
  api: ApiClient,
  resource: Resource,
  namespace?: string | null,
  options: InfiniteWatchOptions = {},
): AsyncGenerator<readonly WatchEvent[], void, undefined> {
  const watching = api.settings.watching;
  const config: WatcherConfig = {
    streamingLists: pick(
      options.streamingLists,
      setting(watching, DEFAULTS.watching, "streamingLists"),
    ),
    limit: pick(options.limit, setting(watching, DEFAULTS.watching, "listPageSize")),
    bookmarks: options.bookmarks,
    // Read at each wait, as the setting may change while the operator runs.
    get reconnectBackoff() {
      return pick(
        options.reconnectBackoff,
        setting(api.settings.watching, DEFAULTS.watching, "reconnectBackoff"),
      );
    },
    resource: String(resource),
    where: namespace ? `in ${namespace}` : "cluster-wide",
  };
  const { labelSelector, fieldSelector, signal } = options;
  // The loop's generator is the watcher's: no second generator to step through per event.
  return runWatcherBatches(config, {
    list: async (command) => {
      const page = await listPage(api, resource, namespace, {
        labelSelector,
        fieldSelector,
        limit: command.limit,
        continue: command.continue,
        signal,
      });
      // A listing's objects to skip are neither yielded nor kept (as their streamed events).
      const skip = options.skip;
      if (!skip) return page;
      const items = page.items.filter((o) => !(o.metadata?.uid && skip(o.metadata.uid)));
      return { ...page, items };
    },
    watch: (command, cut) =>
      watchBatches(api, resource, namespace, {
        resourceVersion: command.resourceVersion,
        sendInitialEvents: command.sendInitialEvents,
        bookmarks: command.bookmarks,
        labelSelector,
        fieldSelector,
        serverTimeout: options.serverTimeout,
        clientTimeout: options.clientTimeout,
        connectTimeout: options.connectTimeout,
        inactivityTimeout: options.inactivityTimeout,
        skip: options.skip,
        signal: cut && signal ? AbortSignal.any([signal, cut]) : cut ?? signal,
      }),
    onRelist: options.onRelist,
    // Real time even in an operator on a fake clock: the backoffs wait for a server, not for logic.
    sleep: (seconds) => realClock.sleep(seconds, signal),
    log: (level, message) => api.logger[level](message),
  }, signal);
}

function pick<T>(given: T | undefined, fallback: T): T {
  return given !== undefined ? given : fallback;
}
