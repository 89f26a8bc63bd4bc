/**
 * The plain-HTTP listener (src/apiserver/serving/http_listener.ts) over real sockets: framing,
 * keep-alive and pipelining, chunked bodies both ways, 100-continue, HEAD, request.signal,
 * timeouts, the body limit and shutdown.
 */
import assert from "node:assert/strict";
import { serveHttp1, type ServeHttp1Options } from "../../src/apiserver/serving/http_listener.ts";
import type { TlsServer } from "../../src/apiserver/serving/tls_listener.ts";
import { readUntilClosed as readAll } from "./_http.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Echoes method, path, a header and the body's length as JSON. */
const echo = async (req: Request): Promise<Response> => {
  const body = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
  const url = new URL(req.url);
  return Response.json({
    method: req.method,
    path: url.pathname + url.search,
    host: url.host,
    x: req.headers.get("x-test"),
    body,
  });
};

async function serve(options: Partial<ServeHttp1Options> = {}): Promise<TlsServer> {
  return await serveHttp1({ handler: echo, ...options });
}

/** Reads until `text` contains `until` (or the connection ends). */
async function readUntil(conn: Deno.Conn, until: RegExp, ms = 10_000): Promise<string> {
  const buf = new Uint8Array(64 * 1024);
  let text = "";
  const timer = setTimeout(() => conn.close(), ms);
  try {
    while (!until.test(text)) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += dec.decode(buf.subarray(0, n));
    }
  } finally {
    clearTimeout(timer);
  }
  return text;
}

/** Sends raw bytes on a new connection and reads everything until the server closes. */
async function raw(port: number, request: string, ms = 10_000) {
  const conn = await Deno.connect({ port });
  await conn.write(enc.encode(request)).catch(() => 0);
  return await readAll(conn, ms);
}

