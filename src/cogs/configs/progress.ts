/**
 * Progress storages: where the state of each handler (started, retried,
 * delayed, succeeded, failed) is kept between processing cycles, so that a
 * restarted operator — this one or a Python Kopf one — continues where the
 * previous one stopped. A cycle may span many watch events (retries,
 * delays), so the state must live outside the process: on the object itself.
 *
 * Records are per handler and independent, so several operators (with
 * different handler ids or prefixes) can share an object. They are purged
 * when the cycle completes. Formats are Kopf's, byte for byte:
 * - annotations `kopf.zalando.org/<handler id>` whose value is compact JSON of
 *   the record's non-null fields in the order `started, stopped, delayed,
 *   purpose, retries, success, failure, message, subrefs`, non-ASCII escaped;
 * - or `status.kopf.progress.<handler id>` holding the record as an object;
 * - the default ({@link SmartProgressStorage}) writes annotations and reads
 *   annotations first, then the status (where old Kopf versions wrote), and
 *   purges both.
 * Timestamps are Python's `isoformat()` of an aware UTC time with
 * microseconds: `2026-11-22T04:19:01.345317+00:00` ({@link formatTimestamp}).
 *
 * Storages may be asynchronous (an external database): `fetch`, `store`,
 * `purge` and `flush` may return promises, so callers must expect them. The
 * built-in ones answer synchronously — {@link MultiProgressStorage} too, while
 * its storages do — and the reactor awaits only an answer that is a promise:
 * no promise and no tick per record on every processed event.
 *
 * @module
 */

import { isObject, type JsonObject } from "../structs/_json.ts";
import { annotationsOf, type Body, type BodyEssence } from "../structs/bodies.ts";
import {
  deepCopy,
  type FieldPath,
  type FieldSpec,
  hasPath,
  parseField,
  remove,
  resolve,
} from "../structs/dicts.ts";
import type { Patch } from "../structs/patches.ts";
import { dumpsCompact } from "./_pyjson.ts";
import { AnnotationKeys, removeEmptyStanzas, storeMarker } from "./conventions.ts";

/** A value or a promise of it: storages may be synchronous or not. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * The persisted state of one handler, as Kopf stores it. Timestamps are strings ({@link formatTimestamp}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ProgressRecord } from "@kopf/kopf";
 * const record: ProgressRecord = { started: "2026-11-22T04:19:01.345317+00:00", retries: 1, success: false };
 * assert.deepEqual(record.retries, 1);
 * ```
 */
export interface ProgressRecord {
  /** When the handler was first called. */
  started?: string | null;
  /** When the handler finally succeeded or failed. */
  stopped?: string | null;
  /** When the handler should be retried. */
  delayed?: string | null;
  /** The cause it runs for: `"create"`, `"update"`, `"delete"`, `"resume"`. */
  purpose?: string | null;
  /** How many times it has been called so far. */
  retries?: number | null;
  /** Finished successfully. */
  success?: boolean | null;
  /** Finished with a permanent failure. */
  failure?: boolean | null;
  /** The last error's message. */
  message?: string | null;
  /** Ids of its sub-handlers of all levels, sorted. */
  subrefs?: readonly string[] | null;
}

/**
 * The record's fields in the order Kopf writes them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PROGRESS_FIELDS } from "./progress.ts";
 * assert.deepEqual(PROGRESS_FIELDS.join(","), "started,stopped,delayed,purpose,retries,success,failure,message,subrefs");
 * ```
 */
export const PROGRESS_FIELDS = Object.freeze(
  [
    "started",
    "stopped",
    "delayed",
    "purpose",
    "retries",
    "success",
    "failure",
    "message",
    "subrefs",
  ] as const,
);

/**
 * Formats a time as Kopf stores it: Python's `datetime.isoformat(timespec="microseconds")`
 * of an aware UTC time.
 *
 * @param time A `Date`, or epoch milliseconds (a fraction gives microseconds).
 * @returns E.g. `"2026-11-22T04:19:01.345317+00:00"`.
 * @throws {TypeError} When the time is invalid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatTimestamp } from "./progress.ts";
 * assert.deepEqual(formatTimestamp(new Date("2026-11-22T04:19:01.345Z")), "2026-11-22T04:19:01.345000+00:00");
 * assert.deepEqual(formatTimestamp(Date.UTC(2026, 10, 22, 4, 19, 1, 345) + 0.317), "2026-11-22T04:19:01.345317+00:00");
 * ```
 */
