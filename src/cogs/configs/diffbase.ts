/**
 * Diff-base storages: the last handled state of an object ("essence"), kept
 * on the object so that the next cycle can tell whether anything essential
 * changed and what exactly (the handlers' `diff`, `old`, `new`) — much like
 * `kubectl apply` keeps its last applied configuration.
 *
 * The essence is Kopf's, so both ports agree on what is a change: the body
 * without `apiVersion`, `kind`, `status` and `metadata`, except
 * `metadata.labels` and `metadata.annotations` — minus kubectl's
 * last-applied annotation and every annotation under a prefix of a Kopf-based
 * operator (see `conventions.ts`), and minus empty labels/annotations/
 * metadata/status. Handlers that watch a status field ask for it as an extra
 * field. The default storage writes it, as compact JSON followed by `"\n"`
 * (as kubectl does, for a tidier `kubectl get -o yaml`), into the annotation
 * `kopf.zalando.org/last-handled-configuration`.
 *
 * @module
 */

import { isObject, type JsonObject, setOwn } from "../structs/_json.ts";
import { annotationsOf, type Body, type BodyEssence } from "../structs/bodies.ts";
import {
  cherrypick,
  deepCopy,
  ensure,
  type FieldPath,
  type FieldSpec,
  parseField,
  remove,
  resolve,
} from "../structs/dicts.ts";
import type { Patch } from "../structs/patches.ts";
import { dumpsCompact } from "./_pyjson.ts";
import {
  AnnotationKeys,
  isMarkedKey,
  KUBECTL_LAST_APPLIED,
  removeAnnotations,
  removeEmptyStanzas,
  storeMarker,
} from "./conventions.ts";
import type { MaybePromise } from "./progress_records.ts";

/** Options common to all diff-base storages. */
export interface DiffBaseStorageOptions {
  /** Fields never to track (removed from every essence), e.g. `"spec.replicas"`. */
  ignoredFields?: Iterable<FieldSpec> | null;
}

function parseJsonEssence(encoded: string, where: string): BodyEssence {
  let decoded: unknown;
  try {
    decoded = JSON.parse(encoded);
  } catch (error) {
    throw new SyntaxError(`The diff-base in ${where} is not valid JSON; fix or remove it.`, {
      cause: error,
    });
  }
  if (!isObject(decoded)) {
    throw new SyntaxError(`The diff-base in ${where} is not a JSON object; fix or remove it.`);
  }
  return decoded as BodyEssence;
}

/**
 * Whether a key's prefix (before its first `/`) is the prefix of one of these keys (before
 * their first `/`), compared in place.
 */
function underPrefixOf(key: string, keys: readonly string[]): boolean {
  if (!keys.length) return false;
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  for (let i = 0; i < keys.length; i++) {
    const other = keys[i]!;
    if (other.indexOf("/") !== slash) continue;
    let at = 0;
    while (at < slash && key.charCodeAt(at) === other.charCodeAt(at)) at++;
    if (at === slash) return true;
  }
  return false;
}

/** The top-level fields that are never part of an essence (labels and annotations come back picked). */
const NOT_ESSENCE = new Set(["apiVersion", "kind", "metadata", "status"]);

/** The labels an essence keeps (and its annotations, see {@link keptAnnotations}). */
const PICKED_LABELS: readonly FieldSpec[] = Object.freeze(["metadata.labels"]);
const ANNOTATIONS: FieldPath = Object.freeze(["metadata", "annotations"]);
/** What {@link keptAnnotations} returns when no annotation is kept: shared, never changed. */
const EMPTY: JsonObject = Object.freeze({}) as JsonObject;

/**
 * The annotations an essence keeps: a copy of them without kubectl's last-applied one and those
 * under a prefix of a Kopf-based operator, in their order; {@link EMPTY} when none is kept.
 */
function keptAnnotations(annotations: JsonObject): JsonObject {
  // The keys that mark their prefixes (detectMarkedPrefixes' rule, no prefix cut out): into a
  // list kept for the next call, taken meanwhile.
  const marked = markedKeys ?? [];
  markedKeys = undefined;
  try {
    for (const key in annotations) {
      if (Object.hasOwn(annotations, key) && annotations[key] !== undefined && isMarkedKey(key)) {
        marked.push(key);
      }
    }
    let kept: JsonObject | undefined;
    for (const key in annotations) {
      if (!Object.hasOwn(annotations, key) || annotations[key] === undefined) continue;
      if (key === KUBECTL_LAST_APPLIED || underPrefixOf(key, marked)) continue;
      setOwn(kept ??= {}, key, deepCopy(annotations[key]));
    }
    return kept ?? EMPTY;
  } finally {
    marked.length = 0;
    markedKeys = marked;
  }
}

