/**
 * Progress kept in annotations, `kopf.zalando.org/<handler id>` holding the
 * record as compact JSON of its non-null fields in Kopf's order, non-ASCII
 * escaped — Kopf's format byte for byte (and its legacy v1 keys).
 *
 * @module
 */

import { isObject } from "../structs/_json.ts";
import { annotationsOf, type Body, type BodyEssence } from "../structs/bodies.ts";
import type { Patch } from "../structs/patches.ts";
import { dumpsCompact } from "./_pyjson.ts";
import { AnnotationKeys, removeEmptyStanzas, storeMarker } from "./conventions.ts";
import { canonical, type ProgressRecord } from "./progress_records.ts";
import { ProgressStorage, purgeField } from "./progress_storage.ts";

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
    // No annotations (a new object): nothing to read, and no empty object made to read it from.
    const meta = body.metadata;
    const annotations = isObject(meta) && isObject(meta.annotations) ? meta.annotations : undefined;
    if (annotations === undefined) return null;
    const keys = this.#keys.keysOf(key, body);
    for (let i = 0; i < keys.length; i++) {
      const fullKey = keys[i]!;
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
