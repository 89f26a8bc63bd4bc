/**
 * One watch stream (`watch.ts` has the hub that opens them and the rules):
 * the initial state or history replayed, then live changes filtered by the
 * request's selectors, as JSON, Tables or partial metadata, with bookmarks,
 * timeouts, conversion and the injected faults.
 *
 * @module
 */

import { type LabelSelector, matchesLabels } from "../../cogs/structs/label_selector.ts";
import { type FieldRequirement, matchesFields } from "../../cogs/structs/field_selector.ts";
import { ApiError, type StatusDetails, statusObject } from "../shared/errors.ts";
import { tooLargeResourceVersion, waitForResourceVersion } from "./list_options.ts";
import type { Faults } from "../shared/faults.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "../shared/resources.ts";
import type { Store } from "./store.ts";
import type { Change, KObject } from "../shared/types.ts";
import { renderTable } from "../wire/table.ts";
import { partialEventObject } from "../wire/partial_metadata.ts";

const encoder = new TextEncoder();
/** About how many bytes of initial events go out per read of the stream. */
const INITIAL_BATCH_BYTES = 256 * 1024;
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
  /** `?sendInitialEvents=` (validated by the caller): true streams the state first and marks its end. */
  sendInitialEvents?: boolean | undefined;
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
  /** Send only each object's metadata, as `PartialObjectMetadata` of this apiVersion (`meta.k8s.io/v1`). */
  partial?: string;
  /** Converts an object stored at another version (a conversion webhook); unset: the apiVersion is rewritten. */
  convert?: (obj: KObject) => Promise<KObject>;
}

/**
 * One watch stream: its initial state sent as the client reads, then the
 * changes that match its selectors, bookmarks and its faults, each change
 * encoded once per form and shared with the other streams.
 */
export class WatchStream {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #req: WatchRequest;

