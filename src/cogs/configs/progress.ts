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
 * Where each piece lives: the record and its timestamps in `progress_records.ts`;
 * the interface in `progress_storage.ts`; the storages in `progress_annotations.ts`,
 * `progress_status.ts` and `progress_multi.ts` (also the default). This file
 * re-exports them.
 *
 * @module
 */

export {
  AnnotationsProgressStorage,
  type AnnotationsProgressStorageOptions,
} from "./progress_annotations.ts";
export {
  MultiProgressStorage,
  SmartProgressStorage,
  type SmartProgressStorageOptions,
} from "./progress_multi.ts";
export {
  formatTimestamp,
  type MaybePromise,
  parseTimestamp,
  PROGRESS_FIELDS,
  type ProgressRecord,
} from "./progress_records.ts";
export { StatusProgressStorage, type StatusProgressStorageOptions } from "./progress_status.ts";
export { ProgressStorage } from "./progress_storage.ts";
