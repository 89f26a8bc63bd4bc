import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { dump as stringify } from "js-yaml";
import { startApiServer } from "../../testing.ts";
import {
  loginViaClient,
  loginWithKubeconfig,
  loginWithServiceAccount,
  runAuthenticator,
} from "../../src/cogs/clients/auth.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { ConnectionInfo, LoginError, Vault } from "../../src/cogs/structs/credentials.ts";

const PROBE = fromFileUrl(new URL("./_permission_probe.ts", import.meta.url));

async function probe(flags: string[], ...args: string[]): Promise<string[]> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...flags, PROBE, ...args],
    stdout: "piped",
    stderr: "inherit",
    env: { KUBECONFIG: "" },
  }).output();
  return new TextDecoder().decode(stdout).trim().split("\n");
}

Deno.test("loginWithKubeconfig() reads the server, the token and the namespace; requests work", async () => {
  await using server = await startApiServer({ token: "s3cret" });
  const info = await loginWithKubeconfig({ path: server.kubeconfig.path });
  assert.ok(info);
  assert.equal(info.server, server.url);
  assert.equal(info.token, "s3cret");
  assert.equal(info.scheme, "Bearer");
  assert.equal(info.defaultNamespace, "default");
  assert.equal(info.priority, 10);
  using vault = new Vault({ kubeconfig: info });
  const ns = await new ApiClient({ vault }).request<{ metadata: { name: string } }>(
    "GET",
    "/api/v1/namespaces/default",
  );
  assert.equal(ns.metadata.name, "default");
});

Deno.test("loginWithKubeconfig() over TLS: CA and client certificate go into Deno.createHttpClient", async () => {
  await using server = await startApiServer({ tls: true });
  assert.ok(server.url.startsWith("https://"));
  const info = await loginWithKubeconfig({ path: server.kubeconfig.path });
  assert.ok(info);
  assert.equal(info.token, undefined);
  assert.equal(info.caData, server.tls!.caCert);
  assert.equal(info.certificateData, server.tls!.clientCert);
  assert.equal(info.privateKeyData, server.tls!.clientKey);
  using vault = new Vault({ kubeconfig: info });
  const api = new ApiClient({ vault });
  const list = await api.request<{ items: unknown[] }>("GET", "/api/v1/namespaces");
  assert.ok(list.items.length > 0);

  // Without the client certificate, the server refuses (401), and no re-login can help.
  const noCert = new ConnectionInfo({ server: server.url, caData: info.caData });
  using vault2 = new Vault({ nocert: noCert });
  const failing = new ApiClient({ vault: vault2 });
  const stop = new AbortController();
  const auth = runAuthenticator(vault2, () => ({ nocert: noCert }), { signal: stop.signal });
  await assert.rejects(failing.request("GET", "/api/v1/namespaces"), LoginError);
  stop.abort();
  await auth;
});

Deno.test("insecure credentials talk HTTPS without verifying the server (node:https under the hood)", async () => {
  await using server = await startApiServer({ tls: true, token: "tok" });
  using vault = new Vault({
    i: new ConnectionInfo({ server: server.url, insecure: true, token: "tok" }),
  });
  const api = new ApiClient({ vault, settings: { networking: { errorBackoffs: [] } } });
  const ns = await api.request<{ metadata: { name: string } }>("GET", "/api/v1/namespaces/default");
  assert.equal(ns.metadata.name, "default");
  // Without `insecure`, an unknown CA fails the TLS verification (not retried: not transient).
  using vault2 = new Vault({ s: new ConnectionInfo({ server: server.url, token: "tok" }) });
  const strict = new ApiClient({ vault: vault2, settings: { networking: { errorBackoffs: [] } } });
  await assert.rejects(strict.request("GET", "/api/v1/namespaces/default"), {
    name: "TlsVerificationError",
  });
});

