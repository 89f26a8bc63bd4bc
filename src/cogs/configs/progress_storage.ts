/**
 * The interface every progress storage implements ({@link ProgressStorage}),
 * and the field helpers the on-object storages share.
 *
 * @module
 */

import type { Body, BodyEssence } from "../structs/bodies.ts";
import { deepCopy, type FieldPath, type FieldSpec, hasPath, parseField } from "../structs/dicts.ts";
import type { Patch } from "../structs/patches.ts";
import type { MaybePromise, ProgressRecord } from "./progress_records.ts";

/** Replaces `{name}` in a string field spec and parses it. */
export function formatField(field: FieldSpec, name: string): string[] {
  return parseField(typeof field === "string" ? field.replaceAll("{name}", name) : field);
}

/** Sets `field` to `null` in the patch if it is on the object, or drops it from the patch if only there. */
export function purgeField(body: Body, patch: Patch, field: FieldPath): void {
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
