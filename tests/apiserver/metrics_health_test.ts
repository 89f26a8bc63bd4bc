/**
 * `/metrics` with kube-apiserver's request metrics (names, labels, buckets) in Prometheus' text
 * format, under RBAC as kube guards it (nonResourceURL `/metrics`); `/livez`, `/readyz` and
 * `/healthz` with `?verbose`, `?exclude` and one check at a time, in kube's words — over real
 * HTTP.
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const CM = "/api/v1/namespaces/default/configmaps";

async function text(url: string, init?: RequestInit): Promise<[number, string]> {
  const res = await fetch(url, init);
  return [res.status, await res.text()];
}

function labels(l: Record<string, string>): string {
  const all = {
    component: "apiserver",
    dry_run: "",
    group: "",
    resource: "configmaps",
    scope: "resource",
    subresource: "",
    version: "v1",
    ...l,
  };
  return Object.keys(all).sort().map((k) => `${k}="${all[k as keyof typeof all]}"`).join(",");
}

Deno.test("/metrics counts requests as kube-apiserver labels them, with its duration buckets", async () => {
  await using api = await startApiServer();
  const json = { "content-type": "application/json" };
  const send = async (method: string, path: string, body?: unknown, type = json) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: type,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    await res.body?.cancel();
    return res.status;
  };
  assert.equal(await send("POST", CM, { metadata: { name: "a" } }), 201);
  assert.equal(await send("POST", `${CM}?dryRun=All`, { metadata: { name: "b" } }), 201);
  assert.equal(await send("GET", `${CM}/a`), 200);
  assert.equal(await send("GET", `${CM}/absent`), 404);
  assert.equal(await send("GET", CM), 200);
  assert.equal(await send("GET", "/api/v1/configmaps"), 200);
  assert.equal(await send("GET", `${CM}?watch=True&timeoutSeconds=1`), 200);
  assert.equal(
    await send("PATCH", `${CM}/a`, { data: { x: "1" } }, {
      "content-type": "application/merge-patch+json",
    }),
    200,
  );
  assert.equal(
    await send("PATCH", `${CM}/a?fieldManager=t`, { data: { y: "1" } }, {
      "content-type": "application/apply-patch+yaml",
    }),
    200,
  );
  assert.equal(await send("DELETE", `${CM}/a`), 200);

  const [status, body] = await text(`${api.url}/metrics`);
  assert.equal(status, 200);
  const lines = new Set(body.split("\n"));
  const total = (l: Record<string, string>, code: number) =>
    `apiserver_request_total{code="${code}",${labels(l)}} 1`;
  for (
    const line of [
      "# TYPE apiserver_request_total counter",
      "# TYPE apiserver_request_duration_seconds histogram",
      "# TYPE apiserver_current_inflight_requests gauge",
      total({ verb: "POST" }, 201),
      total({ verb: "POST", dry_run: "All" }, 201),
      total({ verb: "GET" }, 200),
      total({ verb: "GET" }, 404),
      total({ verb: "LIST", scope: "namespace" }, 200),
      total({ verb: "LIST", scope: "cluster" }, 200),
      total({ verb: "WATCH", scope: "namespace" }, 200),
      total({ verb: "PATCH" }, 200),
      total({ verb: "APPLY" }, 200),
      total({ verb: "DELETE" }, 200),
      `apiserver_request_duration_seconds_count{${labels({ verb: "GET" })}} 2`,
      `apiserver_request_duration_seconds_bucket{${labels({ verb: "GET" })},le="+Inf"} 2`,
    ]
  ) {
    assert.ok(lines.has(line), `missing: ${line}\n${body}`);
  }
  // In flight: the most at once in the last second — the scrape itself at least.
  assert.match(body, /^apiserver_current_inflight_requests\{request_kind="mutating"\} [01]$/m);
  assert.match(body, /^apiserver_current_inflight_requests\{request_kind="readOnly"\} [1-9]\d*$/m);
  // kube's buckets, in order; no duration for a watch (its life is the stream's).
  const les = [...body.matchAll(
    /^apiserver_request_duration_seconds_bucket\{[^}]*verb="GET"[^}]*,le="([^"]+)"\} \d+$/gm,
  )].map((m) => m[1]);
  assert.deepEqual(
    les,
    `0.005 0.025 0.05 0.1 0.2 0.4 0.6 0.8 1 1.25 1.5 2 3 4 5 6 8 10 15 20 30 45 60 +Inf`.split(" "),
  );
  assert.ok(!/duration_seconds_count\{[^}]*verb="WATCH"/.test(body), body);
  // One line per series: the text ends with a newline, and every sample line parses.
  assert.ok(body.endsWith("\n"));
  for (const line of body.trimEnd().split("\n")) {
    assert.match(line, /^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? [\d.e+-]+)$/, line);
  }
});

Deno.test("/metrics under RBAC: the administrator may read it, another user is refused", async () => {
  await using api = await startApiServer({
    authorization: "rbac",
    staticTokens: [{ token: "bob-token", user: "bob" }],
  });
  const admin = api.kubeconfig.object.users[0]!.user.token as string;
  const [ok, body] = await text(`${api.url}/metrics`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  assert.equal(ok, 200);
  assert.match(body, /^# HELP apiserver_current_inflight_requests /);
  const [refused, status] = await text(`${api.url}/metrics`, {
    headers: { authorization: "Bearer bob-token" },
  });
  assert.equal(refused, 403);
  assert.equal(
    JSON.parse(status).message,
    `forbidden: User "bob" cannot get path "/metrics"`,
  );
  const [anonymous] = await text(`${api.url}/metrics`);
  assert.equal(anonymous, 401);
});

Deno.test("/livez, /readyz and /healthz list their checks as kube-apiserver does", async () => {
  await using api = await startApiServer();
  const get = (path: string) => text(`${api.url}${path}`);
  assert.deepEqual(await get("/readyz"), [200, "ok"]);
  assert.deepEqual(await get("/readyz?verbose"), [
    200,
    "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n",
  ]);
  assert.deepEqual(await get("/livez?verbose"), [
    200,
    "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n",
  ]);
  assert.deepEqual(await get("/healthz?verbose=true"), [
    200,
    "[+]ping ok\n[+]log ok\n[+]etcd ok\nhealthz check passed\n",
  ]);
  assert.deepEqual(await get("/livez?verbose&exclude=etcd&exclude=nope"), [
    200,
    "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n" +
    `warn: some health checks cannot be excluded: no matches for "nope"\nlivez check passed\n`,
  ]);
  assert.deepEqual(await get("/readyz/ping"), [200, "ok"]);
  assert.deepEqual(await get("/livez/etcd"), [200, "ok"]);
  assert.equal((await get("/readyz/nope"))[0], 404);
  const res = await fetch(`${api.url}/readyz?verbose`);
  await res.body?.cancel();
  assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
});

Deno.test("/readyz fails its shutdown check once the server is closing", async () => {
  const api = await startApiServer();
  const closing = api.server.close();
  try {
    const [status, body] = await text(`${api.url}/readyz`);
    assert.deepEqual([status, body], [
      500,
      "[+]ping ok\n[+]log ok\n[+]etcd ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n",
    ]);
    assert.deepEqual(await text(`${api.url}/readyz/shutdown`), [
      500,
      "internal server error: process is shutting down\n",
    ]);
    assert.deepEqual(await text(`${api.url}/livez`), [200, "ok"]);
  } finally {
    await closing;
    await api[Symbol.asyncDispose]();
  }
});

testEachKubectl(["1.27", "1.33"], `get --raw /readyz?verbose and /metrics`, async (bin) => {
  await using api = await startApiServer();
  await using k = await Kubectl.create(bin, api.kubeconfig.path);
  const ready = await k.run(["get", "--raw", "/readyz?verbose"]);
  assert.deepEqual(
    [ready.code, ready.stdout],
    [0, "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n"],
  );
  assert.equal((await k.run(["get", "configmaps"])).code, 0);
  const metrics = await k.run(["get", "--raw", "/metrics"]);
  assert.equal(metrics.code, 0, metrics.stderr);
  assert.match(
    metrics.stdout,
    /^apiserver_request_total\{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"\} 1$/m,
  );
});
