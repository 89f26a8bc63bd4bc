/**
 * Transports: which HTTP client serves which credentials (the lean HTTP/1.1
 * client by default; `fetch` for proxies, injected fetches, insecure HTTPS
 * and `KOPF_HTTP_CLIENT=fetch`), and both over real sockets: TLS with a CA,
 * mTLS, a bad CA, a refused connection, a proxy from the environment.
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { ConnectionInfo, Resource, Vault } from "../../mod.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { ApiConnectionError, TlsVerificationError } from "../../src/cogs/clients/errors.ts";
import {
  createTransport,
  DEFAULT_HTTP_CLIENT,
  httpClientFor,
  type TransportOptions,
} from "../../src/cogs/clients/transport.ts";
import { watchObjects } from "../../src/cogs/clients/watching.ts";

const PROBE = new URL("./_permission_probe.ts", import.meta.url).pathname;
const envOf = (vars: Record<string, string>) => (name: string) => vars[name];
const PROXY_VARS = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
  "NO_PROXY",
  "no_proxy",
  "KOPF_HTTP_CLIENT",
];

/**
 * The environment of a subprocess: this process's, without the proxy variables, plus `vars`.
 * (Proxy variables are never set in this process: every test running in parallel would see them.)
 */
function envWith(vars: Record<string, string>): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of PROXY_VARS) delete env[name];
  return { ...env, ...vars };
}

Deno.test("httpClientFor(): KOPF_HTTP_CLIENT, else the default; fetch for a proxy of the server's scheme unless NO_PROXY covers the host", () => {
  assert.equal(DEFAULT_HTTP_CLIENT, "http1");
  assert.equal(httpClientFor("http://k8s", envOf({})), DEFAULT_HTTP_CLIENT);
  assert.equal(httpClientFor("http://k8s", envOf({ KOPF_HTTP_CLIENT: "http1" })), "http1");
  assert.equal(httpClientFor("http://k8s", envOf({ KOPF_HTTP_CLIENT: " HTTP1 " })), "http1");
  assert.equal(httpClientFor("http://k8s", envOf({ KOPF_HTTP_CLIENT: "fetch" }), "http1"), "fetch");
  assert.throws(
    () => httpClientFor("http://k8s", envOf({ KOPF_HTTP_CLIENT: "h2" })),
    /^LoginError: KOPF_HTTP_CLIENT is "h2": set it to "http1" or "fetch", or unset it \(default http1\)$/,
  );
  const httpClientFor1 = (server: string, env: (name: string) => string | undefined) =>
    httpClientFor(server, env, "http1");
  const https = "https://api.k8s.example:6443";
  const http = "http://10.0.0.1:8080";
  assert.equal(httpClientFor1(https, envOf({})), "http1");
  assert.equal(httpClientFor1(https, envOf({ HTTPS_PROXY: "http://p:3128" })), "fetch");
  assert.equal(httpClientFor1(https, envOf({ https_proxy: "http://p:3128" })), "fetch");
  assert.equal(httpClientFor1(https, envOf({ ALL_PROXY: "socks5://p:1080" })), "fetch");
  assert.equal(httpClientFor1(https, envOf({ all_proxy: "http://p:3128" })), "fetch");
  assert.equal(httpClientFor1(https, envOf({ HTTP_PROXY: "http://p:3128" })), "http1");
  assert.equal(httpClientFor1(http, envOf({ HTTP_PROXY: "http://p:3128" })), "fetch");
  assert.equal(httpClientFor1(http, envOf({ http_proxy: "http://p:3128" })), "fetch");
  assert.equal(httpClientFor1(http, envOf({ HTTPS_PROXY: "http://p:3128" })), "http1");
  const proxied = { HTTPS_PROXY: "http://p:3128" };
  for (
    const noProxy of [
      "*",
      "api.k8s.example",
      ".k8s.example",
      "k8s.example",
      "*.example",
      "x, example ",
      "api.k8s.example:6443",
    ]
  ) {
    assert.equal(httpClientFor1(https, envOf({ ...proxied, NO_PROXY: noProxy })), "http1", noProxy);
    assert.equal(httpClientFor1(https, envOf({ ...proxied, no_proxy: noProxy })), "http1", noProxy);
  }
  for (const noProxy of ["", "other.example", "s.example", "api.k8s.example:443", "10.0.0.0/8"]) {
    assert.equal(httpClientFor1(https, envOf({ ...proxied, NO_PROXY: noProxy })), "fetch", noProxy);
  }
  assert.equal(
    httpClientFor1(http, envOf({ HTTP_PROXY: "http://p", NO_PROXY: "10.0.0.1" })),
    "http1",
  );
  // Asking for http1 does not override a proxy.
  assert.equal(httpClientFor(https, envOf({ ...proxied, KOPF_HTTP_CLIENT: "http1" })), "fetch");
  // An environment that cannot be read: a proxy cannot be ruled out.
  const denied = () => {
    throw new Deno.errors.NotCapable('Requires env access to "HTTPS_PROXY"');
  };
  assert.equal(httpClientFor1(https, denied), "fetch");
});

