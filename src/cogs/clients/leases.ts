/**
 * coordination.k8s.io/v1 Leases with client-go's semantics: the shared state
 * of leader election (one Lease) and of sharding (a Lease per member).
 *
 * Why client-go's rules and not our own: a Lease is read by other programs —
 * `kubectl get lease`, controller-runtime operators sharing a name, people
 * debugging at 3 a.m. — so its fields mean what they mean there:
 * `holderIdentity`, `leaseDurationSeconds`, `acquireTime` and `renewTime` as
 * RFC 3339 micro time (`2006-01-02T15:04:05.000000Z`), and `leaseTransitions`
 * bumped when the holder changes.
 *
 * Why the *observed* time and not `renewTime`: clocks of replicas differ.
 * client-go never compares the remote timestamp with its own clock; it notes
 * on its own (monotonic) clock when it last saw the record *change*, and calls
 * the lease free once `leaseDurationSeconds` have passed since then with no
 * change. A holder that renews changes `renewTime`, so a live holder is always
 * seen as live; a dead one is seen as dead one lease duration after whoever
 * looks first noticed its last renewal — never earlier than the holder itself
 * could have renewed. {@link LeaseObservation} keeps that rule; sharding keeps
 * one per member Lease.
 *
 * Writes use the resourceVersion last read or written (optimistic
 * concurrency): of two replicas that race for a free lease, one update
 * succeeds and the other gets a 409 and stays a candidate.
 *
 * Release follows client-go's `ReleaseOnCancel`: the holder writes an empty
 * `holderIdentity`, `leaseDurationSeconds: 1` and `renewTime: now`, so any
 * candidate may take it at its next try instead of waiting out the duration.
 *
 * @module
 */

