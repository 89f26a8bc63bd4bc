/**
 * Our own HTTP/1.1 server on `Deno.listen`, for the embedded API server's
 * plain-HTTP listener, with a web-standard handler `(Request) => Response`.
 *
 * Why it is neither `Deno.serve` nor `node:http`: in Deno 2.9.6, `Deno.serve`
 * has no header-read or idle timeout and exposes no connections — a client
 * that never finishes its headers holds its connection for ever (slowloris) —
 * and cannot close a connection whose body it refuses unread. Deno's
 * `node:http` has the timeouts but costs 2–4× the server CPU per request.
 * Measured server CPU per request (/proc, the server process; a ConfigMap, 8
 * concurrent keep-alive fetch clients, 4000 GET/PATCH, 3000 POST; a watch
 * fan-out of 50 watches × 400 PATCHes; 2 shared cores, 3 runs; before queued
 * watch events were coalesced into one write — `deno task bench:listeners`
 * measures the three side by side again, with whole object lifecycles):
 *
 * | listener     | GET        | merge PATCH | POST       | watch, per event |
 * | ------------ | ---------- | ----------- | ---------- | ---------------- |
 * | this one     | 155–180 µs | 252–330 µs  | 220–297 µs | 30–36 µs         |
 * | `Deno.serve` | 105–118 µs | 220–293 µs  | 253–283 µs | 16.5–23 µs       |
 * | `node:http`  | 350–405 µs | 440–510 µs  | 483–517 µs | 31.5–36 µs       |
 *
 * What it still costs over `Deno.serve` (GET, watch events): making the
 * `Request` in JavaScript (Deno.serve makes it lazily from Rust), one JS
 * socket op per read and per write, and the garbage of both (V8's helper
 * threads); and watch events are sent with TCP_NODELAY, each at once (with
 * Nagle's batching instead, one run measured about 6 µs less per event).
 *
 * Guarantees:
 * - Keep-alive and pipelining (answers in request order); `Connection: close`
 *   honoured both ways; HTTP/1.0 is closed after the answer unless it asked
 *   for keep-alive; `Expect: 100-continue` is answered `100 Continue` before
 *   the body is read (or with the final status, e.g. 413); absolute-form
 *   targets are accepted.
 * - RFC 9112 framing is enforced: a head over 1 MiB is 431; a bad request
 *   line, a header line without a colon, whitespace before the colon, an
 *   obs-fold line, control characters, a bad or contradicting Content-Length,
 *   Transfer-Encoding with Content-Length, or a bad chunk size is 400; a
 *   transfer coding other than `chunked` is 501 — each then closed. No buffer
 *   is sized from a declared length: buffers grow as bytes arrive.
 * - The body limit: a Content-Length over `maxBodyBytes` is answered with
 *   `bodyTooLarge()` before the body is read; a chunked body is counted as it
 *   arrives. What the client still sends is then read and dropped for at most
 *   a second before the connection is closed, so the client sees the answer,
 *   not a reset.
 * - Timeouts, checked by one periodic sweep over the connections (no timer per
 *   request): a connection must send a complete head within
 *   `headersTimeoutMs` (from connecting, or from a later request's first
 *   byte), else 408 and closed; an idle keep-alive connection is closed after
 *   `keepAliveTimeoutMs`; a request body must arrive within
 *   `requestTimeoutMs`. An open response (a watch) is never cut by them.
 * - `request.signal` aborts when the client closes the connection or on
 *   shutdown. Bodies that are complete at once are sent with Content-Length in
 *   one write with the head; others (watches) chunked, a write per chunk,
 *   awaited (back-pressure), each sent as soon as it is produced.
 * - A handler that throws gives 500 with a short text; a client that goes away
 *   mid-answer cancels the body stream; nothing is left rejected unhandled.
 * - `shutdown()` stops accepting, aborts in-flight requests' signals, cancels
 *   open response bodies (ending chunked streams cleanly), closes idle
 *   connections and resolves once every connection is closed.
 *
 * Caveats: HTTP/1.1 only (no h2, no upgrades); request bodies are buffered
 * before the handler runs; a missing Host header is tolerated (the bound
 * address is used); while a response is being written, at most about 1 MiB of
 * pipelined requests is read ahead, and a client that half-closes its side is
 * taken as gone (its in-flight request's signal aborts), as with `Deno.serve`;
 * a handler that ignores `request.signal` and never returns keeps `shutdown()`
 * waiting, as with `Deno.serve`. One shortcut reads Deno's internals, checked
 * when the module loads and replaced by the public way if it does not behave:
 * whether a response body is a stream (else `response.bytes()` is written
 * whole). (Putting checked header lines straight into a `Request`'s internal
 * list saved about 5 µs a request more; not worth a second dependence on
 * Deno's internals.)
 *
 * @module
 */

import type { TlsServer } from "./tls_listener.ts";

/** A web-standard request handler. */
export type HttpHandler = (request: Request) => Response | Promise<Response>;

