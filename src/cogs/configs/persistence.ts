/**
 * Settings of what the operator keeps on objects (`settings.persistence`): its
 * finalizer, where progress and the diff base are stored, and how large a
 * handler's stored result may be.
 *
 * @module
 */

import { fail, integer, seconds, text } from "./_checks.ts";
import { AnnotationsDiffBaseStorage, DiffBaseStorage } from "./diffbase.ts";
import { SmartProgressStorage } from "./progress_multi.ts";
import { ProgressStorage } from "./progress_storage.ts";

/**
 * Settings of what the operator keeps on objects.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().persistence;
 * s.finalizer = "my-operator.example.com/kopf-finalizer";
 * assert.deepEqual(s.consistencyTimeout, 5);
 * ```
 */
export class PersistenceSettings {
  #finalizer = "kopf.zalando.org/KopfFinalizerMarker";
  #progressStorage: ProgressStorage = new SmartProgressStorage();
  #diffbaseStorage: DiffBaseStorage = new AnnotationsDiffBaseStorage();
  #consistencyTimeout = 5;
  #resultSizeLimit = 256 * 1024;

  /** The finalizer that blocks deletion until deletion handlers are done. */
  get finalizer(): string {
    return this.#finalizer;
  }
  set finalizer(value: string) {
    this.#finalizer = text("persistence.finalizer", value);
  }

  /** Where handlers' progress is kept. Default `new SmartProgressStorage()`. */
  get progressStorage(): ProgressStorage {
    return this.#progressStorage;
  }
  set progressStorage(value: ProgressStorage) {
    if (!(value instanceof ProgressStorage)) {
      fail("persistence.progressStorage", "a ProgressStorage", value);
    }
    this.#progressStorage = value;
  }

  /** Where the last handled essence is kept. Default `new AnnotationsDiffBaseStorage()`. */
  get diffbaseStorage(): DiffBaseStorage {
    return this.#diffbaseStorage;
  }
  set diffbaseStorage(value: DiffBaseStorage) {
    if (!(value instanceof DiffBaseStorage)) {
      fail("persistence.diffbaseStorage", "a DiffBaseStorage", value);
    }
    this.#diffbaseStorage = value;
  }

  /** How long to wait for the object's version that our own patch produced. Default 5. */
  get consistencyTimeout(): number {
    return this.#consistencyTimeout;
  }
  set consistencyTimeout(value: number) {
    this.#consistencyTimeout = seconds("persistence.consistencyTimeout", value);
  }

  /**
   * The largest result (in bytes of JSON) a handler may return to be stored in `status.<id>`;
   * a larger one fails its handler permanently. Default 256 KiB: results travel with every
   * watch event of the object, and the whole object must stay within the API's limits.
   */
  get resultSizeLimit(): number {
    return this.#resultSizeLimit;
  }
  set resultSizeLimit(value: number) {
    this.#resultSizeLimit = integer("persistence.resultSizeLimit", value, 1);
  }
}