Deno.test("keep-alive: two requests on one connection, both answered with Content-Length", async () => {
  await using server = disposable(await serve());
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  const first = await readUntil(conn, /\}$/);
  assert.match(first, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(first, /content-length: \d+\r\n/);
  assert.match(first, /"path":"\/a"/);
  await conn.write(enc.encode("GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const { text, closed } = await readAll(conn);
  assert.match(text, /"path":"\/b"/);
  assert.match(text, /connection: close\r\n/);
  assert.ok(closed);
});

Deno.test("pipelining: three requests in one write are answered in order", async () => {
  await using server = disposable(await serve());
  const { text, closed } = await raw(
    server.port,
    "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n" +
      "POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
      "GET /3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  );
  const paths = [...text.matchAll(/"path":"(\/\d)"/g)].map((m) => m[1]);
  assert.deepEqual(paths, ["/1", "/2", "/3"]);
  assert.match(text, /"body":"hello"/);
  assert.ok(closed);
});

Deno.test("HTTP/1.0 is closed after the answer unless it asks for keep-alive", async () => {
  await using server = disposable(await serve());
  const plain = await raw(server.port, "GET /old HTTP/1.0\r\n\r\n");
  assert.match(plain.text, /^HTTP\/1\.1 200/);
  assert.ok(plain.closed);
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  const kept = await readUntil(conn, /\}$/);
  assert.match(kept, /connection: keep-alive\r\n/);
  await conn.write(enc.encode("GET /k2 HTTP/1.0\r\n\r\n"));
  const { text, closed } = await readAll(conn);
  assert.match(text, /"path":"\/k2"/);
  assert.ok(closed);
});

Deno.test("a chunked request body reaches the handler whole; an absolute-form target is accepted", async () => {
  await using server = disposable(await serve());
  const { text } = await raw(
    server.port,
    "POST http://example.test/abs?q=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n" +
      "Connection: close\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n",
  );
  assert.match(text, /^HTTP\/1\.1 200/);
  assert.match(text, /"body":"hello world"/);
  assert.match(text, /"path":"\/abs\?q=1"/);
});

Deno.test("Expect: 100-continue is answered before the body is sent", async () => {
  await using server = disposable(await serve());
  const conn = await Deno.connect({ port: server.port });
  await conn.write(
    enc.encode(
      "PUT /c HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
    ),
  );
  const interim = await readUntil(conn, /\r\n\r\n/);
  assert.equal(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  await conn.write(enc.encode("abc"));
  const { text } = await readAll(conn);
  assert.match(text, /^HTTP\/1\.1 200/);
  assert.match(text, /"body":"abc"/);
});

Deno.test("HEAD is answered with the length and no body", async () => {
  await using server = disposable(await serve());
  const { text } = await raw(
    server.port,
    "HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  );
  const [head, body] = text.split("\r\n\r\n");
  assert.match(head!, /^HTTP\/1\.1 200/);
  assert.match(head!, /content-length: [1-9]\d*/);
  assert.equal(body, "");
});

Deno.test("a body given as a string is sent as its UTF-8 bytes, ASCII or not, with their length", async () => {
  const bodies: Record<string, () => Response> = {
    "/ascii": () => new Response('{"a":"b"}\n'),
    "/utf8": () => new Response("héllo €\n"),
    "/read": () => {
      const res = new Response("unread?");
      void res.clone().text(); // a clone read: this one still holds its text
      return res;
    },
  };
  await using server = disposable(
    await serveHttp1({ handler: (req) => bodies[new URL(req.url).pathname]!() }),
  );
  for (
    const [path, body, length] of [["/ascii", '{"a":"b"}\n', 10], ["/utf8", "héllo €\n", 11], [
      "/read",
      "unread?",
      7,
    ]] as const
  ) {
    const conn = await Deno.connect({ port: server.port });
    await conn.write(enc.encode(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    const bytes = new Uint8Array(await new Response(conn.readable).arrayBuffer());
    const at = bytes.findIndex((_, i) =>
      bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10
    );
    const head = dec.decode(bytes.subarray(0, at));
    assert.match(head, new RegExp(`content-length: ${length}(\r\n|$)`), path);
    assert.equal(bytes.length - at - 4, length, path);
    assert.equal(dec.decode(bytes.subarray(at + 4)), body, path);
  }
});

Deno.test("a handler that throws is a 500 with a short text; the server serves on", async () => {
  await using server = disposable(
    await serve({
      handler: (req) => {
        if (new URL(req.url).pathname === "/boom") throw new Error("kaput");
        return new Response("ok");
      },
    }),
  );
  const { text } = await raw(
    server.port,
    "GET /boom HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  );
  assert.match(text, /^HTTP\/1\.1 500/);
  assert.match(text, /Internal Server Error: kaput/);
  const ok = await fetch(`http://127.0.0.1:${server.port}/`);
  assert.equal(await ok.text(), "ok");
});

Deno.test("a streaming body is sent chunked, each chunk before the stream ends", async () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  await using server = disposable(
    await serve({
      handler: () =>
        new Response(new ReadableStream({ start: (c) => void (controller = c) }), {
          headers: { "content-type": "application/json" },
        }),
    }),
  );
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET /watch HTTP/1.1\r\nHost: x\r\n\r\n"));
  const head = await readUntil(conn, /\r\n\r\n/);
  assert.match(head, /transfer-encoding: chunked\r\n/);
  controller.enqueue(enc.encode('{"n":1}\n'));
  assert.match(await readUntil(conn, /\{"n":1\}\n\r\n/), /^8\r\n\{"n":1\}\n\r\n$/);
  controller.enqueue(enc.encode('{"n":2}\n'));
  assert.match(await readUntil(conn, /\{"n":2\}\n\r\n/), /^8\r\n\{"n":2\}\n\r\n$/);
  controller.close();
  assert.equal(await readUntil(conn, /0\r\n\r\n/), "0\r\n\r\n");
  conn.close();
});

Deno.test("request.signal aborts when the client closes; the body stream is cancelled", async () => {
  let aborted!: () => void;
  const abortedP = new Promise<void>((r) => (aborted = r));
  let cancelled!: () => void;
  const cancelledP = new Promise<void>((r) => (cancelled = r));
  await using server = disposable(
    await serve({
      handler: (req) => {
        req.signal.addEventListener("abort", () => aborted());
        return new Response(new ReadableStream({ cancel: () => cancelled() }));
      },
    }),
  );
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET /w HTTP/1.1\r\nHost: x\r\n\r\n"));
  await readUntil(conn, /\r\n\r\n/);
  conn.close();
  await abortedP;
  await cancelledP;
});

Deno.test("framing the RFC forbids is refused with 4xx/501 and the connection closed", async () => {
  await using server = disposable(await serve());
  const cases: [string, RegExp][] = [
    ["GARBAGE\r\n\r\n", /^HTTP\/1\.1 400/],
    ["GET /\r\n\r\n", /^HTTP\/1\.1 400/],
    ["GET / HTTP/2.0\r\n\r\n", /^HTTP\/1\.1 400/],
    [
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc",
      /^HTTP\/1\.1 400/,
    ],
    ["GET / HTTP/1.1\r\nHost : x\r\n\r\n", /^HTTP\/1\.1 400/],
    ["GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n", /^HTTP\/1\.1 400/],
    ["GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", /^HTTP\/1\.1 400/],
    ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", /^HTTP\/1\.1 400/],
    [
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
      /^HTTP\/1\.1 400/,
    ],
    ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", /^HTTP\/1\.1 501/],
    [
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
      /^HTTP\/1\.1 400/,
    ],
    ["GET / HTTP/1.1\r\nHost: x/evil\r\n\r\n", /^HTTP\/1\.1 400/],
    ["GET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n", /^HTTP\/1\.1 400/],
    [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"y".repeat(1100 * 1024)}\r\n\r\n`, /^HTTP\/1\.1 431/],
  ];
  for (const [request, expected] of cases) {
    const { text, closed } = await raw(server.port, request);
    assert.match(text, expected, JSON.stringify(request.slice(0, 60)));
    assert.ok(closed, `${JSON.stringify(request.slice(0, 60))}: closed`);
  }
  // Identical repeated lengths are fine; an unknown method reaches the handler.
  const same = await raw(
    server.port,
    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\nConnection: close\r\n\r\nok",
  );
  assert.match(same.text, /"body":"ok"/);
  const frob = await raw(server.port, "FROB /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  assert.match(frob.text, /"method":"FROB"/);
});

Deno.test("the body limit: a Content-Length over it is refused unread, a chunked body as it streams", async () => {
  await using server = disposable(
    await serve({
      maxBodyBytes: 1000,
      bodyTooLarge: () => new Response("too large\n", { status: 413 }),
    }),
  );
  // Refused before the body is sent (with Expect, no 100 Continue).
  const declared = await raw(
    server.port,
    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\nExpect: 100-continue\r\n\r\n",
  );
  assert.match(declared.text, /^HTTP\/1\.1 413/);
  assert.match(declared.text, /connection: close/);
  assert.doesNotMatch(declared.text, /100 Continue/);
  assert.ok(declared.closed);
  // Chunked: counted as it arrives.
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const answer = readAll(conn);
  const piece = `${(600).toString(16)}\r\n${"x".repeat(600)}\r\n`;
  for (let i = 0; i < 5; i++) await conn.write(enc.encode(piece)).catch(() => 0);
  const { text, closed } = await answer;
  assert.match(text, /^HTTP\/1\.1 413/);
  assert.match(text, /too large/);
  assert.ok(closed);
  // Within the limit: served.
  const small = await fetch(`http://127.0.0.1:${server.port}/`, { method: "POST", body: "abc" });
  assert.match(await small.text(), /"body":"abc"/);
});

Deno.test("header timeout: half a head is answered 408 and closed; idle keep-alive is closed", async () => {
  await using server = disposable(await serve({ headersTimeoutMs: 200, keepAliveTimeoutMs: 200 }));
  const started = Date.now();
  const half = await raw(server.port, "GET / HTTP/1.1\r\nHost: x\r\n");
  assert.match(half.text, /^HTTP\/1\.1 408/);
  assert.ok(half.closed);
  assert.ok(Date.now() - started < 8000, "closed well within the bound");
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  const { text, closed } = await readAll(conn);
  assert.match(text, /^HTTP\/1\.1 200/);
  assert.doesNotMatch(text, /408/, "an idle connection is closed silently");
  assert.ok(closed);
});

Deno.test("an open streaming answer outlives the timeouts", async () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  await using server = disposable(
    await serve({
      headersTimeoutMs: 100,
      keepAliveTimeoutMs: 100,
      handler: () => new Response(new ReadableStream({ start: (c) => void (controller = c) })),
    }),
  );
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  await readUntil(conn, /\r\n\r\n/);
  await new Promise((r) => setTimeout(r, 600));
  controller.enqueue(enc.encode("late"));
  assert.match(await readUntil(conn, /late\r\n/), /late/);
  conn.close();
});

Deno.test("shutdown ends an open stream cleanly, aborts its signal and resolves", async () => {
  let aborted = false;
  const server = await serve({
    handler: (req) => {
      req.signal.addEventListener("abort", () => (aborted = true));
      return new Response(new ReadableStream({ start: (c) => c.enqueue(enc.encode("first")) }));
    },
  });
  const conn = await Deno.connect({ port: server.port });
  await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  await readUntil(conn, /first\r\n/);
  const idle = await Deno.connect({ port: server.port });
  const reading = readAll(conn);
  const idleEnd = readAll(idle);
  await server.shutdown();
  await server.finished;
  const { text, closed } = await reading;
  assert.ok(text.endsWith("0\r\n\r\n"), JSON.stringify(text));
  assert.ok(closed);
  assert.ok(aborted);
  assert.ok((await idleEnd).closed);
});

/** Shuts the server down at the end of the test's scope. */
function disposable(server: TlsServer): TlsServer & AsyncDisposable {
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.shutdown() });
}