Deno.test("createTransport(): http1 when asked for; fetch when injected, for insecure HTTPS, by option or env", () => {
  const http1 = envOf({ KOPF_HTTP_CLIENT: "http1" });
  const clientOf = (info: ConnectionInfo, options: TransportOptions = {}) => {
    const transport = createTransport(info, { env: http1, ...options });
    transport.close();
    return transport.client;
  };
  assert.equal(clientOf(new ConnectionInfo({ server: "http://127.0.0.1:1" })), "http1");
  assert.equal(clientOf(new ConnectionInfo({ server: "https://127.0.0.1:1" })), "http1");
  assert.equal(
    clientOf(new ConnectionInfo({ server: "https://127.0.0.1:1", insecure: true })),
    "fetch",
  );
  assert.equal(
    clientOf(new ConnectionInfo({ server: "http://127.0.0.1:1" }), { fetch: fetch }),
    "fetch",
  );
  assert.equal(
    clientOf(new ConnectionInfo({ server: "http://127.0.0.1:1" }), { client: "fetch" }),
    "fetch",
  );
  assert.equal(
    clientOf(new ConnectionInfo({ server: "http://127.0.0.1:1" }), { client: "http1" }),
    "http1",
  );
  const fetchByEnv = { env: envOf({ KOPF_HTTP_CLIENT: "fetch" }) };
  assert.equal(
    clientOf(new ConnectionInfo({ server: "http://127.0.0.1:1" }), fetchByEnv),
    "fetch",
  );
  assert.equal(
    clientOf(new ConnectionInfo({ server: "http://127.0.0.1:1" }), { env: envOf({}) }),
    DEFAULT_HTTP_CLIENT,
  );
});

Deno.test("both clients over TLS: a CA and mTLS work, a missing CA fails verification, bad PEM fails early", async () => {
  await using server = await startApiServer({ tls: true });
  const tls = server.tls!;
  for (const client of ["http1", "fetch"] as const) {
    const good = createTransport(
      new ConnectionInfo({
        server: server.url,
        caData: tls.caCert,
        certificateData: tls.clientCert,
        privateKeyData: tls.clientKey,
      }),
      { client },
    );
    try {
      const answer = await good.request("GET", `${server.url}/api/v1/namespaces/default`, {
        headers: { accept: "application/json" },
        timeout: 10,
      });
      assert.equal(answer.status, 200, client);
      assert.equal(JSON.parse(answer.text).metadata.name, "default");
      assert.match(answer.header("Content-Type") ?? "", /json/);
    } finally {
      good.close();
    }
    const bad = createTransport(
      new ConnectionInfo({
        server: server.url,
        certificateData: tls.clientCert,
        privateKeyData: tls.clientKey,
      }),
      { client },
    );
    try {
      await assert.rejects(bad.request("GET", `${server.url}/version`, {}));
    } finally {
      bad.close();
    }
    assert.throws(
      () =>
        createTransport(new ConnectionInfo({ server: server.url, caData: "-----BEGIN x" }), {
          client,
        }),
      /not valid PEM/,
    );
  }
  // The lean client says why verification failed.
  using vault = new Vault({
    login: new ConnectionInfo({
      server: server.url,
      certificateData: tls.clientCert,
      privateKeyData: tls.clientKey,
    }),
  });
  const api = new ApiClient({
    vault,
    settings: { networking: { errorBackoffs: [] } },
    httpClient: "http1",
  });
  await assert.rejects(
    api.request("GET", "/version"),
    (e) => e instanceof TlsVerificationError && /invalid peer certificate/.test(e.message),
  );
});

