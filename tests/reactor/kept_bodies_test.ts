/**
 * The bodies an operator keeps between events — the live view of daemons and timers, the
 * parent a reconciler is given — are trimmed of `managedFields` and of kubectl's
 * last-applied-configuration annotation (cogs/structs/trimming.ts), at each of the four places
 * that keep one: a spawned object's view when it changes, its view when it is being deleted, a
 * reconciled parent (reactor/processing.ts), and the body a daemon's or timer's own patch
 * returns (engines/spawning.ts `flush()`). Over real HTTP against the embedded API server,
 * with an object written by server-side apply (so it has managedFields).
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { call, cluster, until } from "./_setup.ts";

const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
// deno-lint-ignore no-explicit-any
type Body = any;

/** Whether a kept body has neither managedFields nor the last-applied annotation, but the rest. */
function trimmed(body: Body): boolean {
  const meta = body?.metadata ?? {};
  return meta.managedFields === undefined && !(LAST_APPLIED in (meta.annotations ?? {})) &&
    meta.annotations?.keep === "me" && typeof meta.resourceVersion === "string";
}

Deno.test("kept bodies: daemons, timers and reconcilers see objects without managedFields and the last-applied annotation", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const daemonSaw: Body[] = [];
  const timerSaw: Body[] = [];
  const reconcilerSaw: Body[] = [];
  let stoppingSaw: Body | undefined;
  kopf.daemon("kopfexamples", { registry }, async function watcher(ctx) {
    let last = "";
    while (!ctx.signal.aborted) {
      const body = ctx.body;
      if (body.metadata?.resourceVersion !== last) {
        last = body.metadata?.resourceVersion;
        daemonSaw.push(body);
      }
      await kopf.sleep(0.02, ctx.signal);
    }
    stoppingSaw = ctx.body;
  });
  kopf.timer("kopfexamples", { registry, interval: 0.1 }, function ticker(ctx) {
    timerSaw.push(ctx.body);
  });
  kopf.on.reconcile("kopfexamples", { registry }, function parent(ctx) {
    reconcilerSaw.push(ctx.body);
  });

  // Written by server-side apply: the stored object has managedFields, and the annotations.
  const applied = await call(c.api, "PATCH", `${KEX}/k1?fieldManager=tester`, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: {
      name: "k1",
      finalizers: ["test.kopf.dev/hold"],
      annotations: { keep: "me", [LAST_APPLIED]: '{"spec":{"size":1}}' },
    },
    spec: { size: 1 },
  }, { contentType: "application/apply-patch+yaml" });
  assert.ok(applied.body.metadata.managedFields?.length, "the stored object has managedFields");

  await using _runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  await until(() => daemonSaw.length > 0 && timerSaw.length > 0, "the daemon and the timer run");
  await until(() => reconcilerSaw.length > 0, "the reconciler runs");

  // A change: the views follow it, still trimmed.
  await call(c.api, "PATCH", `${KEX}/k1`, { spec: { size: 2 } }, {
    contentType: "application/merge-patch+json",
  });
  await until(() => daemonSaw.some((b) => b.spec?.size === 2), "the daemon sees the change");
  await until(() => timerSaw.some((b) => b.spec?.size === 2), "the timer sees the change");
  await until(() => reconcilerSaw.some((b) => b.spec?.size === 2), "the reconciler sees it");

  // Deleting (held by our finalizer): the daemon stops, seeing the deletion — trimmed.
  await c.call("DELETE", `${KEX}/k1`);
  await until(() => stoppingSaw !== undefined, "the daemon stops");
  assert.ok(stoppingSaw.metadata.deletionTimestamp, "its last view is the deleted object");
  assert.ok(trimmed(stoppingSaw), "the view of an object being deleted is trimmed");

  for (const [who, bodies] of [["daemon", daemonSaw], ["timer", timerSaw]] as const) {
    const untrimmed = bodies.filter((b) => !trimmed(b));
    assert.deepEqual(untrimmed.map((b) => b.metadata), [], `the ${who}'s views are trimmed`);
  }
  assert.deepEqual(
    reconcilerSaw.filter((b) => !trimmed(b)).map((b) => b.metadata),
    [],
    "the reconciler's parents are trimmed",
  );
  // The object itself keeps them: only the operator's copies are trimmed.
  const stored = await c.getKex("default", "k1");
  assert.ok(stored.metadata.managedFields?.length);
  assert.ok(LAST_APPLIED in stored.metadata.annotations);
  await call(c.api, "PATCH", `${KEX}/k1`, { metadata: { finalizers: null } }, {
    contentType: "application/merge-patch+json",
  });
});

Deno.test("kept bodies: a timer's own patch is kept trimmed (the body it sees next, before the watch brings the change)", async () => {
  // Changes to kopfexamples reach the operator a minute late: the only way a timer can see its
  // own patch within this test is the patched body its run kept (spawning.ts flush()).
  await using c = await cluster({
    faults: { watchDelayMs: 60_000, watchDelayResources: ["kopfexamples"] },
  });
  const registry = new kopf.OperatorRegistry();
  const seen: Body[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.05 }, function ticker(ctx) {
    if (ctx.body.metadata?.annotations?.ticked !== "yes") {
      ctx.patch.metadata.annotations = { ticked: "yes" };
    } else seen.push(ctx.body);
  });
  const applied = await call(c.api, "PATCH", `${KEX}/k2?fieldManager=tester`, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "k2", annotations: { keep: "me", [LAST_APPLIED]: '{"spec":{"size":1}}' } },
    spec: { size: 1 },
  }, { contentType: "application/apply-patch+yaml" });
  assert.ok(applied.body.metadata.managedFields?.length, "the stored object has managedFields");

  await using _runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  await until(() => seen.length > 0, "the timer sees its own patch");
  assert.deepEqual(seen.filter((b) => !trimmed(b)).map((b) => b.metadata), [], "trimmed");
  // The patched object itself keeps them.
  const stored = await c.getKex("default", "k2");
  assert.equal(stored.metadata.annotations.ticked, "yes");
  assert.ok(stored.metadata.managedFields?.length);
  assert.ok(LAST_APPLIED in stored.metadata.annotations);
});
