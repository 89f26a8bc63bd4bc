/**
 * Run in a subprocess by handler_api_runner_test.ts, with `KUBECONFIG` and `HOME` of its own
 * pointing at another API server: runs an operator under `KopfRunner` with the kubeconfig given
 * as the argument, whose handlers write ConfigMaps through their `api` and `kopf.api()`. When its
 * stdin closes, it stops the operator and prints as JSON the startup handler's errors and the
 * server that `loginWithKubeconfig()` finds outside the runner.
 *
 * The environment is the subprocess's own: set in the test process, every test running in
 * parallel would see it.
 *
 * Usage: deno run -A _runner_env_probe.ts <kubeconfig>
 *
 * @module
 */

import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";

const [kubeconfig] = Deno.args;
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
{
  await using runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: kubeconfig!,
  });
  for await (const _ of Deno.stdin.readable) {
    // Until the test closes stdin.
  }
  void runner;
}
// Outside the runner, the environment's kubeconfig (so the test knows it pointed elsewhere).
const outside = (await kopf.loginWithKubeconfig())?.server;
console.log(JSON.stringify({ startupErrors, outside }));
