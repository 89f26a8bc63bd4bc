/**
 * The probes' HTTP server (`_probe_listener.ts`) as clients and hostile peers meet it: `fetch` and
 * a raw socket get one answer per connection with its length and `Connection: close`; `HEAD` has
 * no body; a line that is not HTTP is a 400, a head over 16 KiB a 431, a head that does not come
 * is cut off; connections beyond 64 are closed; the signal stops it with the idle connections
 * closed; an answer that throws is a 500.
 */
import assert from "node:assert/strict";
import { listenProbes, type ProbeAnswer } from "../../src/core/engines/_probe_listener.ts";

function server(
  answer: (path: string) => Promise<ProbeAnswer>,
  headTimeoutMs?: number,
) {
  const stop = new AbortController();
  let port = 0;
  const finished = listenProbes({
    hostname: "127.0.0.1",
    port: 0,
    signal: stop.signal,
    onListen: (addr) => (port = addr.port),
    answer,
    ...(headTimeoutMs ? { headTimeoutMs } : {}),
  });
  return {
    port,
    stop,
    finished,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await finished;
    },
  };
}

/** Sends raw bytes on a new connection and reads until the server closes it. */
async function raw(port: number, text: string | Uint8Array): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
    for (let sent = 0; sent < bytes.length;) sent += await conn.write(bytes.subarray(sent));
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

const ok = (body: string): Promise<ProbeAnswer> =>
  Promise.resolve({
    status: 200,
    headers: { "content-type": "text/plain", "x-kopf-role": "leader" },
    body,
  });

Deno.test("probe listener: fetch gets the answer for the path (no query), its headers, its length", async () => {
  const paths: string[] = [];
  await using s = server((path) => (paths.push(path), ok(`at ${path}`)));
  const answer = await fetch(`http://127.0.0.1:${s.port}/healthz?x=1`);
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get("x-kopf-role"), "leader");
  assert.equal(answer.headers.get("content-length"), "11");
  assert.equal(answer.headers.get("connection"), "close");
  assert.equal(await answer.text(), "at /healthz");
  assert.deepEqual(paths, ["/healthz"]);
  const missing = await fetch(`http://127.0.0.1:${s.port}/nope`, { method: "POST", body: "x" });
  assert.equal(await missing.text(), "at /nope"); // any method is answered as GET (a body unread)
});

Deno.test("probe listener: HEAD has the length and no body; a status is written with its reason", async () => {
  await using s = server(() =>
    Promise.resolve({ status: 503, headers: { "content-type": "application/json" }, body: "{}" })
  );
  const head = await raw(s.port, "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.equal(
    head,
    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n" +
      "content-length: 2\r\nconnection: close\r\n\r\n",
  );
});

Deno.test("probe listener: not HTTP is a 400, a head over 16 KiB a 431, a thrown answer a 500", async () => {
  await using s = server((path) =>
    path === "/boom" ? Promise.reject(new Error("it broke")) : ok("fine")
  );
  assert.match(await raw(s.port, "hello\r\n\r\n"), /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(await raw(s.port, "GET healthz HTTP/1.1\r\n\r\n"), /^HTTP\/1\.1 400 /);
  assert.match(await raw(s.port, "GET /healthz HTTP/2.0\r\n\r\n"), /^HTTP\/1\.1 400 /);
  const big = `GET /healthz HTTP/1.1\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`;
  assert.match(await raw(s.port, big), /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  const broken = await raw(s.port, "GET /boom HTTP/1.1\r\n\r\n");
  assert.match(broken, /^HTTP\/1\.1 500 Internal Server Error\r\n/);
  assert.match(broken, /\r\n\r\nit broke\n$/);
  // A head in pieces, its blank line split across reads.
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
  for (const piece of ["GET /h", "ealthz HTTP/1.1\r\nHost: x\r", "\n\r", "\n"]) {
    await conn.write(new TextEncoder().encode(piece));
    await new Promise((r) => setTimeout(r, 20));
  }
  const buffer = new Uint8Array(1024);
  const n = await conn.read(buffer);
  conn.close();
  assert.match(new TextDecoder().decode(buffer.subarray(0, n!)), /^HTTP\/1\.1 200 OK\r\n[^]*fine$/);
});

Deno.test("probe listener: a head that does not come in time is cut off, and others are served meanwhile", async () => {
  await using s = server(() => ok("fine"), 200);
  const slow = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
  await slow.write(new TextEncoder().encode("GET /healthz HTTP/1.1\r\n"));
  const answer = await fetch(`http://127.0.0.1:${s.port}/healthz`);
  assert.equal(await answer.text(), "fine");
  const buffer = new Uint8Array(64);
  // Closed by the server without an answer once its time is up.
  assert.equal(await slow.read(buffer).catch(() => null), null);
  slow.close();
});

Deno.test("probe listener: connections beyond 64 are closed at once; the signal closes idle ones and stops", async () => {
  const { port, stop, finished } = server(() => ok("fine"));
  const idle = await Promise.all(
    Array.from({ length: 64 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
  );
  await new Promise((r) => setTimeout(r, 100));
  const extra = await Deno.connect({ hostname: "127.0.0.1", port });
  assert.equal(await extra.read(new Uint8Array(16)).catch(() => null), null);
  extra.close();
  stop.abort();
  await finished;
  for (const conn of idle) {
    assert.equal(await conn.read(new Uint8Array(16)).catch(() => null), null);
    conn.close();
  }
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }));
});
