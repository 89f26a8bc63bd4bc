/**
 * Member Leases of a shard group on the embedded API server: this replica's own Lease (created
 * with the group's label and the published state, renewed over its own last write, lost when
 * someone deletes or rewrites it, taken over by a new incarnation of the same identity, deleted
 * at a graceful exit only if unchanged) and the table of everyone's (client-go's observed-time
 * rule on a fake clock).
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { deleteObject } from "../../src/cogs/clients/deleting.ts";
import { LEASES, listLeases, readLease } from "../../src/cogs/clients/leases.ts";
import { MemberLease, memberLeaseName, MemberTable } from "../../src/core/engines/shard_leases.ts";
import { memberAnnotations, memberOf } from "../../src/core/engines/sharding.ts";
import { setup } from "../clients/_setup.ts";

const state = (incarnation: string, releasing: string[] = []) =>
  memberAnnotations({
    id: "replica-1",
    incarnation,
    view: new Map([["replica-1", incarnation]]),
    releasing,
  });

Deno.test("memberLeaseName(): the group and a valid name; a hash when the identity had to change", () => {
  assert.equal(memberLeaseName("kopf", "replica-1"), "kopf-replica-1");
  const a = memberLeaseName("kopf", "Me@Host/20260101/abc");
  const b = memberLeaseName("kopf", "me@host/20260101/abc");
  assert.match(a, /^kopf-me-host-20260101-abc-[0-9a-z]+$/);
  assert.notEqual(a, b, "identities that clean up alike keep apart");
});

Deno.test("MemberLease: created with the label and the state, renewed over its own write, deleted at exit", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const lease = new MemberLease({
    api: env.api,
    namespace: "default",
    group: "g1",
    identity: "replica-1",
    leaseDuration: 3,
    clock,
  });
  assert.equal(await lease.write(state("x1")), "held");
  const first = (await readLease(env.api, "default", "g1-replica-1"))!;
  assert.equal(first.body.metadata?.labels?.["kopf.dev/shard-group" as never], "g1");
  assert.deepEqual(first.record, {
    holderIdentity: "replica-1",
    leaseDurationSeconds: 3,
    acquireTime: "2026-01-01T00:00:00.000000Z",
    renewTime: "2026-01-01T00:00:00.000000Z",
    leaseTransitions: 0,
  });
  assert.equal(memberOf(first.body as never)?.incarnation, "x1");

  await clock.advance(1);
  assert.equal(await lease.write(state("x1", ["uid-9"])), "held");
  const second = (await readLease(env.api, "default", "g1-replica-1"))!;
  assert.equal(second.record.renewTime, "2026-01-01T00:00:01.000000Z");
  assert.equal(second.record.acquireTime, "2026-01-01T00:00:00.000000Z");
  assert.deepEqual(memberOf(second.body as never)?.releasing, ["uid-9"]);
  assert.deepEqual(
    (await listLeases(env.api, "default", { labelSelector: "kopf.dev/shard-group=g1" })).length,
    1,
  );
  assert.ok(await lease.delete());
  assert.equal(await readLease(env.api, "default", "g1-replica-1"), undefined);
});

Deno.test("MemberLease: deleted by the others, the same incarnation is lost; a new one re-creates it", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const opts = { api: env.api, namespace: "default", group: "g1", identity: "replica-1" };
  const lease = new MemberLease({ ...opts, leaseDuration: 3, clock });
  assert.equal(await lease.write(state("x1")), "held");
  // Another replica saw it expire and deleted it (with its resourceVersion as the precondition).
  const rv = (await readLease(env.api, "default", lease.name))!.body.metadata?.resourceVersion;
  await deleteObject(env.api, LEASES, "default", lease.name, {
    preconditions: { resourceVersion: rv! },
  });
  assert.equal(await lease.write(state("x1")), "lost", "our incarnation is over");
  assert.equal(await lease.write(state("x1")), "lost", "and stays over");
  assert.equal(await lease.write(state("x2")), "held", "a new incarnation joins anew");
  const now = (await readLease(env.api, "default", lease.name))!;
  assert.equal(memberOf(now.body as never)?.incarnation, "x2");

  // A restart (kill -9 and start again with the same identity): a new process, a new
  // incarnation, takes the Lease over at once (client-go: the same holder renews).
  const restarted = new MemberLease({ ...opts, leaseDuration: 3, clock });
  assert.equal(await restarted.write(state("x3")), "held");
  const after = (await readLease(env.api, "default", lease.name))!;
  assert.equal(memberOf(after.body as never)?.incarnation, "x3");
  assert.equal(after.record.leaseTransitions, 1, "a new incarnation is a new holding");
  // The old process (were it alive) has lost it, and cannot delete the new one's Lease.
  assert.equal(await lease.write(state("x2")), "lost");
  assert.equal(await lease.delete(), false);
  assert.ok(await readLease(env.api, "default", lease.name));
});

Deno.test("MemberTable: live by the observed-time rule; expired ones stay members until deleted", async () => {
  const clock = new FakeClock();
  const table = new MemberTable(clock);
  const lease = (name: string, holder: string, renew: string, rv: string) => ({
    metadata: {
      name,
      resourceVersion: rv,
      annotations: memberAnnotations({
        id: holder,
        incarnation: `${holder}1`,
        view: new Map(),
        releasing: [],
      }),
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: 2, renewTime: renew },
  });
  table.apply(null, lease("g-a", "a", "2020-01-01T00:00:00.000000Z", "1")); // long ago, remotely
  table.apply(null, lease("g-b", "b", "2020-01-01T00:00:00.000000Z", "2"));
  assert.deepEqual(table.members().map((m) => m.id).sort(), ["a", "b"]);
  assert.equal(table.nextExpiry(), 2000, "2 s from when we saw them, whatever their renewTime");
  await clock.advance(1.5);
  table.apply("MODIFIED", lease("g-a", "a", "2020-01-01T00:00:01.000000Z", "3")); // a renews
  await clock.advance(0.5);
  assert.deepEqual(table.expired().map((b) => b.metadata?.name), ["g-b"]);
  assert.deepEqual(table.members().map((m) => m.id).sort(), ["a", "b"], "until its Lease is gone");
  table.remove("g-b");
  assert.deepEqual(table.members().map((m) => m.id), ["a"]);
  assert.equal(table.nextExpiry(), 3500);
  table.apply("DELETED", lease("g-a", "a", "", "4"));
  assert.deepEqual(table.members(), []);
  // A released Lease (no holder) is no member.
  table.apply(null, { ...lease("g-c", "", "2020-01-01T00:00:00.000000Z", "5") });
  assert.deepEqual(table.members(), []);
});
