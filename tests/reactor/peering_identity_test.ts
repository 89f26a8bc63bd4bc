/**
 * The `identity` option of `kopf.operator()`/`kopf.spawnTasks()` (Kopf's
 * `kopf.operator(identity=...)`): the key of the operator's entry in the peering object, on the
 * embedded API server; a bad one is refused in one line.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { applyPeering, peeringStatus } from "./_peering.ts";
import { cluster, until } from "./_setup.ts";

Deno.test("peering: operator({ identity }) and spawnTasks({ identity }) are the peers' keys in the peering object", async () => {
  await using c = await cluster();
  await applyPeering(c);
  const lines: string[] = [];
  const common = {
    kubeconfig: c.api.kubeconfig.path,
    clusterwide: true,
    logging: {
      format: "plain" as const,
      level: "debug" as const,
      write: (l: string) => lines.push(l),
    },
  };
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, () => {});
  const stopA = new AbortController();
  const stopB = new AbortController();
  const a = kopf.operator({ ...common, registry, identity: "operator-a", signal: stopA.signal });
  const tasks = await kopf.spawnTasks({
    ...common,
    registry,
    identity: "operator-b",
    priority: 5,
    signal: stopB.signal,
  });
  const b = kopf.runTasks(tasks);
  try {
    await until(async () => {
      const ids = Object.keys(await peeringStatus(c)).sort();
      return ids.join() === "operator-a,operator-b";
    }, "both identities in the peering object");
    await until(
      () => lines.some((l) => l.includes("Pausing operations in favour of [<Peer operator-b:")),
      "operator-a pauses for operator-b by its identity",
    );
  } finally {
    stopA.abort();
    stopB.abort();
    await Promise.all([a, b]);
  }
  assert.deepEqual(await peeringStatus(c), {}, "both left by their identities");
});

Deno.test("peering: an empty identity is refused in one line", async () => {
  for (const identity of ["", "  ", 42]) {
    await assert.rejects(
      kopf.operator({ identity: identity as string, registry: new kopf.OperatorRegistry() }),
      (e: Error) => {
        assert.equal(e.name, "OperatorError");
        assert.ok(!e.message.includes("\n"));
        assert.match(e.message, /^kopf\.operator\(\): identity must be a non-empty string/);
        return true;
      },
    );
  }
});