export function formatTimestamp(time: Date | number): string {
  const ms = typeof time === "number" ? time : time.getTime();
  if (!Number.isFinite(ms)) throw new TypeError(`Not a valid time: ${String(time)}.`);
  const micros = Math.round(ms * 1000);
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = micros - seconds * 1_000_000;
  const iso = new Date(seconds * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  return `${iso.slice(0, 19)}.${String(fraction).padStart(6, "0")}+00:00`;
}

const TIMESTAMP_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parses a stored timestamp: Kopf's `…+00:00` form, the `Z` form, any other
 * offset, and timezone-less values of old Kopf versions (taken as UTC).
 *
 * @param text The timestamp.
 * @returns The time (to the millisecond; JavaScript has no finer `Date`).
 * @throws {TypeError} When the text is not an ISO 8601 timestamp.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTimestamp } from "./progress.ts";
 * assert.deepEqual(parseTimestamp("2026-11-22T04:19:01.345317+00:00").toISOString(), "2026-11-22T04:19:01.345Z");
 * assert.deepEqual(parseTimestamp("2020-02-14T16:58:25.396364").toISOString(), "2020-02-14T16:58:25.396Z");
 * assert.deepEqual(parseTimestamp("2026-11-22T06:19:01+02:00").toISOString(), "2026-11-22T04:19:01.000Z");
 * ```
 */
export function parseTimestamp(text: string): Date {
  const m = typeof text === "string" ? TIMESTAMP_RE.exec(text.trim()) : null;
  if (!m) throw new TypeError(`Not an ISO 8601 timestamp: ${JSON.stringify(text)}.`);
  const [, y, mo, d, h, mi, s, frac, tz] = m;
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0)];
  let time = Date.UTC(fields[0]!, fields[1]!, fields[2]!, fields[3]!, fields[4]!, fields[5]!, ms);
  const check = new Date(time);
  const actual = [
    check.getUTCFullYear(),
    check.getUTCMonth(),
    check.getUTCDate(),
    check.getUTCHours(),
    check.getUTCMinutes(),
    check.getUTCSeconds(),
  ];
  if (actual.some((value, i) => value !== fields[i])) {
    throw new TypeError(`Not a valid time: ${JSON.stringify(text)}.`);
  }
  if (tz && tz !== "Z" && tz !== "z") {
    const sign = tz.startsWith("-") ? -1 : 1;
    const digits = tz.slice(1).replace(":", "");
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || "0");
    time -= sign * offset * 60_000;
  }
  return new Date(time);
}

/**
 * A record in Kopf's field order; `withNulls` gives every known field
 * (absent → `null`), as Kopf's full records have them.
 */
function canonical(record: ProgressRecord, withNulls: boolean): JsonObject {
  const source = record as Record<string, unknown>;
  const out: JsonObject = {};
  for (const key of PROGRESS_FIELDS) {
    const value = source[key] ?? null;
    if (value !== null || withNulls) out[key] = deepCopy(value);
  }
  for (const [key, value] of Object.entries(source)) {
    if ((PROGRESS_FIELDS as readonly string[]).includes(key) || value === undefined) continue;
    if (value !== null || withNulls) out[key] = deepCopy(value);
  }
  return out;
}

/** Replaces `{name}` in a string field spec and parses it. */
function formatField(field: FieldSpec, name: string): string[] {
  return parseField(typeof field === "string" ? field.replaceAll("{name}", name) : field);
}

/** Sets `field` to `null` in the patch if it is on the object, or drops it from the patch if only there. */
function purgeField(body: Body, patch: Patch, field: FieldPath): void {
  if (hasPath(body, field)) patch.set(field, null);
  else if (patch.has(field)) patch.remove(field);
}

/**
 * The interface of all progress storages. Subclass it to keep the state
 * elsewhere (e.g. a database); `fetch`, `store`, `purge` and `flush` may be
 * async.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProgressStorage, type ProgressRecord } from "@kopf/kopf";
 * class MemoryStorage extends ProgressStorage {
 *   readonly records = new Map<string, ProgressRecord>();
 *   fetch(key: string) { return this.records.get(key) ?? null; }
 *   store(key: string, record: ProgressRecord) { this.records.set(key, record); }
 *   purge(key: string) { this.records.delete(key); }
 *   touch() {}
 * }
 * const storage = new MemoryStorage();
 * storage.store("fn", { retries: 1 });
 * assert.deepEqual(await storage.fetch("fn"), { retries: 1 });
 * ```
 */
