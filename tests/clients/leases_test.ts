import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { ConflictError } from "../../src/cogs/clients/errors.ts";
import {
  formatMicroTime,
  LeaseLock,
  type LeaseLockOptions,
  LEASES,
  listLeases,
  readLease,
  updateLease,
} from "../../src/cogs/clients/leases.ts";
import type { ApiClient } from "../../src/cogs/clients/api.ts";
import { setup } from "./_setup.ts";

const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

function locks(api: ApiClient, clock: FakeClock, extra: Partial<LeaseLockOptions> = {}) {
  const opts = { api, clock, namespace: "default", name: "lock", leaseDuration: 2, ...extra };
  return {
    a: new LeaseLock({ ...opts, identity: "a" }),
    b: new LeaseLock({ ...opts, identity: "b" }),
  };
}

Deno.test("formatMicroTime() writes RFC 3339 micro time in UTC", () => {
  assert.equal(
    formatMicroTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6))),
    "2026-01-02T03:04:05.006000Z",
  );
});

Deno.test("tryAcquireOrRenew() creates an absent Lease with client-go's fields", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  assert.ok(a.isLeader);
  const lease = await readLease(env.api, "default", "lock");
  assert.equal(lease?.body.kind, "Lease");
  assert.deepEqual(lease?.record, {
    holderIdentity: "a",
    leaseDurationSeconds: 2,
    acquireTime: "2026-01-01T00:00:00.000000Z",
    renewTime: "2026-01-01T00:00:00.000000Z",
    leaseTransitions: 0,
  });
  assert.match(lease!.record.renewTime!, MICRO);
});

Deno.test("tryAcquireOrRenew() by the holder renews: renewTime moves, acquireTime and transitions stay", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  await clock.advance(1.25);
  assert.ok(await a.tryAcquireOrRenew());
  const { record } = (await readLease(env.api, "default", "lock"))!;
  assert.equal(record.acquireTime, "2026-01-01T00:00:00.000000Z");
  assert.equal(record.renewTime, "2026-01-01T00:00:01.250000Z");
  assert.equal(record.leaseTransitions, 0);
  assert.equal(record.holderIdentity, "a");
});

Deno.test("a held Lease is free only when it has not changed for its duration on OUR clock", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a, b } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  assert.ok(!(await b.tryAcquireOrRenew())); // b sees it first at t=0
  assert.equal(b.holder, "a");
  await clock.advance(1.5);
  assert.ok(await a.tryAcquireOrRenew()); // a renews at t=1.5
  await clock.advance(1);
  assert.ok(!(await b.tryAcquireOrRenew())); // b sees the change at t=2.5: valid till 4.5
  await clock.advance(1.9);
  assert.ok(!(await b.tryAcquireOrRenew())); // t=4.4: still valid
  await clock.advance(0.1);
  assert.ok(await b.tryAcquireOrRenew()); // t=4.5: expired; b takes over
  const { record } = (await readLease(env.api, "default", "lock"))!;
  assert.equal(record.holderIdentity, "b");
  assert.equal(record.leaseTransitions, 1);
  assert.equal(record.acquireTime, formatMicroTime(clock.date()));
});

Deno.test("the remote renewTime is not compared with our clock: an old-looking Lease is valid for a full duration after we first see it", async () => {
  await using env = await setup();
  await createObject(env.api, LEASES, "default", {
    metadata: { name: "lock" },
    spec: {
      holderIdentity: "elsewhere",
      leaseDurationSeconds: 2,
      renewTime: "2000-01-01T00:00:00.000000Z",
      acquireTime: "2000-01-01T00:00:00.000000Z",
      leaseTransitions: 7,
    },
  });
  const clock = new FakeClock();
  const { b } = locks(env.api, clock);
  assert.ok(!(await b.tryAcquireOrRenew()));
  await clock.advance(1.99);
  assert.ok(!(await b.tryAcquireOrRenew()));
  await clock.advance(0.01);
  assert.ok(await b.tryAcquireOrRenew());
  assert.equal(b.observed?.leaseTransitions, 8);
});

