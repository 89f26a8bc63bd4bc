/**
 * A replica starting in a shard group that has a silent member (a Lease written once and never
 * renewed — a pod killed in a rolling update): its watches wait for the group's first fresh point
 * at most the renew deadline, so it lists, turns ready (the health probe) and serves while that
 * member's Lease is still there; the objects wait, unread, until the member expires, and are then
 * handled once each on the relist that its going asks for — no take-over GET.
 */

import assert from "node:assert/strict";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { readLease } from "../../src/cogs/clients/leases.ts";
import { MemberLease } from "../../src/core/engines/shard_leases.ts";
import { memberAnnotations } from "../../src/core/engines/sharding.ts";
import { createKopfExampleCrd, KOPFEXAMPLES, setup } from "../clients/_setup.ts";
import { OperatorProcess } from "../examples/_process.ts";
import { servedAt } from "../engines/_metrics.ts";
import { ROOT, until } from "./_setup.ts";

const HANDLERS = `import * as kopf from "${ROOT}mod.ts";
kopf.on.startup(({ settings }) => {
  settings.posting.enabled = false;
  settings.sharding.renewPeriod = 0.5;
  settings.sharding.renewDeadline = 1; // the longest wait for the group's first fresh point
});
kopf.on.create("kopfexamples", ({ name }) => console.log(\`handled \${name}\`));
`;

Deno.test("sharding: a replica beside a silent member is ready before that member expires; its objects wait for it, unread, and are handled once", async () => {
  await using env = await setup();
  await createKopfExampleCrd(env.api);
  const names = Array.from({ length: 5 }, (_, i) => `kex-${i}`);
  for (const name of names) {
    await createObject(env.api, KOPFEXAMPLES, "default", {
      metadata: { name },
      spec: { field: "v" },
    });
  }
  const ghost = new MemberLease({
    api: env.api,
    namespace: "default",
    group: "kopf",
    identity: "ghost",
    leaseDuration: 6,
  });
  const state = memberAnnotations({
    id: "ghost",
    incarnation: "g1",
    view: new Map(),
    releasing: [],
  });
  assert.equal(await ghost.write(state), "held");
  const dir = await Deno.makeTempDir({ prefix: "kopf-sharding-start-" });
  const file = `${dir}/handlers.ts`;
  await Deno.writeTextFile(file, HANDLERS);
  const proc = new OperatorProcess(
    ["run", "-A", "--shards", "--liveness", "http://127.0.0.1:0/healthz", file],
    { KUBECONFIG: env.server.kubeconfig.path, POD_ID: "replica-1", NO_COLOR: "1" },
  );
  const gets = () => env.server.server.requestCounts.get("get kopfexamples.kopf.dev 200") ?? 0;
  try {
    await proc.waitFor("Serving health status at", 20);
    const healthz = new URL("/healthz", servedAt(proc.output)!);
    await until(async () => (await fetch(healthz)).status === 200, "the probe says ready", 20);
    assert.ok(
      await readLease(env.api, "default", ghost.name),
      "ready while the silent member's Lease is still there",
    );
    assert.doesNotMatch(proc.output, /handled/, "nothing handled while the member may still run");
    await until(
      () => names.every((n) => proc.output.includes(`handled ${n}\n`)),
      "every object handled once the silent member expired",
      30,
    );
    assert.equal(await readLease(env.api, "default", ghost.name), undefined);
    assert.equal(gets(), 0, "no take-over read: the relist at the member's going brought them");
    for (const n of names) {
      assert.equal(proc.output.split(`handled ${n}\n`).length - 1, 1, `${n} handled once`);
    }
  } finally {
    await proc.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