/** Options for {@linkcode serveHttp1}. */
export interface ServeHttp1Options {
  /** The address to bind. @default {"127.0.0.1"} */
  hostname?: string;
  /** The port to bind; 0 picks a free one. @default {0} */
  port?: number;
  /** Handles each request. */
  handler: HttpHandler;
  /** Aborting it shuts the server down, like calling `shutdown()`. */
  signal?: AbortSignal;
  /** The largest request body read, in bytes. @default {Infinity} */
  maxBodyBytes?: number;
  /** The answer to a body over `maxBodyBytes` (default: a plain 413). */
  bodyTooLarge?: () => Response;
  /**
   * Milliseconds a connection has to send a request's head — the first request's from when it
   * connects, a later one's from its first byte; then it is answered 408 and closed.
   * @default {60000}
   */
  headersTimeoutMs?: number;
  /** Milliseconds an idle keep-alive connection is kept between requests. @default {90000} */
  keepAliveTimeoutMs?: number;
  /** Milliseconds a whole request (head and body) has to arrive. @default {300000} */
  requestTimeoutMs?: number;
}

/** Go's DefaultMaxHeaderBytes, which kube-apiserver keeps: a larger head is 431. */
const MAX_HEAD_BYTES = 1024 * 1024;
/** A chunk-size line (with extensions) longer than this is refused. */
const MAX_CHUNK_LINE = 4096;
/** Read ahead at most this much unconsumed input (pipelined requests) before pausing. */
const READ_AHEAD = MAX_HEAD_BYTES + 64 * 1024;
/** The read buffer's starting size; it grows while a head is longer, and shrinks back. */
const BUFFER_SIZE = 16 * 1024;
/** A streamed answer's chunks already queued are written together, up to this many bytes. */
const COALESCE_MAX = 256 * 1024;
/** A body that is complete at once up to this size is sent with Content-Length. */
const STATIC_BODY_MAX = 1024 * 1024;
/** How long, and how much, a refused body is still read and dropped before closing. */
const LINGER_MS = 1000;
const LINGER_BYTES = 8 * 1024 * 1024;

const CR = 13;
const LF = 10;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than HTAB, and CR or LF not in a CRLF pair. */
// deno-lint-ignore no-control-regex -- control characters are what it looks for
const BAD_HEAD_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
/** What a Host header may hold (reg-name, IP literal, port): nothing that changes the path. */
const HOST = /^[A-Za-z0-9.\-_~!$&'()*+,;=:%\[\]]*$/;
const HEX = /^[0-9A-Fa-f]{1,15}$/;

const utf8 = new TextDecoder();
/** Like {@linkcode BAD_HEAD_CHARS}, or any non-ASCII character (then decoded again as Latin-1). */
// deno-lint-ignore no-control-regex -- control characters are what it looks for
const BAD_OR_NON_ASCII = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\uffff]|\r(?!\n)|(?<!\r)\n/;

/** Decodes bytes as Latin-1 (one character per byte), as HTTP field values are read. */
function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return text;
}

/**
 * Whether a response's body is a stream (it may stay open) rather than bytes or a string given
 * whole: read from Deno's body slot when it behaves as checked below, else undefined (unknown).
 */
const isStreamBody: (response: Response) => boolean | undefined = (() => {
  const slot = Object.getOwnPropertySymbols(Response.prototype).find((s) =>
    s.description === "body"
  );
  const probe = (response: Response): boolean | undefined => {
    const inner = (response as unknown as Record<symbol, { streamOrStatic?: unknown } | null>)[
      slot!
    ];
    if (!inner || !("streamOrStatic" in inner)) return undefined;
    return inner.streamOrStatic instanceof ReadableStream;
  };
  try {
    if (
      slot && probe(new Response("x")) === false &&
      probe(new Response(new ReadableStream())) === true
    ) return probe;
  } catch { /* another Deno: no hint */ }
  return () => undefined;
})();
const encoder = new TextEncoder();
const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");
const LAST_CHUNK = encoder.encode("0\r\n\r\n");

const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

/** Where a connection is: what its deadline, if any, means. */
const enum Phase {
  /** Waiting for a later request's first byte: the idle timeout. */
  Idle,
  /** Reading a head (the first request's from connecting): the header timeout. */
  Head,
  /** Reading a body: the request timeout. */
  Body,
  /** The handler runs or the answer is written: no deadline. */
  Busy,
}

/**
 * A request in flight: its signal is made only when asked for (most handlers never do), already
 * aborted if the client went away or the server stopped before.
 */
class Exchange {
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  /** The request's signal. */
  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the request's signal (once). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** A `Request` whose `signal` is its {@linkcode Exchange}'s, made on first use. */
class ServedRequest extends Request {
  #exchange: Exchange;

  constructor(exchange: Exchange, url: string, init: RequestInit) {
    super(url, init);
    this.#exchange = exchange;
  }

