/**
 * Owned children end to end (`kopf.on.reconcile`), over real HTTP against the
 * embedded API server: an EphemeralVolumeClaim whose reconciler keeps one
 * PersistentVolumeClaim (created with the handler's `api`, adopted). Deleting
 * the child brings the parent's reconciler back within a second, and it
 * re-creates the child; a burst of 100 changes of the child is a handful of
 * calls, never two at once, the last one after the last change and seeing
 * it; deleting the parent makes no more calls while the API server's garbage
 * collector deletes the child.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { call, cluster, crd, delay, until } from "./_setup.ts";

const EVC_CRD = crd({
  group: "kopf.dev",
  plural: "ephemeralvolumeclaims",
  kind: "EphemeralVolumeClaim",
  scope: "Namespaced",
  shortNames: ["evc"],
});
const EVCS = "/apis/kopf.dev/v1/namespaces/default/ephemeralvolumeclaims";
const PVCS = "/api/v1/namespaces/default/persistentvolumeclaims";

interface Call {
  /** When it started (performance.now() ms). */
  at: number;
  /** The uids of the children it was given. */
  pvcs: string[];
  /** The children's `metadata.labels.round`. */
  rounds: (string | undefined)[];
}

Deno.test("reconcile: a deleted child brings its parent back within a second, which re-creates it; bursts are debounced; a deleted parent is left alone", async () => {
  await using c = await cluster();
  await c.createCrd(EVC_CRD);
  const registry = new kopf.OperatorRegistry();
  const calls: Call[] = [];
  let active = 0;
  let most = 0;
  kopf.on.reconcile(
    "ephemeralvolumeclaims",
    { registry, owns: ["persistentvolumeclaims"], debounce: 0.2 },
    async function ensurePvc({ name, namespace, spec, children, api, patch }) {
      const pvcs = children.persistentvolumeclaims;
      calls.push({
        at: performance.now(),
        pvcs: pvcs.map((p) => p.metadata.uid),
        rounds: pvcs.map((p) => p.metadata.labels?.round),
      });
      most = Math.max(most, ++active);
      try {
        await delay(30); // a call that takes a while: overlapping calls would show
        if (!pvcs.length) {
          const pvc = {
            metadata: { name },
            spec: {
              accessModes: ["ReadWriteOnce"],
              resources: { requests: { storage: spec.size ?? "1Gi" } },
            },
          };
          kopf.adopt(pvc);
          await api.create("persistentvolumeclaims", pvc, { namespace });
        }
        patch.status.pvcs = pvcs.length;
      } finally {
        active--;
      }
    },
  );
  const pvcOf = async () => (await c.call("GET", `${PVCS}/evc1`, undefined, [404])).body;
  const evcOf = async () => (await c.call("GET", `${EVCS}/evc1`, undefined, [404])).body;

  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    // The parent: its reconciler creates the child (owned by it).
    const evc = (await c.call("POST", EVCS, {
      apiVersion: "kopf.dev/v1",
      kind: "EphemeralVolumeClaim",
      metadata: { name: "evc1" },
      spec: { size: "2Gi" },
    })).body;
    await until(async () => (await pvcOf())?.metadata?.uid !== undefined, "the child");
    const first = await pvcOf();
    assert.equal(first.metadata.ownerReferences[0].uid, evc.metadata.uid);
    assert.equal(first.spec.resources.requests.storage, "2Gi");
    await until(() => calls.some((x) => x.pvcs.includes(first.metadata.uid)), "a call seeing it");
    await until(async () => (await evcOf())?.status?.pvcs === 1, "status.pvcs = 1");

    // Deleting the child brings the parent's reconciler back at once; it re-creates it.
    const deleted = performance.now();
    await c.call("DELETE", `${PVCS}/evc1`);
    await until(async () => {
      const uid = (await pvcOf())?.metadata?.uid;
      return uid !== undefined && uid !== first.metadata.uid;
    }, "the child re-created");
    const recreated = performance.now();
    const back = calls.find((x) => x.at > deleted)!;
    assert.ok(back, "a call after the deletion");
    assert.deepEqual(back.pvcs, [], "it saw the child gone");
    // Real time (the operator's watches over HTTP): the child's deletion event brings the
    // reconciler back after its 0.2-s debounce; without that event it would never come (no
    // resync here). 5 s holds that apart on a loaded 2-core machine.
    assert.ok(back.at - deleted < 5000, `called back ${(back.at - deleted).toFixed(0)} ms after`);
    assert.ok(
      recreated - deleted < 5000,
      `re-created ${(recreated - deleted).toFixed(0)} ms after`,
    );
    const second = await pvcOf();
    await until(() => calls.some((x) => x.pvcs.includes(second.metadata.uid)), "a call seeing it");
    await quiet(calls);

    // A burst of 100 changes of the child: a handful of calls, one after the last change.
    const before = calls.length;
    for (let i = 1; i <= 100; i++) {
      await call(c.api, "PATCH", `${PVCS}/evc1`, { metadata: { labels: { round: String(i) } } }, {
        contentType: "application/merge-patch+json",
      });
    }
    const last = performance.now();
    await until(() => calls.some((x) => x.rounds.includes("100")), "a call seeing round 100");
    await quiet(calls);
    const burst = calls.slice(before);
    assert.ok(burst.length >= 1 && burst.length <= 8, `${burst.length} calls for 100 changes`);
    assert.ok(burst.at(-1)!.at > last, "the last call came after the last change");
    assert.deepEqual(burst.at(-1)!.rounds, ["100"], "and saw it");
    assert.equal(most, 1, "never two calls at once");

    // Deleting the parent: no calls any more; the garbage collector deletes the child.
    const gone = performance.now();
    await c.call("DELETE", `${EVCS}/evc1`);
    await until(async () => (await pvcOf())?.kind === "Status", "the child collected (404)");
    await delay(500);
    assert.deepEqual(calls.filter((x) => x.at > gone), [], "no call after the deletion");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(runner.output.includes("Reconciler 'ensurePvc' succeeded."), runner.output);
});

/** Waits until no call has started for 0.5 s. */
async function quiet(calls: Call[]): Promise<void> {
  await until(() => performance.now() - (calls.at(-1)?.at ?? 0) > 500, "no more calls", 15);
}
