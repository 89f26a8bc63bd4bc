/**
 * Watch streams: newline-delimited `{"type","object"}` over a chunked 200,
 * as Kubernetes serves them. A watch starts from a resourceVersion ("" and
 * "0" replay the current state as ADDED events; N replays history after N, or
 * answers an in-stream ERROR 410 Expired when history no longer reaches back),
 * then follows live changes. Selectors apply to transitions as on a real
 * server: an object that starts matching arrives as ADDED, one that stops
 * matching as DELETED. Bookmarks go out only when asked for.
 *
 * Streamed lists (KEP-3157, `sendInitialEvents=true` with
 * `resourceVersionMatch=NotOlderThan`): the current state as ADDED events,
 * then — if bookmarks were allowed — one BOOKMARK annotated
 * `k8s.io/initial-events-end: "true"` with the state's resourceVersion, then
 * the changes after it. Never 410 (the state is current); a resourceVersion
 * the store does not reach within 3 s is an in-stream 504, as kube-apiserver's
 * watch cache answers. `sendInitialEvents=false` with "" or "0" starts at the
 * current resourceVersion with no initial state.
 *
 * The initial state is a snapshot (an array of references) sent as the client
 * reads, a batch per read, so 100,000 objects are never encoded all at once;
 * changes that come meanwhile wait behind it in order.
 *
 * Each change is encoded once and the bytes are shared by every watcher that
 * sees it in the same form, which keeps fan-out to many watchers cheap.
 *
 * @module
 */

import type { Faults } from "../shared/faults.ts";
import { storageKey } from "../shared/resources.ts";
import type { Store } from "./store.ts";
import { type WatchRequest, WatchStream } from "./watch_stream.ts";

export type { WatchRequest } from "./watch_stream.ts";

/** Live watch streams, their bookmarks and their faults. */
export class WatchHub {
  #store: Store;
  #faults: Faults;
  #streams = new Set<WatchStream>();
  #bookmarkTimer: ReturnType<typeof setInterval> | undefined;

  /**
   * Creates the hub and starts its bookmark timer (none when `bookmarkSeconds` is 0).
   *
   * @param store The store.
   * @param faults The fault switches (stalls, closes).
   * @param bookmarkSeconds How often to send bookmarks to watches that asked for them.
   */
  constructor(store: Store, faults: Faults, bookmarkSeconds: number) {
    this.#store = store;
    this.#faults = faults;
    if (bookmarkSeconds > 0) {
      const timer = setInterval(() => {
        for (const s of this.#streams) s.bookmark();
      }, bookmarkSeconds * 1000);
      Deno.unrefTimer(timer);
      this.#bookmarkTimer = timer;
    }
  }

  /** How many watch streams are open. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * Opens a watch stream.
   *
   * @param req What to watch.
   * @returns The HTTP response with the streaming body.
   */
  open(req: WatchRequest): Response {
    let stream: WatchStream | undefined = undefined;
    let closedEarly = false;
    stream = new WatchStream(this.#store, this.#faults, req, () => {
      if (stream) this.#streams.delete(stream);
      else closedEarly = true;
    });
    if (!closedEarly) this.#streams.add(stream);
    const headers = {
      "content-type": req.table
        ? "application/json;as=Table;v=v1;g=meta.k8s.io"
        : "application/json",
      "transfer-encoding": "chunked",
      "cache-control": "no-cache, private",
    };
    return new Response(stream.body, { status: 200, headers });
  }

  /**
   * Closes every open watch stream (stop, or the "close watches" fault).
   *
   * @param counted Whether to count it as an injected fault.
   */
  closeAll(counted = false): void {
    for (const s of [...this.#streams]) {
      if (counted) this.#faults.count("watchClosed");
      s.close();
    }
  }

  /**
   * Closes the streams of one resource (all its versions), as kube-apiserver ends the watches
   * of a custom resource whose CRD's spec changed (its storage is rebuilt: versions, schemas,
   * conversion); clients watch again and get the new behaviour.
   *
   * @param key The resource's storage key (`plural.group`).
   */
  closeResource(key: string): void {
    for (const s of [...this.#streams]) if (storageKey(s.def) === key) s.close();
  }

  /** Stops the bookmark timer and closes every stream. */
  stop(): void {
    clearInterval(this.#bookmarkTimer);
    this.closeAll();
  }
}
