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
import { Connection, type HttpHandler, type Settings } from "./http1_connection.ts";

export type { HttpHandler } from "./http1_connection.ts";

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
