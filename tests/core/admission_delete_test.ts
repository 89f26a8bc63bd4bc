/**
 * Deletions through the operator's admission webhooks: the embedded API server sends the
 * stored object as `oldObject` to mutating and validating webhooks alike (as kube-apiserver
 * does since 1.15); the operator's handlers see it as the body, and a webhook registered for
 * all operations does not stop deletions. A request the operator cannot serve is logged
 * with the webhook, the operation and the reason.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { cluster, until } from "../reactor/_setup.ts";
import { startInProcess } from "./_in_process.ts";

const MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";

Deno.test("a delete reaches the operator's handlers with the old object; one it cannot serve is logged", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = new kopf.WebhookServer({ port: 0 });
    settings.admission.managed = "del.kopf.dev";
  });
  const seen: string[] = [];
  kopf.on.mutate("kopfexamples", { registry }, function inject({ patch, operation }) {
    seen.push(`mutate ${operation}`);
    patch.spec.injected = 1;
  });
  kopf.on.validate("kopfexamples", { registry }, function check({ operation, body, old, new: n }) {
    seen.push(`validate ${operation} ${body.metadata.name} old=${!!old} new=${!!n}`);
  });
  await using operator = await startInProcess(c.api.kubeconfig.path, registry);
  const lines = operator.lines;
  let config: kopf.AnyObject = {};
  await until(async () => {
    config = (await c.call("GET", `${MWC}/del.kopf.dev`, undefined, [404])).body;
    return config?.webhooks?.length === 1;
  }, "the mutating configuration");
  const made = await c.createKex("default", "doomed");
  assert.equal(made.body.spec.injected, 1);
  seen.length = 0;

  // The delete: admitted by both webhooks (the mutating handler is not called on deletes).
  const gone = await c.call("DELETE", `${KEX}/doomed`, { propagationPolicy: "Background" });
  assert.equal(gone.status, 200);
  assert.equal(await c.getKex("default", "doomed"), undefined);
  assert.deepEqual(seen, ["validate DELETE doomed old=true new=false"]);

  // What an older server sent on a delete (no object at all): refused, and said in the log.
  const { url, caBundle } = config.webhooks[0].clientConfig;
  const client = Deno.createHttpClient({ caCerts: [atob(caBundle)] });
  try {
    const res = await fetch(url, {
      client,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: "u1",
          operation: "DELETE",
          name: "doomed",
          namespace: "default",
          resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
          userInfo: { username: "admin" },
          object: null,
          oldObject: null,
        },
      }),
    });
    assert.equal(res.status, 400);
    assert.equal(
      await res.text(),
      "Either old or new object is missing from the admission request.",
    );
  } finally {
    client.close();
  }
  await until(() => lines.some((l) => l.includes("could not serve")), "the log line");
  const line = lines.find((l) => l.includes("could not serve"))!;
  assert.match(
    line,
    /Webhook 'inject' could not serve a DELETE of kopfexamples\.kopf\.dev default\/doomed: Either old or new object is missing from the admission request\.$/,
  );
  assert.doesNotMatch(lines.join("\n"), /^\s+at /m, "no stack trace");
});
