/**
 * Admission memos on the embedded API server, as Kopf's docs say ("In-memory containers"):
 * "For update and deletion requests, the actual memos of the resources are used. For the
 * admission requests on resource creation, a memo is created and discarded immediately."
 * The API server calls the operator's managed validating webhook for real; the handlers
 * record what they see in `memo`.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { ObjectQueues } from "../../src/core/reactor/queueing.ts";
import { call, cluster, until } from "../reactor/_setup.ts";

const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/** What one handler saw: which handler, the memo object itself, and a value of it. */
interface Seen {
  who: string;
  memo: kopf.AnyObject;
  value: unknown;
}

const scopes: [string, { clusterwide?: boolean; namespaces?: string[] }][] = [
  ["cluster-wide", { clusterwide: true }],
  ["with watchers per namespace", { namespaces: ["other", "default"] }],
];
for (const [mode, scope] of scopes) {
  Deno.test(`admission memos (${mode}): UPDATE and DELETE share the object's memo; CREATE's is discarded`, async () => {
    await using c = await cluster();
    await c.createNamespace("other");
    const seen: Seen[] = [];
    const registry = new kopf.OperatorRegistry();
    kopf.on.startup({ registry }, ({ settings }) => {
      settings.admission.server = new kopf.WebhookServer({ port: 0 });
      settings.admission.managed = "memos.kopf.dev";
    });
    kopf.on.validate("kopfexamples", { registry, operation: "CREATE" }, function on_create({
      memo,
    }) {
      seen.push({ who: "admit-create", memo, value: memo.operatorWide });
      memo.counter = 100; // Discarded with the request's memo.
      memo.fromAdmission = true;
    });
    kopf.on.validate("kopfexamples", { registry, operation: "UPDATE" }, function on_update({
      memo,
      old,
      new: body,
    }) {
      // Only the test's own spec changes (not the operator's annotation patches).
      const step = (body as kopf.AnyObject).spec?.step;
      if (step === (old as kopf.AnyObject).spec?.step) return;
      seen.push({ who: "admit-update", memo, value: memo.counter });
      memo.counter += 1;
    });
    kopf.on.validate("kopfexamples", { registry, operation: "DELETE" }, function on_delete({
      memo,
    }) {
      seen.push({ who: "admit-delete", memo, value: memo.counter });
    });
    kopf.on.create("kopfexamples", { registry }, function created({ memo }) {
      seen.push({ who: "create", memo, value: [memo.fromAdmission, memo.operatorWide] });
      memo.counter = 1;
    });
    kopf.on.update("kopfexamples", { registry, field: "spec.step" }, function updated({ memo }) {
      seen.push({ who: "update", memo, value: memo.counter });
      memo.counter = 10; // Seen by the later DELETE admission.
    });
    const operatorMemo = new kopf.Memo();
    operatorMemo.operatorWide = "yes";
    const stop = new AbortController();
    let ready!: () => void;
    const started = new Promise<void>((r) => (ready = r));
    const lines: string[] = [];
    const running = kopf.operator({
      kubeconfig: c.api.kubeconfig.path,
      standalone: true,
      ...scope,
      registry,
      memo: operatorMemo,
      signal: stop.signal,
      onReady: ready,
      logging: { format: "plain", level: "info", write: (l) => lines.push(l) },
    });
    const path = "/apis/kopf.dev/v1/namespaces/default/kopfexamples/kex";
    const who = () => seen.map((s) => s.who);
    try {
      await started;
      await until(async () => {
        const vwc = (await c.call("GET", `${VWC}/memos.kopf.dev`, undefined, [404])).body;
        return vwc?.webhooks?.length === 3 &&
          vwc.webhooks.every((w: kopf.AnyObject) => w.rules.length === 1);
      }, "the validating webhooks");

      // CREATE: a fresh copy of the operator memo, discarded after the request.
      await c.createKex("default", "kex");
      await until(() => who().includes("create"), "the create handler");
      // Fully handled (the operator's own PATCHes done), so that the test's PATCH below does not
      // conflict with one of them (a conflict re-runs the admission: one more call).
      await until(async () => {
        const annotations = (await c.getKex("default", "kex"))?.metadata?.annotations ?? {};
        return "kopf.zalando.org/last-handled-configuration" in annotations;
      }, "the creation fully handled");
      const [admitCreate, create] = seen;
      assert.equal(admitCreate?.who, "admit-create");
      assert.equal(admitCreate?.value, "yes");
      assert.notEqual(admitCreate?.memo, operatorMemo);
      assert.deepEqual(create?.value, [undefined, "yes"]);
      assert.notEqual(create?.memo, admitCreate?.memo);
      assert.equal(operatorMemo.counter, undefined);
      assert.equal(operatorMemo.fromAdmission, undefined);

      // UPDATE: the object's own memo — the create handler's write is seen, and the
      // admission's write is seen by the change handler that follows.
      await call(c.api, "PATCH", path, { spec: { step: 1 } }, {
        contentType: "application/merge-patch+json",
      });
      await until(() => who().includes("update"), "the update handler");
      const admitUpdate = seen.find((s) => s.who === "admit-update");
      const update = seen.find((s) => s.who === "update");
      assert.equal(admitUpdate?.value, 1);
      assert.equal(update?.value, 2);
      assert.equal(admitUpdate?.memo, create?.memo);
      assert.equal(update?.memo, create?.memo);

      // DELETE: the object's own memo, with the update handler's write. (Once the update is
      // fully handled: a write of the operator during the DELETE admission makes the API
      // server call the webhook again, as kube-apiserver would.)
      await until(async () => {
        const annotations = (await c.getKex("default", "kex"))?.metadata?.annotations ?? {};
        return (annotations["kopf.zalando.org/last-handled-configuration"] ?? "").includes("step");
      }, "the update fully handled");
      await c.call("DELETE", path);
      await until(() => who().includes("admit-delete"), "the DELETE admission");
      const admitDeletes = seen.filter((s) => s.who === "admit-delete");
      assert.deepEqual(admitDeletes.map((s) => s.value), admitDeletes.map(() => 10));
      assert.ok(admitDeletes.every((s) => s.memo === create?.memo));
      assert.deepEqual([...new Set(who())], [
        "admit-create",
        "create",
        "admit-update",
        "update",
        "admit-delete",
      ]);
      assert.deepEqual(lines.filter((l) => / (ERROR|WARNING) /.test(l)), []);
    } finally {
      stop.abort();
      await running;
    }
  });
}

Deno.test("ObjectQueues.memoryOf(): the memory of a known object; nothing is remembered for others", async () => {
  const queues = new ObjectQueues(() => Promise.resolve({}), {
    batchWindow: 0,
    idleTimeout: 0.01,
    workerLimit: null,
    consistencyTimeout: 1,
    errorDelays: [1],
  });
  try {
    assert.equal(queues.memoryOf("unseen"), undefined);
    assert.equal(queues.known, 0);
    queues.push({ type: "ADDED", object: { metadata: { uid: "u1", name: "a" } } });
    const memory = queues.memoryOf("u1");
    assert.ok(memory);
    assert.equal(queues.memoryOf("u1"), memory);
    queues.push({ type: "DELETED", object: { metadata: { uid: "u1", name: "a" } } });
    await until(() => queues.known === 0, "the deleted object forgotten");
    assert.equal(queues.memoryOf("u1"), undefined);
  } finally {
    await queues.close();
  }
});