Deno.test("a watch over mTLS on the lean client: events come, the abort ends it", async () => {
  await using server = await startApiServer({ tls: true });
  const tls = server.tls!;
  {
    using vault = new Vault({
      login: new ConnectionInfo({
        server: server.url,
        caData: tls.caCert,
        certificateData: tls.clientCert,
        privateKeyData: tls.clientKey,
      }),
    });
    const api = new ApiClient({ vault, httpClient: "http1" });
    const configmaps = new Resource({
      group: "",
      version: "v1",
      plural: "configmaps",
      namespaced: true,
    });
    const stop = new AbortController();
    const names: string[] = [];
    const stream = watchObjects(api, configmaps, "default", { signal: stop.signal });
    const path = configmaps.getUrl({ namespace: "default" });
    await api.request("POST", path, { body: { metadata: { name: "cm1" } } });
    await api.request("POST", path, { body: { metadata: { name: "cm2" } } });
    for await (const event of stream) {
      names.push(event.object.metadata?.name ?? "");
      if (names.length === 2) stop.abort();
    }
    assert.deepEqual(names, ["cm1", "cm2"]);
  }
});

Deno.test("a refused connection is an ApiConnectionError on both clients", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  for (const httpClient of ["http1", "fetch"] as const) {
    using vault = new Vault({
      login: new ConnectionInfo({ server: `http://127.0.0.1:${port}` }),
    });
    const api = new ApiClient({
      vault,
      settings: { networking: { errorBackoffs: [] } },
      httpClient,
    });
    await assert.rejects(api.request("GET", "/version"), ApiConnectionError, httpClient);
  }
});

Deno.test("a proxy in the environment is honoured: requests go through it (fetch), NO_PROXY bypasses it", async () => {
  await using server = await startApiServer();
  const seen: string[] = [];
  // A forward proxy that answers by itself: it sees the absolute URL of the request. Only the
  // requests for our server count: under --parallel, another file's client may still reach this
  // port for a server of its own that had it before (seen twice on a loaded machine).
  await using proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (!req.url.startsWith(`${server.url}/`)) return new Response("not ours", { status: 502 });
    seen.push(req.url);
    return Response.json({ kind: "Status", proxied: true });
  });
  const proxyUrl = `http://127.0.0.1:${proxy.addr.port}`;
  const host = new URL(server.url).hostname;
  for (
    const [vars, proxied] of [
      [{ HTTP_PROXY: proxyUrl }, true],
      [{ HTTP_PROXY: proxyUrl, KOPF_HTTP_CLIENT: "http1" }, true],
      [{ http_proxy: proxyUrl, KOPF_HTTP_CLIENT: "http1" }, true],
      [{ ALL_PROXY: proxyUrl, KOPF_HTTP_CLIENT: "http1" }, true],
      [{ HTTP_PROXY: proxyUrl, NO_PROXY: host, KOPF_HTTP_CLIENT: "http1" }, false],
      [{ HTTP_PROXY: proxyUrl, NO_PROXY: host }, false],
      [{ KOPF_HTTP_CLIENT: "http1" }, false],
      [{}, false],
    ] as const
  ) {
    // The variables in a subprocess's own environment: Deno's fetch reads them there.
    seen.length = 0;
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", PROBE, "version", server.url],
      env: envWith(vars),
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 0, text);
    const answer = JSON.parse(text) as { proxied?: boolean; gitVersion?: string };
    assert.equal(answer.proxied === true, proxied, JSON.stringify(vars));
    // (At least once: a loaded machine's slow attempt may be retried — seen twice in a loaded run.)
    if (proxied) {
      assert.ok(seen.length >= 1 && seen.every((url) => url === `${server.url}/version`));
    } else assert.deepEqual([seen, !!answer.gitVersion], [[], true], text);
  }
});

