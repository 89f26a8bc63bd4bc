/**
 * The member Leases of a shard group: this replica's own ({@link MemberLease},
 * written) and everyone's ({@link MemberTable}, read from a watch) — the only
 * state that the replicas of a group share. The protocol that gives them
 * meaning is in sharding.ts; the loops that drive them are in
 * reactor/sharding.ts.
 *
 * A member Lease is a coordination.k8s.io/v1 Lease with client-go's fields
 * (cogs/clients/leases.ts): named `<group>-<identity>`, labelled with the
 * group, `holderIdentity` the member's identity, `renewTime` renewed every
 * `renewPeriod`. The member's published state rides on its annotations
 * (incarnation, view, releasing), so one write renews and publishes at once.
 *
 * Liveness is client-go's observed-time rule ({@link LeaseObservation}): a
 * member is expired once its Lease has not changed for its duration on the
 * observer's own clock. An expired member is removed by deleting its Lease
 * with its resourceVersion as a precondition: if the member renewed after
 * all (our watch lagged), the delete fails with a conflict and the member
 * stays — so no replica takes over objects of a member that is still renewing.
 * The delete doubles as garbage collection of dead replicas' Leases.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import { realClock } from "../../cogs/aio/clock.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { createObject } from "../../cogs/clients/creating.ts";
import { deleteObject } from "../../cogs/clients/deleting.ts";
import { ConflictError, NotFoundError } from "../../cogs/clients/errors.ts";
import {
  formatMicroTime,
  LeaseObservation,
  type LeaseRecord,
  leaseRecordOf,
  LEASES,
  leaseSpecOf,
  readLease,
  updateLease,
} from "../../cogs/clients/leases.ts";
import type { RawBody } from "../../cogs/clients/types.ts";
import { hash64 } from "../../cogs/structs/rendezvous.ts";
import {
  INCARNATION_ANNOTATION,
  memberOf,
  type MemberState,
  SHARD_GROUP_LABEL,
} from "./sharding.ts";

/**
 * The name of a member's Lease: `<group>-<identity>`, the identity made a valid name (lowercase,
 * `[a-z0-9.-]`), with a short hash of the identity when that changed anything (so that two
 * identities never share a name).
 *
 * @param group The shard group.
 * @param identity The member's identity.
 * @returns The Lease's name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memberLeaseName } from "./shard_leases.ts";
 * assert.deepEqual(memberLeaseName("kopf", "replica-1"), "kopf-replica-1");
 * assert.match(memberLeaseName("kopf", "me@host/20260101/abc"), /^kopf-me-host-20260101-abc-[0-9a-z]+$/); // a hash
 * ```
 */
