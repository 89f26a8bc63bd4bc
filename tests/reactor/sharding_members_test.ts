/**
 * The membership loops of sharding (reactor/sharding.ts) in one process, on the embedded API
 * server with short durations: two replicas join and acknowledge each other's view; a member
 * whose Lease stops changing is deleted (its resourceVersion as the precondition) and its share
 * goes to the others; a replica whose Lease was deleted behind its back fences itself and rejoins
 * with a new incarnation; a graceful leave deletes the Lease at once; the gauges on /metrics.
 */

import assert from "node:assert/strict";
import { OperatorMetrics, OperatorSettings } from "../../mod.ts";
import { deleteObject } from "../../src/cogs/clients/deleting.ts";
import { LEASES, listLeases, readLease } from "../../src/cogs/clients/leases.ts";
import { MemberLease } from "../../src/core/engines/shard_leases.ts";
import { memberAnnotations, memberOf } from "../../src/core/engines/sharding.ts";
import { type ShardingTasks, startSharding } from "../../src/core/reactor/sharding.ts";
import type { LogRecord } from "../../src/core/actions/loggers.ts";
import { setup } from "../clients/_setup.ts";
import { until } from "./_setup.ts";

function settings(): OperatorSettings {
  const s = new OperatorSettings();
  s.sharding.enabled = true;
  s.sharding.leaseDuration = 2;
  s.sharding.renewDeadline = 1.5;
  s.sharding.renewPeriod = 0.2;
  return s;
}

Deno.test("sharding members: join, expiry of a silent member, a lost Lease, a graceful leave", async () => {
  await using env = await setup();
  const lines: string[] = [];
  const sink = (r: LogRecord) => void lines.push(`${r.message}`);
  const metrics = new OperatorMetrics();
  const start = (identity: string) =>
    startSharding({
      api: env.api,
      settings: settings(),
      sink,
      namespaces: undefined,
      identity,
      ...(identity === "a" ? { metrics } : {}),
    });
  const shards: ShardingTasks[] = [];
  try {
    const a = start("a");
    const b = start("b");
    shards.push(a, b);
    const ga = a.gate!;
    const gb = b.gate!;
    await until(() => ga.members === 2 && gb.members === 2, "both see both");
    await until(() => ga.acknowledged && gb.acknowledged, "both acknowledged the view");
    const uids = Array.from({ length: 200 }, (_, i) => `uid-${i}`);
    const owned = (g: typeof ga) => uids.filter((u) => g.admits(u)).length;
    assert.equal(owned(ga) + owned(gb), 200, "every object admitted on exactly one");
    assert.ok(uids.every((u) => ga.admits(u) !== gb.admits(u)));

    // A third member writes its Lease once and goes silent (killed): deleted after 2 s.
    const silent = new MemberLease({
      api: env.api,
      namespace: "default",
      group: "kopf",
      identity: "c",
      leaseDuration: 2,
    });
    assert.equal(
      await silent.write(
        memberAnnotations({ id: "c", incarnation: "c1", view: new Map(), releasing: [] }),
      ),
      "held",
    );
    await until(() => ga.members === 3 && gb.members === 3, "c is seen");
    assert.equal(ga.acknowledged, false, "c never acknowledges: no gains meanwhile");
    await until(
      async () => (await readLease(env.api, "default", "kopf-c")) === undefined,
      "c's Lease deleted once expired",
    );
    await until(() => ga.members === 2 && ga.acknowledged && gb.acknowledged, "back to two");
    assert.ok(lines.some((l) => l.includes("The member Lease 'kopf-c' has expired")));

    // a's Lease deleted behind its back: a fences and rejoins with a new incarnation.
    const before = memberOf((await readLease(env.api, "default", "kopf-a"))!.body as never)!;
    const rv = (await readLease(env.api, "default", "kopf-a"))!.body.metadata?.resourceVersion;
    await deleteObject(env.api, LEASES, "default", "kopf-a", {
      preconditions: { resourceVersion: rv! },
    });
    await until(
      () => lines.some((l) => l.includes("'kopf-a' was deleted or taken by another replica")),
      "a notices",
    );
    await until(async () => {
      const now = await readLease(env.api, "default", "kopf-a");
      return !!now && memberOf(now.body as never)!.incarnation !== before.incarnation;
    }, "a rejoins with a new incarnation");
    await until(() => ga.acknowledged && gb.acknowledged, "the new incarnation acknowledged");

    const text = await metrics.metrics();
    assert.match(text, /^kopf_shard_members\{group="kopf"\} 2$/m);
    assert.match(text, /^kopf_shard_releasing_objects\{group="kopf"\} 0$/m);

    // A graceful leave: b's Lease is gone at once, a is alone and takes everything.
    await b.leave();
    shards.splice(shards.indexOf(b), 1);
    assert.deepEqual(
      (await listLeases(env.api, "default")).map((l) => l.record.holderIdentity),
      ["a"],
    );
    await until(() => ga.members === 1 && uids.every((u) => ga.admits(u)), "a takes all");
  } finally {
    for (const s of shards) await s.leave();
  }
});