Deno.test("without --allow-net, the lean client's connection is an AccessError naming the flag", async () => {
  await using server = await startApiServer();
  const host = new URL(server.url).host;
  for (const client of ["http1", "fetch"]) {
    const probe = new URL("./_permission_probe.ts", import.meta.url).pathname;
    const { stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-env", probe, "request", server.url],
      env: { KOPF_HTTP_CLIENT: client },
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.deepEqual(new TextDecoder().decode(stdout).trim().split("\n"), [
      "AccessError",
      `Connecting to ${server.url} needs net access to "${host}": run with --allow-net=${host}`,
    ], client);
  }
});

Deno.test("a keep-alive connection the server closed while idle: the next request goes on a fresh one", async () => {
  // A raw server that answers one request per connection with keep-alive, then closes it.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      connections++;
      const buf = new Uint8Array(4096);
      await conn.read(buf);
      const body = JSON.stringify({ connection: connections });
      await conn.write(
        new TextEncoder().encode(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        ),
      );
      conn.close();
    }
  })();
  try {
    using vault = new Vault({
      login: new ConnectionInfo({ server: `http://127.0.0.1:${listener.addr.port}` }),
    });
    const api = new ApiClient({
      vault,
      settings: { networking: { errorBackoffs: [] } },
      httpClient: "http1",
    });
    for (const n of [1, 2, 3]) {
      await new Promise((resolve) => setTimeout(resolve, 20)); // the close reaches the client
      const answer = await api.request<{ connection: number }>("PATCH", "/x", { body: {} });
      assert.equal(answer.connection, n);
    }
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
});

Deno.test("the lean transport sends the given target as it is, else the URL without the server; a URL elsewhere is refused", async () => {
  await using server = await startApiServer();
  const transport = createTransport(new ConnectionInfo({ server: `${server.url}/` }), {
    client: "http1",
  });
  try {
    const base = transport.server;
    const init = { headers: { accept: "application/json" } };
    const given = await transport.request("GET", `${base}/api/v1/namespaces/default`, {
      ...init,
      target: "/api/v1/namespaces/default",
    });
    assert.equal(given.status, 200);
    assert.equal(JSON.parse(given.text).metadata.name, "default");
    const cut = await transport.request("GET", `${base}/api/v1/namespaces/default`, init);
    assert.equal(JSON.parse(cut.text).metadata.name, "default");
    await assert.rejects(
      transport.request("GET", "http://elsewhere.invalid/api", init),
      (e) => e instanceof TypeError && /not on the transport's server/.test(e.message),
    );
  } finally {
    transport.close();
  }
});

Deno.test("a lean stream reads its chunks without an iterator (read()); a fetch stream has only chunks", async () => {
  await using server = await startApiServer();
  const info = new ConnectionInfo({ server: server.url });
  const lean = createTransport(info, { client: "http1" });
  const viaFetch = createTransport(info, { client: "fetch" });
  try {
    const headers = { accept: "application/json" };
    const target = "/api/v1/namespaces?watch=true&timeoutSeconds=1";
    const stream = await lean.stream("GET", `${lean.server}${target}`, { headers, target });
    assert.equal(stream.status, 200);
    let text = "";
    const decoder = new TextDecoder();
    for (let chunk = await stream.read!(); chunk; chunk = await stream.read!()) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes("\n")) break;
    }
    assert.equal(JSON.parse(text.split("\n")[0]!).type, "ADDED");
    stream.cancel();
    const other = await viaFetch.stream("GET", `${viaFetch.server}${target}`, { headers });
    assert.equal(other.read, undefined);
    other.cancel();
  } finally {
    lean.close();
    viaFetch.close();
  }
});
