/**
 * An HTTPS listener for the embedded API server that can authenticate
 * clients by their certificates, with a web-standard handler
 * `(Request, info) => Response`.
 *
 * Why it is not `Deno.serve`: in Deno 2.9.6, `Deno.serve` and
 * `Deno.listenTls` take only `cert`/`key` — they never send a
 * CertificateRequest and expose no peer certificate (denoland/deno#26825 is
 * still open). Deno's `node:https`, however, accepts
 * `{ requestCert: true, rejectUnauthorized: false, ca }`, verifies the
 * presented chain against `ca` (rustls/webpki, including the clientAuth
 * extended key usage) and reports `socket.authorized` and
 * `socket.getPeerCertificate()`. This module adapts that server to
 * `Request`/`Response` so the rest of the API server stays web-standard.
 *
 * Guarantees:
 * - `info.clientCertificate` is set only when the client presented a
 *   certificate that chains to `ca`; a missing or foreign certificate still
 *   reaches the handler, with no identity, so bearer tokens work too.
 * - Response bodies are streamed chunk by chunk with back-pressure, so a
 *   Kubernetes watch (newline-delimited JSON that stays open) works.
 * - `request.signal` aborts when the client goes away or on shutdown.
 * - `shutdown()` stops accepting, aborts in-flight requests, cancels open
 *   response bodies (ending chunked streams cleanly), closes idle keep-alive
 *   connections and resolves once the socket is closed.
 * - Plain HTTP sent to the TLS port (`http://` given for an `https://`
 *   server) is answered as Go's net/http answers it —
 *   `HTTP/1.0 400 Bad Request` and `Client sent an HTTP request to an HTTPS
 *   server.` — and closed, instead of a TLS alert that clients print as an
 *   empty reply: the first five bytes of each connection are looked at
 *   before the handshake (and put back when they are not HTTP).
 *
 * Caveats: HTTP/1.1 only (no ALPN `h2`; every client here falls back to it);
 * request bodies are buffered before the handler runs; a handler that ignores
 * `request.signal` and never returns keeps `shutdown()` waiting, as with
 * `Deno.serve`.
 *
 * @module
 */

import { createServer as createHttpsServer } from "node:https";
import { createServer as createHttpServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Buffer } from "node:buffer";
import { handleExchange, type TlsHandler } from "./node_exchange.ts";

export type { ClientCertificateIdentity, TlsHandler, TlsRequestInfo } from "./node_exchange.ts";

/** Options for {@linkcode serveHttp}: {@linkcode ServeTlsOptions} without the TLS material. */
export type ServeHttpOptions = Omit<ServeTlsOptions, "cert" | "key" | "ca">;

/** Options for {@linkcode serveTls}. */
export interface ServeTlsOptions {
  /** The address to bind. @default {"127.0.0.1"} */
  hostname?: string;
  /** The port to bind; 0 picks a free one. @default {0} */
  port?: number;
  /** The server certificate (chain) in PEM. */
  cert: string;
  /** The server's private key in PEM (PKCS#8, SEC1 or PKCS#1). */
  key: string;
  /**
   * The CA (PEM) that client certificates must chain to. When given, clients
   * are asked for a certificate (optional for them); when absent, none is
   * requested and `info.clientCertificate` is never set.
   */
  ca?: string;
  /** Handles each request. */
  handler: TlsHandler;
  /** Aborting it shuts the server down, like calling `shutdown()`. */
  signal?: AbortSignal;
  /**
   * The largest request body read, in bytes (default: unlimited). A larger one — by its
   * Content-Length before reading, or counted as a chunked body arrives — is answered with
   * `bodyTooLarge()` and the connection closed, the rest never read.
   */
  maxBodyBytes?: number;
  /** The answer to a body over `maxBodyBytes` (default: a plain 413). */
  bodyTooLarge?: () => Response;
  /**
   * Milliseconds a connection has to send a request's headers — the first request's from
   * when it connects, a later one's from its first byte; then it is answered 408 and closed.
   * @default {60000}
   */
  headersTimeoutMs?: number;
  /** Milliseconds an idle keep-alive connection is kept between requests. @default {90000} */
  keepAliveTimeoutMs?: number;
}

