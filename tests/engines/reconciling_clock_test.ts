/**
 * Reconcilers (`kopf.on.reconcile`) on a fake clock, exactly: when a parent is
 * called (its changes, its children's, resyncs; debounced, never two calls at
 * once), with which children (matched by the parent's uid and kind in their
 * owner references), what its patch does (applied, its own write no change),
 * the error protocol of the one executor, the gates (children listed, pause),
 * filters and deletion. No API server, no wall clock.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { gate, PARENTS, Rig, STREAMS } from "./_reconciling.ts";

interface Seen {
  at: number;
  pods: string[];
  sizes: unknown[];
  retry: number;
}

/** Registers a reconciler owning pods that records each call; `fn` adds behaviour. */
function record(
  rig: Rig,
  options: Partial<kopf.ReconcileOptions> = {},
  fn: (ctx: kopf.ReconcileContext) => unknown = () => {},
): Seen[] {
  const calls: Seen[] = [];
  kopf.on.reconcile(
    "kopfexamples",
    { registry: rig.registry, owns: ["pods"], ...options },
    function sync(ctx) {
      const pods = ctx.children.pods ?? [];
      calls.push({
        at: rig.now(),
        pods: pods.map((p) => p.metadata.name),
        sizes: pods.map((p) => p.spec.size),
        retry: ctx.retry,
      });
      return fn(ctx as kopf.ReconcileContext);
    },
  );
  return calls;
}

Deno.test("reconcile: the first call comes a debounce after the parent is seen, with its children only", async () => {
  const rig = new Rig();
  const calls = record(rig);
  rig.start();
  rig.child("mine", {}, "ADDED");
  rig.child("other-parent", {}, "ADDED", {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    uid: "p2",
  });
  // The parent's uid, but another kind: not a KopfExample's child.
  rig.child("replicaset-child", {}, "ADDED", {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    uid: "p1",
  });
  rig.child("orphan", {}, "ADDED", {});
  assert.equal(rig.engine.children, 2, "only children of KopfExamples are indexed");
  rig.observe();
  await rig.clock.advance(0.099);
  assert.equal(calls.length, 0);
  await rig.clock.advance(0.001);
  assert.deepEqual(calls.map((c) => [c.at, c.pods]), [[0.1, ["mine"]]]);
  assert.ok(rig.lines.includes("Reconciler 'sync' succeeded."));
  assert.equal(rig.patches.length, 0, "a call with nothing to write makes no API call");
  await rig.clock.advance(60);
  assert.equal(calls.length, 1, "nothing more without changes (no resync by default)");
  await rig.close();
});

Deno.test("reconcile: a child's creation, change and deletion each bring the parent back", async () => {
  const rig = new Rig();
  const calls = record(rig);
  rig.start();
  rig.observe();
  await rig.clock.advance(1);
  rig.child("a", { size: 1 }, "ADDED");
  await rig.clock.advance(1);
  rig.child("a", { size: 2 });
  await rig.clock.advance(1);
  rig.child("a", {}, "DELETED");
  await rig.clock.advance(1);
  assert.deepEqual(calls.map((c) => [c.at, c.pods, c.sizes]), [
    [0.1, [], []],
    [1.1, ["a"], [1]],
    [2.1, ["a"], [2]],
    [3.1, [], []],
  ]);
  // A child that loses its owner reference leaves its parent's children (and brings it back).
  rig.child("b", {}, "ADDED");
  await rig.clock.advance(1);
  rig.child("b", {}, "MODIFIED", { apiVersion: "v1", kind: "ConfigMap", uid: "cm" });
  await rig.clock.advance(1);
  assert.deepEqual(calls.slice(4).map((c) => c.pods), [["b"], []]);
  await rig.close();
});

Deno.test("reconcile: a burst of 100 child changes is a few calls; the last one sees the last state", async () => {
  const rig = new Rig();
  const calls = record(rig, { debounce: 0.2 });
  rig.start();
  rig.child("a", { size: 0 }, "ADDED");
  rig.observe();
  await rig.clock.advance(1);
  assert.equal(calls.length, 1);
  for (let i = 1; i <= 100; i++) {
    rig.child("a", { size: i });
    await rig.clock.advance(0.01); // 100 changes in 1 s
  }
  await rig.clock.advance(5);
  const burst = calls.slice(1);
  // Steady churn is served every 10 debounces (2 s) at most, and once after the last change.
  assert.ok(burst.length >= 1 && burst.length <= 2, `${burst.length} calls`);
  assert.deepEqual(burst.at(-1)!.sizes, [100], "the last call saw the last change");
  assert.ok(burst.at(-1)!.at >= 2, "and came after it");
  await rig.close();
});

