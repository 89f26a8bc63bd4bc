/**
 * What a progress storage keeps for one handler: the {@link ProgressRecord},
 * its fields in Kopf's order, and its timestamps in Kopf's form
 * (`2026-11-22T04:19:01.345317+00:00`) — formatted and parsed here so that a
 * Python Kopf operator reads what this one writes, and the other way round.
 *
 * @module
 */

import type { JsonObject } from "../structs/_json.ts";
import { deepCopy } from "../structs/dicts.ts";

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
 * import { PROGRESS_FIELDS } from "./progress_records.ts";
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
 * import { formatTimestamp } from "./progress_records.ts";
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
 * import { parseTimestamp } from "./progress_records.ts";
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
export function canonical(record: ProgressRecord, withNulls: boolean): JsonObject {
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

/** Whether a storage answered with a promise (and must be awaited) rather than at once. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
