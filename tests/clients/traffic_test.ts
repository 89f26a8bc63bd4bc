/**
 * What the client sends where: `settings.networking.logTraffic` (`--debug`)
 * logs one line per attempt without a header or token; requests go through
 * the HTTP proxy of `HTTP_PROXY`/`http_proxy` unless `NO_PROXY` names the host
 * (Kopf's `trust_env`) — in subprocesses, as Deno reads these at the start.
 */
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { startApiServer } from "../../testing.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";

const PROBE = fromFileUrl(new URL("./_permission_probe.ts", import.meta.url));

Deno.test("logTraffic: one debug line per attempt (method, path, code, duration), never the token; off by default", async () => {
  await using server = await startApiServer({ token: "t0k3n" });
  const lines: string[] = [];
  const logger = { debug: (m: string) => lines.push(m), warn() {}, error() {} };
  using vault = new Vault({ x: new ConnectionInfo({ server: server.url, token: "t0k3n" }) });
  const quiet = new ApiClient({ vault, logger });
  await quiet.request("GET", "/api/v1/namespaces");
  assert.equal(lines.length, 0);
  const api = new ApiClient({
    vault,
    logger,
    settings: { networking: { logTraffic: true, errorBackoffs: [] } },
  });
  await api.request("GET", "/api/v1/namespaces", { query: { limit: "1" } });
  await assert.rejects(api.request("GET", "/api/v1/namespaces/absent"));
  assert.equal(lines.length, 2, lines.join("\n"));
  assert.match(lines[0]!, /^API: GET \/api\/v1\/namespaces\?limit=1 -> 200 in \d+ms$/);
  assert.match(lines[1]!, /^API: GET \/api\/v1\/namespaces\/absent -> 404 in \d+ms$/);
  assert.ok(!lines.some((l) => l.includes("t0k3n")));
});

/** A forward proxy on loopback for plain-HTTP requests (absolute-form): forwards and counts. */
function forwardProxy(): { url: string; hits: string[]; close(): Promise<void> } {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    hits.push(`${req.method} ${req.url}`);
    const r = await fetch(req.url, { method: req.method, headers: req.headers });
    return new Response(await r.arrayBuffer(), { status: r.status, headers: r.headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits,
    close: () => server.shutdown(),
  };
}

function keep(...names: string[]): Record<string, string> {
  return Object.fromEntries(
    names.flatMap((n) => Deno.env.get(n) === undefined ? [] : [[n, Deno.env.get(n)!]]),
  );
}

async function probe(server: string, env: Record<string, string>): Promise<string[]> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "-A", PROBE, "request", server],
    stdout: "piped",
    stderr: "inherit",
    // Only the given proxy variables (an empty `no_proxy` would shadow `NO_PROXY`).
    clearEnv: true,
    env: { ...keep("HOME", "PATH", "DENO_DIR", "XDG_CACHE_HOME"), ...env },
  }).output();
  return new TextDecoder().decode(stdout).trim().split("\n");
}

Deno.test("HTTP_PROXY / http_proxy carry the API requests; NO_PROXY bypasses the proxy", async () => {
  await using server = await startApiServer();
  const proxy = forwardProxy();
  try {
    assert.deepEqual(await probe(server.url, { HTTP_PROXY: proxy.url }), ["OK"]);
    assert.deepEqual(proxy.hits, [`GET ${server.url}/version`]);
    assert.deepEqual(await probe(server.url, { http_proxy: proxy.url }), ["OK"]);
    assert.equal(proxy.hits.length, 2);
    const host = new URL(server.url).hostname;
    assert.deepEqual(await probe(server.url, { HTTP_PROXY: proxy.url, NO_PROXY: host }), ["OK"]);
    assert.deepEqual(await probe(server.url, { http_proxy: proxy.url, no_proxy: host }), ["OK"]);
    assert.equal(proxy.hits.length, 2, "NO_PROXY: not through the proxy");
  } finally {
    await proxy.close();
  }
});