  /** The watched resource. */
  get def(): ResourceDef {
    return this.#req.def;
  }
  #store: Store;
  #faults: Faults;
  #unwatch: (() => void) | undefined;
  #timers: Array<ReturnType<typeof setTimeout>> = [];
  #closed = false;
  #headersSent = false;
  #onClose: () => void;
  #stalled: boolean;
  #converting: Promise<void> | undefined;
  /** The initial state still to send (objects and where we are), and whether to mark its end. */
  #initial: { items: KObject[]; next: number; rv: number; markEnd: boolean } | undefined;
  /** Changes committed while the initial state is being sent. */
  #backlog: Change[] = [];
  /** Changes held back by the `watchDelayMs` fault, in order. */
  #lagging: Change[] = [];

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
      pull: () => this.#pull(),
      cancel: () => this.close(),
    }, { highWaterMark: 0 });
  }

  #begin(): void {
    const req = this.#req;
    const key = storageKey(req.def);
    const rv = req.resourceVersion;
    if (req.sendInitialEvents === true) {
      const wanted = rv && rv !== "0" ? Number(rv) : 0;
      if (!/^\d*$/.test(rv ?? "")) {
        this.#sendError(400, "BadRequest", `invalid resource version: ${rv}`);
        return;
      }
      if (wanted > this.#store.resourceVersion) {
        // kube-apiserver's watch cache waits up to 3 s to reach it, then answers 504 in the stream.
        void waitForResourceVersion(this.#store, wanted).then((reached) => {
          if (this.#closed) return;
          if (reached) {
            this.#begin();
            // The reader's pending read found nothing to pull before: push the first batch now.
            void this.#pull();
            return;
          }
          const e = tooLargeResourceVersion(wanted, this.#store.resourceVersion);
          this.#sendError(e.code, e.reason, e.message, e.details);
        });
        return;
      }
      this.#startInitial(key, req.bookmarks);
    } else if (req.sendInitialEvents === false && (!rv || rv === "0")) {
      // No initial state: changes from now on.
    } else if (rv && rv !== "0") {
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
      this.#startInitial(key, false);
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

  /** Takes the current state as the initial events; they go out as the client reads. */
  #startInitial(key: string, markEnd: boolean): void {
    const req = this.#req;
    const items = [...this.#store.list(key, req.def.namespaced ? req.namespace : undefined)];
    this.#initial = { items, next: 0, rv: this.#store.resourceVersion, markEnd };
  }

  /** Sends the next batch of the initial state (the stream asks when its reader wants more). */
  #pull(): Promise<void> | void {
    const initial = this.#initial;
    if (!initial || this.#closed) return;
    const req = this.#req;
    const apiVersion = apiVersionOf(req.def);
    const plain = !req.table && !req.convert && !req.partial;
    const parts: string[] = [];
    let size = 0;
    while (initial.next < initial.items.length && size < INITIAL_BATCH_BYTES) {
      const obj = initial.items[initial.next++]!;
      if (!this.#matches(obj)) continue;
      if (plain) {
        const line = `{"type":"ADDED","object":${JSON.stringify(withVersion(obj, apiVersion))}}\n`;
        parts.push(line);
        size += line.length;
      } else {
        this.#send("ADDED", obj, undefined);
        size += 1024;
      }
    }
    if (parts.length) this.#write(encoder.encode(parts.join("")));
    if (initial.next < initial.items.length) return this.#converting;
    this.#initial = undefined;
    if (initial.markEnd) {
      const def = req.def;
      const bookmark = {
        kind: def.kind,
        apiVersion,
        metadata: {
          resourceVersion: String(initial.rv),
          annotations: { "k8s.io/initial-events-end": "true" },
        },
      };
      const line = `{"type":"BOOKMARK","object":${JSON.stringify(this.#shaped(bookmark))}}\n`;
      if (this.#converting) {
        // Behind the converted initial events.
        const next: Promise<void> = this.#converting.then(() => this.#write(encoder.encode(line)))
          .finally(() => {
            if (this.#converting === next) this.#converting = undefined;
          });
        this.#converting = next;
      } else this.#write(encoder.encode(line));
    }
    const backlog = this.#backlog;
    this.#backlog = [];
    for (const c of backlog) this.deliver(c);
    return this.#converting;
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
    if (this.#initial) {
      this.#backlog.push(change);
      return;
    }
    if (this.#stalled || this.#faults.settings.stallWatches) {
      if (!this.#stalled) {
        this.#stalled = true;
        this.#faults.count("watchStalled");
      }
      return;
    }
    const delay = this.#faults.watchDelayFor(this.#req.def.plural);
    if (delay > 0 || this.#lagging.length) {
      // A lagging watch: each change goes out after the delay, behind those held back before it.
      this.#lagging.push(change);
      this.#faults.count("watchDelayed");
      this.#timer(delay / 1000, () => {
        const next = this.#lagging.shift();
        if (next) this.#deliverNow(next);
      });
      return;
    }
    this.#deliverNow(change);
  }

  #deliverNow(change: Change): void {
    if (this.#closed) return;
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
    if (
      this.#closed || !this.#req.bookmarks || this.#stalled || this.#initial || this.#lagging.length
    ) return;
    const def = this.#req.def;
    const obj = {
      kind: def.kind,
      apiVersion: apiVersionOf(def),
      metadata: { resourceVersion: String(this.#store.resourceVersion) },
    };
    this.#write(
      encoder.encode(`{"type":"BOOKMARK","object":${JSON.stringify(this.#shaped(obj))}}\n`),
    );
  }

  /** A bookmark's object as the watch sends objects: whole, or its metadata only. */
  #shaped(obj: KObject): KObject | Record<string, unknown> {
    return this.#req.partial ? partialEventObject(obj, this.#req.partial) : obj;
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
    if (req.partial) {
      const object = JSON.stringify(partialEventObject(obj, req.partial));
      this.#write(encoder.encode(`{"type":"${type}","object":${object}}\n`));
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
      // The store's own encoding of the commit, when the object goes out as stored.
      const json = (obj.apiVersion === apiVersion ? this.#store.encodingOf(obj) : undefined) ??
        JSON.stringify(withVersion(obj, apiVersion));
      bytes = eventLine(type, json);
      cache.set(cacheKey, bytes);
    }
    this.#write(bytes);
  }

  #sendError(code: number, reason: string, message: string, details?: StatusDetails): void {
    const status = statusObject(code, reason, message, details);
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

/**
 * A watch event's line, `{"type":…,"object":…}` and a newline, in UTF-8: an ASCII object's text
 * (the usual) encoded in place into bytes of its exact length, no line string made first.
 */
function eventLine(type: string, json: string): Uint8Array {
  const head = `{"type":"${type}","object":`;
  const bytes = new Uint8Array(head.length + json.length + 2);
  encoder.encodeInto(head, bytes);
  const { read, written } = encoder.encodeInto(json, bytes.subarray(head.length));
  if (read !== json.length || written !== json.length) return encoder.encode(`${head}${json}}\n`);
  bytes[bytes.length - 2] = 0x7d; // }
  bytes[bytes.length - 1] = 0x0a; // \n
  return bytes;
}

function withVersion(obj: KObject, apiVersion: string): KObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}
