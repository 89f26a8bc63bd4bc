import assert from "node:assert/strict";
import { dump as stringify } from "js-yaml";
import { startApiServer } from "../../testing.ts";
import { loginWithKubeconfig } from "../../src/cogs/clients/auth.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { parseKubeconfigs, selectContext } from "../../src/cogs/clients/kubeconfig.ts";
import { LoginError, Vault } from "../../src/cogs/structs/credentials.ts";

const EXEC_V1 = "client.authentication.k8s.io/v1";

function config(user: Record<string, unknown>, cluster: Record<string, unknown>) {
  return {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "x",
    clusters: [{ name: "x", cluster }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "x", user: "u", namespace: "ns-x" } }],
  };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function script(path: string, body: string): Promise<void> {
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
}

Deno.test("parseKubeconfigs(): first file wins per name, relative paths follow their file", async () => {
  const kc = await parseKubeconfigs([
    {
      path: "/a/config",
      text: stringify({
        clusters: [{ name: "c", cluster: { server: "https://a", "certificate-authority": "ca" } }],
        users: [{ name: "u", user: { "client-certificate": "/abs/crt", "client-key": "k/key" } }],
        contexts: [{ name: "one", context: { cluster: "c", user: "u" } }],
      }),
    },
    { path: "/b/empty", text: "" },
    {
      path: "/b/config",
      text: stringify({
        "current-context": "two",
        clusters: [
          { name: "c", cluster: { server: "https://b" } },
          { name: "d", cluster: { server: "https://d", "insecure-skip-tls-verify": true } },
        ],
        users: [{
          name: "e",
          user: {
            tokenFile: "tok",
            exec: { apiVersion: EXEC_V1, command: "./bin/plugin", args: ["x"] },
          },
        }, {
          name: "p",
          user: { exec: { apiVersion: EXEC_V1, command: "gke-gcloud-auth-plugin" } },
        }],
        contexts: [{ name: "two", context: { cluster: "d", user: "e", namespace: "team" } }],
      }),
    },
  ]);
  assert.equal(kc.source, "/a/config, /b/empty, /b/config");
  assert.equal(kc.currentContext, "two", "the first current-context set wins");
  assert.equal(kc.clusters.get("c")?.server, "https://a");
  assert.equal(kc.clusters.get("c")?.certificateAuthority, "/a/ca");
  assert.equal(kc.users.get("u")?.clientCertificate, "/abs/crt");
  assert.equal(kc.users.get("u")?.clientKey, "/a/k/key");
  assert.equal(kc.users.get("e")?.tokenFile, "/b/tok");
  assert.equal(kc.users.get("e")?.exec?.command, "/b/bin/plugin", "relative with a separator");
  assert.equal(kc.users.get("p")?.exec?.command, "gke-gcloud-auth-plugin", "looked up in PATH");
  const picked = selectContext(kc);
  assert.equal(picked.cluster.insecureSkipTlsVerify, true);
  assert.equal(picked.context.namespace, "team");
  assert.equal(selectContext(kc, "one").cluster.server, "https://a");
});

Deno.test("parseKubeconfigs(): a malformed file is a one-line error naming the file and field", async () => {
  const cases: Array<[string, RegExp]> = [
    ["- a\n- b\n", /^The kubeconfig \/k is not valid: the file must be a mapping$/],
    ["clusters: {a: 1}\n", /"clusters" must be a list$/],
    ["users: [{user: {token: t}}]\n", /users\[0\] has no name$/],
    ["users: [{name: u, user: {exec: {command: x}}}]\n", /the exec of user "u" has no apiVersion$/],
    ["clusters: [{name: c, cluster: {server: [1]}}]\n", /"server" must be a string$/],
    ["clusters: [\n  - {name: 1\n", /^The kubeconfig \/k is not valid: .* at line 2, column 3$/],
    ["users: []\n---\nusers: []\n", /not valid: it holds 2 YAML documents .*: a kubeconfig is one/],
    ["users: []\nusers: []\n", /not valid: duplicated mapping key at line 2, column 1$/],
  ];
  for (const [text, message] of cases) {
    await assert.rejects(() => parseKubeconfigs([{ path: "/k", text }]), (e: Error) => {
      assert.ok(e instanceof LoginError, text);
      assert.match(e.message, message);
      assert.ok(!e.message.includes("\n"), e.message);
      return true;
    });
  }
  const kc = await parseKubeconfigs([{
    path: "/k",
    text: stringify({
      "current-context": "x",
      clusters: [{ name: "c", cluster: {} }],
      contexts: [{ name: "x", context: { cluster: "c", user: "nobody" } }],
    }),
  }]);
  assert.throws(() => selectContext(kc), /has no server for the cluster "c": add its server URL/);
});