Deno.test("reconcile: never two calls at once; changes during a call make exactly one more call after it", async () => {
  const rig = new Rig();
  let active = 0;
  let most = 0;
  const calls = record(rig, { debounce: 0 }, async () => {
    most = Math.max(most, ++active);
    await rig.clock.sleep(2);
    active--;
  });
  rig.start();
  rig.observe();
  await rig.clock.advance(0.5);
  for (let i = 0; i < 10; i++) {
    rig.child(`c${i}`, {}, "ADDED");
    rig.observe({ spec: { size: i } });
    await rig.clock.advance(0.1);
  }
  await rig.clock.advance(10);
  assert.deepEqual(calls.map((c) => c.at), [0, 2]);
  assert.equal(
    calls[1]!.pods.length,
    10,
    "the call after saw all the changes made during the first",
  );
  assert.equal(most, 1);
  await rig.close();
});

Deno.test("reconcile: the patch is applied after the call, the result lands in status.<id>; our own write is no change", async () => {
  const rig = new Rig();
  const calls = record(rig, {}, ({ children, patch }) => {
    patch.status.pods = children.pods?.length;
    return { ok: true };
  });
  rig.start();
  rig.observe();
  await rig.clock.advance(1);
  assert.deepEqual(rig.patches.map((p) => p.patch), [{ status: { pods: 0, sync: { ok: true } } }]);
  rig.observe(); // the event of our own write (the body the patch returned)
  await rig.clock.advance(1);
  assert.equal(calls.length, 1, "our own write does not bring the parent back");
  rig.observe({ metadata: { labels: { changed: "yes" } } }); // someone else's change
  await rig.clock.advance(1);
  assert.equal(calls.length, 2);
  await rig.close();
});

Deno.test("reconcile: TemporaryError calls again after its delay; PermanentError waits for the next change", async () => {
  const rig = new Rig();
  const outcomes: Array<() => void> = [
    () => {
      throw new kopf.TemporaryError("not yet", { delay: 5 });
    },
    () => {
      throw new kopf.TemporaryError("still not", { delay: 5 });
    },
    () => {},
    () => {
      throw new kopf.PermanentError("no way");
    },
    () => {},
  ];
  const calls = record(rig, {}, () => outcomes[calls.length - 1]!());
  rig.start();
  rig.observe();
  await rig.clock.advance(30);
  assert.deepEqual(calls.map((c) => [c.at, c.retry]), [[0.1, 0], [5.1, 1], [10.1, 2]]);
  rig.observe({ spec: { size: 2 } }); // at 30: a new change starts afresh (retry 0) …
  await rig.clock.advance(30);
  assert.deepEqual(calls.slice(3).map((c) => [c.at, c.retry]), [[30.1, 0]]);
  assert.ok(rig.lines.includes("Reconciler 'sync' failed permanently: no way"));
  rig.observe({ spec: { size: 3 } }); // … and so does the next one after a permanent failure
  await rig.clock.advance(1);
  assert.deepEqual(calls.slice(4).map((c) => [c.at, c.retry]), [[60.1, 0]]);
  await rig.close();
});

Deno.test("reconcile: arbitrary errors are retried after `backoff`, up to `retries`", async () => {
  const rig = new Rig();
  const calls = record(rig, { backoff: 3, retries: 2 }, () => {
    throw new Error("boom");
  });
  rig.start();
  rig.observe();
  await rig.clock.advance(30);
  assert.deepEqual(calls.map((c) => c.at), [0.1, 3.1]);
  assert.deepEqual(rig.lines, [
    "Reconciler 'sync' failed with an exception. Will retry.",
    "Reconciler 'sync' failed with an exception. Will retry.",
    "Reconciler 'sync' failed permanently: Reconciler 'sync' has exceeded 2 retries.",
  ]);
  await rig.close();
});

Deno.test("reconcile: `resync` calls again every so often without changes", async () => {
  const rig = new Rig();
  const calls = record(rig, { resync: 60 });
  rig.start();
  rig.observe();
  await rig.clock.advance(200);
  assert.deepEqual(calls.map((c) => c.at), [0.1, 60.1, 120.1, 180.1]);
  await rig.close();
});

Deno.test("reconcile: no call before the children's watchers have listed (one call for all of the listing)", async () => {
  const rig = new Rig();
  const calls = record(rig);
  rig.start(false);
  rig.observe();
  for (let i = 0; i < 5; i++) {
    rig.child(`c${i}`, {}, null); // the listing
    await rig.clock.advance(1);
  }
  assert.equal(calls.length, 0);
  rig.list();
  await rig.clock.advance(1);
  assert.deepEqual(calls.map((c) => c.pods), [["c0", "c1", "c2", "c3", "c4"]]);
  await rig.close();
});