Deno.test("loginWithKubeconfig() merges several files (first wins) and selects contexts", async () => {
  await using a = await startApiServer({ token: "ta" });
  await using b = await startApiServer({ token: "tb" });
  const dir = await Deno.makeTempDir();
  try {
    const second = {
      apiVersion: "v1",
      kind: "Config",
      "current-context": "b",
      clusters: [{ name: "b", cluster: { server: b.url, "insecure-skip-tls-verify": true } }],
      users: [{ name: "b", user: { token: "tb" } }],
      contexts: [{ name: "b", context: { cluster: "b", user: "b", namespace: "ns-b" } }],
    };
    await Deno.writeTextFile(`${dir}/b.yaml`, stringify(second));
    const paths = [a.kubeconfig.path, `${dir}/b.yaml`];
    const first = await loginWithKubeconfig({ path: paths });
    assert.equal(first?.server, a.url, "the first file's current-context wins");
    const other = await loginWithKubeconfig({ path: paths, context: "b" });
    assert.equal(other?.server, b.url);
    assert.equal(other?.token, "tb");
    assert.equal(other?.defaultNamespace, "ns-b");
    await assert.rejects(
      loginWithKubeconfig({ path: paths, context: "nope" }),
      (e: Error) =>
        e instanceof LoginError &&
        /has no context "nope": use one of kopf-embedded, b/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loginWithKubeconfig(): a missing or invalid file is a one-line LoginError", async () => {
  await assert.rejects(loginWithKubeconfig({ path: "/nonexistent/kubeconfig" }), (e: Error) => {
    assert.ok(e instanceof LoginError);
    assert.equal(
      e.message,
      "The kubeconfig /nonexistent/kubeconfig does not exist: set KUBECONFIG or pass the path of an existing file",
    );
    return true;
  });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/bad`, "clusters: [\n  - {name: 1\n");
    await assert.rejects(loginWithKubeconfig({ path: `${dir}/bad` }), (e: Error) => {
      assert.ok(e instanceof LoginError);
      assert.match(e.message, /^The kubeconfig .*\/bad is not valid: /);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    await Deno.writeTextFile(`${dir}/nocontext`, "apiVersion: v1\nkind: Config\nclusters: []\n");
    await assert.rejects(
      loginWithKubeconfig({ path: `${dir}/nocontext` }),
      /sets no current-context/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loginWithKubeconfig() without a path uses KUBECONFIG, else ~/.kube/config, else nothing", async () => {
  await using server = await startApiServer({ token: "env" });
  const home = await Deno.makeTempDir();
  const env = (vars: Record<string, string>) => ({ env: (name: string) => vars[name] });
  try {
    // Missing files in KUBECONFIG's list are skipped, as kubectl skips them…
    const list = `/nonexistent-first:${server.kubeconfig.path}:/nonexistent-second`;
    assert.equal((await loginWithKubeconfig(env({ KUBECONFIG: list })))?.token, "env");
    // …but when none exists, that is an error (kubectl would go to localhost:8080).
    const none = "/nonexistent-first:/nonexistent-second";
    await assert.rejects(loginWithKubeconfig(env({ KUBECONFIG: none, HOME: home })), (e: Error) => {
      assert.ok(e instanceof LoginError);
      assert.equal(
        e.message,
        "None of the kubeconfig files in KUBECONFIG exists (/nonexistent-first, /nonexistent-second): " +
          "point KUBECONFIG at an existing file",
      );
      return true;
    });
    assert.equal(
      (await loginWithKubeconfig(env({ KUBECONFIG: server.kubeconfig.path })))?.token,
      "env",
    );
    assert.equal(
      await loginWithKubeconfig(env({ HOME: home })),
      undefined,
      "no KUBECONFIG, no ~/.kube/config",
    );
    await Deno.mkdir(`${home}/.kube`);
    await Deno.writeTextFile(`${home}/.kube/config`, server.kubeconfig.yaml);
    assert.equal((await loginWithKubeconfig(env({ HOME: home })))?.token, "env", "~/.kube/config");
    assert.equal(
      (await loginWithKubeconfig(env({ USERPROFILE: home })))?.token,
      "env",
      "USERPROFILE when HOME is unset",
    );
    // An environment that may not be read: a one-line error naming the flag.
    const denied = {
      env: () => {
        throw new Deno.errors.NotCapable('Requires env access to "KUBECONFIG"');
      },
    };
    await assert.rejects(
      loginWithKubeconfig(denied),
      /^LoginError: Finding the kubeconfig needs env access to KUBECONFIG and HOME: run with --allow-env=KUBECONFIG,HOME/,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("an exec plugin's token is used (the plugin runs at login)", async () => {
  await using server = await startApiServer({ token: "from-exec" });
  const dir = await Deno.makeTempDir();
  try {
    const plugin = `${dir}/plugin.sh`;
    await Deno.writeTextFile(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}'\n`,
    );
    await Deno.chmod(plugin, 0o755);
    const config = {
      apiVersion: "v1",
      kind: "Config",
      "current-context": "x",
      clusters: [{ name: "x", cluster: { server: server.url, "insecure-skip-tls-verify": true } }],
      users: [{
        name: "x",
        user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin } },
      }],
      contexts: [{ name: "x", context: { cluster: "x", user: "x" } }],
    };
    await Deno.writeTextFile(`${dir}/config`, stringify(config));
    const info = await loginWithKubeconfig({ path: `${dir}/config` });
    assert.equal(info?.token, "from-exec");
    using vault = new Vault({ exec: info });
    await new ApiClient({ vault }).request("GET", "/api/v1/namespaces");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loginViaClient() takes client-node's own credentials", async () => {
  await using server = await startApiServer({ token: "client" });
  const vars: Record<string, string> = { KUBECONFIG: server.kubeconfig.path };
  const info = await loginViaClient({ env: (name) => vars[name] });
  assert.equal(info.server, server.url);
  assert.equal(info.token, "client");
  assert.equal(info.priority, 10);
});