Deno.test("an exec plugin gets KUBERNETES_EXEC_INFO, its args and env; its expiry is kept", async () => {
  await using server = await startApiServer({ token: "from-exec" });
  await withDir(async (dir) => {
    await script(
      `${dir}/plugin.sh`,
      `echo "$KUBERNETES_EXEC_INFO|$1|$GREETING" > "${dir}/seen"
echo '{"apiVersion":"${EXEC_V1}","kind":"ExecCredential","status":{"token":"from-exec","expirationTimestamp":"2099-01-02T03:04:05Z"}}'`,
    );
    const kc = config({
      exec: {
        apiVersion: EXEC_V1,
        command: "./plugin.sh",
        args: ["first-arg"],
        env: [{ name: "GREETING", value: "hello" }],
        provideClusterInfo: true,
      },
    }, {
      server: server.url,
      "insecure-skip-tls-verify": true,
      extensions: [{ name: "client.authentication.k8s.io/exec", extension: { audience: "a" } }],
    });
    await Deno.writeTextFile(`${dir}/config`, stringify(kc));
    const info = await loginWithKubeconfig({ path: `${dir}/config` });
    assert.equal(info?.token, "from-exec");
    assert.equal(info?.expiration?.toISOString(), "2099-01-02T03:04:05.000Z");
    assert.equal(info?.defaultNamespace, "ns-x");
    const [execInfo, arg, greeting] = (await Deno.readTextFile(`${dir}/seen`)).trim().split("|");
    assert.deepEqual(JSON.parse(execInfo!), {
      apiVersion: EXEC_V1,
      kind: "ExecCredential",
      spec: {
        interactive: false,
        cluster: {
          server: server.url,
          "insecure-skip-tls-verify": true,
          config: { audience: "a" },
        },
      },
    });
    assert.equal(arg, "first-arg");
    assert.equal(greeting, "hello");
    using vault = new Vault({ exec: info });
    await new ApiClient({ vault }).request("GET", "/api/v1/namespaces");
  });
});

Deno.test("an exec plugin's client certificate is used for TLS client auth", async () => {
  await using server = await startApiServer({ tls: true });
  const tls = server.tls!;
  await withDir(async (dir) => {
    const status = { clientCertificateData: tls.clientCert, clientKeyData: tls.clientKey };
    await Deno.writeTextFile(
      `${dir}/cred.json`,
      JSON.stringify({ apiVersion: EXEC_V1, kind: "ExecCredential", status }),
    );
    await script(`${dir}/plugin.sh`, `cat "${dir}/cred.json"`);
    const kc = config(
      { exec: { apiVersion: EXEC_V1, command: `${dir}/plugin.sh` } },
      { server: server.url, "certificate-authority-data": btoa(tls.caCert) },
    );
    await Deno.writeTextFile(`${dir}/config`, stringify(kc));
    const info = await loginWithKubeconfig({ path: `${dir}/config` });
    assert.equal(info?.certificateData, tls.clientCert);
    assert.equal(info?.privateKeyData, tls.clientKey);
    assert.equal(info?.caData, tls.caCert);
    assert.equal(info?.token, undefined);
    using vault = new Vault({ exec: info });
    const ns = await new ApiClient({ vault }).request<{ items: unknown[] }>(
      "GET",
      "/api/v1/namespaces",
    );
    assert.ok(ns.items.length > 0);
  });
});