/** A running server started by {@linkcode serveTls}. */
export interface TlsServer {
  /** The port actually bound (useful with `port: 0`). */
  port: number;
  /** Resolves when the server has closed. */
  finished: Promise<void>;
  /** Stops the server gracefully and resolves when it has closed. */
  shutdown(): Promise<void>;
}

/** One request in flight, so that shutdown can end it. */
interface Exchange {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Starts an HTTPS server that verifies client certificates against `ca` when
 * presented and passes the verified identity to the handler.
 *
 * @param options Address, PEM material, the CA for client certificates and
 *   the handler.
 * @returns The running server: its port, a `finished` promise and `shutdown()`.
 * @throws {Error} If the address cannot be bound or the PEM material is invalid.
 *
 * @example Serve with client-certificate authentication
 * ```ts
 * import { generateCertificates } from "../shared/tls.ts";
 * import { serveTls } from "./tls_listener.ts";
 *
 * const tls = await generateCertificates({ clientCommonName: "alice" });
 * const server = await serveTls({
 *   cert: tls.serverCert,
 *   key: tls.serverKey,
 *   ca: tls.caCert,
 *   handler: (_req, info) => Response.json({ user: info.clientCertificate?.commonName ?? null }),
 * });
 * const client = Deno.createHttpClient({
 *   caCerts: [tls.caCert],
 *   cert: tls.clientCert,
 *   key: tls.clientKey,
 * });
 * const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
 * console.assert((await response.json()).user === "alice");
 * client.close();
 * await server.shutdown();
 * ```
 */
export function serveTls(options: ServeTlsOptions): Promise<TlsServer> {
  const { ca } = options;
  return serveNode(options, (timeouts) =>
    createHttpsServer({
      cert: options.cert,
      key: options.key,
      ...(ca ? { ca, requestCert: true, rejectUnauthorized: false } : {}),
      ...timeouts,
    }));
}

/**
 * Starts a plain HTTP server with the same guarantees as {@linkcode serveTls} (streamed
 * responses, a body limit, header and keep-alive timeouts), and no client identity.
 *
 * Why not `Deno.serve`: in Deno 2.9.6 it has no header-read or idle timeout — a client that
 * never finishes its headers holds its connection forever — and no way to close a connection
 * whose body is refused unread. Deno's `node:http` has both.
 *
 * @param options Address, handler, limits and timeouts.
 * @returns The running server.
 * @throws {Error} If the address cannot be bound.
 *
 * @example A half-sent header is answered 408 and closed after the timeout
 * ```ts
 * import { serveHttp } from "./tls_listener.ts";
 * const server = await serveHttp({ handler: () => new Response("ok"), headersTimeoutMs: 200 });
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
export function serveHttp(options: ServeHttpOptions): Promise<TlsServer> {
  return serveNode({ ...options, scheme: "http" }, (timeouts) => createHttpServer(timeouts));
}

/** Node's server timeouts, as `createServer` takes them. */
interface NodeTimeouts {
  maxHeaderSize: number;
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
}

/** Serves with a node `http` or `https` server made by `create`. */
async function serveNode(
  options: ServeHttpOptions & { ca?: string; scheme?: string },
  create: (timeouts: NodeTimeouts) => ReturnType<typeof createHttpServer>,
): Promise<TlsServer> {
  const { hostname = "127.0.0.1", port = 0, handler, ca, signal } = options;
  const exchanges = new Set<Exchange>();
  const headersTimeout = options.headersTimeoutMs ?? 60_000;
  const server = create({
    // Go's DefaultMaxHeaderBytes, which kube-apiserver keeps: larger headers are 431.
    maxHeaderSize: 1024 * 1024,
    headersTimeout,
    // The whole request (headers and body) must arrive within this; responses (watches) are
    // not limited. Node wants it above headersTimeout.
    requestTimeout: Math.max(headersTimeout + 1, 5 * 60_000),
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 90_000,
    // How often expired connections are looked for: the timeouts are honoured within this.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
  });

  if ((options.scheme ?? "https") === "https") answerPlainHttp(server, headersTimeout);

  let boundPort = port;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const controller = new AbortController();
    const exchange: Exchange = {
      controller,
      done: handleExchange(req, res, controller, handler, {
        fallbackHost: `${hostname}:${boundPort}`,
        scheme: options.scheme ?? "https",
        verifying: Boolean(ca),
        maxBodyBytes: options.maxBodyBytes ?? Infinity,
        bodyTooLarge: options.bodyTooLarge ??
          (() => new Response("Request entity too large\n", { status: 413 })),
      }),
    };
    exchanges.add(exchange);
    exchange.done.finally(() => exchanges.delete(exchange));
  });

  // Deno's errors, as Deno.listen would throw them: node's listen throws a missing permission
  // outside any promise, and reports a busy port as a plain Error with a code.
  const access = await Deno.permissions.query({ name: "net", host: `${hostname}:${port}` });
  if (access.state !== "granted") {
    throw new Deno.errors.NotCapable(
      `Requires net access to "${hostname}:${port}", run again with the --allow-net flag`,
    );
  }
  await new Promise<void>((resolve, reject) => {
    const failed = (e: Error & { code?: string }) =>
      reject(e.code === "EADDRINUSE" ? new Deno.errors.AddrInUse(e.message, { cause: e }) : e);
    server.once("error", failed);
    server.listen(port, hostname, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const address = server.address();
  boundPort = typeof address === "object" && address ? address.port : port;

  const finished = new Promise<void>((resolve) => server.once("close", () => resolve()));
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      server.close();
      const reason = new DOMException("The TLS server is shutting down.", "AbortError");
      for (const { controller } of exchanges) controller.abort(reason);
      await Promise.allSettled([...exchanges].map((e) => e.done));
      server.closeAllConnections();
      await finished;
    })();
    return stopping;
  };
  if (signal?.aborted) await shutdown();
  else signal?.addEventListener("abort", () => void shutdown(), { once: true });

  return { port: boundPort, finished, shutdown };
}