/** The list of {@link keptAnnotations}, between its calls. */
let markedKeys: string[] | undefined = [];

/**
 * The interface of all diff-base storages, and the essence-building rule.
 * Subclass it to keep the essence elsewhere; `fetch` and `store` may be async.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AnnotationsDiffBaseStorage } from "@kopf/kopf";
 * const storage = new AnnotationsDiffBaseStorage();
 * const essence = storage.build({
 *   apiVersion: "kopf.dev/v1", kind: "KopfExample",
 *   metadata: { name: "x", uid: "u", labels: { a: "1" }, annotations: { "kopf.zalando.org/fn": "{}" } },
 *   spec: { field: "v" }, status: { phase: "Done" },
 * });
 * assert.deepEqual(JSON.parse(JSON.stringify(essence)), {"spec":{"field":"v"},"metadata":{"labels":{"a":"1"}}});
 * ```
 */
export abstract class DiffBaseStorage {
  /** Fields removed from every essence. */
  readonly ignoredFields: readonly FieldSpec[];

  /**
   * Sets the fields to ignore.
   *
   * @param options The ignored fields.
   */
  constructor(options: DiffBaseStorageOptions = {}) {
    this.ignoredFields = Object.freeze([...(options.ignoredFields ?? [])]);
  }

  /**
   * Builds the essence of an object (a deep copy; the body is not changed).
   *
   * @param body The object.
   * @param extraFields Fields to keep even though they would be removed (e.g. `"status.phase"`).
   * @returns The essence.
   */
  build(body: Body, extraFields?: Iterable<FieldSpec> | null): BodyEssence {
    // Only what the essence keeps is copied: metadata (managedFields and all) and status never.
    // for-in with the own-key check: Object.keys()' keys and order, without an array of them.
    const essence: JsonObject = {};
    for (const key in body) {
      if (!Object.hasOwn(body, key)) continue;
      const value = (body as JsonObject)[key];
      if (value === undefined || NOT_ESSENCE.has(key)) continue;
      setOwn(essence, key, deepCopy(value));
    }

    cherrypick(body, essence, PICKED_LABELS, deepCopy);
    const meta = Object.hasOwn(body, "metadata") ? (body as JsonObject).metadata : undefined;
    if (isObject(meta) && Object.hasOwn(meta, "annotations")) {
      // The annotations copied without the ones an essence leaves out (none deleted afterwards).
      // Left out when none are kept and nothing else may come into the metadata after them:
      // the empty stanza would be removed below anyway.
      const annotations = meta.annotations;
      const kept = isObject(annotations) ? keptAnnotations(annotations) : deepCopy(annotations);
      if (kept !== EMPTY || extraFields) ensure(essence, ANNOTATIONS, kept === EMPTY ? {} : kept);
    }

    cherrypick(body, essence, extraFields, deepCopy);
    removeEmptyStanzas(essence);
    for (const field of this.ignoredFields) {
      // The root (no keys) is never removed; anything else is (an invalid field throws there).
      if (field === null || field === undefined || field === "") continue;
      if (Array.isArray(field) && field.length === 0) continue;
      remove(essence, field);
    }
    return essence as BodyEssence;
  }

  /**
   * Reads the stored essence.
   *
   * @param body The object.
   * @returns The essence, or `null` when none is stored (a new object).
   */
  abstract fetch(body: Body): MaybePromise<BodyEssence | null>;

  /**
   * Whether the stored essence is known to be this very essence without reading it back — then
   * a cycle takes `essence` as the old one too, and the diff is empty. False means "read it"
   * ({@link DiffBaseStorage.fetch}), not "changed": a storage that cannot tell cheaply says false.
   *
   * @param body The object.
   * @param essence The object's essence now ({@link DiffBaseStorage.build}).
   * @returns True only when what {@link DiffBaseStorage.fetch} would read equals `essence`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { AnnotationsDiffBaseStorage, Patch } from "@kopf/kopf";
   * const storage = new AnnotationsDiffBaseStorage();
   * const body = { metadata: { annotations: {} as Record<string, string> }, spec: { a: 1 } };
   * const patch = new Patch();
   * storage.store(body, patch, storage.build(body));
   * Object.assign(body.metadata.annotations, patch.metadata.annotations);
   * assert.equal(storage.unchanged(body, storage.build(body)), true);
   * assert.equal(storage.unchanged(body, storage.build({ ...body, spec: { a: 2 } })), false);
   * ```
   */
  unchanged(_body: Body, _essence: BodyEssence): boolean {
    return false;
  }

