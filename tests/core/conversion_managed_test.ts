/**
 * Managed CRD conversion on the embedded API server: an operator with converters and
 * `settings.admission.managed` sets the CRD's `spec.conversion` to its webhook server — also
 * for a CRD that appears after the start (with the admission rules re-resolved too) — and the
 * API server converts through the operator: an object created at v1 is read at v2, and one
 * written at v2 is read at v1.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { startApiServer } from "../../testing.ts";
import { call, until } from "../reactor/_setup.ts";
import { startInProcess } from "./_in_process.ts";

const CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const V1 = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const V2 = "/apis/kopf.dev/v2/namespaces/default/kopfexamples";

function twoVersions(): kopf.AnyObject {
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: "object",
        properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
      versions: [version("v1", true), version("v2", false)],
    },
  };
}

Deno.test("managed conversion: the CRD (appearing after the start) gets the operator's webhook; reads at either version are converted", async () => {
  await using api = await startApiServer();
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = new kopf.WebhookServer({ port: 0 });
    settings.admission.managed = "test.kopf.dev";
  });
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, function upgrade({ body }) {
    const { field, ...spec } = body.spec;
    return { ...body, spec: { ...spec, renamed: field } };
  });
  kopf.on.convert("kopfexamples", { registry, from: "v2", to: "v1" }, ({ spec, patch }) => {
    patch.spec.field = spec.renamed;
    patch.spec.renamed = null;
  });
  kopf.on.validate("kopfexamples", { registry }, function check() {});
  await using operator = await startInProcess(api.kubeconfig.path, registry);
  const lines = operator.lines;
  // No CRD yet: the validating webhook has no rules.
  let vwc: kopf.AnyObject = {};
  await until(async () => {
    vwc = (await call(api, "GET", `${VWC}/test.kopf.dev`, undefined, { ok: [404] })).body;
    return vwc?.webhooks?.length === 1;
  }, "the validating configuration");
  assert.deepEqual(vwc.webhooks[0].rules, []);

  // The CRD appears: its conversion is managed, and the admission rules follow.
  await call(api, "POST", CRD, twoVersions());
  let conversion: kopf.AnyObject | undefined;
  await until(async () => {
    conversion = (await call(api, "GET", `${CRD}/kopfexamples.kopf.dev`)).body.spec.conversion;
    return conversion?.strategy === "Webhook";
  }, "the managed conversion");
  const url = vwc.webhooks[0].clientConfig.url.replace(/\/check$/, "");
  assert.deepEqual(conversion, {
    strategy: "Webhook",
    webhook: {
      clientConfig: {
        url: `${url}/convert/kopfexamples.kopf.dev`,
        caBundle: vwc.webhooks[0].clientConfig.caBundle,
      },
      conversionReviewVersions: ["v1"],
    },
  });
  await until(async () => {
    vwc = (await call(api, "GET", `${VWC}/test.kopf.dev`)).body;
    return vwc.webhooks[0].rules.length === 1;
  }, "the re-resolved admission rules");
  // The preferred version (v2); matchPolicy Equivalent covers v1 too.
  assert.deepEqual(vwc.webhooks[0].rules[0].apiVersions, ["v2"]);

  // The API server converts through the operator's converters.
  await call(api, "POST", V1, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "old" },
    spec: { field: "one", size: 1 },
  });
  const read = (await call(api, "GET", `${V2}/old`)).body;
  assert.equal(read.apiVersion, "kopf.dev/v2");
  assert.deepEqual(read.spec, { size: 1, renamed: "one" });
  await call(api, "POST", V2, {
    apiVersion: "kopf.dev/v2",
    kind: "KopfExample",
    metadata: { name: "new" },
    spec: { renamed: "two" },
  });
  const back = (await call(api, "GET", `${V1}/new`)).body;
  assert.equal(back.apiVersion, "kopf.dev/v1");
  assert.deepEqual(back.spec, { field: "two" });
  const listed = (await call(api, "GET", V2)).body.items;
  assert.deepEqual(listed.map((o: kopf.AnyObject) => o.spec.renamed).sort(), ["one", "two"]);
  await operator.stop(); // what follows checks the operator's exit
  // The clean-up ran before the vault closed: no failed patch at exit.
  assert.deepEqual((await call(api, "GET", `${VWC}/test.kopf.dev`)).body.webhooks ?? [], []);
  assert.ok(!lines.some((l) => l.includes("Cannot clean up")), lines.join("\n"));
  assert.ok(
    lines.some((l) => l.includes("Reconfiguring the conversion webhook of kopfexamples.kopf.dev.")),
  );
});

Deno.test("converters without a server: the start-up fails with one line", async () => {
  await using api = await startApiServer();
  const registry = new kopf.OperatorRegistry();
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, () => undefined);
  await assert.rejects(
    () =>
      kopf.operator({
        kubeconfig: api.kubeconfig.path,
        standalone: true,
        clusterwide: true,
        registry,
        logging: { format: "plain", level: "info", write: () => {} },
      }),
    (e: Error) =>
      e instanceof kopf.OperatorError &&
      /^Converters \(kopf\.on\.convert\) exist, but no admission server\/tunnel is configured/
        .test(e.message) &&
      !e.message.includes("\n"),
  );
});