Deno.test("exec plugin failures are one-line LoginErrors saying what to fix", async () => {
  await withDir(async (dir) => {
    const login = async (exec: Record<string, unknown>) => {
      const kc = config({ exec: { apiVersion: EXEC_V1, ...exec } }, { server: "https://k8s" });
      await Deno.writeTextFile(`${dir}/config`, stringify(kc));
      return loginWithKubeconfig({ path: `${dir}/config` });
    };
    const fails = async (exec: Record<string, unknown>, message: RegExp) => {
      await assert.rejects(login(exec), (e: Error) => {
        assert.ok(e instanceof LoginError, String(e));
        assert.match(e.message, message);
        assert.ok(!e.message.includes("\n"), e.message);
        return true;
      });
    };
    await fails(
      { command: "kopf-no-such-plugin", installHint: "Install it:\n  brew install it" },
      /^The exec plugin "kopf-no-such-plugin" of the user "u" in .*config is not found: Install it: brew install it$/,
    );
    await script(`${dir}/fail.sh`, `echo "token expired; run login" >&2\nexit 3`);
    await fails(
      { command: `${dir}/fail.sh` },
      /fail\.sh" of the user "u" in .* failed \(exit code 3\): token expired; run login$/,
    );
    await script(`${dir}/junk.sh`, `echo not-json`);
    await fails({ command: `${dir}/junk.sh` }, /printed no ExecCredential JSON/);
    await script(
      `${dir}/old.sh`,
      `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`,
    );
    await fails(
      { command: `${dir}/old.sh` },
      /printed an ExecCredential of client.authentication.k8s.io\/v1beta1, but the kubeconfig asks for client.authentication.k8s.io\/v1: make them the same$/,
    );
    await script(`${dir}/empty.sh`, `echo '{"apiVersion":"${EXEC_V1}","kind":"ExecCredential"}'`);
    await fails({ command: `${dir}/empty.sh` }, /with neither a token nor a client certificate/);
    await fails(
      { command: `${dir}/old.sh`, interactiveMode: "Always" },
      /needs an interactive terminal \(interactiveMode: Always\)/,
    );
  });
});

Deno.test("a tokenFile is read at every login; basic auth; impersonation is refused", async () => {
  await using server = await startApiServer({ token: "first" });
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/token`, "first\n");
    const write = (user: Record<string, unknown>) =>
      Deno.writeTextFile(`${dir}/config`, stringify(config(user, { server: server.url })));
    await write({ tokenFile: "token" });
    assert.equal((await loginWithKubeconfig({ path: `${dir}/config` }))?.token, "first");
    await Deno.writeTextFile(`${dir}/token`, "second\n");
    assert.equal((await loginWithKubeconfig({ path: `${dir}/config` }))?.token, "second");
    await write({ token: "inline", tokenFile: "token" });
    assert.equal((await loginWithKubeconfig({ path: `${dir}/config` }))?.token, "inline");
    await write({ tokenFile: "absent" });
    await assert.rejects(
      loginWithKubeconfig({ path: `${dir}/config` }),
      /The token file of the user "u" .*absent does not exist: create it or fix the kubeconfig/,
    );
    await write({ username: "admin", password: "pw" });
    const basic = await loginWithKubeconfig({ path: `${dir}/config` });
    assert.equal(basic?.username, "admin");
    assert.equal(basic?.password, "pw");
    assert.equal(basic?.token, undefined);
    await write({ token: "t", as: "system:admin" });
    await assert.rejects(
      loginWithKubeconfig({ path: `${dir}/config` }),
      /impersonates "system:admin" for the user "u", which the operator does not support/,
    );
  });
});

Deno.test("a user with an auth-provider goes through the client library", async () => {
  // An OIDC id-token that expires far in the future: the client library uses it as is.
  const b64 = (o: unknown) =>
    btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const jwt = `${b64({ alg: "none" })}.${b64({ exp: 4102444800, sub: "me" })}.sig`;
  await using server = await startApiServer({ token: jwt });
  await withDir(async (dir) => {
    const kc = config({
      "auth-provider": {
        name: "oidc",
        config: { "id-token": jwt, "idp-issuer-url": "https://issuer", "client-id": "kopf" },
      },
    }, { server: server.url, "insecure-skip-tls-verify": true });
    await Deno.writeTextFile(`${dir}/config`, stringify(kc));
    const info = await loginWithKubeconfig({ path: `${dir}/config` });
    assert.equal(info?.token, jwt);
    assert.equal(info?.defaultNamespace, "ns-x");
    using vault = new Vault({ oidc: info });
    await new ApiClient({ vault }).request("GET", "/api/v1/namespaces");
  });
});
