import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { cluster, until } from "../reactor/_setup.ts";
import { startInProcess } from "./_in_process.ts";

const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

Deno.test("managed configurations: one webhook per handler, as the handlers say; non-persistent ones removed at exit", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = new kopf.WebhookServer({ port: 0 });
    settings.admission.managed = "test.kopf.dev";
  });
  kopf.on.validate("kopfexamples", {
    registry,
    labels: { app: "x", tier: kopf.PRESENT, gone: kopf.ABSENT, cb: () => true },
    ignoreFailures: true,
  }, function check_spec() {});
  kopf.on.mutate("kopfexamples", {
    registry,
    operation: "CREATE",
    subresource: "status",
    sideEffects: true,
    persistent: true,
  }, function defaults() {});
  await using operator = await startInProcess(c.api.kubeconfig.path, registry);
  const lines = operator.lines;
  let validating: kopf.AnyObject = {};
  await until(async () => {
    validating = (await c.call("GET", `${VWC}/test.kopf.dev`, undefined, [404])).body;
    return validating?.webhooks?.length === 1;
  }, "the validating configuration");
  const mutating = (await c.call("GET", `${MWC}/test.kopf.dev`)).body;
  const [v] = validating.webhooks;
  const url = v.clientConfig.url as string;
  assert.match(url, /^https:\/\/localhost:\d+\/check_spec$/);
  assert.ok(atob(v.clientConfig.caBundle).startsWith("-----BEGIN CERTIFICATE-----"));
  assert.deepEqual({ ...v, clientConfig: undefined }, {
    name: "check-spec.test.kopf.dev",
    sideEffects: "None",
    failurePolicy: "Ignore",
    matchPolicy: "Equivalent",
    rules: [{
      apiGroups: ["kopf.dev"],
      apiVersions: ["v1"],
      resources: ["kopfexamples"],
      operations: ["*"],
      scope: "*",
    }],
    objectSelector: {
      matchExpressions: [
        { key: "app", operator: "In", values: ["x"] },
        { key: "tier", operator: "Exists" },
        { key: "gone", operator: "DoesNotExist" },
      ],
    },
    clientConfig: undefined,
    timeoutSeconds: 30,
    admissionReviewVersions: ["v1"],
    namespaceSelector: {}, // the API server's default, as kube's: the operator sends none
  });
  const [m] = mutating.webhooks;
  assert.equal(m.name, "defaults.test.kopf.dev");
  assert.equal(m.sideEffects, "NoneOnDryRun");
  assert.equal(m.failurePolicy, "Fail");
  assert.deepEqual(m.rules[0].resources, ["kopfexamples/status"]);
  assert.deepEqual(m.rules[0].operations, ["CREATE"]);
  assert.deepEqual(m.objectSelector, {}); // none sent: the API server's default, as kube's
  assert.equal(m.clientConfig.url, url.replace("check_spec", "defaults"));

  // The configured URL serves the handler, verified against the configured CA.
  const client = Deno.createHttpClient({ caCerts: [atob(v.clientConfig.caBundle)] });
  try {
    const response = await fetch(url, {
      method: "POST",
      client,
      body: JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: "u",
          operation: "CREATE",
          userInfo: {},
          resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
          object: { metadata: { name: "x", labels: { app: "x", tier: "1" } } },
        },
      }),
    });
    assert.deepEqual((await response.json()).response, { uid: "u", allowed: true });
  } finally {
    client.close();
  }
  await operator.stop(); // what follows checks the operator's exit
  // At exit: the non-persistent webhooks are removed, the persistent one stays.
  assert.deepEqual((await c.call("GET", `${VWC}/test.kopf.dev`)).body.webhooks ?? [], []);
  const kept = (await c.call("GET", `${MWC}/test.kopf.dev`)).body.webhooks;
  assert.deepEqual(kept.map((w: kopf.AnyObject) => w.name), ["defaults.test.kopf.dev"]);
  assert.ok(lines.some((l) => l.includes("Reconfiguring the validating webhook test.kopf.dev.")));
});

/** An operator of the registry, cluster-wide and standalone, its log nowhere (its start is tested). */
function operatorOnce(kubeconfig: string, registry: kopf.OperatorRegistry): Promise<void> {
  return kopf.operator({
    kubeconfig,
    standalone: true,
    clusterwide: true,
    registry,
    logging: { format: "plain", level: "info", write: () => {} },
  });
}