  /**
   * Stores an essence (into the patch, for on-object storages).
   *
   * @param body The object.
   * @param patch The patch of the current cycle.
   * @param essence The essence to store.
   */
  abstract store(body: Body, patch: Patch, essence: BodyEssence): MaybePromise<void>;
}

/** Options of {@link AnnotationsDiffBaseStorage}. */
export interface AnnotationsDiffBaseStorageOptions extends DiffBaseStorageOptions {
  /** The annotation's prefix (default `"kopf.zalando.org"`). */
  prefix?: string;
  /** The annotation's name (default `"last-handled-configuration"`). */
  key?: string;
  /** Also write and read the legacy v1 key (default `true`, as in Kopf). */
  v1?: boolean;
}

/**
 * Keeps the essence in the annotation `kopf.zalando.org/last-handled-configuration`
 * as compact JSON followed by `"\n"` — Kopf's default and format.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AnnotationsDiffBaseStorage, Patch } from "@kopf/kopf";
 * const storage = new AnnotationsDiffBaseStorage();
 * const patch = new Patch();
 * storage.store({}, patch, { spec: { field: "v" } });
 * assert.deepEqual(JSON.parse(JSON.stringify(patch.metadata.annotations)), {"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"field\":\"v\"}}\n"});
 * ```
 */
export class AnnotationsDiffBaseStorage extends DiffBaseStorage {
  readonly #keys: AnnotationKeys;
  /** The annotation's name. */
  readonly key: string;

  /**
   * Creates the storage; every option has Kopf's default.
   *
   * @param options Prefix, key, v1 keys, ignored fields.
   * @throws {TypeError} When the prefix is empty.
   */
  constructor(options: AnnotationsDiffBaseStorageOptions = {}) {
    super(options);
    this.#keys = new AnnotationKeys({
      prefix: options.prefix ?? "kopf.zalando.org",
      v1: options.v1 ?? true,
    });
    this.key = options.key ?? "last-handled-configuration";
  }

  /** The annotation's prefix. */
  get prefix(): string {
    return this.#keys.prefix;
  }

  /** Whether the legacy v1 key is written and read too. */
  get v1(): boolean {
    return this.#keys.v1;
  }

  /**
   * The full annotation keys, in reading order.
   *
   * @param body The object (for the ReplicaSet marking).
   * @returns The keys.
   */
  makeKeys(body?: Body): string[] {
    return this.#keys.makeKeys(this.key, body);
  }

  /** Builds the essence, also without this storage's own annotation. */
  override build(body: Body, extraFields?: Iterable<FieldSpec> | null): BodyEssence {
    const essence = super.build(body, extraFields);
    removeAnnotations(essence, this.#keys.keysOf(this.key, body));
    removeEmptyStanzas(essence);
    return essence;
  }

  /** Reads the essence from the first of its annotations (v2, then v1) that is set; `null` if none. */
  override fetch(body: Body): BodyEssence | null {
    const annotations = annotationsOf(body);
    const keys = this.#keys.keysOf(this.key, body);
    for (let i = 0; i < keys.length; i++) {
      const encoded = annotations[keys[i]!];
      if (encoded === undefined || encoded === null) continue;
      return parseJsonEssence(encoded, `the annotation ${keys[i]}`);
    }
    return null;
  }

  /**
   * True when the annotation {@link AnnotationsDiffBaseStorage.fetch} reads holds the essence
   * exactly as {@link AnnotationsDiffBaseStorage.store} writes it (the same JSON text is the same
   * data): the usual cycle after our own write, which then parses and compares nothing. Any
   * other spelling of the same data (another writer's) is read and compared as usual. A subclass
   * that reads its own way (its own `fetch`) is always read.
   */
  override unchanged(body: Body, essence: BodyEssence): boolean {
    if (this.fetch !== AnnotationsDiffBaseStorage.prototype.fetch) return false;
    const annotations = annotationsOf(body);
    const keys = this.#keys.keysOf(this.key, body);
    for (let i = 0; i < keys.length; i++) {
      const encoded = annotations[keys[i]!];
      if (encoded === undefined || encoded === null) continue;
      // The text is the essence's JSON and "\n": compared in place, without a concatenation.
      if (typeof encoded !== "string" || !encoded.endsWith("\n")) return false;
      const text = dumpsCompact(essence);
      return encoded.length === text.length + 1 && encoded.startsWith(text);
    }
    return false;
  }

  /**
   * Writes the essence as compact JSON plus `"
   * "` into the patch, under all its annotation keys.
   */
  override store(body: Body, patch: Patch, essence: BodyEssence): void {
    const encoded = `${dumpsCompact(essence)}\n`;
    const keys = this.#keys.keysOf(this.key, body);
    const into = patch.metadata.annotations;
    for (let i = 0; i < keys.length; i++) into[keys[i]!] = encoded;
    storeMarker(this.prefix, patch, body);
  }
}

