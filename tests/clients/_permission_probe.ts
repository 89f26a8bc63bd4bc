/**
 * Run in a subprocess with narrow permissions by auth_test.ts: performs one
 * client action and prints the error's name and message (one line each), so
 * the test can check that a missing permission is a clear one-liner. The
 * action `version` prints the answer of `GET /version` as JSON: transport_test.ts
 * runs it with proxy variables in the subprocess's own environment (changing
 * the test process's would change it for every test running in parallel).
 *
 * Usage: deno run [narrow flags] _permission_probe.ts <action> [args…]
 *
 * @module
 */

import { loginViaClient, loginWithKubeconfig } from "../../src/cogs/clients/auth.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";

const [action, arg] = Deno.args;
try {
  if (action === "kubeconfig-default") {
    await loginWithKubeconfig();
  } else if (action === "kubeconfig-path") {
    await loginWithKubeconfig({ path: arg! });
  } else if (action === "client-default") {
    const info = await loginViaClient();
    using vault = new Vault({ client: info });
    await new ApiClient({ vault }).request("GET", "/api/v1/namespaces");
  } else if (action === "request") {
    using vault = new Vault({ probe: new ConnectionInfo({ server: arg! }) });
    await new ApiClient({ vault }).request("GET", "/version");
  } else if (action === "version") {
    using vault = new Vault({ probe: new ConnectionInfo({ server: arg! }) });
    console.log(JSON.stringify(await new ApiClient({ vault }).request("GET", "/version")));
    Deno.exit(0);
  }
  console.log("OK");
} catch (error) {
  console.log((error as Error).name);
  console.log((error as Error).message);
}