Deno.test("admission handlers without a server: the start-up fails with one line", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.validate("kopfexamples", { registry }, function check() {});
  await assert.rejects(
    () => operatorOnce(c.api.kubeconfig.path, registry),
    (e: Error) =>
      e instanceof kopf.OperatorError &&
      /^Admission handlers exist, but no admission server\/tunnel is configured in settings\.admission\.server/
        .test(e.message) &&
      !e.message.includes("\n"),
  );
});

Deno.test("managed configurations: a server's service client config gets the handler id appended to its path, as a DNS segment", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const service: kopf.WebhookClientConfigService = {
    namespace: "operators",
    name: "my-operator",
    path: "/hooks/",
    port: 8443,
  };
  async function* inCluster(
    _fn: kopf.WebhookFn,
    { signal }: kopf.WebhookServeOptions,
  ): AsyncGenerator<kopf.WebhookClientConfig> {
    yield { service, caBundle: "Q0E=" };
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  }
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = inCluster;
    settings.admission.managed = "service.kopf.dev";
  });
  // The handler id becomes a segment of the service's path, which kube-apiserver holds to a DNS
  // subdomain: `check_spec` (a function's name) as it is would be refused there, as it is here,
  // so the segment is its DNS form (the webhook's name's), `check-spec`.
  kopf.on.validate("kopfexamples", { registry }, function check_spec() {});
  await using _operator = await startInProcess(c.api.kubeconfig.path, registry);
  let webhooks: kopf.AnyObject[] = [];
  await until(async () => {
    webhooks = (await c.call("GET", `${VWC}/service.kopf.dev`, undefined, [404])).body
      ?.webhooks ?? [];
    return webhooks.length === 1;
  }, "the validating configuration");
  assert.deepEqual(webhooks[0]!.clientConfig, {
    service: {
      namespace: "operators",
      name: "my-operator",
      path: "/hooks/check-spec",
      port: 8443,
    },
    caBundle: "Q0E=",
  });
});

for (
  const [what, ids, message] of [
    [
      "the same webhook name twice",
      ["check_spec", "check-spec"],
      /^The validating handlers "check_spec" and "check-spec" make the same webhook name "check-spec" \(.*\): give one of them another id=\.$/,
    ],
    [
      "an id that makes no DNS name",
      ["_private"],
      /^The validating handler "_private" makes no webhook name Kubernetes accepts \(.*\): give it an id= that does\.$/,
    ],
  ] as const
) {
  Deno.test(`managed configurations: ${what} is refused at the start with one line`, async () => {
    await using c = await cluster();
    const registry = new kopf.OperatorRegistry();
    kopf.on.startup({ registry }, ({ settings }) => {
      settings.admission.server = new kopf.WebhookServer({ port: 0 });
      settings.admission.managed = "test.kopf.dev";
    });
    for (const id of ids) kopf.on.validate("kopfexamples", { registry, id }, () => {});
    await assert.rejects(
      () => operatorOnce(c.api.kubeconfig.path, registry),
      (e: Error) => e instanceof kopf.OperatorError && message.test(e.message),
    );
  });
}

Deno.test("a server that waits for the abort without checking it first: an exit during a reconfiguration does not hang", async () => {
  // The reconfiguration after the server's first config is slow (every request 0.3 s late), and
  // the operator is stopped during it: the loop must not ask the server for its next config (its
  // generator would add an abort listener to a signal already aborted, and wait for ever).
  await using c = await cluster({ faults: { latencyMs: 300 } });
  const registry = new kopf.OperatorRegistry();
  async function* server(
    _fn: kopf.WebhookFn,
    { signal }: kopf.WebhookServeOptions,
  ): AsyncGenerator<kopf.WebhookClientConfig> {
    yield { url: "https://127.0.0.1:1/hooks", caBundle: "Q0E=" };
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  }
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = server;
    settings.admission.managed = "slow.kopf.dev";
  });
  kopf.on.validate("kopfexamples", { registry }, function check() {});
  const operator = await startInProcess(c.api.kubeconfig.path, registry);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    (async () => {
      // The first config was taken, and the reconfiguration it started is under way.
      await until(
        () => operator.lines.some((l) => l.includes("Reconfiguring the validating webhook")),
        "the reconfiguration",
      );
      await operator.stop();
      return true;
    })(),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 30_000))),
  ]);
  clearTimeout(timer);
  assert.ok(exited, `the operator did not exit:\n${operator.lines.join("\n")}`);
});
