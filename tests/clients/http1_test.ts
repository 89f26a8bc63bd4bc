/**
 * The lean HTTP/1.1 client (`http1.ts`) on fake connections: answers cut
 * anywhere, the three kinds of bodies, keep-alive reuse, stale connections,
 * aborts and timeouts — no server, no sockets.
 */

import assert from "node:assert/strict";
import {
  Http1Client,
  type Http1Connection,
  Http1Error,
  RequestTimeoutError,
} from "../../src/cogs/clients/http1.ts";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A connection that answers with scripted bytes, read by read (one piece per read). */
class FakeConn implements Http1Connection {
  written = "";
  closed = false;
  #pieces: Uint8Array[] = [];
  #waiting: { p: Uint8Array; resolve: (n: number | null) => void; reject: (e: unknown) => void }[] =
    [];
  #ended = false;
  /** A write error to throw (a stale connection). */
  writeError: Error | undefined;
  /** Bytes the connection takes in all; writes past them fail with a broken pipe. */
  takes = Infinity;
  /** Answers to push at the next writes, one per write (a server answers what it was asked). */
  #answers: (string | Uint8Array | null)[][] = [];

  /**
   * Queues bytes to push once the next request is written (null: the end): bytes pushed while
   * the connection is idle are stray, and drop it.
   */
  answer(...pieces: (string | Uint8Array | null)[]): this {
    this.#answers.push(pieces);
    return this;
  }

  /** Queues bytes for the reader; pieces are delivered one per read (larger ones cut). */
  push(...pieces: (string | Uint8Array)[]): this {
    for (const piece of pieces) {
      this.#pieces.push(typeof piece === "string" ? enc.encode(piece) : piece);
    }
    this.#serve();
    return this;
  }

  /** The server closes its side: reads return null once the pieces are read. */
  end(): this {
    this.#ended = true;
    this.#serve();
    return this;
  }

  read(p: Uint8Array): Promise<number | null> {
    if (this.closed) return Promise.reject(new Deno.errors.BadResource("closed"));
    return new Promise((resolve, reject) => {
      this.#waiting.push({ p, resolve, reject });
      this.#serve();
    });
  }

  write(p: Uint8Array): Promise<number> {
    if (this.closed) return Promise.reject(new Deno.errors.BadResource("closed"));
    if (this.writeError) return Promise.reject(this.writeError);
    if (this.takes <= 0) return Promise.reject(new Deno.errors.BrokenPipe("Broken pipe"));
    if (p.length > this.takes) p = p.subarray(0, this.takes);
    this.takes -= p.length;
    this.written += dec.decode(p);
    const answer = this.#answers.shift();
    if (answer) {
      for (const piece of answer) piece === null ? this.end() : this.push(piece);
    }
    return Promise.resolve(p.length);
  }

  /** How many times close() was called. */
  closeCalls = 0;

  close(): void {
    this.closeCalls++;
    if (this.closed) throw new Deno.errors.BadResource("closed twice");
    this.closed = true;
    for (const w of this.#waiting.splice(0)) w.reject(new Deno.errors.Interrupted("closed"));
  }

  #serve(): void {
    while (this.#waiting.length && (this.#pieces.length || this.#ended)) {
      const w = this.#waiting.shift()!;
      const piece = this.#pieces.shift();
      if (!piece) {
        w.resolve(null);
        continue;
      }
      const n = Math.min(piece.length, w.p.length);
      w.p.set(piece.subarray(0, n));
      if (n < piece.length) this.#pieces.unshift(piece.subarray(n));
      w.resolve(n);
    }
  }
}

/** A client whose connections are the given fakes, in order. */
function clientOf(...conns: FakeConn[]): { client: Http1Client; opened: () => number } {
  let opened = 0;
  const client = new Http1Client("http://k8s.local:8080", {
    connect: () => {
      const conn = conns[opened++];
      return conn ? Promise.resolve(conn) : Promise.reject(new Error("no more connections"));
    },
  });
  return { client, opened: () => opened };
}

/** Cuts bytes at the given offsets. */
function cut(text: string, at: number[]): Uint8Array[] {
  const bytes = enc.encode(text);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    out.push(bytes.slice(from, to));
    from = to;
  }
  return out.filter((piece) => piece.length);
}

const get = { method: "GET", target: "/x", headers: {} };

Deno.test("a request is one write: request line, host, headers, content-length and the body", async () => {
  const conn = new FakeConn().push("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}");
  const { client } = clientOf(conn);
  const answer = await client.request({
    method: "POST",
    target: "/api/v1/namespaces?x=1",
    headers: { "content-type": "application/json", authorization: "Bearer t" },
    body: '{"a":"ü"}',
  });
  assert.equal(answer.status, 201);
  assert.equal(await answer.text(), "{}");
  assert.equal(
    conn.written,
    "POST /api/v1/namespaces?x=1 HTTP/1.1\r\nhost: k8s.local:8080\r\n" +
      "content-type: application/json\r\nauthorization: Bearer t\r\ncontent-length: 10\r\n\r\n" +
      '{"a":"ü"}',
  );
  assert.doesNotMatch(conn.written, /accept-encoding/i);
});