Deno.test("loginWithServiceAccount() reads the token, CA and namespace, and the service host", async () => {
  const root = await Deno.makeTempDir();
  const vars: Record<string, string> = {};
  const env = (name: string) => vars[name];
  try {
    assert.equal(await loginWithServiceAccount({ root, env }), undefined, "no token: not in a pod");
    await Deno.writeTextFile(`${root}/token`, "sa-token\n");
    await Deno.writeTextFile(`${root}/ca.crt`, "-----BEGIN CERTIFICATE-----\n");
    await Deno.writeTextFile(`${root}/namespace`, "operators\n");
    Object.assign(vars, { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" });
    const info = await loginWithServiceAccount({ root, env });
    assert.ok(info);
    assert.equal(info.server, "https://[fd00::1]:443");
    assert.equal(info.token, "sa-token");
    assert.equal(info.caPath, `${root}/ca.crt`);
    assert.equal(info.defaultNamespace, "operators");
    assert.equal(info.priority, 20);
    vars.KUBERNETES_SERVICE_PORT = "8080";
    assert.equal((await loginWithServiceAccount({ root, env }))?.server, "http://[fd00::1]:8080");
    delete vars.KUBERNETES_SERVICE_HOST;
    assert.equal(
      (await loginWithServiceAccount({ root, env }))?.server,
      "https://kubernetes.default.svc",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a missing Deno permission is a one-line error naming the flag", async () => {
  await using server = await startApiServer();
  const path = server.kubeconfig.path;
  const env = await probe([`--allow-read`], "kubeconfig-default");
  assert.equal(env[0], "LoginError");
  assert.match(
    env[1]!,
    /needs env access to KUBECONFIG and HOME: run with --allow-env=KUBECONFIG,HOME/,
  );

  const read = await probe(["--allow-env"], "kubeconfig-path", path);
  assert.deepEqual(read, [
    "LoginError",
    `Reading the kubeconfig ${path} needs read access to "${path}": run with --allow-read=${path}`,
  ]);

  const host = new URL(server.url).host;
  const net = await probe([], "request", server.url);
  assert.deepEqual(net, [
    "AccessError",
    `Connecting to ${server.url} needs net access to "${host}": run with --allow-net=${host}`,
  ]);
});
