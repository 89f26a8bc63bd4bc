/**
 * Under `KopfRunner`, a handler's `api` (and `kopf.api()`) goes where the runner's operator goes:
 * its kubeconfig's server, never the one `KUBECONFIG`/`~/.kube/config` of the process points at.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner, startApiServer } from "../../testing.ts";
import { cluster, until } from "../reactor/_setup.ts";

const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const KEXES = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";

Deno.test("a handler's api goes to the runner's API server and nowhere else", async () => {
  await using runners = await startApiServer(); // the operator's login
  await using elsewhere = await startApiServer(); // what the process's environment points at
  const saved = { KUBECONFIG: Deno.env.get("KUBECONFIG"), HOME: Deno.env.get("HOME") };
  const home = await Deno.makeTempDir({ prefix: "kopf-home-" });
  await Deno.mkdir(`${home}/.kube`);
  await Deno.writeTextFile(`${home}/.kube/config`, elsewhere.kubeconfig.yaml);
  Deno.env.set("KUBECONFIG", elsewhere.kubeconfig.path);
  Deno.env.set("HOME", home);
  try {
    const registry = new kopf.OperatorRegistry();
    const startupErrors: string[] = [];
    kopf.on.startup({ registry }, async ({ api }) => {
      // Before the login: no credentials yet, a clear error (not a request to anywhere).
      await api.get("namespaces", "default").catch((e) => startupErrors.push(e.name));
    });
    kopf.on.event("namespaces", { registry }, async ({ api, name }) => {
      if (name !== "default") return;
      await api.create("configmaps", { metadata: { name: "from-context" } }, {
        namespace: "default",
      }).catch((e) => {
        if (!(e instanceof kopf.AlreadyExistsError)) throw e;
      });
      await kopf.api().apply("configmaps", { metadata: { name: "from-kopf-api" } }, {
        namespace: "default",
        fieldManager: "test",
      });
    });
    kopf.daemon("namespaces", { registry }, async ({ api, name, signal }) => {
      if (name !== "default") return;
      await api.apply("configmaps", { metadata: { name: "from-daemon" } }, {
        namespace: "default",
        fieldManager: "test",
        signal,
      });
    });
    await using runner = await KopfRunner.start(["run", "--standalone", "-A"], {
      registry,
      kubeconfig: runners.kubeconfig.path,
    });
    const store = runners.server.store;
    await until(
      () =>
        ["from-context", "from-kopf-api", "from-daemon"].every((n) =>
          store.get("configmaps", "default", n)
        ),
      "the handlers' ConfigMaps on the runner's server",
    );
    for (const n of ["from-context", "from-kopf-api", "from-daemon"]) {
      assert.equal(elsewhere.server.store.get("configmaps", "default", n), undefined, n);
    }
    assert.equal(elsewhere.countRequests(), 0, "no request went to the other server");
    assert.deepEqual(startupErrors, ["LoginError"]);
    void runner;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("an admission handler's api and kopf.api() work in the webhook server's requests", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = new kopf.WebhookServer({ port: 0 });
    settings.admission.managed = "api.kopf.dev";
  });
  kopf.on.validate("kopfexamples", { registry, operation: "CREATE" }, async ({ api, name }) => {
    // The policy lives in a ConfigMap, read through the handler's client…
    const policy = await api.get("configmaps", "policy", { namespace: "default" });
    // …and kopf.api() is the same client inside the webhook server's request.
    if (kopf.api() !== api) throw new kopf.AdmissionError("kopf.api() is another client");
    if (policy.data.deny === name) throw new kopf.AdmissionError(`${name} is denied by policy`);
  });
  await c.call("POST", "/api/v1/namespaces/default/configmaps", {
    metadata: { name: "policy" },
    data: { deny: "bad" },
  });
  await using runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  await until(async () => {
    const vwc = await c.call("GET", `${VWC}/api.kopf.dev`, undefined, [404]);
    return vwc.body?.webhooks?.length === 1;
  }, "the validating webhook");
  const bad = await c.call("POST", KEXES, { metadata: { name: "bad" }, spec: {} }, [400, 403, 500]);
  assert.match(JSON.stringify(bad.body), /bad is denied by policy/);
  const good = await c.call("POST", KEXES, { metadata: { name: "good" }, spec: {} });
  assert.equal(good.status, 201);
  void runner;
});
