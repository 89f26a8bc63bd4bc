/**
 * Watch streams: newline-delimited `{"type","object"}` over a chunked 200,
 * as Kubernetes serves them. A watch starts from a resourceVersion ("" and
 * "0" replay the current state as ADDED events; N replays history after N, or
 * answers an in-stream ERROR 410 Expired when history no longer reaches back),
 * then follows live changes. Selectors apply to transitions as on a real
 * server: an object that starts matching arrives as ADDED, one that stops
 * matching as DELETED. Bookmarks go out only when asked for.
 *
 * Each change is encoded once and the bytes are shared by every watcher that
 * sees it in the same form, which keeps fan-out to many watchers cheap.
 *
 * @module
 */

import { type LabelSelector, matchesLabels } from "../cogs/structs/label_selector.ts";
import { type FieldRequirement, matchesFields } from "../cogs/structs/field_selector.ts";
import { ApiError, statusObject } from "./errors.ts";
import type { Faults } from "./faults.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "./resources.ts";
import type { Change, KObject, Store } from "./store.ts";
import { renderTable } from "./table.ts";

const encoder = new TextEncoder();
let lastChange: Change | undefined;
let lastEncoded = new Map<string, Uint8Array>();

/** What a watch request asked for. */
export interface WatchRequest {
  /** The resource watched. */
  def: ResourceDef;
  /** A namespace, or undefined for all. */
  namespace: string | undefined;
  /** Start after this resourceVersion (replaying history; 410 if compacted); unset or `"0"`: list first, as ADDED. */
  resourceVersion: string | undefined;
  /** The label selector (`?labelSelector=`); empty for all. */
  labels: LabelSelector;
  /** The field selector (`?fieldSelector=`); empty for all. */
  fields: FieldRequirement[];
  /** Reads a field of an object for the field selector. */
  fieldOf: (obj: KObject, field: string) => string | undefined;
  /** Whether BOOKMARK events were asked for (`?allowWatchBookmarks=true`). */
  bookmarks: boolean;
  /** Seconds until the server ends the stream (`?timeoutSeconds=`); unset: 30–60 minutes, random. */
  timeoutSeconds: number | undefined;
  /** Render events as one-row Tables (`kubectl get -w`). */
  table: boolean;
  /** Converts an object stored at another version (a conversion webhook); unset: the apiVersion is rewritten. */
  convert?: (obj: KObject) => Promise<KObject>;
}

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

  /** Stops the bookmark timer and closes every stream. */
  stop(): void {
    clearInterval(this.#bookmarkTimer);
    this.closeAll();
  }
}

class WatchStream {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #req: WatchRequest;
  #store: Store;
  #faults: Faults;
  #unwatch: (() => void) | undefined;
  #timers: Array<ReturnType<typeof setTimeout>> = [];
  #closed = false;
  #headersSent = false;
  #onClose: () => void;
  #stalled: boolean;
  #converting: Promise<void> | undefined;

