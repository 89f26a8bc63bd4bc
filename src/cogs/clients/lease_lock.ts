/**
 * Holding one Lease as client-go's leader election does: {@link LeaseObservation} (when a
 * holder is seen as gone, by the observer's own clock) and {@link LeaseLock} (acquire, renew,
 * release on cancel). The reasons for client-go's rules are in `leases.ts`.
 *
 * @module
 */

import { type Clock, realClock } from "../aio/clock.ts";
import type { ApiClient } from "./api.ts";
import { createObject } from "./creating.ts";
import { ConflictError } from "./errors.ts";
import { formatMicroTime, type LeaseRecord, leaseRecordOf, LEASES } from "./lease_records.ts";
import { leaseSpecOf, readLease, updateLease } from "./lease_records.ts";
import type { RawBody } from "./types.ts";

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