Deno.test("headers with CR or LF are refused before anything is sent", async () => {
  const conn = new FakeConn();
  const { client, opened } = clientOf(conn);
  await assert.rejects(
    client.request({ ...get, headers: { "x-a": "b\r\nx-evil: 1" } }),
    TypeError,
  );
  assert.equal(opened(), 0);
});

Deno.test("a chunked answer cut at every byte: the same body, extensions and trailers dropped", async () => {
  const body = '{"type":"ADDED","object":{"a":"ü"}}\n{"type":"MODIFIED"}\n';
  const bytes = enc.encode(body);
  const text =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n" +
    `${(20).toString(16)};name=value\r\n${dec.decode(bytes.slice(0, 20))}\r\n` +
    `${(bytes.length - 20).toString(16).toUpperCase()}\r\n${dec.decode(bytes.slice(20))}\r\n` +
    "0;last\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n";
  // ü is two bytes: cut at every byte offset, one offset at a time and all at once.
  const total = enc.encode(text).length;
  const cuts = [...Array.from({ length: total - 1 }, (_, i) => [i + 1]), [
    ...Array.from({ length: total - 1 }, (_, i) => i + 1),
  ]];
  for (const at of cuts) {
    const conn = new FakeConn().push(...cut(text, at));
    const { client } = clientOf(conn);
    const answer = await client.request(get);
    assert.equal(answer.status, 200);
    assert.equal(answer.header("content-type"), "application/json");
    assert.equal(answer.header("CONTENT-TYPE"), "application/json");
    assert.equal(dec.decode(await answer.bytes()), body, `cut at ${at.join(",")}`);
    assert.equal(conn.closed, false, "read to its end: kept for reuse");
    assert.equal(client.idle, 1);
  }
});

Deno.test("a chunked stream yields what arrived, as it arrives", async () => {
  const conn = new FakeConn().push(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\n ab\r\n",
  );
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  // Both buffered chunks come as one piece; nothing waits for more.
  assert.equal(dec.decode((await answer.read())!), "hello ab");
  const next = answer.read();
  conn.push("2\r\ncd\r\n");
  assert.equal(dec.decode((await next)!), "cd");
  conn.push("0\r\n\r\n");
  assert.equal(await answer.read(), null);
  assert.equal(await answer.read(), null);
  assert.equal(client.idle, 1);
});

Deno.test("Content-Length bodies, cut anywhere; the connection is reused for the next request", async () => {
  const one = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world";
  const conn = new FakeConn().push(...cut(one, [3, 17, 30, 38]));
  const { client, opened } = clientOf(conn);
  const first = await client.request(get);
  assert.equal(await first.text(), "hello world");
  conn.answer("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
  const second = await client.request(get);
  assert.equal(second.status, 404);
  assert.equal(await second.text(), "");
  assert.equal(opened(), 1);
  assert.equal(conn.written.match(/GET \/x/g)?.length, 2);
});

Deno.test("a body up to the close of the connection; the connection is not reused", async () => {
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\n\r\nall ", "of it").end();
  const again = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx");
  const { client, opened } = clientOf(conn, again);
  assert.equal(await (await client.request(get)).text(), "all of it");
  assert.equal(conn.closed, true);
  assert.equal(await (await client.request(get)).text(), "x");
  assert.equal(opened(), 2);
});

Deno.test("Connection: close and HTTP/1.0 answers close the connection after the body", async () => {
  for (const head of ["HTTP/1.1 200 OK\r\nConnection: close", "HTTP/1.0 200 OK"]) {
    const conn = new FakeConn().push(`${head}\r\nContent-Length: 2\r\n\r\nok`);
    const { client } = clientOf(conn);
    assert.equal(await (await client.request(get)).text(), "ok");
    assert.equal(conn.closed, true);
    assert.equal(client.idle, 0);
  }
});

Deno.test("HEAD, 204 and 304 answers have no body, whatever their headers say; 1xx are skipped", async () => {
  const conn = new FakeConn().answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
    .answer("HTTP/1.1 204 No Content\r\n\r\n")
    .answer(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
    );
  const { client, opened } = clientOf(conn);
  const head = await client.request({ ...get, method: "HEAD" });
  assert.equal(head.header("content-length"), "100");
  assert.equal(await head.text(), "");
  assert.equal((await client.request(get)).status, 204);
  const last = await client.request(get);
  assert.equal(last.status, 304);
  assert.equal(await last.text(), "");
  assert.equal(opened(), 1);
});

Deno.test("a stale idle connection (closed by the server) is replaced by a fresh one, once", async () => {
  const stale = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na");
  const fresh = new FakeConn().push("HTTP/1.1 201 Created\r\ncontent-length: 1\r\n\r\nb");
  const { client, opened } = clientOf(stale, fresh);
  assert.equal(await (await client.request(get)).text(), "a");
  stale.end(); // the server closed it while idle: EOF before any byte of the next answer
  await new Promise((resolve) => setTimeout(resolve, 0)); // noticed while idle
  const answer = await client.request({ ...get, method: "PATCH", body: "{}" });
  assert.equal(answer.status, 201);
  assert.equal(await answer.text(), "b");
  assert.equal(opened(), 2);
  assert.equal(stale.closed, true);
  assert.match(fresh.written, /^PATCH \/x HTTP\/1.1\r\n/);

  // A write error on a reused connection is stale too.
  const broken = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nc");
  const second = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nd");
  const other = clientOf(broken, second);
  assert.equal(await (await other.client.request(get)).text(), "c");
  broken.writeError = new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
  assert.equal(await (await other.client.request(get)).text(), "d");
});

Deno.test("no retry when the answer had begun, nor on a fresh connection", async () => {
  const reused = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na");
  const { client, opened } = clientOf(reused, new FakeConn());
  await (await client.request(get)).text();
  reused.answer("HTTP/1.1 200 O", null); // some bytes, then the end: the server did answer
  await assert.rejects(client.request(get), Http1Error);
  assert.equal(opened(), 1);

  const fresh = new FakeConn().end();
  const other = clientOf(fresh, new FakeConn());
  await assert.rejects(other.client.request(get), /closed before an answer/);
  assert.equal(other.opened(), 1);
});

Deno.test("a body cut short by the close is an error, and the connection is closed", async () => {
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort").end();
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  await assert.rejects(answer.text(), /closed before the end/);
  assert.equal(conn.closed, true);
  assert.equal(client.idle, 0);
});

Deno.test("bad framing is an error: a bad chunk size, a bad Content-Length, not HTTP", async () => {
  for (
    const [text, error] of [
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", /bad chunk size/],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\r\n", /bad chunk size: ""/],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2 x\r\n", /bad chunk size: "2 x"/],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\rx\n", /bad chunk size: "2\\rx"/],
      [
        `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${"f".repeat(14)}\r\n`,
        /bad chunk size/,
      ],
      ["HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", /bad Content-Length/],
      ["SSH-2.0-OpenSSH\r\n\r\n", /not HTTP/],
    ] as const
  ) {
    const conn = new FakeConn().push(text);
    const { client } = clientOf(conn);
    await assert.rejects(client.request(get).then((a) => a.text()), error);
    assert.equal(conn.closed, true);
  }
});