/** The first bytes of plain HTTP requests, as Go's `tlsRecordHeaderLooksLikeHTTP` knows them. */
const HTTP_STARTS = ["GET /", "HEAD ", "POST ", "PUT /", "OPTIO"];
/** Go's net/http answer to plain HTTP on a TLS port (then it closes the connection). */
const PLAIN_HTTP_ANSWER =
  "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/**
 * Puts a look at the first five bytes of every connection before the TLS server's own
 * `connection` listener: plain HTTP (a client given `http://` for an `https://` server) gets
 * Go's net/http answer instead of a TLS alert that reads as an empty reply; anything else is
 * put back and goes on to the TLS handshake.
 */
function answerPlainHttp(server: ReturnType<typeof createHttpServer>, timeoutMs: number): void {
  const tlsListeners = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    // A client that sends nothing is dropped as one that never finishes its headers.
    const silent = setTimeout(() => socket.destroy(), timeoutMs);
    const onReadable = () => {
      const head: Buffer | null = socket.read(5);
      if (head === null) {
        if (socket.readableEnded) done(null);
        return; // fewer than five bytes yet
      }
      done(head);
    };
    const onEnd = () => done(socket.read() as Buffer | null);
    const done = (head: Buffer | null) => {
      clearTimeout(silent);
      socket.off("readable", onReadable);
      socket.off("end", onEnd);
      if (head && HTTP_STARTS.includes(head.subarray(0, 5).toString("latin1"))) {
        socket.end(PLAIN_HTTP_ANSWER, () => socket.destroy());
        return;
      }
      if (head) socket.unshift(head);
      for (const listener of tlsListeners) listener.call(server, socket);
    };
    socket.on("readable", onReadable);
    socket.once("end", onEnd);
    socket.once("close", () => clearTimeout(silent));
  });
}