  override get signal(): AbortSignal {
    return this.#exchange.signal();
  }
}

/** A field value without the spaces and tabs around it. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) {
    end--;
  }
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** Thrown to answer a malformed request with `status` and close the connection. */
class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Settings shared by every connection of one server. */
interface Settings {
  handler: HttpHandler;
  fallbackHost: string;
  maxBodyBytes: number;
  bodyTooLarge: () => Response;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  requestTimeoutMs: number;
  stopping: boolean;
}

/** The cached Date header value, renewed at most once a second. */
let dateValue = "";
let dateAt = 0;
function httpDate(): string {
  const now = Date.now();
  if (now - dateAt >= 1000) {
    dateAt = now - (now % 1000);
    dateValue = new Date(now).toUTCString();
  }
  return dateValue;
}

/**
 * Starts a plain HTTP/1.1 server on `Deno.listen` with header, idle and request timeouts, a
 * body limit, keep-alive, pipelining and streamed (chunked) responses.
 *
 * @param options Address, handler, limits and timeouts.
 * @returns The running server: its port, a `finished` promise and `shutdown()`.
 * @throws {Deno.errors.NotCapable} Without net permission for the address.
 * @throws {Deno.errors.AddrInUse} If the port is taken.
 *
 * @example Serve, and see a half-sent head answered 408 after the header timeout
 * ```ts
 * import { serveHttp1 } from "./http_listener.ts";
 * const server = await serveHttp1({ handler: () => new Response("ok"), headersTimeoutMs: 200 });
 * const ok = await fetch(`http://127.0.0.1:${server.port}/`);
 * if ((await ok.text()) !== "ok") throw new Error("expected ok");
 * const conn = await Deno.connect({ port: server.port });
 * await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n"));
 * const buf = new Uint8Array(64);
 * const n = await conn.read(buf);
 * const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
 * if (!head.startsWith("HTTP/1.1 408")) throw new Error(`expected 408, got ${head}`);
 * conn.close();
 * await server.shutdown();
 * ```
 */
export async function serveHttp1(options: ServeHttp1Options): Promise<TlsServer> {
  const { hostname = "127.0.0.1", port = 0, signal } = options;
  const listener = Deno.listen({ hostname, port, transport: "tcp" });
  const boundPort = listener.addr.port;
  const headersTimeoutMs = options.headersTimeoutMs ?? 60_000;
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? 90_000;
  const settings: Settings = {
    handler: options.handler,
    fallbackHost: `${hostname.includes(":") ? `[${hostname}]` : hostname}:${boundPort}`,
    maxBodyBytes: options.maxBodyBytes ?? Infinity,
    bodyTooLarge: options.bodyTooLarge ??
      (() => new Response("Request entity too large\n", { status: 413 })),
    headersTimeoutMs,
    keepAliveTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs ?? 5 * 60_000,
    stopping: false,
  };
  const connections = new Set<Connection>();

  // One sweep for every connection's deadline: the timeouts are honoured within its period.
  const period = Math.max(
    50,
    Math.min(1000, Math.floor(Math.min(headersTimeoutMs, keepAliveTimeoutMs) / 4)),
  );
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const connection of connections) connection.expire(now);
  }, period);

  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const accepting = (async () => {
    while (true) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept();
      } catch {
        return; // closed by shutdown
      }
      if (settings.stopping) {
        conn.close();
        continue;
      }
      try {
        conn.setNoDelay(true); // a watch event must leave at once
      } catch { /* closed already */ }
      const connection = new Connection(conn, settings);
      connections.add(connection);
      connection.closed.then(() => connections.delete(connection));
    }
  })();

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      settings.stopping = true;
      try {
        listener.close();
      } catch { /* closed */ }
      await accepting;
      const reason = new DOMException("The server is shutting down.", "AbortError");
      const all = [...connections];
      for (const connection of all) connection.stop(reason);
      await Promise.all(all.map((c) => c.closed));
      clearInterval(sweep);
      resolveFinished();
    })();
    return stopping;
  };
  if (signal?.aborted) await shutdown();
  else signal?.addEventListener("abort", () => void shutdown(), { once: true });
  return { port: boundPort, finished, shutdown };
}

/** A parsed request head. */
interface Head {
  method: string;
  target: string;
  http10: boolean;
  /** The header lines as they came (names and values checked by `Request`). */
  headers: [string, string][];
  host: string | undefined;
  contentLength: number;
  chunked: boolean;
  close: boolean;
  keepAlive: boolean;
  expectContinue: boolean;
}

/** One accepted connection: a read pump and the request loop. */
class Connection {
  /** Resolves once the connection is closed and its loop has ended. */
  readonly closed: Promise<void>;
  #conn: Deno.TcpConn;
  #settings: Settings;
  #buf = new Uint8Array(BUFFER_SIZE);
  #start = 0;
  #end = 0;
  #eof = false;
  #isClosed = false;
  #phase = Phase.Head;
  #deadline: number;
  #wakeParser: (() => void) | undefined;
  #wakePump: (() => void) | undefined;
  /** The request in flight (handler or answer), to abort. */
  #current: Exchange | undefined;
  #stopReason: unknown;

  constructor(conn: Deno.TcpConn, settings: Settings) {
    this.#conn = conn;
    this.#settings = settings;
    this.#deadline = Date.now() + settings.headersTimeoutMs;
    void this.#pump();
    this.closed = this.#run();
  }

