/**
 * Sharding removes an expired member only if its Lease is unchanged: the observer deletes it
 * with the resourceVersion it last saw as the precondition, so a member that renewed after all
 * (the observer's watch lags) stays — no replica takes over the objects of a member that is
 * still renewing. On the embedded API server with a lagging watch of Leases (`watchDelayMs`):
 * the delete is refused (409), the Lease is kept, and is removed only once it really stops
 * changing.
 */

import assert from "node:assert/strict";
import { OperatorSettings } from "../../mod.ts";
import { readLease } from "../../src/cogs/clients/leases.ts";
import type { LogRecord } from "../../src/core/actions/loggers.ts";
import { MemberLease } from "../../src/core/engines/shard_leases.ts";
import { memberAnnotations } from "../../src/core/engines/sharding.ts";
import { startSharding } from "../../src/core/reactor/sharding.ts";
import { setup } from "../clients/_setup.ts";
import { delay, until } from "./_setup.ts";

Deno.test("sharding: an expired member that renewed meanwhile is not deleted (its resourceVersion is the delete's precondition)", async () => {
  // Leases reach the observer 2 s late; a member expires after 2 s unchanged on its clock.
  await using env = await setup({
    faults: { watchDelayMs: 2000, watchDelayResources: ["leases"] },
  });
  const settings = new OperatorSettings();
  settings.sharding.enabled = true;
  settings.sharding.leaseDuration = 2;
  settings.sharding.renewDeadline = 1.5;
  settings.sharding.renewPeriod = 0.2;
  const lines: string[] = [];
  const a = startSharding({
    api: env.api,
    settings,
    sink: (r: LogRecord) => void lines.push(r.message),
    namespaces: undefined,
    identity: "a",
  });
  try {
    const gate = a.gate!;
    await until(() => gate.members === 1, "a sees itself", 15);
    const c = new MemberLease({
      api: env.api,
      namespace: "default",
      group: "kopf",
      identity: "c",
      leaseDuration: 2,
    });
    const state = memberAnnotations({ id: "c", incarnation: "c1", view: new Map(), releasing: [] });
    assert.equal(await c.write(state), "held");
    // a sees c 2 s late (at s) and would expire it at s + 2; c renews at s + 1, which a sees
    // only at s + 3: at s + 2, a's delete carries the stale resourceVersion.
    await until(() => gate.members === 2, "a sees c");
    await delay(1000);
    assert.equal(await c.write(state), "held", "c renews");
    const conflicts = () =>
      env.server.server.requestCounts.get("delete leases.coordination.k8s.io 409") ?? 0;
    await until(() => conflicts() > 0, "a's delete of c's Lease refused with 409 Conflict");
    assert.ok(await readLease(env.api, "default", c.name), "c's Lease is kept");
    assert.ok(!lines.some((l) => l.includes(`'${c.name}' has expired`)), lines.join("\n"));
    assert.equal(gate.members, 2, "c is still a member");

    // c stays silent: now it expires for real, and its Lease is deleted.
    await until(
      async () => (await readLease(env.api, "default", c.name)) === undefined,
      "c's Lease deleted once unchanged for 2 s",
    );
    assert.ok(lines.some((l) => l.includes(`The member Lease '${c.name}' has expired`)));
    await until(() => gate.members === 1, "a alone");
  } finally {
    await a.leave();
  }
});
