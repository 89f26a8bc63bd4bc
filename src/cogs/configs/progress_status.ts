/**
 * Progress kept in the object's status, `status.kopf.progress.<handler id>`
 * holding the record as an object — where Kopf first kept it, and where the
 * default storage still reads and purges old records.
 *
 * @module
 */

import { isObject } from "../structs/_json.ts";
import type { Body, BodyEssence } from "../structs/bodies.ts";
import { type FieldPath, type FieldSpec, remove, resolve } from "../structs/dicts.ts";
import type { Patch } from "../structs/patches.ts";
import { removeEmptyStanzas } from "./conventions.ts";
import { canonical, type ProgressRecord } from "./progress_records.ts";
import { formatField, ProgressStorage, purgeField } from "./progress_storage.ts";

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