Deno.test("an abort in the middle of a body closes the connection and rejects with the reason", async () => {
  const conn = new FakeConn().push(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n",
  );
  const { client } = clientOf(conn);
  const stop = new AbortController();
  const answer = await client.request({ ...get, signal: stop.signal });
  assert.equal(dec.decode((await answer.read())!), "abc");
  const pending = answer.read();
  const reason = new Error("stop it");
  stop.abort(reason);
  await assert.rejects(pending, (error) => error === reason);
  assert.equal(conn.closed, true);
  assert.equal(client.idle, 0);
  await assert.rejects(client.request({ ...get, signal: stop.signal }), (e) => e === reason);
});

Deno.test("cancel() of an unfinished body closes the connection; of a finished one keeps it", async () => {
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab");
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  answer.cancel();
  answer.cancel();
  assert.equal(conn.closed, true);
  assert.equal(await answer.read(), null);
});

Deno.test("timeouts: to the headers, and for the whole body; the connection is closed", async () => {
  const silent = new FakeConn();
  const { client } = clientOf(silent);
  await assert.rejects(
    client.request({ ...get, connectTimeout: 0.02 }),
    (e) => e instanceof RequestTimeoutError && e.phase === "connect" && e.seconds === 0.02,
  );
  assert.equal(silent.closed, true);

  const slow = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab");
  const other = clientOf(slow);
  const answer = await other.client.request({ ...get, timeout: 0.05, connectTimeout: 0.01 });
  await new Promise((resolve) => setTimeout(resolve, 20)); // past the connect timeout: it stopped
  await assert.rejects(
    answer.text(),
    (e) => e instanceof RequestTimeoutError && e.phase === "total",
  );
  assert.equal(slow.closed, true);
});

Deno.test("an abort while connecting rejects at once; the late connection is closed", async () => {
  let open: (conn: FakeConn) => void = () => {};
  const client = new Http1Client("http://k8s.local", {
    connect: () => new Promise((resolve) => (open = resolve)),
  });
  const stop = new AbortController();
  const request = client.request({ ...get, signal: stop.signal });
  stop.abort(new Error("bye"));
  await assert.rejects(request, /bye/);
  const late = new FakeConn();
  open(late);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(late.closed, true);
});

Deno.test("the idle pool is capped; close() closes the idle connections", async () => {
  const conns = [0, 1, 2].map(() =>
    new FakeConn().push("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n")
  );
  let next = 0;
  const client = new Http1Client("http://k8s.local", {
    maxIdle: 2,
    connect: () => Promise.resolve(conns[next++]!),
  });
  const answers = await Promise.all([0, 1, 2].map(() => client.request(get)));
  for (const answer of answers) assert.equal(await answer.text(), "");
  assert.equal(client.idle, 2);
  assert.equal(conns.filter((c) => c.closed).length, 1);
  client.close();
  assert.equal(conns.filter((c) => c.closed).length, 3);
  await assert.rejects(client.request(get), /closed/);
});