export abstract class ProgressStorage {
  /**
   * Reads a handler's record.
   *
   * @param key The handler id.
   * @param body The object.
   * @returns The record, or `null` when there is none.
   */
  abstract fetch(key: string, body: Body): MaybePromise<ProgressRecord | null>;

  /**
   * Writes a handler's record (into the patch, for on-object storages).
   *
   * @param key The handler id.
   * @param record The record.
   * @param body The object.
   * @param patch The patch of the current cycle.
   */
  abstract store(key: string, record: ProgressRecord, body: Body, patch: Patch): MaybePromise<void>;

  /**
   * Removes a handler's record.
   *
   * @param key The handler id.
   * @param body The object.
   * @param patch The patch of the current cycle.
   */
  abstract purge(key: string, body: Body, patch: Patch): MaybePromise<void>;

  /**
   * Sets (a timestamp) or clears (`null`) a dummy field whose only purpose is
   * to change the object, so that a new watch event wakes the operator up for
   * a delayed retry. Writes only when the value differs from the object's.
   *
   * @param body The object.
   * @param patch The patch of the current cycle.
   * @param value The new value, or `null` to remove.
   */
  abstract touch(body: Body, patch: Patch, value: string | null): void;

  /**
   * Removes this storage's own data from an essence (a copy is returned), so
   * that the bookkeeping never counts as a change of the object.
   *
   * @param essence The essence.
   * @returns The cleaned copy.
   */
  clear(essence: BodyEssence): BodyEssence {
    return deepCopy(essence);
  }

  /** Writes out anything buffered (nothing, for on-object storages). */
  flush(): MaybePromise<void> {}
}

/** Options of {@link AnnotationsProgressStorage}. */
export interface AnnotationsProgressStorageOptions {
  /** The annotations' prefix (default `"kopf.zalando.org"`). */
  prefix?: string;
  /** Write `null` fields too (default `false`: only the non-null ones). */
  verbose?: boolean;
  /** The name of the touch annotation (default `"touch-dummy"`). */
  touchKey?: string;
  /** Also write and read the legacy v1 keys (default `true`, as in Kopf). */
  v1?: boolean;
}

/**
 * Keeps each handler's record in an annotation `<prefix>/<handler id>` as
 * compact JSON — exactly Kopf's format.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AnnotationsProgressStorage } from "@kopf/kopf";
 * import { Patch } from "@kopf/kopf";
 * const storage = new AnnotationsProgressStorage();
 * const patch = new Patch();
 * storage.store("create_fn", { started: "2026-11-22T04:19:01.345317+00:00", retries: 1, success: true, message: null }, {}, patch);
 * assert.equal(
 *   patch.metadata.annotations["kopf.zalando.org/create_fn"],
 *   '{"started":"2026-11-22T04:19:01.345317+00:00","retries":1,"success":true}',
 * );
 * ```
 */
export class AnnotationsProgressStorage extends ProgressStorage {
  readonly #keys: AnnotationKeys;
  /** Whether `null` fields are written too. */
  readonly verbose: boolean;
  /** The name of the touch annotation. */
  readonly touchKey: string;

