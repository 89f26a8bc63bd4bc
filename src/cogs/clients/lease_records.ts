/**
 * The Lease object and its I/O: the {@link LeaseRecord} as client-go's fields mean it (RFC 3339
 * micro time: {@link formatMicroTime}), and reading, listing and updating Leases with the
 * resourceVersion last seen (optimistic concurrency: a racing writer gets a 409).
 *
 * @module
 */

import { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { NotFoundError } from "./errors.ts";
import { listObjects } from "./fetching.ts";
import type { RawBody } from "./types.ts";

/** The `leases` resource of `coordination.k8s.io/v1`. */
export const LEASES: Resource = new Resource({
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  singular: "lease",
  namespaced: true,
});

/** A Lease's spec as client-go's `LeaderElectionRecord`. */
export interface LeaseRecord {
  /** Who holds it; `""` when released or never held. */
  holderIdentity: string;
  /** How long a holder may go without renewing, in whole seconds. */
  leaseDurationSeconds: number;
  /** When the current holder acquired it (RFC 3339 micro time), if ever. */
  acquireTime: string | undefined;
  /** When the current holder last renewed it (RFC 3339 micro time), if ever. */
  renewTime: string | undefined;
  /** How many times the holder changed. */
  leaseTransitions: number;
}

/** A Lease as read: its record and the body (with the resourceVersion) to update it with. */
export interface Lease {
  /** The spec as a record. */
  record: LeaseRecord;
  /** The object as the server returned it. */
  body: RawBody;
}

/**
 * Formats a date as Kubernetes' `MicroTime`: RFC 3339 with six fractional digits, in UTC.
 *
 * @param date The time.
 * @returns e.g. `2026-01-01T00:00:01.250000Z`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatMicroTime } from "./leases.ts";
 * assert.deepEqual(formatMicroTime(new Date(Date.UTC(2026, 0, 1, 0, 0, 1, 250))), "2026-01-01T00:00:01.250000Z");
 * ```
 */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * Reads a Lease's spec as a record (absent fields as client-go reads them: empty, zero).
 *
 * @param body The Lease object.
 * @returns The record.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leaseRecordOf } from "./leases.ts";
 * const record = leaseRecordOf({ spec: { holderIdentity: "a", leaseDurationSeconds: 15 } });
 * assert.deepEqual([record.holderIdentity, record.leaseTransitions], ["a", 0]);
 * ```
 */
export function leaseRecordOf(body: RawBody): LeaseRecord {
  const spec = (typeof body.spec === "object" && body.spec !== null ? body.spec : {}) as Record<
    string,
    unknown
  >;
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const int = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    holderIdentity: str(spec.holderIdentity) ?? "",
    leaseDurationSeconds: int(spec.leaseDurationSeconds),
    acquireTime: str(spec.acquireTime),
    renewTime: str(spec.renewTime),
    leaseTransitions: int(spec.leaseTransitions),
  };
}

/**
 * The spec that stores a record (client-go's `LeaderElectionRecordToLeaseSpec`).
 *
 * @param record The record.
 * @returns The Lease's spec.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leaseSpecOf } from "./leases.ts";
 * assert.deepEqual(leaseSpecOf({
 *   holderIdentity: "a", leaseDurationSeconds: 15, acquireTime: undefined,
 *   renewTime: undefined, leaseTransitions: 0,
 * }), { holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 });
 * ```
 */
export function leaseSpecOf(record: LeaseRecord): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
  };
  if (record.acquireTime !== undefined) spec.acquireTime = record.acquireTime;
  if (record.renewTime !== undefined) spec.renewTime = record.renewTime;
  spec.leaseTransitions = record.leaseTransitions;
  return spec;
}

/**
 * Reads one Lease.
 *
 * @param api The API client.
 * @param namespace The Lease's namespace.
 * @param name The Lease's name.
 * @param options `signal` stops the request.
 * @returns The Lease, or undefined if it does not exist.
 * @throws {ApiError} On other error answers (after retries).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { LeaseLock, readLease } from "./leases.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * assert.equal(await readLease(api, "default", "lock"), undefined);
 * const lock = new LeaseLock({ api, namespace: "default", name: "lock", identity: "me", leaseDuration: 15 });
 * assert.ok(await lock.tryAcquireOrRenew());
 * assert.equal((await readLease(api, "default", "lock"))?.record.holderIdentity, "me");
 * ```
 */
export async function readLease(
  api: ApiClient,
  namespace: string,
  name: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<Lease | undefined> {
  try {
    const body = await api.request<RawBody>(
      "GET",
      LEASES.getUrl({ namespace, name }),
      options,
    );
    return { body, record: leaseRecordOf(body) };
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/**
 * Lists the Leases of a namespace, e.g. the member Leases of a shard group by their label.
 *
 * @param api The API client.
 * @param namespace The namespace.
 * @param options `labelSelector`, `signal`.
 * @returns The Leases.
 * @throws {ApiError} On error answers (after retries).
 */
export async function listLeases(
  api: ApiClient,
  namespace: string,
  options: { labelSelector?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<Lease[]> {
  const { items } = await listObjects(api, LEASES, namespace, options);
  return items.map((body) => ({ body, record: leaseRecordOf(body) }));
}

/**
 * Writes a Lease's spec over the version read (a 409 if it changed since).
 *
 * @param api The API client.
 * @param body The Lease as last read or written (its resourceVersion guards the write).
 * @param record The new spec.
 * @param options `signal` stops the request.
 * @returns The Lease as stored.
 * @throws {ConflictError} If the Lease changed since `body` was read.
 * @throws {ApiError} On other error answers (after retries).
 */
export async function updateLease(
  api: ApiClient,
  body: RawBody,
  record: LeaseRecord,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<Lease> {
  const namespace = body.metadata?.namespace;
  const name = body.metadata?.name ?? "";
  const updated = await api.request<RawBody>("PUT", LEASES.getUrl({ namespace, name }), {
    body: { ...body, spec: leaseSpecOf(record) },
    signal: options.signal,
  });
  return { body: updated, record: leaseRecordOf(updated) };
}
