/**
 * Under `KopfRunner`, a handler's `api` (and `kopf.api()`) goes where the runner's operator goes:
 * its kubeconfig's server, never the one `KUBECONFIG`/`~/.kube/config` of the process points at.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner, startApiServer } from "../../testing.ts";
import { cluster, until } from "../reactor/_setup.ts";
import { denoDir } from "../_deno_dir.ts";

const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const PROBE = new URL("./_runner_env_probe.ts", import.meta.url).pathname;
const KEXES = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";

Deno.test("a handler's api goes to the runner's API server and nowhere else", async () => {
  await using runners = await startApiServer(); // the operator's login
  await using elsewhere = await startApiServer(); // what the process's environment points at
  const home = await Deno.makeTempDir({ prefix: "kopf-home-" });
  await Deno.mkdir(`${home}/.kube`);
  await Deno.writeTextFile(`${home}/.kube/config`, elsewhere.kubeconfig.yaml);
  // The operator runs in a subprocess whose own environment points elsewhere (setting it in this
  // process would point every test running in parallel there too).
  // Deno's cache stays where it is (see _deno_dir.ts).
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROBE, runners.kubeconfig.path],
    env: {
      KUBECONFIG: elsewhere.kubeconfig.path,
      HOME: home,
      DENO_DIR: await denoDir(),
      NO_COLOR: "1",
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  try {
    const store = runners.server.store;
    await until(
      () =>
        ["from-context", "from-kopf-api", "from-daemon"].every((n) =>
          store.get("configmaps", "default", n)
        ),
      "the handlers' ConfigMaps on the runner's server",
      30,
    );
  } finally {
    await child.stdin.close();
  }
  const { code, stdout, stderr } = await output;
  const text = new TextDecoder().decode(stdout);
  assert.equal(code, 0, text + new TextDecoder().decode(stderr));
  for (const n of ["from-context", "from-kopf-api", "from-daemon"]) {
    assert.equal(elsewhere.server.store.get("configmaps", "default", n), undefined, n);
  }
  assert.equal(elsewhere.countRequests(), 0, "no request went to the other server");
  assert.deepEqual(JSON.parse(text.trim().split("\n").at(-1)!), {
    startupErrors: ["LoginError"],
    outside: elsewhere.url, // the environment did point elsewhere
  });
  await Deno.remove(home, { recursive: true });
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
