/**
 * Clients that never finish their headers, or sit idle on a keep-alive
 * connection, are closed after the configured timeouts — over plain HTTP and
 * TLS — and many of them do not keep the server from serving others.
 */
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";

const HALF_HEADER = new TextEncoder().encode("GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n");

/** Resolves with how the connection ended: "closed" by the server, or "open" after `ms`. */
async function endOf(conn: Deno.Conn | Deno.TlsConn, ms: number): Promise<"closed" | "open"> {
  const buf = new Uint8Array(4096);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.close();
  }, ms);
  try {
    while ((await conn.read(buf)) !== null) { /* a 408 answer, then the close */ }
    return "closed";
  } catch {
    return timedOut ? "open" : "closed";
  } finally {
    clearTimeout(timer);
    if (!timedOut) {
      try {
        conn.close();
      } catch { /* already closed */ }
    }
  }
}

Deno.test("200 connections with half a header are closed after the header timeout; others are served meanwhile", async () => {
  await using api = await startApiServer({ headerTimeoutSeconds: 1 });
  const conns = await Promise.all(
    Array.from({ length: 200 }, async () => {
      const conn = await Deno.connect({ port: api.port });
      await conn.write(HALF_HEADER);
      return conn;
    }),
  );
  // While they hang, a normal client is served.
  const ok = await fetch(`${api.url}/api/v1/namespaces/default`);
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  // Each is closed within the timeout plus generous slack (1 s + 9 s).
  const ends = await Promise.all(conns.map((c) => endOf(c, 10_000)));
  assert.deepEqual(ends.filter((e) => e === "open").length, 0, "connections left open");
  const after = await fetch(`${api.url}/api/v1/namespaces/default`);
  assert.equal(after.status, 200);
  await after.body?.cancel();
});

Deno.test("a connection that never sends a byte is closed after the header timeout", async () => {
  await using api = await startApiServer({ headerTimeoutSeconds: 1 });
  const conn = await Deno.connect({ port: api.port });
  assert.equal(await endOf(conn, 10_000), "closed");
});

Deno.test("an idle keep-alive connection is closed after the idle timeout", async () => {
  await using api = await startApiServer({ idleTimeoutSeconds: 1 });
  const conn = await Deno.connect({ port: api.port });
  await conn.write(new TextEncoder().encode("GET /version HTTP/1.1\r\nHost: x\r\n\r\n"));
  const buf = new Uint8Array(4096);
  const n = await conn.read(buf);
  assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 200/);
  assert.equal(await endOf(conn, 10_000), "closed");
});

Deno.test("over TLS too: half a header is closed after the header timeout", async () => {
  await using api = await startApiServer({ tls: true, headerTimeoutSeconds: 1 });
  const conns = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: api.port,
        caCerts: [api.tls!.caCert],
      });
      await conn.write(HALF_HEADER);
      return conn;
    }),
  );
  const ends = await Promise.all(conns.map((c) => endOf(c, 10_000)));
  assert.equal(ends.filter((e) => e === "open").length, 0, "TLS connections left open");
});

Deno.test("a watch outlives the idle and header timeouts", async () => {
  await using api = await startApiServer({ headerTimeoutSeconds: 1, idleTimeoutSeconds: 1 });
  const watch = await fetch(`${api.url}/api/v1/namespaces/default/configmaps?watch=true`);
  const reader = watch.body!.pipeThrough(new TextDecoderStream()).getReader();
  await new Promise((r) => setTimeout(r, 2500));
  const made = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    body: JSON.stringify({ metadata: { name: "late" } }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(made.status, 201);
  await made.body?.cancel();
  const timer = setTimeout(() => reader.cancel(), 5000);
  const chunk = await reader.read();
  clearTimeout(timer);
  assert.match(chunk.value ?? "", /"ADDED".*"late"/);
  await reader.cancel();
});