import { type Clock, realClock } from "../aio/clock.ts";
import { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { createObject } from "./creating.ts";
import { ConflictError, NotFoundError } from "./errors.ts";
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

/**
 * What one replica has seen of one Lease, and when, on its own clock —
 * client-go's `observedRecord` and `observedTime`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { LeaseObservation } from "./leases.ts";
 * const clock = new FakeClock();
 * const seen = new LeaseObservation(clock);
 * const record = { holderIdentity: "a", leaseDurationSeconds: 2, acquireTime: undefined,
 *   renewTime: "2026-01-01T00:00:00.000000Z", leaseTransitions: 0 };
 * seen.observe(record);
 * await clock.advance(1.5);
 * seen.observe({ ...record }); // the same record: not a change, the time stays
 * assert.deepEqual(seen.held(), true);
 * await clock.advance(0.5);
 * assert.deepEqual(seen.held(), false); // — 2 s since it last changed
 * ```
 */
export class LeaseObservation {
  readonly #clock: Clock;
  #record: LeaseRecord | undefined;
  #raw = "";
  #at = 0;

  /**
   * Makes an empty observation.
   *
   * @param clock Whose time counts (default: the real clock).
   */
  constructor(clock: Clock = realClock) {
    this.#clock = clock;
  }

  /** The record last seen, if any. */
  get record(): LeaseRecord | undefined {
    return this.#record;
  }

  /** When (monotonic ms of the clock) the record was seen to change last. */
  get observedAt(): number {
    return this.#at;
  }

  /** When (monotonic ms) the lease runs out unless it changes again. */
  get expiresAt(): number {
    return this.#at + (this.#record?.leaseDurationSeconds ?? 0) * 1000;
  }

  /**
   * Notes a record as read; its time counts only if it differs from the last one seen.
   *
   * @param record The record read.
   * @returns Whether it changed.
   */
  observe(record: LeaseRecord): boolean {
    const raw = JSON.stringify(leaseSpecOf(record));
    if (this.#record !== undefined && raw === this.#raw) return false;
    this.set(record);
    return true;
  }

  /**
   * Notes a record as written by us now (client-go's `setObservedRecord`).
   *
   * @param record The record written.
   */
  set(record: LeaseRecord): void {
    this.#record = record;
    this.#raw = JSON.stringify(leaseSpecOf(record));
    this.#at = this.#clock.now();
  }

  /**
   * Whether the lease is still valid: less than its duration since it last changed.
   *
   * @param now Monotonic ms (default: the clock's now).
   * @returns Whether it has not expired yet.
   */
  valid(now: number = this.#clock.now()): boolean {
    return this.#record !== undefined && this.expiresAt > now;
  }

  /**
   * Whether someone holds it: a holder is named and the lease is valid.
   *
   * @param now Monotonic ms (default: the clock's now).
   * @returns Whether it is held.
   */
  held(now: number = this.#clock.now()): boolean {
    return !!this.#record?.holderIdentity && this.valid(now);
  }
}

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** The API client. */
  api: ApiClient;
  /** The Lease's namespace. */
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** Who we are (the `holderIdentity` we write). */
  identity: string;
  /** The lease duration in seconds (written as whole seconds, at least 1). */
  leaseDuration: number;
  /** Whose time counts (default: the real clock). */
  clock?: Clock | undefined;
  /** Labels of a Lease we create (e.g. a shard group's). */
  labels?: Record<string, string> | undefined;
}

/**
 * One Lease as one candidate sees it: client-go's `LeaseLock` with the
 * `tryAcquireOrRenew` and `release` of its `LeaderElector`. The loop around
 * it (when to try, when to give up) belongs to the caller.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { LeaseLock } from "./leases.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const opts = { api, namespace: "default", name: "lock", leaseDuration: 15 };
 * const a = new LeaseLock({ ...opts, identity: "a" });
 * const b = new LeaseLock({ ...opts, identity: "b" });
 * assert.ok(await a.tryAcquireOrRenew());
 * assert.ok(!(await b.tryAcquireOrRenew())); // held by a, not expired
 * assert.equal(b.holder, "a");
 * assert.ok(await a.release());
 * assert.ok(await b.tryAcquireOrRenew()); // released: free at once
 * assert.equal(b.observed?.leaseTransitions, 1);
 * ```
 */
export class LeaseLock {
  /** The namespace. */
  readonly namespace: string;
  /** The name. */
  readonly name: string;
  /** Our identity. */
  readonly identity: string;
  readonly #api: ApiClient;
  readonly #clock: Clock;
  readonly #duration: number;
  readonly #labels: Record<string, string> | undefined;
  readonly #seen: LeaseObservation;
  #body: RawBody | undefined;
  #error: unknown;

  /**
   * Describes a Lease for one candidate; nothing is read or written yet.
   *
   * @param options Where the Lease is, who we are, the duration, the clock.
   */
  constructor(options: LeaseLockOptions) {
    this.#api = options.api;
    this.namespace = options.namespace;
    this.name = options.name;
    this.identity = options.identity;
    this.#clock = options.clock ?? realClock;
    this.#duration = Math.max(1, Math.round(options.leaseDuration));
    this.#labels = options.labels;
    this.#seen = new LeaseObservation(this.#clock);
  }

  /** `namespace/name`, as client-go's log lines name a lock. */
  get key(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The record last seen or written, if any. */
  get observed(): LeaseRecord | undefined {
    return this.#seen.record;
  }

  /** What we have seen of the Lease, and when. */
  get observation(): LeaseObservation {
    return this.#seen;
  }

  /** The holder last seen (`""` for none). */
  get holder(): string {
    return this.#seen.record?.holderIdentity ?? "";
  }

  /** Whether we hold it as far as we know (client-go's `IsLeader`; not whether it is valid). */
  get isLeader(): boolean {
    return this.holder === this.identity;
  }

  /** Why the last try or release failed (an API or connection error), if it did. */
  get lastError(): unknown {
    return this.#error;
  }

  /**
   * Acquires the Lease if it is free (absent, released, or not changed for its duration
   * on our clock) or renews it if we hold it — client-go's `tryAcquireOrRenew`.
   *
   * @param options `signal` stops the requests.
   * @returns Whether we hold it now; false also when a request failed (see {@link lastError}).
   * @throws The signal's reason when it aborts.
   */
  async tryAcquireOrRenew(options: { signal?: AbortSignal | undefined } = {}): Promise<boolean> {
    const { signal } = options;
    this.#error = undefined;
    const nowDate = formatMicroTime(this.#clock.date());
    const record: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.#duration,
      acquireTime: nowDate,
      renewTime: nowDate,
      leaseTransitions: 0,
    };
    try {
      // 1. The fast path: the holder renews over the version it wrote last.
      const old = this.#seen.record;
      if (this.isLeader && this.#seen.valid() && this.#body !== undefined && old) {
        try {
          await this.#update(
            { ...record, acquireTime: old.acquireTime, leaseTransitions: old.leaseTransitions },
            signal,
          );
          return true;
        } catch (error) {
          signal?.throwIfAborted();
          this.#error = error; // and fall back to the slow path
        }
      }
      // 2. Read it; create it if absent.
      const lease = await readLease(this.#api, this.namespace, this.name, { signal });
      if (lease === undefined) {
        const body = await createObject(this.#api, LEASES, this.namespace, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.name, ...(this.#labels ? { labels: this.#labels } : {}) },
          spec: leaseSpecOf(record),
        }, { signal });
        this.#body = body;
        this.#seen.set(leaseRecordOf(body));
        return true;
      }
      // 3. Held by someone else and not expired on our clock: stay a candidate.
      this.#body = lease.body;
      this.#seen.observe(lease.record);
      if (lease.record.holderIdentity && this.#seen.valid() && !this.isLeader) return false;
      // 4. Ours, released, or expired: write ourselves in.
      if (this.isLeader) {
        record.acquireTime = lease.record.acquireTime;
        record.leaseTransitions = lease.record.leaseTransitions;
      } else {
        record.leaseTransitions = lease.record.leaseTransitions + 1;
      }
      await this.#update(record, signal);
      return true;
    } catch (error) {
      signal?.throwIfAborted();
      this.#error = error;
      return false;
    }
  }

  /**
   * Releases the Lease if we hold it — client-go's `ReleaseOnCancel`: no holder, a duration
   * of 1 s and `renewTime` now, so a candidate takes it at its next try.
   *
   * @param options `signal` stops the requests.
   * @returns Whether it is released (or was not ours); false when the write failed.
   * @throws The signal's reason when it aborts.
   */
  async release(options: { signal?: AbortSignal | undefined } = {}): Promise<boolean> {
    const { signal } = options;
    this.#error = undefined;
    if (!this.isLeader) return true;
    const now = formatMicroTime(this.#clock.date());
    const released = (old: LeaseRecord): LeaseRecord => ({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: old.leaseTransitions,
    });
    try {
      try {
        await this.#update(released(this.#seen.record!), signal);
        return true;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
      // Changed since our last write: release only if it is still ours.
      const lease = await readLease(this.#api, this.namespace, this.name, { signal });
      if (lease === undefined) return true;
      this.#body = lease.body;
      this.#seen.observe(lease.record);
      if (!this.isLeader) return true;
      await this.#update(released(lease.record), signal);
      return true;
    } catch (error) {
      signal?.throwIfAborted();
      this.#error = error;
      return false;
    }
  }

  async #update(record: LeaseRecord, signal: AbortSignal | undefined): Promise<void> {
    const lease = await updateLease(this.#api, this.#body!, record, { signal });
    this.#body = lease.body;
    this.#seen.set(lease.record);
  }
}
