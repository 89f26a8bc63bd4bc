/**
 * "Results delivery" and the handlers' `patch`, end to end: return values
 * land in `status.<handler id>`, `patch.status`/`patch.metadata` edits reach
 * the object, and every cycle writes as little as the semantics allow — the
 * PATCH requests of whole object lifecycles are counted and pinned here.
 *
 * On counting: the example CRD has a status subresource, so a merge patch
 * that touches both the object and its status is sent as two requests (the
 * main endpoint ignores `status`, `/status` ignores the rest), exactly as
 * Kopf does. Finalizer edits are separate JSON patches guarded by the
 * resourceVersion (so that other controllers' finalizers are never lost),
 * and the finalizer must be on the object before any handler runs.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import {
  annotations,
  type Env,
  FINALIZER,
  LAST_HANDLED,
  type Obj,
  setup,
  sleep,
} from "./_handling.ts";

Deno.test("results: return values land in status.<id> (null/undefined do not)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_kex_1() {
    return 100;
  });
  kopf.on.create("kopfexamples", { registry }, function create_kex_2() {
    return { r1: 66, r2: 666 };
  });
  kopf.on.create("kopfexamples", { registry }, async function create_kex_3() {
    await sleep(0.01);
    return "text";
  });
  kopf.on.create("kopfexamples", { registry }, function zero_fn() {
    return 0;
  });
  kopf.on.create("kopfexamples", { registry }, function none_fn() {
    return null;
  });
  kopf.on.create("kopfexamples", { registry }, function void_fn() {});
  const runner = await env.operator(registry);
  await env.create("kex");
  const obj = await env.waitFor("kex", (o) => !!o.status && !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(obj.status, {
    create_kex_1: 100,
    create_kex_2: { r1: 66, r2: 666 },
    create_kex_3: "text",
    zero_fn: 0,
  });
});

Deno.test("results: handlers communicate through status results across retries", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  // The docs' example: the job needs the PVC, which is created by the handler after it.
  kopf.on.create("kopfexamples", { registry }, function create_job({ status }) {
    if (!status.create_pvc) {
      throw new kopf.TemporaryError("PVC is not created yet.", { delay: 0.2 });
    }
    return { name: `job-for-${status.create_pvc.name}` };
  });
  kopf.on.create("kopfexamples", { registry }, function create_pvc() {
    return { name: "pvc-1" };
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const obj = await env.waitFor("kex", (o) => !!o.status?.create_job);
  await runner.stop();
  assert.deepEqual(obj.status.create_job, { name: "job-for-pvc-1" });
  assert.match(runner.output, /Handler 'create_job' failed temporarily: PVC is not created yet\./);
});

Deno.test("results: patch.status and patch.metadata edits of handlers reach the object (and, as in Kopf, are an update then)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const diffs: unknown[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn({ patch }) {
    patch.status.phase = "Created";
    patch.metadata.labels.tier = "gold";
    patch.metadata.annotations["example.com/note"] = "handled";
  });
  kopf.on.update("kopfexamples", { registry }, function update_fn({ diff }) {
    diffs.push(diff);
  });
  const runner = await env.operator(registry);
  await env.create("kex", {}, { labels: { app: "x" } });
  // The diff base stored with the creation is the essence the handlers saw; their own
  // label/annotation edits are a change against it, handled as an update.
  await runner.waitFor("[default/kex] All handlers succeeded for update.");
  const obj = await env.waitFor(
    "kex",
    (o) => annotations(o)[LAST_HANDLED]?.includes("gold") ?? false,
  );
  await runner.stop();
  assert.equal(obj.status.phase, "Created");
  assert.deepEqual(obj.metadata.labels, { app: "x", tier: "gold" });
  assert.equal(annotations(obj)["example.com/note"], "handled");
  assert.deepEqual(diffs, [[
    ["add", ["metadata", "annotations"], null, { "example.com/note": "handled" }],
    ["add", ["metadata", "labels", "tier"], null, "gold"],
  ]]);
});

/** Waits until the operator is done with a phase and nothing else follows; returns its patches. */
async function phase(env: Env, action: () => Promise<unknown>, done: () => Promise<unknown>) {
  const before = env.patches();
  await action();
  await done();
  await sleep(0.3); // Nothing else may follow: the echo of our own patch is a no-op.
  return env.patches() - before;
}

async function lifecycle(env: Env, registry: kopf.OperatorRegistry): Promise<number[]> {
  const runner = await env.operator(registry);
  const counts = [
    await phase(
      env,
      () => env.create("kex", { size: 1 }),
      () => env.waitFor("kex", (o: Obj) => annotations(o)[LAST_HANDLED]?.includes("1") ?? false),
    ),
    await phase(
      env,
      () => env.patch("kex", { spec: { size: 2 } }),
      () => env.waitFor("kex", (o: Obj) => annotations(o)[LAST_HANDLED]?.includes("2") ?? false),
    ),
    await phase(env, () => env.remove("kex"), () => env.waitGone("kex")),
  ];
  await runner.stop();
  return counts;
}

Deno.test("results: PATCH requests per lifecycle without results: create 2, update 1, delete 1", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn() {});
  kopf.on.update("kopfexamples", { registry }, function update_fn() {});
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {});
  // create: the finalizer (JSON patch), then the diff base (merge patch);
  // update: the new diff base; delete: the finalizer's removal only.
  assert.deepEqual(await lifecycle(env, registry), [2, 1, 1]);
});

Deno.test("results: PATCH requests per lifecycle with results: create 3, update 2, delete 2", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    return { a: 1 };
  });
  kopf.on.update("kopfexamples", { registry }, function update_fn() {
    return { b: 2 };
  });
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {
    return { c: 3 };
  });
  // Each result adds the /status half of the cycle's one merge patch.
  assert.deepEqual(await lifecycle(env, registry), [3, 2, 2]);
});

Deno.test("results: PATCH requests without delete handlers: create 1, update 1, delete 0", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn() {});
  kopf.on.update("kopfexamples", { registry }, function update_fn() {});
  assert.deepEqual(await lifecycle(env, registry), [1, 1, 0]);
});

Deno.test("results: a retried handler costs one more patch per retry (the progress record)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn({ retry }) {
    if (retry < 2) throw new kopf.TemporaryError("not yet", { delay: 0.2 });
  });
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {});
  const runner = await env.operator(registry);
  const count = await phase(
    env,
    () => env.create("kex"),
    () => env.waitFor("kex", (o: Obj) => !!annotations(o)[LAST_HANDLED]),
  );
  await runner.stop();
  // The finalizer; a record after each of the 2 failures; the purge with the diff base.
  assert.equal(count, 4);
  assert.deepEqual((await env.get("kex"))!.metadata.finalizers, [FINALIZER]);
});