/**
 * A client on a fake clock whose first two connections went idle at time zero (two requests at
 * once); `count` fake connections in all, each answering two requests with an empty 200.
 */
async function twoIdle(count: number) {
  const ok = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
  const conns = Array.from({ length: count }, () => new FakeConn().answer(ok).answer(ok));
  let next = 0;
  const clock = new FakeClock();
  const client = new Http1Client("http://k8s.local", {
    clock,
    connect: () => Promise.resolve(conns[next++]!),
  });
  const both = await Promise.all([client.request(get), client.request(get)]);
  for (const answer of both) await answer.text();
  assert.equal(client.idle, 2);
  return { conns, clock, client, opened: () => next };
}

Deno.test("idle connections are closed after a minute idle, by one sweep timer; close() cancels it", async () => {
  const { conns, clock, client, opened } = await twoIdle(3);
  assert.equal(clock.pending, 1, "one timer for the pool, not one per connection");
  await clock.advance(30);
  await (await client.request(get)).text(); // takes the most recent one; idle again at 30 s
  assert.equal(opened(), 2, "reused, not opened");
  assert.equal(clock.pending, 1);
  await clock.advance(29.999);
  assert.deepEqual(conns.map((c) => c.closed), [false, false, false]);
  await clock.advance(0.001); // 60 s: the one idle since 0 s goes, the one since 30 s stays
  assert.equal(client.idle, 1);
  assert.equal(conns.filter((c) => c.closed).length, 1);
  assert.equal(clock.pending, 1, "the next sweep, for the one left");
  await clock.advance(30); // 90 s: the one idle since 30 s goes; no timer is left
  assert.equal(client.idle, 0);
  assert.deepEqual(conns.map((c) => c.closed), [true, true, false]);
  assert.equal(clock.pending, 0);
  await (await client.request(get)).text(); // a fresh connection, and the sweep is set again
  assert.equal(opened(), 3);
  assert.equal(clock.pending, 1);
  client.close();
  assert.equal(clock.pending, 0, "close() cancels the sweep");
  assert.deepEqual(conns.map((c) => c.closed), [true, true, true]);
});

Deno.test("a connection dropped while idle (stray bytes) is not closed again by the sweep", async () => {
  const { conns, clock, client } = await twoIdle(2);
  conns[0]!.push("HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n"); // stray, while idle
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(client.idle, 1);
  assert.equal(conns[0]!.closed, true);
  await clock.advance(60); // the sweep closes what is still pooled, and only that
  assert.equal(client.idle, 0);
  assert.deepEqual(conns.map((c) => c.closeCalls), [1, 1]);
  assert.equal(clock.pending, 0);
});

Deno.test("a big Content-Length body, cut anywhere, is read whole; a cut one fails", async () => {
  const body = "x".repeat(100_000) + "ü";
  const size = enc.encode(body).length;
  const conn = new FakeConn().push(
    ...cut(`HTTP/1.1 200 OK\r\ncontent-length: ${size}\r\n\r\n${body}`, [
      10,
      50,
      5000,
      70_000,
      100_001,
    ]),
  );
  const { client } = clientOf(conn);
  assert.equal(await (await client.request(get)).text(), body);
  assert.equal(client.idle, 1);
  conn.answer(`HTTP/1.1 200 OK\r\ncontent-length: ${size}\r\n\r\n${body.slice(0, 50_000)}`, null);
  await assert.rejects((await client.request(get)).text(), /closed before the end/);
  assert.equal(conn.closed, true);
});

Deno.test("request bodies: ASCII and not, strings and bytes, empty; content-length is in bytes", async () => {
  for (
    const [headers, body, length] of [
      [{}, '{"a":"b"}', 9],
      [{}, '{"a":"ü"}', 10],
      [{}, "\u{1F600}", 4],
      [{ "x-name": "Jürgen" }, '{"a":"b"}', 9], // a head that is not ASCII
      [{}, enc.encode("bytes"), 5],
      [{}, "", 0],
      [{}, new Uint8Array(0), 0],
    ] as const
  ) {
    const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    const { client } = clientOf(conn);
    await (await client.request({ method: "PATCH", target: "/x", headers, body })).text();
    const text = typeof body === "string" ? body : dec.decode(body);
    const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    assert.equal(
      conn.written,
      `PATCH /x HTTP/1.1\r\nhost: k8s.local:8080\r\n${head}content-length: ${length}\r\n\r\n${text}`,
    );
  }
  for (const [method, tail] of [["GET", ""], ["DELETE", ""], ["POST", "content-length: 0\r\n"]]) {
    const conn = new FakeConn().push("HTTP/1.1 204 No Content\r\n\r\n");
    const { client } = clientOf(conn);
    await client.request({ method: method!, target: "/x", headers: {} });
    assert.equal(conn.written, `${method} /x HTTP/1.1\r\nhost: k8s.local:8080\r\n${tail}\r\n`);
  }
});