  constructor(store: Store, faults: Faults, req: WatchRequest, onClose: () => void) {
    this.#store = store;
    this.#faults = faults;
    this.#req = req;
    this.#onClose = onClose;
    this.#stalled = faults.settings.stallWatches === true;
    if (this.#stalled) faults.count("watchStalled");
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        this.#begin();
      },
      cancel: () => this.close(),
    }, { highWaterMark: 0 });
  }

  #begin(): void {
    const req = this.#req;
    const key = storageKey(req.def);
    const rv = req.resourceVersion;
    if (rv && rv !== "0") {
      const n = Number(rv);
      const changes = Number.isFinite(n) ? this.#store.changesSince(key, n) : undefined;
      if (!Number.isFinite(n)) {
        this.#sendError(400, "BadRequest", `invalid resource version: ${rv}`);
        return;
      }
      if (!changes) {
        this.#faults.noteExpired();
        this.#sendError(
          410,
          "Expired",
          `too old resource version: ${rv} (${this.#store.compactedResourceVersion})`,
        );
        return;
      }
      for (const c of changes) this.deliver(c);
    } else {
      for (const obj of this.#store.list(key, req.def.namespaced ? req.namespace : undefined)) {
        if (this.#matches(obj)) this.#send("ADDED", obj, undefined);
      }
    }
    this.#unwatch = this.#store.watch({ key, deliver: (c) => this.deliver(c) });
    const timeout = req.timeoutSeconds ?? 1800 * (1 + Math.random());
    this.#timer(timeout, () => this.close());
    const every = this.#faults.settings.closeWatchesEvery;
    if (every && every > 0) {
      this.#timer(every, () => {
        this.#faults.count("watchClosed");
        this.close();
      });
    }
    const randomly = this.#faults.settings.closeWatchesRandomly;
    if (randomly && randomly > 0) {
      this.#timer(this.#faults.random() * randomly, () => {
        this.#faults.count("watchClosed");
        this.close();
      });
    }
  }

  #timer(seconds: number, fn: () => void): void {
    const t = setTimeout(fn, seconds * 1000);
    Deno.unrefTimer(t);
    this.#timers.push(t);
  }

  #matches(obj: KObject): boolean {
    const req = this.#req;
    if (
      req.namespace !== undefined && req.def.namespaced && obj.metadata.namespace !== req.namespace
    ) return false;
    if (req.labels.length && !matchesLabels(req.labels, obj.metadata.labels)) return false;
    if (req.fields.length && !matchesFields(req.fields, (f) => req.fieldOf(obj, f))) return false;
    return true;
  }

  /** Delivers one committed change (or skips it if it does not concern this watch). */
  deliver(change: Change): void {
    if (this.#closed) return;
    if (this.#stalled || this.#faults.settings.stallWatches) {
      if (!this.#stalled) {
        this.#stalled = true;
        this.#faults.count("watchStalled");
      }
      return;
    }
    const now = change.type !== "DELETED" && this.#matches(change.object);
    const before = change.previous !== undefined && this.#matches(change.previous);
    if (change.type === "ADDED") {
      if (now) this.#send("ADDED", change.object, change);
    } else if (change.type === "DELETED") {
      if (this.#matches(change.object)) this.#send("DELETED", change.object, change);
    } else if (now && before) this.#send("MODIFIED", change.object, change);
    else if (now) this.#send("ADDED", change.object, change);
    else if (before) this.#send("DELETED", change.object, change);
  }

  /** Sends a bookmark with the current resourceVersion, if this watch asked for them. */
  bookmark(): void {
    if (this.#closed || !this.#req.bookmarks || this.#stalled) return;
    const def = this.#req.def;
    const obj = {
      kind: def.kind,
      apiVersion: apiVersionOf(def),
      metadata: { resourceVersion: String(this.#store.resourceVersion) },
    };
    this.#write(encoder.encode(`{"type":"BOOKMARK","object":${JSON.stringify(obj)}}\n`));
  }

  #send(type: string, obj: KObject, change: Change | undefined): void {
    const convert = this.#req.convert;
    const wanted = apiVersionOf(this.#req.def);
    if (convert && (this.#converting || obj.apiVersion !== wanted)) {
      // Converted through the webhook; events stay in order behind any conversion under way.
      const converted = obj.apiVersion !== wanted ? convert(obj) : Promise.resolve(obj);
      converted.catch(() => {});
      const next: Promise<void> = (this.#converting ?? Promise.resolve()).then(async () => {
        let out: KObject;
        try {
          out = await converted;
        } catch (e) {
          if (this.#closed) return;
          if (e instanceof ApiError) this.#sendError(e.code, e.reason, e.message);
          else this.#sendError(500, "InternalError", String((e as Error)?.message ?? e));
          return;
        }
        if (!this.#closed) this.#sendNow(type, out, change);
      }).finally(() => {
        if (this.#converting === next) this.#converting = undefined;
      });
      this.#converting = next;
      return;
    }
    this.#sendNow(type, obj, change);
  }

  #sendNow(type: string, obj: KObject, change: Change | undefined): void {
    const req = this.#req;
    const apiVersion = apiVersionOf(req.def);
    if (req.table) {
      const table = renderTable(
        req.def,
        [withVersion(obj, apiVersion)],
        obj.metadata.resourceVersion ?? "",
        {
          noHeaders: this.#headersSent,
        },
      );
      this.#headersSent = true;
      this.#write(encoder.encode(`{"type":"${type}","object":${JSON.stringify(table)}}\n`));
      return;
    }
    if (!change) {
      this.#write(
        encoder.encode(
          `{"type":"${type}","object":${JSON.stringify(withVersion(obj, apiVersion))}}\n`,
        ),
      );
      return;
    }
    // Encode once per change, type and version; every watcher of the same shape shares the bytes.
    // A one-slot cache: a commit delivers to all watchers synchronously, so
    // keeping only the latest change's bytes costs no memory in history.
    if (lastChange !== change) {
      lastChange = change;
      lastEncoded = new Map();
    }
    const cache = lastEncoded;
    const cacheKey = `${type} ${apiVersion}`;
    let bytes = cache.get(cacheKey);
    if (!bytes) {
      bytes = encoder.encode(
        `{"type":"${type}","object":${JSON.stringify(withVersion(obj, apiVersion))}}\n`,
      );
      cache.set(cacheKey, bytes);
    }
    this.#write(bytes);
  }

  #sendError(code: number, reason: string, message: string): void {
    const status = statusObject(code, reason, message);
    this.#write(encoder.encode(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`));
    this.close();
  }

  #write(bytes: Uint8Array): void {
    if (this.#closed) return;
    try {
      this.#controller.enqueue(bytes);
    } catch {
      this.close();
    }
  }

  /** Ends the stream (server stop, timeout, fault, client gone). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unwatch?.();
    for (const t of this.#timers) clearTimeout(t);
    try {
      this.#controller.close();
    } catch {
      // Already closed or cancelled by the client.
    }
    this.#onClose();
  }
}

function withVersion(obj: KObject, apiVersion: string): KObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}
