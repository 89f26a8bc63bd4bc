/**
 * Progress kept in several storages at once ({@link MultiProgressStorage}),
 * and the default storage built on it ({@link SmartProgressStorage}):
 * annotations written, the status read and purged — so objects move from
 * old Kopf's status records to annotations as they are handled.
 *
 * @module
 */

import type { Body, BodyEssence } from "../structs/bodies.ts";
import type { Patch } from "../structs/patches.ts";
import {
  AnnotationsProgressStorage,
  type AnnotationsProgressStorageOptions,
} from "./progress_annotations.ts";
import { isPromise, type MaybePromise, type ProgressRecord } from "./progress_records.ts";
import { ProgressStorage } from "./progress_storage.ts";
import { StatusProgressStorage, type StatusProgressStorageOptions } from "./progress_status.ts";

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