export function memberLeaseName(group: string, identity: string): string {
  const clean = identity.toLowerCase().replace(/[^a-z0-9.-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "");
  const name = `${group}-${clean}`.slice(0, 200).replace(/[-.]+$/, "");
  if (clean === identity) return name;
  const h = hash64(identity);
  return `${name}-${h.hi.toString(36)}`;
}

/** How a write of the member Lease ended. */
export type WriteOutcome =
  /** Written: we hold it with our incarnation. */
  | "held"
  /** Someone else wrote it or deleted it since our last write: our incarnation is over. */
  | "lost"
  /** The request failed (an API or connection error): retry later. */
  | "failed";

/** Options of a {@link MemberLease}. */
export interface MemberLeaseOptions {
  /** The API client. */
  api: ApiClient;
  /** The Lease's namespace. */
  namespace: string;
  /** The shard group (the label's value). */
  group: string;
  /** This replica's identity (`holderIdentity`). */
  identity: string;
  /** The lease duration in whole seconds. */
  leaseDuration: number;
  /** Whose time counts (default: the real clock). */
  clock?: Clock | undefined;
}

/**
 * This replica's member Lease: created, taken over (the same identity after a restart), renewed,
 * and deleted at a graceful exit. Every write carries the member's published state.
 *
 * @example
 * ```ts ignore
 * const lease = new MemberLease({ api, namespace: "default", group: "kopf", identity: "r1",
 *   leaseDuration: 15 });
 * await lease.write(memberAnnotations(gate.state())); // "held"
 * await lease.delete();
 * ```
 */
export class MemberLease {
  /** The Lease's name. */
  readonly name: string;
  readonly #o: MemberLeaseOptions;
  readonly #clock: Clock;
  #body: RawBody | undefined;
  /** The incarnation of our last successful write. */
  #written: string | undefined;
  #error: unknown;

  /** @param options Where the Lease is, whose it is, its duration and the clock. */
  constructor(options: MemberLeaseOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.name = memberLeaseName(options.group, options.identity);
  }

  /** Why the last write failed, if it did. */
  get lastError(): unknown {
    return this.#error;
  }

  /**
   * Writes the Lease with these annotations (the incarnation among them): renews it over our last
   * write, or — the first time, or after it was lost — creates it or takes it over.
   *
   * @param annotations The member's published state ({@link memberAnnotations}).
   * @param signal Stops the requests.
   * @returns How it went.
   */
  async write(annotations: Record<string, string>, signal?: AbortSignal): Promise<WriteOutcome> {
    this.#error = undefined;
    const incarnation = annotations[INCARNATION_ANNOTATION];
    try {
      if (this.#body) {
        try {
          await this.#put(this.#body, annotations, signal);
          this.#written = incarnation;
          return "held";
        } catch (e) {
          if (!(e instanceof ConflictError) && !(e instanceof NotFoundError)) throw e;
        }
      }
      // The first write, or the Lease changed since our last one: read it.
      const lease = await readLease(this.#o.api, this.#o.namespace, this.name, { signal });
      this.#body = lease?.body;
      if (this.#written !== undefined && incarnation === this.#written) {
        // The same incarnation goes on only if the Lease is still as we left it.
        const theirs = lease ? annotationsOf(lease.body)[INCARNATION_ANNOTATION] : undefined;
        if (!lease || lease.record.holderIdentity !== this.#o.identity || theirs !== incarnation) {
          this.#body = undefined; // not ours to renew or to delete
          return "lost";
        }
      }
      if (lease) await this.#put(lease.body, annotations, signal);
      else await this.#create(annotations, signal);
      this.#written = incarnation;
      return "held";
    } catch (e) {
      signal?.throwIfAborted();
      this.#error = e;
      this.#body = undefined; // read it anew next time
      return "failed";
    }
  }

  /**
   * Deletes the Lease if it is still as we last wrote it (a graceful exit: the others take this
   * replica's objects at once, without waiting for the expiry).
   *
   * @param signal Stops the request.
   * @returns Whether it is gone (false: it changed since, or the request failed).
   */
  async delete(signal?: AbortSignal): Promise<boolean> {
    const rv = this.#body?.metadata?.resourceVersion;
    if (!rv) return false;
    try {
      await deleteObject(this.#o.api, LEASES, this.#o.namespace, this.name, {
        preconditions: { resourceVersion: rv },
        signal,
      });
      this.#body = undefined;
      return true;
    } catch (e) {
      this.#error = e;
      return false;
    }
  }

  async #create(
    annotations: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const now = formatMicroTime(this.#clock.date());
    this.#body = await createObject(this.#o.api, LEASES, this.#o.namespace, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: this.name, labels: { [SHARD_GROUP_LABEL]: this.#o.group }, annotations },
      spec: leaseSpecOf({
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: this.#o.leaseDuration,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      }),
    }, { signal });
  }

  async #put(
    body: RawBody,
    annotations: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const old = leaseRecordOf(body);
    const now = formatMicroTime(this.#clock.date());
    const same = old.holderIdentity === this.#o.identity &&
      annotationsOf(body)[INCARNATION_ANNOTATION] === annotations[INCARNATION_ANNOTATION];
    const record: LeaseRecord = {
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: this.#o.leaseDuration,
      acquireTime: same ? old.acquireTime ?? now : now,
      renewTime: now,
      leaseTransitions: same
        ? old.leaseTransitions
        : old.leaseTransitions + (old.acquireTime ? 1 : 0),
    };
    const metadata = body.metadata ?? {};
    const lease = await updateLease(
      this.#o.api,
      {
        ...body,
        metadata: {
          ...metadata,
          labels: { ...labelsOf(body), [SHARD_GROUP_LABEL]: this.#o.group },
          annotations: { ...annotationsOf(body), ...annotations },
        },
      },
      record,
      { signal },
    );
    this.#body = lease.body;
  }
}

function annotationsOf(body: RawBody): Record<string, string> {
  return (body.metadata?.annotations ?? {}) as Record<string, string>;
}

function labelsOf(body: RawBody): Record<string, string> {
  return (body.metadata?.labels ?? {}) as Record<string, string>;
}

/** One member Lease as this replica has seen it. */
interface Seen {
  body: RawBody;
  observation: LeaseObservation;
}

/**
 * Everyone's member Leases as this replica sees them: fed by a watch, judged by the observed-time
 * rule. Which members are live, when the next one expires, and which are expired (to delete).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { MemberTable } from "./shard_leases.ts";
 * const clock = new FakeClock();
 * const table = new MemberTable(clock);
 * table.apply("ADDED", {
 *   metadata: { name: "kopf-b", resourceVersion: "1", annotations: { "kopf.dev/shard-incarnation": "y1" } },
 *   spec: { holderIdentity: "b", leaseDurationSeconds: 2, renewTime: "2026-01-01T00:00:00.000000Z" },
 * });
 * assert.deepEqual([table.members().map((m) => m.id), table.expired().length], [["b"], 0]);
 * await clock.advance(2);
 * assert.deepEqual(table.expired().length, 1); // — to be deleted; a member until then
 * ```
 */
export class MemberTable {
  readonly #clock: Clock;
  readonly #leases = new Map<string, Seen>();

  /** @param clock Whose time counts (default: the real clock). */
  constructor(clock: Clock = realClock) {
    this.#clock = clock;
  }

  /**
   * Takes in a watch event of a member Lease.
   *
   * @param type The event's type (null for a listing).
   * @param body The Lease.
   */
  apply(type: "ADDED" | "MODIFIED" | "DELETED" | null, body: RawBody): void {
    const name = body.metadata?.name ?? "";
    if (type === "DELETED") {
      this.#leases.delete(name);
      return;
    }
    let seen = this.#leases.get(name);
    if (!seen) {
      this.#leases.set(name, seen = { body, observation: new LeaseObservation(this.#clock) });
    }
    seen.body = body;
    seen.observation.observe(leaseRecordOf(body));
  }

  /**
   * Forgets a Lease (we deleted it) until the watch shows it again.
   *
   * @param name The Lease's name.
   */
  remove(name: string): void {
    this.#leases.delete(name);
  }

  /**
   * The members: Leases with a holder and an incarnation (also expired ones not deleted yet: a
   * member is gone only once its Lease is).
   *
   * @returns Their published states.
   */
  members(): MemberState[] {
    const out: MemberState[] = [];
    for (const { body } of this.#leases.values()) {
      const state = memberOf(body as Parameters<typeof memberOf>[0]);
      if (state) out.push(state);
    }
    return out;
  }

  /**
   * The Leases not changed for their duration on our clock (with a holder, or released).
   *
   * @returns Their bodies (the resourceVersion is the delete's precondition).
   */
  expired(): RawBody[] {
    const now = this.#clock.now();
    return [...this.#leases.values()].filter((s) => !s.observation.valid(now)).map((s) => s.body);
  }

  /**
   * When the next Lease expires unless it changes (monotonic ms of the clock).
   *
   * @returns The time, or undefined with no Leases that can expire.
   */
  nextExpiry(): number | undefined {
    const now = this.#clock.now();
    let next: number | undefined;
    for (const { observation } of this.#leases.values()) {
      if (!observation.valid(now)) continue;
      if (next === undefined || observation.expiresAt < next) next = observation.expiresAt;
    }
    return next;
  }
}