/** Options of {@link StatusDiffBaseStorage}. */
export interface StatusDiffBaseStorageOptions extends DiffBaseStorageOptions {
  /** Substituted for `{name}` in the field (default `"kopf"`). */
  name?: string;
  /** Where the essence lives (default `"status.{name}.last-handled-configuration"`). */
  field?: FieldSpec;
}

/**
 * Keeps the essence as a JSON string (no trailing newline) in a field,
 * `status.kopf.last-handled-configuration` by default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Patch, StatusDiffBaseStorage } from "@kopf/kopf";
 * const storage = new StatusDiffBaseStorage({ field: "status.diff-base" });
 * const patch = new Patch();
 * storage.store({}, patch, { spec: { a: 1 } });
 * assert.deepEqual(JSON.parse(JSON.stringify(patch)), {"status":{"diff-base":"{\"spec\":{\"a\":1}}"}});
 * ```
 */
export class StatusDiffBaseStorage extends DiffBaseStorage {
  readonly #name: string;
  #field: string[];

  /**
   * Creates the storage; every option has Kopf's default.
   *
   * @param options Name, field, ignored fields.
   */
  constructor(options: StatusDiffBaseStorageOptions = {}) {
    super(options);
    this.#name = options.name ?? "kopf";
    this.#field = this.#parse(options.field ?? "status.{name}.last-handled-configuration");
  }

  #parse(field: FieldSpec): string[] {
    return parseField(typeof field === "string" ? field.replaceAll("{name}", this.#name) : field);
  }

  /** The field, parsed. */
  get field(): FieldPath {
    return this.#field;
  }

  set field(field: FieldSpec) {
    this.#field = this.#parse(field);
  }

  /** Builds the essence, also without this storage's own field. */
  override build(body: Body, extraFields?: Iterable<FieldSpec> | null): BodyEssence {
    const essence = super.build(body, extraFields);
    if (this.#field.length > 0) remove(essence, this.#field);
    return essence;
  }

  /** Reads the essence from the JSON string in the field; `null` if it holds no string. */
  override fetch(body: Body): BodyEssence | null {
    const encoded = resolve(body, this.#field, null);
    if (typeof encoded !== "string") return null;
    return parseJsonEssence(encoded, `the field ${this.#field.join(".")}`);
  }

  /** Writes the essence as a compact JSON string into the field, in the patch. */
  override store(_body: Body, patch: Patch, essence: BodyEssence): void {
    patch.set(this.#field, dumpsCompact(essence));
  }
}

/**
 * Several diff-base storages at once: stores into all, reads the first found;
 * each storage also cleans its own data out of the essence. Use it to move
 * from one storage to another without every object looking new.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AnnotationsDiffBaseStorage, MultiDiffBaseStorage, StatusDiffBaseStorage } from "@kopf/kopf";
 * const storage = new MultiDiffBaseStorage([
 *   new StatusDiffBaseStorage({ field: "status.diff-base" }),
 *   new AnnotationsDiffBaseStorage(),
 * ]);
 * const body = { metadata: { annotations: { "kopf.zalando.org/last-handled-configuration": '{"spec":{}}\n' } } };
 * assert.deepEqual(await storage.fetch(body), { spec: {} });
 * ```
 */
export class MultiDiffBaseStorage extends DiffBaseStorage {
  /** The storages, in order of precedence. */
  readonly storages: readonly DiffBaseStorage[];

  /**
   * Combines the storages (their own ignored fields apply; this one has none).
   *
   * @param storages The storages, in order of precedence.
   */
  constructor(storages: Iterable<DiffBaseStorage>) {
    super();
    this.storages = Object.freeze([...storages]);
  }

  /** Builds the essence, then lets every storage remove its own data from it. */
  override build(body: Body, extraFields?: Iterable<FieldSpec> | null): BodyEssence {
    const fields = extraFields === undefined || extraFields === null ? null : [...extraFields];
    let essence = super.build(body, fields);
    for (const storage of this.storages) essence = storage.build(essence, fields);
    return essence;
  }

  /** Returns the first essence found, asking the storages in order of precedence. */
  override async fetch(body: Body): Promise<BodyEssence | null> {
    for (const storage of this.storages) {
      const essence = await storage.fetch(body);
      if (essence !== null && essence !== undefined) return essence;
    }
    return null;
  }

  /** Writes the essence to every storage, in order. */
  override async store(body: Body, patch: Patch, essence: BodyEssence): Promise<void> {
    for (const storage of this.storages) await storage.store(body, patch, essence);
  }
}