Deno.test("reconcile: no call while the operator is paused; changes meanwhile make one call after", async () => {
  const rig = new Rig();
  const calls = record(rig);
  rig.start();
  rig.observe();
  await rig.clock.advance(1);
  const pause = rig.paused.make("peering", true);
  for (let i = 0; i < 5; i++) {
    rig.child(`c${i}`, {}, "ADDED");
    await rig.clock.advance(1);
  }
  assert.equal(calls.length, 1);
  pause.turnTo(false);
  await rig.clock.advance(1);
  assert.equal(calls.length, 2);
  assert.equal(calls[1]!.pods.length, 5);
  await rig.close();
});

Deno.test("reconcile: no call once the parent is deleted; a running call's signal aborts", async () => {
  const rig = new Rig();
  const started = gate();
  let reason: unknown;
  const calls = record(rig, { resync: 1 }, async ({ signal }) => {
    started.open();
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    reason = signal.reason;
  });
  rig.start();
  rig.observe();
  await rig.clock.advance(0.1);
  await started.promise;
  rig.delete();
  await rig.clock.advance(0);
  assert.equal(reason, "resource deleted");
  rig.child("late", {}, "ADDED");
  await rig.clock.advance(60);
  assert.equal(calls.length, 1, "no calls after the deletion: no change, no resync");
  assert.equal(rig.engine.parents, 0, "the parent is forgotten");
  await rig.close();
});

Deno.test("reconcile: filters — a parent that does not match gets no calls; one that stops matching, no more", async () => {
  const rig = new Rig();
  const calls = record(rig, { labels: { managed: "yes" } });
  rig.start();
  rig.observe();
  await rig.clock.advance(1);
  assert.equal(calls.length, 0);
  rig.observe({ metadata: { labels: { managed: "yes" } } });
  await rig.clock.advance(1);
  assert.equal(calls.length, 1);
  rig.observe({ metadata: { labels: { managed: "no" } } });
  rig.child("a", {}, "ADDED");
  await rig.clock.advance(1);
  assert.equal(calls.length, 1);
  await rig.close();
});

Deno.test("reconcile: a children's watcher that stops (namespace or CRD gone) takes its children away", async () => {
  const rig = new Rig();
  const calls = record(rig);
  rig.start();
  rig.child("a", {}, "ADDED");
  rig.observe();
  await rig.clock.advance(1);
  rig.engine.forgetStream(STREAMS.pods);
  await rig.clock.advance(1);
  assert.deepEqual(calls.map((c) => c.pods), [["a"], []]);
  await rig.close();
});

Deno.test("reconcile: two reconcilers of one parent own different children; each is brought by its own", async () => {
  const rig = new Rig();
  const pods: number[] = [];
  const maps: number[] = [];
  kopf.on.reconcile("kopfexamples", { registry: rig.registry, owns: ["pods"] }, function p() {
    pods.push(rig.now());
  });
  kopf.on.reconcile("kopfexamples", { registry: rig.registry, owns: ["configmaps"] }, function m() {
    maps.push(rig.now());
  });
  rig.start();
  rig.observe();
  await rig.clock.advance(1);
  rig.child("a", {}, "ADDED");
  await rig.clock.advance(1);
  assert.deepEqual(pods, [0.1, 1.1]);
  assert.deepEqual(maps, [0.1], "a pod is none of the configmaps' reconciler's business");
  await rig.close();
});

Deno.test("reconcile: settings.batching.workerLimit bounds the calls running at once across parents", async () => {
  const rig = new Rig();
  rig.settings.batching.workerLimit = 1;
  const starts: Array<[string, number]> = [];
  kopf.on.reconcile("kopfexamples", { registry: rig.registry }, async function slow({ name }) {
    starts.push([name, rig.now()]);
    await rig.clock.sleep(1);
  });
  rig.start();
  rig.observe();
  const other = { ...rig.body, metadata: { ...rig.body.metadata, name: "kex2", uid: "p2" } };
  rig.engine.observe(PARENTS, rig.api, other, false, { memo: {} });
  await rig.clock.advance(5);
  assert.deepEqual(starts, [["kex", 0.1], ["kex2", 1.1]]);
  await rig.close();
});

Deno.test("reconcile: release() lets a parent go (another replica serves it): no more calls until it is seen again", async () => {
  const rig = new Rig();
  let reason: unknown;
  const calls = record(rig, { resync: 1 }, async ({ signal }) => {
    if (calls.length === 2) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      reason = signal.reason;
    }
  });
  rig.start();
  rig.observe();
  await rig.clock.advance(1.5); // calls at 0.1 and 1.1; the second waits for its signal
  let released = false;
  const releasing = rig.engine.release("p1").then(() => (released = true));
  await rig.clock.advance(0);
  await releasing;
  assert.equal(released, true, "released once the running call has ended");
  assert.equal(reason, "resource released");
  rig.child("a", {}, "ADDED");
  await rig.clock.advance(10);
  assert.equal(calls.length, 2, "no calls after the release: no child change, no resync");
  rig.observe({ spec: { size: 5 } }); // served here again
  await rig.clock.advance(0.1);
  assert.equal(calls.length, 3);
  await rig.close();
});