  /**
   * Creates the storage; every option has Kopf's default.
   *
   * @param options Prefix, verbosity, touch key, v1 keys.
   * @throws {TypeError} When the prefix is empty.
   */
  constructor(options: AnnotationsProgressStorageOptions = {}) {
    super();
    this.#keys = new AnnotationKeys({
      prefix: options.prefix ?? "kopf.zalando.org",
      v1: options.v1 ?? true,
    });
    this.verbose = options.verbose ?? false;
    this.touchKey = options.touchKey ?? "touch-dummy";
  }

  /** The annotations' prefix. */
  get prefix(): string {
    return this.#keys.prefix;
  }

  /** Whether the legacy v1 keys are written and read too. */
  get v1(): boolean {
    return this.#keys.v1;
  }

  /**
   * The annotation keys of a record key, in reading order (v2, then v1).
   *
   * @param key The handler id or the touch key.
   * @param body The object (for the ReplicaSet marking).
   * @returns The full annotation keys.
   */
  makeKeys(key: string, body?: Body): string[] {
    return this.#keys.makeKeys(key, body);
  }

  /**
   * Encodes a record as the annotation value.
   *
   * @param record The record.
   * @returns Compact JSON, Kopf's field order, non-ASCII escaped.
   */
  encode(record: ProgressRecord): string {
    return dumpsCompact(canonical(record, this.verbose));
  }

  /** Reads the record from the first of its annotations (v2, then v1) that holds one; `null` if none. */
  override fetch(key: string, body: Body): ProgressRecord | null {
    const annotations = annotationsOf(body);
    for (const fullKey of this.#keys.keysOf(key, body)) {
      const encoded = annotations[fullKey];
      if (encoded === undefined || encoded === null) continue;
      let decoded: unknown;
      try {
        decoded = JSON.parse(encoded);
      } catch (error) {
        throw new SyntaxError(
          `The progress annotation ${fullKey} is not valid JSON; fix or remove it.`,
          { cause: error },
        );
      }
      if (decoded === null) continue;
      if (!isObject(decoded)) {
        throw new SyntaxError(
          `The progress annotation ${fullKey} is not a JSON object; fix or remove it.`,
        );
      }
      return decoded as ProgressRecord;
    }
    return null;
  }

  /** Writes the record as compact JSON into the patch, under all its annotation keys. */
  override store(key: string, record: ProgressRecord, body: Body, patch: Patch): void {
    const encoded = this.encode(record);
    for (const fullKey of this.#keys.keysOf(key, body)) {
      patch.set(["metadata", "annotations", fullKey], encoded);
    }
    storeMarker(this.prefix, patch, body);
  }

  /** Deletes the record's annotations (in the patch) where the object has them. */
  override purge(key: string, body: Body, patch: Patch): void {
    for (const fullKey of this.#keys.keysOf(key, body)) {
      purgeField(body, patch, ["metadata", "annotations", fullKey]);
    }
  }

  /** Sets (a timestamp) or removes (`null`) the touch annotation, if it differs from the object's. */
  override touch(body: Body, patch: Patch, value: string | null): void {
    const annotations = annotationsOf(body);
    for (const fullKey of this.#keys.keysOf(this.touchKey, body)) {
      if ((annotations[fullKey] ?? null) !== value) {
        patch.set(["metadata", "annotations", fullKey], value);
        storeMarker(this.prefix, patch, body);
      }
    }
  }

  /** Returns a copy of the essence without any annotation of this prefix (records and diff-bases alike). */
  override clear(essence: BodyEssence): BodyEssence {
    const cleared = super.clear(essence);
    const annotations = cleared.metadata?.annotations;
    if (isObject(annotations)) {
      for (const key of Object.keys(annotations)) {
        if (key.startsWith(`${this.prefix}/`)) delete annotations[key];
      }
    }
    removeEmptyStanzas(cleared);
    return cleared;
  }
}

/** Options of {@link StatusProgressStorage}. */
export interface StatusProgressStorageOptions {
  /** Substituted for `{name}` in the fields (default `"kopf"`). */
  name?: string;
  /** Where the records live (default `"status.{name}.progress"`). */
  field?: FieldSpec;
  /** The touch field (default `"status.{name}.dummy"`). */
  touchField?: FieldSpec;
}

/**
 * Keeps the records as objects under a field, `status.kopf.progress.<id>` by
 * default — Kopf's original place. Custom resources need
 * `x-kubernetes-preserve-unknown-fields` for it, or the API server prunes it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { StatusProgressStorage } from "@kopf/kopf";
 * const storage = new StatusProgressStorage();
 * const body = { status: { kopf: { progress: { fn: { retries: 2 } } } } };
 * assert.deepEqual(storage.fetch("fn", body), { retries: 2 });
 * ```
 */
