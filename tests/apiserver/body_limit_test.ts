/**
 * Request bodies are held to kube-apiserver's 3 MiB while they are read, and
 * stored objects to etcd's 1.5 MiB — over plain HTTP and over TLS.
 */
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call, readUntilClosed } from "./_http.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
const MiB = 1024 * 1024;

Deno.test("a Content-Length over 3 MiB is answered 413 before the body is sent", async () => {
  await using api = await startApiServer();
  const conn = await Deno.connect({ port: api.port });
  const head = `POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${50 * 1000 * 1000}\r\n\r\n{"metadata":`;
  await conn.write(new TextEncoder().encode(head));
  const { text, closed } = await readUntilClosed(conn);
  assert.match(text, /^HTTP\/1\.1 413/, text.slice(0, 200));
  assert.match(text, /"reason":"RequestEntityTooLarge"/);
  assert.match(text, /Request entity too large: limit is 3145728/);
  assert.ok(closed, "the connection is closed after the 413");
  assert.equal((await call(api.url, "GET", CM)).status, 200);
});

Deno.test("a chunked body is counted as it streams: 413 past 3 MiB, nothing stored", async () => {
  await using api = await startApiServer();
  const conn = await Deno.connect({ port: api.port });
  const enc = new TextEncoder();
  await conn.write(enc.encode(
    `POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  ));
  const answer = readUntilClosed(conn);
  const first = '{"metadata":{"name":"big"},"data":{"k":"';
  await conn.write(enc.encode(`${first.length.toString(16)}\r\n${first}\r\n`));
  const piece = "x".repeat(256 * 1024);
  let sent = 0;
  try {
    // Up to 50 MB: the server must stop it long before.
    for (let i = 0; i < 200; i++) {
      await conn.write(enc.encode(`${piece.length.toString(16)}\r\n${piece}\r\n`));
      sent += piece.length;
    }
  } catch {
    // The server closed the connection: expected once it has answered.
  }
  const { text } = await answer;
  assert.match(text, /^HTTP\/1\.1 413/, text.slice(0, 200));
  assert.match(text, /Request entity too large: limit is 3145728/);
  assert.ok(sent < 40 * MiB, `the server stopped reading (sent ${sent} bytes)`);
  assert.equal((await call(api.url, "GET", `${CM}/big`)).status, 404);
  assert.equal((await call(api.url, "GET", CM)).status, 200);
});

Deno.test("a 4 MiB body with fetch: 413 with kube's Status, and the server serves on", async () => {
  await using api = await startApiServer();
  const body = JSON.stringify({ metadata: { name: "big" }, data: { k: "x".repeat(4 * MiB) } });
  const r = await call(api.url, "POST", CM, body);
  assert.equal(r.status, 413);
  assert.equal(r.body.kind, "Status");
  assert.equal(r.body.reason, "RequestEntityTooLarge");
  assert.equal(r.body.message, "Request entity too large: limit is 3145728");
  for (const method of ["PUT", "PATCH"]) {
    const w = await call(api.url, method, `${CM}/big`, body, "application/merge-patch+json");
    assert.equal(w.status, 413, method);
  }
  assert.equal((await call(api.url, "GET", CM)).status, 200);
});

Deno.test("an object over 1.5 MiB is 413 (etcd's limit), in one body or grown by patches", async () => {
  await using api = await startApiServer();
  // A valid Deployment (kube validates before it stores); the bulk in fields the kind declares.
  const container = (name: string, size: number) => ({
    name,
    image: "nginx",
    env: [{ name: "BULK", value: "y".repeat(size) }],
  });
  const deployment = (name: string, size: number) => ({
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: "d" } },
      template: {
        metadata: { labels: { app: "d" } },
        spec: { containers: [container("c", size)] },
      },
    },
  });
  const one = await call(api.url, "POST", DEPLOY, deployment("d", 2 * MiB));
  assert.equal(one.status, 413, JSON.stringify(one.body).slice(0, 300));
  assert.equal(one.body.reason, "RequestEntityTooLarge");
  assert.match(one.body.message, /etcdserver: request is too large/);
  // Grown by merge patches of 1 MiB each: the second is refused, the object stays as it was.
  assert.equal((await call(api.url, "POST", DEPLOY, deployment("g", 1))).status, 201);
  const containers = (n: number) => ({
    spec: {
      template: {
        spec: { containers: Array.from({ length: n }, (_, i) => container(`c${i}`, MiB)) },
      },
    },
  });
  const p1 = await call(
    api.url,
    "PATCH",
    `${DEPLOY}/g`,
    containers(1),
    "application/merge-patch+json",
  );
  assert.equal(p1.status, 200, JSON.stringify(p1.body).slice(0, 300));
  const p2 = await call(
    api.url,
    "PATCH",
    `${DEPLOY}/g`,
    containers(2),
    "application/merge-patch+json",
  );
  assert.equal(p2.status, 413, JSON.stringify(p2.body).slice(0, 300));
  const now = await call(api.url, "GET", `${DEPLOY}/g`);
  assert.equal(now.body.spec.template.spec.containers.length, 1);
  assert.equal(now.body.metadata.resourceVersion, p1.body.metadata.resourceVersion);
});

Deno.test("the body limit is configurable and held over TLS too", async () => {
  await using api = await startApiServer({ tls: true, maxRequestBodyBytes: 64 * 1024 });
  const client = Deno.createHttpClient({
    caCerts: [api.tls!.caCert],
    cert: api.tls!.clientCert,
    key: api.tls!.clientKey,
  });
  try {
    const big = JSON.stringify({ metadata: { name: "big" }, data: { k: "x".repeat(100 * 1024) } });
    const r = await fetch(`${api.url}${CM}`, {
      method: "POST",
      body: big,
      headers: { "content-type": "application/json" },
      client,
    });
    assert.equal(r.status, 413);
    const status = await r.json();
    assert.equal(status.message, "Request entity too large: limit is 65536");
    // Streamed (no Content-Length): counted as it arrives.
    const stream = ReadableStream.from((function* () {
      for (let i = 0; i < 100; i++) yield new TextEncoder().encode("x".repeat(16 * 1024));
    })());
    const s = await fetch(`${api.url}${CM}`, {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
      client,
    }).catch((e) => e as Error);
    if (s instanceof Response) {
      assert.equal(s.status, 413);
      await s.body?.cancel();
    } // else: the connection closed while the client was still sending — also a refusal.
    const small = await fetch(`${api.url}${CM}`, {
      method: "POST",
      body: JSON.stringify({ metadata: { name: "small" } }),
      headers: { "content-type": "application/json" },
      client,
    });
    assert.equal(small.status, 201);
    await small.body?.cancel();
  } finally {
    client.close();
  }
});

Deno.test('with listener: "deno-serve" the limits hold too (read by the server, not the listener)', async () => {
  await using api = await startApiServer({
    listener: "deno-serve",
    maxRequestBodyBytes: 64 * 1024,
  });
  const big = JSON.stringify({ metadata: { name: "big" }, data: { k: "x".repeat(100 * 1024) } });
  const r = await call(api.url, "POST", CM, big);
  assert.equal(r.status, 413);
  assert.equal(r.body.message, "Request entity too large: limit is 65536");
  const deep = `{"metadata":{"name":"deep"},"x":${"[".repeat(5000)}${"]".repeat(5000)}}`;
  assert.equal((await call(api.url, "POST", CM, deep)).status, 400);
  assert.equal((await call(api.url, "POST", CM, { metadata: { name: "ok" } })).status, 201);
});