Deno.test("answer headers: any case, white space trimmed, repeated ones joined; all of them in headers()", async () => {
  const conn = new FakeConn().push(
    "HTTP/1.1 200 OK\r\nContent-Type:  application/json \r\nX-Many: a\r\nx-many:b\r\n" +
      "Audit-Id: 1:2:3\r\nCONTENT-LENGTH: 2\r\n\r\n{}",
  );
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  assert.equal(answer.header("content-type"), "application/json");
  assert.equal(answer.header("X-MANY"), "a, b");
  assert.equal(answer.header("audit-id"), "1:2:3");
  assert.equal(answer.header("content-length"), "2");
  assert.equal(answer.header("absent"), null);
  assert.deepEqual([...answer.headers()], [
    ["audit-id", "1:2:3"],
    ["content-length", "2"],
    ["content-type", "application/json"],
    ["x-many", "a, b"],
  ]);
  assert.equal(await answer.text(), "{}");
  assert.equal(client.idle, 1);
});

Deno.test("framing headers: repeated, spaced, in odd case; Connection decides the keep-alive", async () => {
  for (
    const [text, body, kept] of [
      ["HTTP/1.1 200 OK\r\ncontent-length:  2 \r\n\r\n{}", "{}", true],
      [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive, Close\r\n\r\n{}",
        "{}",
        false,
      ],
      ["HTTP/1.0 200 OK\r\nContent-Length: 2\r\nCONNECTION: keep-alive\r\n\r\n{}", "{}", true],
      ["HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", false],
      [
        "HTTP/1.1 200\r\nTransfer-Encoding: gzip\r\ntransfer-encoding: Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        "{}",
        true,
      ],
      ["HTTP/1.1 200\nContent-Length: 0002\n\n{}", "{}", true], // bare LF line ends
      [
        "HTTP/1.1 200\ntransfer-encoding: chunked\n\n0002\n{}\n00000000000001\nx\nA \n0123456789\n0\n\n",
        "{}x0123456789",
        true,
      ],
    ] as const
  ) {
    const conn = new FakeConn().push(text);
    const { client } = clientOf(conn);
    const answer = await client.request(get);
    assert.equal(await answer.text(), body, text);
    assert.equal(client.idle, kept ? 1 : 0, text);
  }
  const twice = new FakeConn().push(
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n{}",
  );
  await assert.rejects(clientOf(twice).client.request(get), /bad Content-Length: "2, 2"/);
  for (
    const line of [
      "HTTP/1.1 20 OK",
      "HTTP/1.2 200 OK",
      "HTTP/1.1 200x",
      "HTTP/1.1  200",
      "http/1.1 200",
    ]
  ) {
    const conn = new FakeConn().push(`${line}\r\ncontent-length: 0\r\n\r\n`);
    await assert.rejects(
      clientOf(conn).client.request(get),
      new Http1Error(`The answer is not HTTP/1.x: ${JSON.stringify(`${line}\r`)}`),
    );
  }
});

Deno.test("a head cut at every byte after an answer that left stale bytes in the buffer", async () => {
  // The first answer fills the buffer with empty lines; the next head must end where its bytes
  // end, not at the stale ones past them — also when it is bigger than the buffer.
  for (const size of [10, 40_000]) {
    const stale = "\r\n\r\n\n\n".repeat(3000);
    const first = `HTTP/1.1 200 OK\r\ncontent-length: ${stale.length}\r\n\r\n${stale}`;
    const next = `HTTP/1.1 200 OK\r\nx-big: ${"v".repeat(size)}\r\ncontent-length: 2\r\n\r\n{}`;
    const total = enc.encode(next).length;
    const offsets = size === 10
      ? Array.from({ length: total - 1 }, (_, i) => i + 1)
      : [1, 17, 20, 16_000, 16_500, 39_990, total - 5, total - 3, total - 1];
    for (const at of offsets) {
      const conn = new FakeConn().push(first);
      const { client } = clientOf(conn);
      assert.equal((await (await client.request(get)).text()).length, stale.length);
      conn.answer(...cut(next, [at]));
      const answer = await client.request(get);
      assert.equal(answer.header("x-big")?.length, size, `cut at ${at}`);
      assert.equal(await answer.text(), "{}", `cut at ${at}`);
      assert.equal(client.idle, 1);
    }
  }
});