  /** Called by the sweep: acts on a passed deadline. */
  expire(now: number): void {
    if (this.#isClosed || this.#phase === Phase.Busy || now < this.#deadline) return;
    if (this.#phase === Phase.Idle) this.#close();
    else this.#failAndClose(408, "Request Timeout");
  }

  /** Shutdown: aborts the request in flight, or closes an idle connection. */
  stop(reason: unknown): void {
    this.#stopReason = reason;
    if (this.#phase === Phase.Busy && this.#current) this.#current.abort(reason);
    else this.#close();
  }

  #close(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    try {
      this.#conn.close();
    } catch { /* closed */ }
    this.#current?.abort(this.#closedReason());
    this.#wake();
    const pump = this.#wakePump;
    this.#wakePump = undefined;
    pump?.();
  }

  #wake(): void {
    const wake = this.#wakeParser;
    if (wake) {
      this.#wakeParser = undefined;
      wake();
    }
  }

  /** Writes a bare error answer, then closes (used by the sweep, outside the loop). */
  #failAndClose(status: number, message: string): void {
    this.#phase = Phase.Busy; // not again
    const bytes = encoder.encode(errorAnswer(status, message));
    this.#conn.write(bytes).catch(() => 0).finally(() => this.#close());
  }

  /** Reads into the buffer for as long as the connection is open. */
  async #pump(): Promise<void> {
    while (!this.#isClosed) {
      if (this.#end - this.#start >= READ_AHEAD) {
        await new Promise<void>((resolve) => (this.#wakePump = resolve));
        continue;
      }
      if (this.#start === this.#end) {
        this.#start = this.#end = 0;
        if (this.#buf.length > 4 * BUFFER_SIZE) this.#buf = new Uint8Array(BUFFER_SIZE);
      } else if (this.#buf.length - this.#end < 4096) {
        if (this.#start > 0) {
          this.#buf.copyWithin(0, this.#start, this.#end);
          this.#end -= this.#start;
          this.#start = 0;
        }
        if (this.#buf.length - this.#end < 4096) {
          const grown = new Uint8Array(this.#buf.length * 2);
          grown.set(this.#buf.subarray(0, this.#end));
          this.#buf = grown;
        }
      }
      let n: number | null;
      try {
        n = await this.#conn.read(this.#buf.subarray(this.#end));
      } catch {
        n = null;
      }
      if (n === null) {
        this.#eof = true;
        // The client went away (or half-closed): the request in flight is abandoned.
        if (this.#phase === Phase.Busy) this.#current?.abort(this.#closedReason());
        this.#wake();
        return;
      }
      this.#end += n;
      if (this.#phase === Phase.Idle) {
        this.#phase = Phase.Head;
        this.#deadline = Date.now() + this.#settings.headersTimeoutMs;
      }
      this.#wake();
    }
  }

  #closedReason(): unknown {
    return this.#stopReason ?? new DOMException("The client closed the connection.", "AbortError");
  }

  /** Resolves when more input arrived, or at end of input or close. */
  #more(): Promise<void> {
    const pump = this.#wakePump;
    if (pump) {
      this.#wakePump = undefined;
      pump();
    }
    return new Promise((resolve) => (this.#wakeParser = resolve));
  }

  async #run(): Promise<void> {
    try {
      while (!this.#isClosed && (await this.#exchange())) {
        if (this.#settings.stopping) break;
      }
    } catch {
      // A write to a closed connection, or another failure: the connection is done.
    } finally {
      this.#close();
    }
  }

  /** Reads, handles and answers one request; false when the connection is to be closed. */
  async #exchange(): Promise<boolean> {
    const settings = this.#settings;
    // Between requests: idle until a byte arrives (the pump then moves to Head).
    if (this.#phase === Phase.Busy) {
      if (this.#start < this.#end) {
        this.#phase = Phase.Head;
        this.#deadline = Date.now() + settings.headersTimeoutMs;
      } else {
        this.#phase = Phase.Idle;
        this.#deadline = Date.now() + settings.keepAliveTimeoutMs;
      }
    }
    // The head.
    let headEnd = -1;
    let scanned = 0; // bytes after #start already searched (the pump may move the buffer)
    while (true) {
      // Empty lines before a request line are ignored (RFC 9112 §2.2).
      while (
        this.#end - this.#start >= 2 && this.#buf[this.#start] === CR &&
        this.#buf[this.#start + 1] === LF
      ) {
        this.#start += 2;
        scanned = 0;
      }
      headEnd = findHeadEnd(this.#buf, this.#start + scanned, this.#end);
      if (headEnd >= 0) break;
      if (this.#end - this.#start > MAX_HEAD_BYTES) {
        await this.#refuse(431, "Request Header Fields Too Large", Infinity);
        return false;
      }
      scanned = Math.max(0, this.#end - this.#start - 3);
      if (this.#eof || this.#isClosed) return false;
      await this.#more();
      if (this.#isClosed) return false;
    }
    if (headEnd - this.#start > MAX_HEAD_BYTES) {
      await this.#refuse(431, "Request Header Fields Too Large", Infinity);
      return false;
    }
    const headStart = Date.now();
    let head: Head;
    try {
      head = parseHead(this.#buf, this.#start, headEnd);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.#start = headEnd + 4;
      await this.#refuse(error.status, error.message, Infinity);
      return false;
    }
    this.#start = headEnd + 4;

    // The body.
    let body: Uint8Array<ArrayBuffer> | undefined;
    if (head.chunked || head.contentLength > 0) {
      if (head.contentLength > settings.maxBodyBytes) {
        await this.#refuseBody(head.contentLength);
        return false;
      }
      this.#phase = Phase.Body;
      this.#deadline = headStart + settings.requestTimeoutMs;
      if (head.expectContinue && !head.http10 && this.#start === this.#end) {
        await this.#write(CONTINUE);
      }
      try {
        body = head.chunked
          ? await this.#readChunked()
          : await this.#readLength(head.contentLength);
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        if (error.status === 413) await this.#refuseBody(-1);
        else await this.#refuse(error.status, error.message, Infinity);
        return false;
      }
      if (!body) return false; // the connection ended midway
    }
    this.#phase = Phase.Busy;

    // The handler.
    const method = head.method;
    const withBody = method !== "GET" && method !== "HEAD";
    let url: string;
    const target = head.target;
    if (target.charCodeAt(0) === 47 /* / */) {
      const host = head.host ?? settings.fallbackHost;
      url = `http://${host || settings.fallbackHost}${target}`;
    } else if (/^https?:\/\//i.test(target)) {
      url = target; // absolute-form
    } else {
      await this.#refuse(400, "Bad Request: the request target", Infinity);
      return false;
    }
    const exchange = new Exchange();
    this.#current = exchange;
    let request: Request;
    try {
      const init: RequestInit = withBody ? { method, body: body ?? new Uint8Array(0) } : { method };
      init.headers = head.headers;
      request = new ServedRequest(exchange, url, init);
    } catch {
      // An invalid URL, or a method fetch forbids (CONNECT, TRACE, TRACK).
      const forbidden = /^(CONNECT|TRACE|TRACK)$/i.test(method);
      await this.#refuse(
        forbidden ? 405 : 400,
        forbidden ? "Method Not Allowed" : "Bad Request",
        0,
      );
      return false;
    }
    let response: Response;
    try {
      response = await settings.handler(request);
      if (!(response instanceof Response)) throw new TypeError("the handler returned no Response");
    } catch (error) {
      if (this.#isClosed) return false;
      const message = error instanceof Error ? error.message : String(error);
      response = new Response(`Internal Server Error: ${message}\n`, {
        status: 500,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    }
    if (this.#isClosed) {
      await response.body?.cancel().catch(() => {});
      return false;
    }
    let keepAlive = head.http10 ? head.keepAlive : !head.close;
    if (settings.stopping || this.#eof) keepAlive = false;
    const closeAsked = response.headers.get("connection");
    if (closeAsked && /(^|,)\s*close\s*(,|$)/i.test(closeAsked)) keepAlive = false;
    keepAlive = await this.#respond(response, head, keepAlive, exchange);
    this.#current = undefined;
    return keepAlive && !this.#isClosed && !(this.#eof && this.#start === this.#end);
  }

  /** Reads a Content-Length body, as its bytes arrive. */
  async #readLength(length: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
    if (this.#end - this.#start >= length) {
      const body = this.#buf.slice(this.#start, this.#start + length);
      this.#start += length;
      return body;
    }
    const parts: Uint8Array[] = [];
    let received = 0;
    while (received < length) {
      const take = Math.min(this.#end - this.#start, length - received);
      if (take > 0) {
        parts.push(this.#buf.slice(this.#start, this.#start + take));
        this.#start += take;
        received += take;
        continue;
      }
      if (this.#eof || this.#isClosed) return undefined;
      await this.#more();
    }
    return concat(parts, received);
  }

  /** Reads a chunked body, counting it against the limit as it arrives. */
  async #readChunked(): Promise<Uint8Array<ArrayBuffer> | undefined> {
    const limit = this.#settings.maxBodyBytes;
    const parts: Uint8Array[] = [];
    let size = 0;
    while (true) {
      const line = await this.#readLine(MAX_CHUNK_LINE);
      if (line === undefined) return undefined;
      const semicolon = line.indexOf(";");
      const hex = (semicolon >= 0 ? line.slice(0, semicolon) : line).replace(/[ \t]+$/, "");
      if (!HEX.test(hex)) throw new Refusal(400, "Bad Request: a chunk size");
      const length = parseInt(hex, 16);
      if (length === 0) break;
      if (size + length > limit) throw new Refusal(413, "Request Entity Too Large");
      let remaining = length;
      while (remaining > 0) {
        const take = Math.min(this.#end - this.#start, remaining);
        if (take > 0) {
          parts.push(this.#buf.slice(this.#start, this.#start + take));
          this.#start += take;
          remaining -= take;
          continue;
        }
        if (this.#eof || this.#isClosed) return undefined;
        await this.#more();
      }
      size += length;
      const end = await this.#readLine(2);
      if (end === undefined) return undefined;
      if (end !== "") throw new Refusal(400, "Bad Request: chunk data longer than its size");
    }
    // The trailer section, up to an empty line: read and ignored.
    let trailer = 0;
    while (true) {
      const line = await this.#readLine(MAX_HEAD_BYTES - trailer);
      if (line === undefined) return undefined;
      if (line === "") break;
      trailer += line.length + 2;
    }
    return concat(parts, size);
  }

  /** Reads one CRLF-terminated line (without it); a longer one than `max` is refused. */
  async #readLine(max: number): Promise<string | undefined> {
    while (true) {
      const view = this.#buf.subarray(this.#start, this.#end);
      const cr = view.indexOf(CR);
      if (cr >= 0 && cr + 1 < view.length) {
        if (view[cr + 1] !== LF) throw new Refusal(400, "Bad Request: a bare CR");
        const line = latin1(view.subarray(0, cr));
        this.#start += cr + 2;
        return line;
      }
      if (view.length > max + 2) throw new Refusal(400, "Bad Request: a line too long");
      if (this.#eof || this.#isClosed) return undefined;
      await this.#more();
    }
  }

  /** Writes all of `bytes`. */
  async #write(bytes: Uint8Array): Promise<void> {
    let written = await this.#conn.write(bytes);
    while (written < bytes.length) written += await this.#conn.write(bytes.subarray(written));
  }

  /**
   * Answers `status` with a short text and closes: what the client still sends is read and
   * dropped meanwhile for at most a second (closing on unread data would reset the connection
   * and lose the answer), up to `drain` bytes.
   */
  async #refuse(status: number, message: string, drain: number): Promise<void> {
    this.#phase = Phase.Busy;
    try {
      await this.#write(encoder.encode(errorAnswer(status, message)));
    } catch {
      return;
    }
    // Nothing unread: the client has sent its request and waits for the answer; close now.
    if (this.#start === this.#end) return;
    await this.#linger(drain);
  }

  /** Answers `bodyTooLarge()` and closes after reading what is still sent (see `#refuse`). */
  async #refuseBody(declared: number): Promise<void> {
    this.#phase = Phase.Busy;
    const response = this.#settings.bodyTooLarge();
    const fake: Head = {
      method: "POST",
      target: "",
      http10: false,
      headers: [],
      host: undefined,
      contentLength: 0,
      chunked: false,
      close: true,
      keepAlive: false,
      expectContinue: false,
    };
    try {
      await this.#respond(response, fake, false, new Exchange());
    } catch {
      return;
    }
    await this.#linger(declared >= 0 ? declared : LINGER_BYTES);
  }

  /** Reads and drops up to `budget` bytes for at most a second; the caller closes. */
  async #linger(budget: number): Promise<void> {
    const timer = setTimeout(() => this.#close(), LINGER_MS);
    try {
      while (!this.#isClosed && budget > 0) {
        const drop = Math.min(this.#end - this.#start, budget);
        this.#start += drop;
        budget -= drop;
        if (budget <= 0 || this.#eof) break;
        await this.#more();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Writes a response: with Content-Length in one write when its body is complete at once,
   * else chunked, a write per chunk. Returns whether the connection may be kept.
   */
  async #respond(
    response: Response,
    head: Head,
    keepAlive: boolean,
    exchange: Exchange,
  ): Promise<boolean> {
    const status = response.status;
    let text = `HTTP/1.1 ${status} ${response.statusText || REASONS[status] || ""}\r\n`;
    let hasDate = false;
    let givenLength: string | undefined;
    for (const [name, value] of response.headers) {
      switch (name) {
        case "connection":
        case "keep-alive":
        case "transfer-encoding":
        case "upgrade":
          continue;
        case "content-length":
          givenLength = value;
          continue;
        case "date":
          hasDate = true;
      }
      text += `${name}: ${value}\r\n`;
    }
    if (!hasDate) text += `date: ${httpDate()}\r\n`;
    if (!keepAlive) text += "connection: close\r\n";
    else if (head.http10) text += "connection: keep-alive\r\n";

    const noBody = head.method === "HEAD" || status === 204 || status === 304 || status < 200;
    if (isStreamBody(response) === false) {
      // Bytes or a string given whole: one write with the head.
      const bytes = await response.bytes();
      if (noBody) {
        if (status !== 204 && status !== 304 && status >= 200) {
          text += `content-length: ${bytes.length}\r\n`;
        }
        await this.#write(encodeHead(text + "\r\n", 0).bytes);
        return keepAlive;
      }
      text += `content-length: ${bytes.length}\r\n\r\n`;
      const out = encodeHead(text, bytes.length);
      out.bytes.set(bytes, out.length);
      // Written here, not by #write: one async frame less on the hot path.
      const written = await this.#conn.write(out.bytes);
      if (written < out.bytes.length) await this.#write(out.bytes.subarray(written));
      return keepAlive;
    }

    const body = response.body;
    if (!body) {
      if (status !== 204 && status !== 304 && status >= 200) {
        text += `content-length: ${head.method === "HEAD" && givenLength ? givenLength : "0"}\r\n`;
      }
      await this.#write(encodeHead(text + "\r\n", 0).bytes);
      return keepAlive;
    }

    // Read what is there at once: a body that ends meanwhile gets a Content-Length.
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    let complete = false;
    try {
      while (total <= STATIC_BODY_MAX) {
        const read = reader.read();
        const result = await soon(read);
        if (result === undefined) {
          pending = read;
          break;
        }
        if (result.done) {
          complete = true;
          break;
        }
        const chunk = result.value;
        if (!(chunk instanceof Uint8Array)) throw new TypeError("a body chunk is not bytes");
        chunks.push(chunk);
        total += chunk.length;
      }
    } catch (error) {
      // The body failed before anything was sent: a 500 instead.
      await reader.cancel(error).catch(() => {});
      const message = error instanceof Error ? error.message : String(error);
      await this.#write(encoder.encode(errorAnswer(500, `Internal Server Error: ${message}`)));
      return false;
    }

    if (complete || noBody) {
      if (!complete) {
        pending?.catch(() => {});
        await reader.cancel().catch(() => {});
      }
      if (noBody) {
        if (status !== 204 && status !== 304 && status >= 200) {
          const length = complete ? String(total) : givenLength;
          if (length !== undefined) text += `content-length: ${length}\r\n`;
        }
        await this.#write(encodeHead(text + "\r\n", 0).bytes);
        return keepAlive;
      }
      text += `content-length: ${total}\r\n\r\n`;
      const { bytes, length } = encodeHead(text, total);
      let offset = length;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.length;
      }
      await this.#write(bytes);
      return keepAlive;
    }

    // Streaming: chunked (HTTP/1.0: raw, ended by closing).
    const chunked = !head.http10;
    if (chunked) text += "transfer-encoding: chunked\r\n";
    else keepAlive = false;
    if (!chunked && !text.includes("connection: close")) text += "connection: close\r\n";
    const signal = exchange.signal();
    const cancel = () => void reader.cancel(signal.reason).catch(() => {});
    if (signal.aborted) cancel();
    else signal.addEventListener("abort", cancel, { once: true });
    try {
      let frameSize = 0;
      for (const chunk of chunks) frameSize += chunk.length + (chunked ? frameOverhead(chunk) : 0);
      const { bytes, length } = encodeHead(text + "\r\n", frameSize);
      let offset = length;
      for (const chunk of chunks) offset = putChunk(bytes, offset, chunk, chunked);
      await this.#write(bytes);
      let ended = false;
      while (!ended) {
        const result = await (pending ?? reader.read());
        pending = undefined;
        if (result.done) break;
        // What the stream already holds goes out with it, in one write: a watch in a burst of
        // changes queues events while the previous write is under way.
        const batch = [result.value];
        let size = result.value.length;
        while (size < COALESCE_MAX) {
          const next = reader.read();
          const more = await soon(next);
          if (more === undefined) {
            pending = next;
            break;
          }
          if (more.done) {
            ended = true;
            break;
          }
          batch.push(more.value);
          size += more.value.length;
        }
        let frameSize = 0;
        for (const chunk of batch) {
          if (!(chunk instanceof Uint8Array)) throw new TypeError("a body chunk is not bytes");
          if (chunk.length > 0) frameSize += chunk.length + (chunked ? frameOverhead(chunk) : 0);
        }
        if (frameSize === 0) continue;
        const frame = new Uint8Array(frameSize);
        let at = 0;
        for (const chunk of batch) if (chunk.length > 0) at = putChunk(frame, at, chunk, chunked);
        const written = await this.#conn.write(frame);
        if (written < frame.length) await this.#write(frame.subarray(written));
      }
      if (chunked && !this.#isClosed) await this.#write(LAST_CHUNK);
    } catch {
      // The client went away, or the body failed midway: nothing more can be said on it.
      pending?.catch(() => {});
      await reader.cancel().catch(() => {});
      return false;
    } finally {
      signal.removeEventListener("abort", cancel);
    }
    return keepAlive && !signal.aborted;
  }
}

/** Resolves with the read's result if it settles within a few microtask turns, else undefined. */
async function soon<T>(promise: Promise<T>): Promise<T | undefined> {
  let settled = false;
  let failed = false;
  let value: T | undefined;
  let error: unknown;
  promise.then((v) => {
    settled = true;
    value = v;
  }, (e) => {
    settled = failed = true;
    error = e;
  });
  // Deno's body of a string or bytes settles its reads within two turns.
  for (let turn = 0; turn < 4 && !settled; turn++) await undefined;
  if (failed) throw error;
  return value;
}

/** The size line and CRLFs around a chunk. */
function frameOverhead(chunk: Uint8Array): number {
  return chunk.length.toString(16).length + 4;
}

/** Puts a chunk (framed if `chunked`) at `offset`; returns the offset after it. */
function putChunk(out: Uint8Array, offset: number, chunk: Uint8Array, chunked: boolean): number {
  if (!chunked) {
    out.set(chunk, offset);
    return offset + chunk.length;
  }
  const size = chunk.length.toString(16);
  for (let i = 0; i < size.length; i++) out[offset++] = size.charCodeAt(i);
  out[offset++] = CR;
  out[offset++] = LF;
  out.set(chunk, offset);
  offset += chunk.length;
  out[offset++] = CR;
  out[offset++] = LF;
  return offset;
}

/** Encodes a head (Latin-1) into a new buffer with `extra` bytes of room after it. */
function encodeHead(text: string, extra: number): { bytes: Uint8Array; length: number } {
  const bytes = new Uint8Array(text.length + extra);
  const { read, written } = encoder.encodeInto(text, bytes);
  if (read === text.length && written === text.length) return { bytes, length: written };
  // Not ASCII: header values are bytes, one per character.
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return { bytes, length: text.length };
}

/** A bare answer to a request that cannot be served, closing the connection. */
function errorAnswer(status: number, message: string): string {
  const body = `${message}\n`;
  return `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\ncontent-type: text/plain\r\n` +
    `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
}

/** The index of the CRLFCRLF ending a head in `buf[from, end)`, or -1. */
function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  const view = buf.subarray(0, end);
  let i = from;
  while (true) {
    i = view.indexOf(CR, i);
    if (i < 0 || i + 3 >= end) return -1;
    if (view[i + 1] === LF && view[i + 2] === CR && view[i + 3] === LF) return i;
    i++;
  }
}

/** Concatenates `parts` (`size` bytes in all). */
function concat(parts: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  if (parts.length === 1) return parts[0] as Uint8Array<ArrayBuffer>;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Parses and checks a request head in `buf[start, end)` (without the final CRLFCRLF). */
function parseHead(buf: Uint8Array, start: number, end: number): Head {
  let text = utf8.decode(buf.subarray(start, end));
  if (BAD_OR_NON_ASCII.test(text)) {
    text = latin1(buf.subarray(start, end));
    if (BAD_HEAD_CHARS.test(text)) throw new Refusal(400, "Bad Request: control characters");
  }
  const lines = text.split("\r\n");
  const requestLine = lines[0]!;
  const sp1 = requestLine.indexOf(" ");
  const sp2 = sp1 < 0 ? -1 : requestLine.indexOf(" ", sp1 + 1);
  if (sp1 <= 0 || sp2 < 0) throw new Refusal(400, "Bad Request: the request line");
  const method = requestLine.slice(0, sp1);
  const target = requestLine.slice(sp1 + 1, sp2);
  const version = requestLine.slice(sp2 + 1);
  if (!TOKEN.test(method) || target === "" || !/^HTTP\/1\.\d$/.test(version)) {
    throw new Refusal(400, "Bad Request: the request line");
  }
  const head: Head = {
    method,
    target,
    http10: version === "HTTP/1.0",
    headers: [],
    host: undefined,
    contentLength: 0,
    chunked: false,
    close: false,
    keepAlive: false,
    expectContinue: false,
  };
  const headers = head.headers;
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) throw new Refusal(400, "Bad Request: an obs-fold line");
    if (colon <= 0) throw new Refusal(400, "Bad Request: a header line without a colon");
    const name = line.slice(0, colon);
    const last = name.charCodeAt(name.length - 1);
    if (last === 32 || last === 9) throw new Refusal(400, "Bad Request: whitespace before a colon");
    if (!TOKEN.test(name)) throw new Refusal(400, "Bad Request: a field name");
    const value = trimOws(line.slice(colon + 1));
    headers.push([name, value]);
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === "host") {
          if (head.host !== undefined) throw new Refusal(400, "Bad Request: more than one Host");
          const host = value.trim();
          if (!HOST.test(host)) throw new Refusal(400, "Bad Request: the Host header");
          head.host = host;
        }
        break;
      case 6:
        if (name.toLowerCase() === "expect" && value.trim().toLowerCase() === "100-continue") {
          head.expectContinue = true;
        }
        break;
      case 10:
        if (name.toLowerCase() === "connection") {
          for (const token of value.split(",")) {
            const t = token.trim().toLowerCase();
            if (t === "close") head.close = true;
            else if (t === "keep-alive") head.keepAlive = true;
          }
        }
        break;
      case 14:
        if (name.toLowerCase() === "content-length") {
          for (const part of value.split(",")) {
            const v = part.trim();
            if (!/^\d+$/.test(v)) throw new Refusal(400, "Bad Request: Content-Length");
            if (contentLength !== undefined && v.replace(/^0+(?=\d)/, "") !== contentLength) {
              throw new Refusal(400, "Bad Request: differing Content-Length values");
            }
            contentLength = v.replace(/^0+(?=\d)/, "");
          }
        }
        break;
      case 17:
        if (name.toLowerCase() === "transfer-encoding") {
          transferEncoding = transferEncoding === undefined
            ? value
            : `${transferEncoding},${value}`;
        }
        break;
    }
  }
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) {
      throw new Refusal(400, "Bad Request: Transfer-Encoding with Content-Length");
    }
    if (head.http10) throw new Refusal(400, "Bad Request: Transfer-Encoding in HTTP/1.0");
    const codings = transferEncoding.split(",").map((c) => c.trim().toLowerCase());
    for (const coding of codings) {
      if (coding !== "chunked") throw new Refusal(501, "Not Implemented: a transfer coding");
    }
    if (codings.length !== 1) throw new Refusal(400, "Bad Request: chunked more than once");
    head.chunked = true;
  } else if (contentLength !== undefined) {
    // Digits only; a length past 2^53 is still larger than any limit.
    head.contentLength = contentLength.length > 15
      ? Number.MAX_SAFE_INTEGER
      : Number(contentLength);
  }
  return head;
}