Deno.test("release() clears the holder with client-go's ReleaseOnCancel record; a candidate takes it at once", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a, b } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  assert.ok(!(await b.tryAcquireOrRenew()));
  await clock.advance(0.5);
  assert.ok(await a.release());
  assert.ok(!a.isLeader);
  const { record } = (await readLease(env.api, "default", "lock"))!;
  assert.deepEqual(record, {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: "2026-01-01T00:00:00.500000Z",
    renewTime: "2026-01-01T00:00:00.500000Z",
    leaseTransitions: 0,
  });
  assert.ok(await b.tryAcquireOrRenew()); // no wait: no holder
  assert.equal(b.observed?.leaseTransitions, 1);
  assert.equal(b.observed?.leaseDurationSeconds, 2);
  assert.ok(await a.release()); // not ours: nothing to do
  assert.equal((await readLease(env.api, "default", "lock"))?.record.holderIdentity, "b");
});

Deno.test("a holder that lost the Lease does not renew over the new holder (optimistic concurrency)", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a, b } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  assert.ok(!(await b.tryAcquireOrRenew()));
  await clock.advance(2);
  assert.ok(await b.tryAcquireOrRenew()); // a did not renew: b takes it
  // a's next try reads b's record: held and valid — a stays a candidate.
  assert.ok(!(await a.tryAcquireOrRenew()));
  assert.equal(a.holder, "b");
  assert.ok(!a.isLeader);
  assert.ok(await a.release()); // not ours any more: leaves b alone
  assert.equal((await readLease(env.api, "default", "lock"))?.record.holderIdentity, "b");
});

Deno.test("the fast path's conflict falls back to the slow path and sees the new holder", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  // Someone else writes itself in (e.g. a broken peer) while a's lease is valid.
  const lease = (await readLease(env.api, "default", "lock"))!;
  await updateLease(env.api, lease.body, { ...lease.record, holderIdentity: "intruder" });
  await clock.advance(0.5);
  assert.ok(!(await a.tryAcquireOrRenew()));
  assert.ok(a.lastError instanceof ConflictError || a.lastError === undefined);
  assert.equal(a.holder, "intruder");
});

Deno.test("updateLease() with a stale version is a ConflictError", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a } = locks(env.api, clock);
  assert.ok(await a.tryAcquireOrRenew());
  const stale = (await readLease(env.api, "default", "lock"))!;
  await clock.advance(0.5);
  assert.ok(await a.tryAcquireOrRenew());
  await assert.rejects(updateLease(env.api, stale.body, stale.record), ConflictError);
});

Deno.test("two candidates racing for a free Lease: exactly one wins", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a, b } = locks(env.api, clock);
  const c = new LeaseLock({
    api: env.api,
    clock,
    namespace: "default",
    name: "lock",
    leaseDuration: 2,
    identity: "c",
  });
  assert.ok(await c.tryAcquireOrRenew());
  assert.ok(!(await a.tryAcquireOrRenew()));
  assert.ok(!(await b.tryAcquireOrRenew()));
  await clock.advance(2);
  const won = await Promise.all([a.tryAcquireOrRenew(), b.tryAcquireOrRenew()]);
  assert.equal(won.filter(Boolean).length, 1);
  const holder = (await readLease(env.api, "default", "lock"))!.record.holderIdentity;
  assert.equal(holder, won[0] ? "a" : "b");
});

Deno.test("labels of a created Lease; listLeases() by label", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a } = locks(env.api, clock, { labels: { "kopf.dev/shard-group": "g1" } });
  const other = new LeaseLock({
    api: env.api,
    clock,
    namespace: "default",
    name: "other",
    leaseDuration: 2,
    identity: "x",
  });
  assert.ok(await a.tryAcquireOrRenew());
  assert.ok(await other.tryAcquireOrRenew());
  const leases = await listLeases(env.api, "default", { labelSelector: "kopf.dev/shard-group=g1" });
  assert.deepEqual(leases.map((l) => l.body.metadata?.name), ["lock"]);
  assert.equal(leases[0]?.record.holderIdentity, "a");
});

Deno.test("tryAcquireOrRenew() rejects with the signal's reason when it aborts; API failures are false with lastError", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const { a } = locks(env.api, clock);
  const signal = AbortSignal.abort(new Error("stop"));
  await assert.rejects(a.tryAcquireOrRenew({ signal }), /stop/);
  env.server.setFaults({ rate500: 1 });
  assert.ok(!(await a.tryAcquireOrRenew()));
  assert.ok(a.lastError instanceof Error);
  env.server.setFaults({ rate500: 0 });
  assert.ok(await a.tryAcquireOrRenew());
});