Deno.test("frozen headers are written the same, request after request; bad ones are refused alike", async () => {
  const headers = Object.freeze({ accept: "application/json", authorization: "Bearer t" });
  const conn = new FakeConn();
  const { client } = clientOf(conn);
  for (const body of ["{}", '{"a":1}']) {
    conn.answer("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    await (await client.request({ method: "PATCH", target: "/x", headers, body })).text();
  }
  const head = "PATCH /x HTTP/1.1\r\nhost: k8s.local:8080\r\naccept: application/json\r\n" +
    "authorization: Bearer t\r\n";
  assert.equal(
    conn.written,
    `${head}content-length: 2\r\n\r\n{}${head}content-length: 7\r\n\r\n{"a":1}`,
  );
  for (
    const bad of [
      Object.freeze({ "x-a": "b\nc" }),
      Object.freeze({ "x a": "b" }),
      Object.freeze({ "x:a": "b" }),
    ]
  ) {
    await assert.rejects(client.request({ ...get, headers: bad }), /has a bad name or value/);
  }
  await assert.rejects(client.request({ ...get, method: "GE T" }), /has spaces/);
  await assert.rejects(client.request({ ...get, target: "/a b" }), /has spaces/);
  await assert.rejects(client.request({ ...get, target: "/a\tb" }), /has spaces/);
  const wide = Object.freeze({ "x-name": "Jürgen" });
  conn.answer("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
  await (await client.request({ ...get, headers: wide })).text();
  assert.ok(
    conn.written.endsWith("GET /x HTTP/1.1\r\nhost: k8s.local:8080\r\nx-name: Jürgen\r\n\r\n"),
  );
});

Deno.test("the buffer of a request is reused only once it is written: concurrent and later requests", async () => {
  // Writes resolve only when told: each request's bytes are read at that time.
  const writes: { p: Uint8Array; done: () => void }[] = [];
  class SlowWriteConn extends FakeConn {
    override write(p: Uint8Array): Promise<number> {
      return new Promise((resolve) => {
        writes.push({
          p,
          done: () => {
            this.written += dec.decode(p);
            resolve(p.length);
          },
        });
      });
    }
  }
  const conns = [new SlowWriteConn(), new SlowWriteConn(), new SlowWriteConn()];
  const { client } = clientOf(...conns);
  const bodies = ['{"a":"long body, long body, long body"}', '{"b":1}', "{}"];
  const answers = bodies.map((body, i) =>
    client.request({ method: "PATCH", target: `/x${i}`, headers: {}, body })
  );
  while (writes.length < 3) await new Promise((resolve) => setTimeout(resolve, 1));
  for (const write of writes.splice(0).reverse()) write.done();
  for (const [i, conn] of conns.entries()) {
    assert.equal(
      conn.written,
      `PATCH /x${i} HTTP/1.1\r\nhost: k8s.local:8080\r\ncontent-length: ${
        bodies[i]!.length
      }\r\n\r\n${bodies[i]}`,
    );
    conn.push("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
  }
  for (const answer of answers) await (await answer).text();
  // Later, shorter requests on a reused buffer: nothing of the longer ones is left in them.
  for (const conn of conns) conn.written = "";
  const next = client.request({ method: "PATCH", target: "/y", headers: {}, body: "{}" });
  while (writes.length < 1) await new Promise((resolve) => setTimeout(resolve, 1));
  writes.pop()!.done();
  const conn = conns.find((conn) => conn.written)!;
  conn.push("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
  await (await next).text();
  assert.equal(
    conn.written,
    "PATCH /y HTTP/1.1\r\nhost: k8s.local:8080\r\ncontent-length: 2\r\n\r\n{}",
  );
});

Deno.test("bufferedText(): a body all buffered is read at once; else nothing is read and text() reads it", async () => {
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello");
  const { client } = clientOf(conn);
  const whole = await client.request(get);
  assert.equal(whole.bufferedText(), "hello");
  assert.equal(whole.bufferedText(), undefined); // read already
  assert.equal(client.idle, 1);
  conn.answer("HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nhel");
  const partial = await client.request(get);
  assert.equal(partial.bufferedText(), undefined);
  const text = partial.text();
  conn.push("lo ", enc.encode("ü").subarray(0, 1), enc.encode("ü").subarray(1));
  assert.equal(await text, "hello ü");
  conn.answer("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n");
  const chunked = await client.request(get);
  assert.equal(chunked.bufferedText(), undefined);
  assert.equal(await chunked.text(), "hi");
  assert.equal(client.idle, 1);
});

Deno.test("bytes past a Content-Length body are not read as body: the body ends, the connection closes", async () => {
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nhe", "llo");
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  assert.equal(answer.bufferedText(), undefined);
  assert.equal(await answer.text(), "hel");
  assert.equal(conn.closed, true);
  assert.equal(client.idle, 0);
});

Deno.test("readView(): buffered chunks come as one view of their body bytes; the last piece is a copy", async () => {
  const conn = new FakeConn().push(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\n ab\r\n1\r\n!\r\n",
  );
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  assert.equal(dec.decode((await answer.readView())!), "hello ab!");
  const next = answer.readView();
  conn.push("2\r\ncd\r\n0\r\n\r\n");
  const last = (await next)!;
  assert.equal(client.idle, 1); // the body ended: the connection serves the next request
  conn.answer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nzz");
  assert.equal(await (await client.request(get)).text(), "zz");
  assert.equal(dec.decode(last), "cd"); // a copy: the next answer did not overwrite it
  assert.equal(await answer.readView(), null);
});

Deno.test("readView(): JSON lines split mid-UTF-8 across reads decode right while the buffer is reused", async () => {
  const { iterJsonLines } = await import("../../src/cogs/clients/jsonlines.ts");
  const body = enc.encode('{"a":"ü€"}\n{"b":"𝄞"}\n');
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
  const { client } = clientOf(conn);
  const answer = await client.request(get);
  // One chunk per byte, each in a read of its own: every character is cut, and each read
  // refills the buffer from its start (the bytes of the view before are gone by then).
  const views: Uint8Array[] = [];
  const chunks = {
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i <= body.length; i++) {
        const next = answer.readView();
        conn.push(i < body.length ? enc.encode("1\r\n") : "0\r\n\r\n");
        if (i < body.length) conn.push(body.subarray(i, i + 1), "\r\n");
        const view = await next;
        if (view === null) return;
        views.push(view);
        yield view;
      }
    },
  };
  const values = [];
  for await (const value of iterJsonLines(chunks)) values.push(value);
  assert.deepEqual(values, [{ a: "ü€" }, { b: "𝄞" }]);
  assert.ok(views.length > 4);
  assert.ok(views.slice(0, -1).some((v) => v.buffer === views[0]!.buffer)); // views, not copies
  assert.ok(views.some((v, i) => v[0] !== body[i])); // and their bytes were overwritten since
});

Deno.test("one timer for both timeouts: connect fires first while both run; total fires first when shorter", async () => {
  // Both set, connect the earlier: the connect timeout fails a request without headers.
  const silent = new FakeConn();
  const a = clientOf(silent);
  await assert.rejects(
    a.client.request({ ...get, timeout: 5, connectTimeout: 0.02 }),
    (e) => e instanceof RequestTimeoutError && e.phase === "connect" && e.seconds === 0.02,
  );
  assert.equal(silent.closed, true);
  // Both set, total the earlier: the total timeout fails it, also before the headers.
  const silent2 = new FakeConn();
  const b = clientOf(silent2);
  await assert.rejects(
    b.client.request({ ...get, timeout: 0.02, connectTimeout: 5 }),
    (e) => e instanceof RequestTimeoutError && e.phase === "total" && e.seconds === 0.02,
  );
  assert.equal(silent2.closed, true);
  // Equal: the total one (as when each had its own timer, the total one set first).
  const silent3 = new FakeConn();
  const c = clientOf(silent3);
  await assert.rejects(
    c.client.request({ ...get, timeout: 0.02, connectTimeout: 0.02 }),
    (e) => e instanceof RequestTimeoutError && e.phase === "total",
  );
});

Deno.test("the timer set for the connect timeout is set again for the rest of the total after the headers", async () => {
  const slow = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab");
  const { client } = clientOf(slow);
  const started = performance.now();
  const answer = await client.request({ ...get, timeout: 0.08, connectTimeout: 0.02 });
  await assert.rejects(
    answer.text(),
    (e) => e instanceof RequestTimeoutError && e.phase === "total" && e.seconds === 0.08,
  );
  assert.ok(performance.now() - started >= 79, "not before the total timeout");
  assert.equal(slow.closed, true);
});

Deno.test("a connect timeout alone stops at the headers: a slow body is not cut", async () => {
  const slow = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab");
  const { client } = clientOf(slow);
  const answer = await client.request({ ...get, connectTimeout: 0.01 });
  const text = answer.text();
  await new Promise((resolve) => setTimeout(resolve, 30));
  slow.push("cd");
  assert.equal(await text, "abcd");
  assert.equal(client.idle, 1);
});

Deno.test("a timeout while connecting: the connect and the total ones; the late connection is closed", async () => {
  for (
    const [init, phase] of [[{ connectTimeout: 0.02 }, "connect"], [
      { timeout: 0.02 },
      "total",
    ]] as const
  ) {
    let open: (conn: FakeConn) => void = () => {};
    const client = new Http1Client("http://k8s.local", {
      connect: () => new Promise((resolve) => (open = resolve)),
    });
    await assert.rejects(
      client.request({ ...get, ...init }),
      (e) => e instanceof RequestTimeoutError && e.phase === phase,
    );
    const late = new FakeConn();
    open(late);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(late.closed, true);
  }
});

Deno.test("an abort mid-request, with timeouts set: the reason, not a timeout; the timer does not fire later", async () => {
  const silent = new FakeConn();
  const { client } = clientOf(silent);
  const stop = new AbortController();
  const request = client.request({
    ...get,
    signal: stop.signal,
    timeout: 0.03,
    connectTimeout: 0.01,
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  const reason = new Error("stop it");
  stop.abort(reason);
  await assert.rejects(request, (e) => e === reason);
  assert.equal(silent.closed, true);
  await new Promise((resolve) => setTimeout(resolve, 50)); // past both timeouts: nothing throws
});

Deno.test("requests sharing a signal: an abort fails those in flight, not the finished ones; one listener", async () => {
  const done = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  const busy = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab");
  const silent = new FakeConn();
  const { client } = clientOf(busy, silent, done);
  const stop = new AbortController();
  let added = 0;
  const add = stop.signal.addEventListener.bind(stop.signal);
  stop.signal.addEventListener = (...args: Parameters<typeof add>) => {
    added++;
    add(...args);
  };
  const reading = (await client.request({ ...get, target: "/busy", signal: stop.signal })).text();
  const waiting = client.request({ ...get, target: "/silent", signal: stop.signal });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(await (await client.request({ ...get, signal: stop.signal })).text(), "ok");
  const reason = new Error("stop it");
  stop.abort(reason);
  await assert.rejects(reading, (e) => e === reason);
  await assert.rejects(waiting, (e) => e === reason);
  assert.deepEqual([done.closed, busy.closed, silent.closed], [false, true, true]);
  assert.equal(added, 1);
});

Deno.test("the head limit is exact: 256 KiB of head pass, one byte more is refused", async () => {
  for (const extra of [0, 1]) {
    const start = "HTTP/1.1 200 OK\r\nx-big: ";
    const end = "\r\ncontent-length: 2\r\n\r\n";
    const fill = 256 * 1024 - start.length - end.length + extra;
    const conn = new FakeConn().push(`${start}${"v".repeat(fill)}${end}{}`);
    const answer = clientOf(conn).client.request(get);
    if (extra === 0) assert.equal(await (await answer).text(), "{}");
    else await assert.rejects(answer, /headers are over 262144 bytes/);
  }
});

Deno.test("a huge Content-Length allocates nothing up front: the body fails when the close cuts it", async () => {
  const conn = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 999999999999999\r\n\r\nab")
    .end();
  const answer = await clientOf(conn).client.request(get);
  await assert.rejects(answer.text(), /closed before the end of the answer/); // not a RangeError
  const capped = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nab");
  await assert.rejects(
    clientOf(capped).client.request({ ...get, maxBodySize: 999 }),
    /body is over 999 bytes \(it declares 1000\).*networking\.maxBodySize/,
  );
  assert.equal(capped.closed, true);
});

Deno.test("bytes that come on an idle connection drop it: they are no answer to the next request", async () => {
  const first = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na");
  const second = new FakeConn().answer("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb");
  const { client, opened } = clientOf(first, second);
  assert.equal(await (await client.request(get)).text(), "a");
  assert.equal(client.idle, 1);
  first.push("HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n"); // stray, while idle
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(client.idle, 0);
  assert.equal(first.closed, true);
  const answer = await client.request(get);
  assert.equal(answer.status, 200);
  assert.equal(await answer.text(), "b");
  assert.equal(opened(), 2);
});

Deno.test("a reused connection that ends after the request was written: GET is sent again, POST and PATCH are not", async () => {
  for (const [method, again] of [["GET", true], ["PUT", true], ["POST", false], ["PATCH", false]]) {
    const reused = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na");
    const fresh = new FakeConn().answer("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb");
    const { client, opened } = clientOf(reused, fresh);
    await (await client.request(get)).text();
    reused.answer(null); // the server closes once it got the request: processed or not, unknown
    const request = client.request({ ...get, method: method as string, body: "{}" });
    if (again) assert.equal(await (await request).text(), "b", `${method}`);
    else await assert.rejects(request, /closed before an answer/, `${method}`);
    assert.equal(opened(), again ? 2 : 1, `${method}`);
  }
  // A write that took no byte: the request provably did not reach the server; sent again.
  const broken = new FakeConn().push("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na");
  const fresh = new FakeConn().answer("HTTP/1.1 201 Created\r\ncontent-length: 1\r\n\r\nb");
  const { client } = clientOf(broken, fresh);
  await (await client.request(get)).text();
  broken.writeError = new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
  assert.equal((await client.request({ ...get, method: "POST", body: "{}" })).status, 201);
});

Deno.test("header lines: white space before the colon, obs-fold, no colon, no name are refused", async () => {
  for (
    const [line, why] of [
      ["Content-Length : 2", /white space before the colon/],
      ["x-a: 1\r\n  2", /obs-fold/],
      ["x-a: 1\r\n\t2", /obs-fold/],
      ["no colon here", /no colon/],
      [": empty name", /no name before the colon/],
    ] as const
  ) {
    const conn = new FakeConn().push(`HTTP/1.1 200 OK\r\n${line}\r\ncontent-length: 2\r\n\r\n{}`);
    await assert.rejects(clientOf(conn).client.request(get), why, line);
    assert.equal(conn.closed, true);
  }
  const both = new FakeConn().push(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 2\r\n\r\n0\r\n\r\n",
  );
  await assert.rejects(
    clientOf(both).client.request(get),
    /both Transfer-Encoding and Content-Length/,
  );
  assert.equal(both.closed, true);
});

Deno.test("an early answer while the body is written (the write fails) is the answer; the connection is not kept", async () => {
  const status = '{"kind":"Status","code":413,"reason":"RequestEntityTooLarge"}';
  const conn = new FakeConn().answer(
    `HTTP/1.1 413 Request Entity Too Large\r\ncontent-length: ${status.length}\r\n\r\n${status}`,
  );
  conn.takes = 100; // the server reads the head and a little, answers, and stops reading
  const { client, opened } = clientOf(conn);
  const answer = await client.request({ ...get, method: "POST", body: "x".repeat(100_000) });
  assert.equal(answer.status, 413);
  assert.equal(await answer.text(), status);
  assert.equal(conn.closed, true); // part of the body is unsent: the connection cannot serve again
  assert.equal(client.idle, 0);
  assert.equal(opened(), 1); // not sent again

  // No answer after the failed write: the write's error, not sent again (bytes were taken).
  const silent = new FakeConn().end();
  silent.takes = 10;
  await assert.rejects(
    clientOf(silent).client.request({ ...get, method: "POST", body: "x".repeat(1000) }),
    Deno.errors.BrokenPipe,
  );
});