export class StatusProgressStorage extends ProgressStorage {
  readonly #name: string;
  #field: string[];
  #touchField: string[];

  /**
   * Creates the storage; every option has Kopf's default.
   *
   * @param options Name, field, touch field.
   */
  constructor(options: StatusProgressStorageOptions = {}) {
    super();
    this.#name = options.name ?? "kopf";
    this.#field = formatField(options.field ?? "status.{name}.progress", this.#name);
    this.#touchField = formatField(options.touchField ?? "status.{name}.dummy", this.#name);
  }

  /** The records' field, parsed. */
  get field(): FieldPath {
    return this.#field;
  }

  set field(field: FieldSpec) {
    this.#field = formatField(field, this.#name);
  }

  /** The touch field, parsed. */
  get touchField(): FieldPath {
    return this.#touchField;
  }

  set touchField(field: FieldSpec) {
    this.#touchField = formatField(field, this.#name);
  }

  /** Reads the record at `<field>.<key>`; `null` if absent or not an object. */
  override fetch(key: string, body: Body): ProgressRecord | null {
    const container = resolve(body, this.#field, null);
    if (!isObject(container) || !Object.hasOwn(container, key)) return null;
    const record = container[key];
    return isObject(record) ? record as ProgressRecord : null;
  }

  /** Writes the full record (with `null`s, so stale fields go) at `<field>.<key>` in the patch. */
  override store(key: string, record: ProgressRecord, _body: Body, patch: Patch): void {
    // The full record: nulls delete the fields a previous record had.
    patch.set([...this.#field, key], canonical(record, true));
  }

  /** Deletes `<field>.<key>` (in the patch) if the object has it. */
  override purge(key: string, body: Body, patch: Patch): void {
    purgeField(body, patch, [...this.#field, key]);
  }

  /** Sets (a timestamp) or removes (`null`) the touch field, if it differs from the object's. */
  override touch(body: Body, patch: Patch, value: string | null): void {
    if ((resolve(body, this.#touchField, null) ?? null) !== value) {
      patch.set(this.#touchField, value);
    }
  }

  /** Returns a copy of the essence without the records' field. */
  override clear(essence: BodyEssence): BodyEssence {
    const cleared = super.clear(essence);
    if (this.#field.length > 0) remove(cleared, this.#field);
    removeEmptyStanzas(cleared);
    return cleared;
  }
}

/** A status storage that reads and purges, but never writes: the fallback of {@link SmartProgressStorage}. */
class NoWriteStatusProgressStorage extends StatusProgressStorage {
  override store(): void {}
  override touch(): void {}
}

/**
 * Several storages at once: every write goes to all of them, a read returns
 * the first record found (so the first storage has precedence). Use it to
 * move from one storage to another without losing state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AnnotationsProgressStorage, MultiProgressStorage, StatusProgressStorage } from "@kopf/kopf";
 * const storage = new MultiProgressStorage([
 *   new AnnotationsProgressStorage({ prefix: "my-op.example.com" }),
 *   new StatusProgressStorage({ field: "status.my-operator" }),
 * ]);
 * assert.deepEqual(await storage.fetch("fn", { status: { "my-operator": { fn: { retries: 3 } } } }), { retries: 3 });
 * ```
 */
export class MultiProgressStorage extends ProgressStorage {
  /** The storages, in order of precedence. */
  readonly storages: readonly ProgressStorage[];

  /**
   * Combines the storages.
   *
   * @param storages The storages, in order of precedence.
   */
  constructor(storages: Iterable<ProgressStorage>) {
    super();
    this.storages = Object.freeze([...storages]);
  }

  /**
   * Returns the first record found, asking the storages in order of precedence. Synchronous while
   * the storages answer synchronously (the built-in ones): no promise per record read.
   */
  override fetch(key: string, body: Body): MaybePromise<ProgressRecord | null> {
    const storages = this.storages;
    for (let i = 0; i < storages.length; i++) {
      const record = storages[i]!.fetch(key, body);
      if (isPromise(record)) return this.#fetchFrom(record, i, key, body);
      if (record !== null && record !== undefined) return record;
    }
    return null;
  }

  /** The rest of {@link MultiProgressStorage.fetch} once a storage answered with a promise. */
  async #fetchFrom(
    pending: Promise<ProgressRecord | null>,
    index: number,
    key: string,
    body: Body,
  ): Promise<ProgressRecord | null> {
    const first = await pending;
    if (first !== null && first !== undefined) return first;
    for (const storage of this.storages.slice(index + 1)) {
      const record = await storage.fetch(key, body);
      if (record !== null && record !== undefined) return record;
    }
    return null;
  }

  /** Writes the record to every storage, in order (synchronously while they all are). */
  override store(
    key: string,
    record: ProgressRecord,
    body: Body,
    patch: Patch,
  ): MaybePromise<void> {
    return this.#each((storage) => storage.store(key, record, body, patch));
  }

  /** Deletes the record from every storage, in order (synchronously while they all are). */
  override purge(key: string, body: Body, patch: Patch): MaybePromise<void> {
    return this.#each((storage) => storage.purge(key, body, patch));
  }

  /** Calls every storage in order, awaiting those that answer with a promise. */
  #each(call: (storage: ProgressStorage) => MaybePromise<void>): MaybePromise<void> {
    const storages = this.storages;
    for (let i = 0; i < storages.length; i++) {
      const done = call(storages[i]!);
      if (isPromise(done)) return this.#eachFrom(done, i + 1, call);
    }
  }

  async #eachFrom(
    pending: Promise<void>,
    index: number,
    call: (storage: ProgressStorage) => MaybePromise<void>,
  ): Promise<void> {
    await pending;
    for (const storage of this.storages.slice(index)) await call(storage);
  }

  /** Touches every storage. */
  override touch(body: Body, patch: Patch, value: string | null): void {
    for (const storage of this.storages) storage.touch(body, patch, value);
  }

  /** Clears the essence through every storage in turn. */
  override clear(essence: BodyEssence): BodyEssence {
    let cleared = essence;
    for (const storage of this.storages) cleared = storage.clear(cleared);
    return cleared;
  }

  /** Flushes every storage, in order. */
  override async flush(): Promise<void> {
    for (const storage of this.storages) await storage.flush();
  }
}

/** Options of {@link SmartProgressStorage}: those of both underlying storages. */
export interface SmartProgressStorageOptions
  extends AnnotationsProgressStorageOptions, StatusProgressStorageOptions {}

/**
 * The default storage: writes annotations only; reads annotations first and
 * falls back to `status.kopf.progress` (where older Kopf versions wrote);
 * purges both, so old status records disappear as objects are handled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SmartProgressStorage } from "@kopf/kopf";
 * import { Patch } from "@kopf/kopf";
 * const storage = new SmartProgressStorage();
 * const body = { status: { kopf: { progress: { fn: { retries: 2 } } } } };
 * assert.deepEqual(await storage.fetch("fn", body), { retries: 2 });
 * const patch = new Patch();
 * await storage.purge("fn", body, patch);
 * assert.deepEqual(JSON.parse(JSON.stringify(patch)), {"status":{"kopf":{"progress":{"fn":null}}}});
 * ```
 */
export class SmartProgressStorage extends MultiProgressStorage {
  /**
   * Creates the annotations storage and the read-and-purge-only status storage.
   *
   * @param options The options of the annotations and status storages.
   */
  constructor(options: SmartProgressStorageOptions = {}) {
    const annotations = new AnnotationsProgressStorage({
      ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
      ...(options.verbose !== undefined ? { verbose: options.verbose } : {}),
      ...(options.touchKey !== undefined ? { touchKey: options.touchKey } : {}),
      ...(options.v1 !== undefined ? { v1: options.v1 } : {}),
    });
    const status = new NoWriteStatusProgressStorage({
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.field !== undefined ? { field: options.field } : {}),
      ...(options.touchField !== undefined ? { touchField: options.touchField } : {}),
    });
    super([annotations, status]);
  }
}

function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
