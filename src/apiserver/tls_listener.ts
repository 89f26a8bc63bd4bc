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
 *
 * Caveats: HTTP/1.1 only (no ALPN `h2`; every client here falls back to it);
 * request bodies are buffered before the handler runs; a handler that ignores
 * `request.signal` and never returns keeps `shutdown()` waiting, as with
 * `Deno.serve`.
 *
 * @module
 */

import { createServer } from "node:https";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";

/** The verified identity from a client certificate, as Kubernetes reads it. */
export interface ClientCertificateIdentity {
  /** The subject's CN: the Kubernetes user name. */
  commonName: string;
  /** The subject's O values: the Kubernetes groups. */
  organizations: string[];
}

/** Per-request information passed to a {@linkcode TlsHandler}. */
export interface TlsRequestInfo {
  /** Present only if the client's certificate was verified against the CA. */
  clientCertificate?: ClientCertificateIdentity;
}

/** A web-standard request handler that also receives the TLS identity. */
export type TlsHandler = (
  request: Request,
  info: TlsRequestInfo,
) => Response | Promise<Response>;

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
 * import { generateCertificates } from "./tls.ts";
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
export async function serveTls(options: ServeTlsOptions): Promise<TlsServer> {
  const { hostname = "127.0.0.1", port = 0, handler, ca, signal } = options;
  const exchanges = new Set<Exchange>();
  const server = createServer({
    cert: options.cert,
    key: options.key,
    ...(ca ? { ca, requestCert: true, rejectUnauthorized: false } : {}),
  });

  let boundPort = port;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const controller = new AbortController();
    const exchange: Exchange = {
      controller,
      done: handleExchange(req, res, controller, handler, `${hostname}:${boundPort}`, Boolean(ca)),
    };
    exchanges.add(exchange);
    exchange.done.finally(() => exchanges.delete(exchange));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
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

/** Runs one request through the handler and writes its response. */
async function handleExchange(
  req: IncomingMessage,
  res: ServerResponse,
  controller: AbortController,
  handler: TlsHandler,
  fallbackHost: string,
  verifying: boolean,
): Promise<void> {
  const abortOnClose = () => {
    if (!res.writableFinished) {
      controller.abort(new DOMException("The client closed the connection.", "AbortError"));
    }
  };
  res.once("close", abortOnClose);
  try {
    const info: TlsRequestInfo = {};
    const identity = verifying ? identify(req.socket as TLSSocket) : undefined;
    if (identity) info.clientCertificate = identity;

    let response: Response;
    try {
      const request = await toRequest(req, fallbackHost, controller.signal);
      response = await handler(request, info);
    } catch (error) {
      if (controller.signal.aborted) {
        res.destroy();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      response = new Response(`Internal Server Error: ${message}\n`, { status: 500 });
    }
    await writeResponse(response, req, res, controller.signal);
  } finally {
    res.off("close", abortOnClose);
  }
}

/** Reads the verified identity from the socket, if the client certificate chained to the CA. */
function identify(socket: TLSSocket): ClientCertificateIdentity | undefined {
  if (!socket.authorized) return undefined;
  // Node's types say string, but repeated attributes (several O) come as arrays.
  const subject: { CN?: string | string[]; O?: string | string[] } | undefined = socket
    .getPeerCertificate()?.subject;
  const list = (value: string | string[] | undefined): string[] =>
    value === undefined ? [] : Array.isArray(value) ? value : [value];
  const commonName = list(subject?.CN)[0];
  if (commonName === undefined) return undefined;
  return { commonName, organizations: list(subject?.O) };
}

/** Converts a node request to a web `Request`, buffering its body. */
async function toRequest(
  req: IncomingMessage,
  fallbackHost: string,
  signal: AbortSignal,
): Promise<Request> {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const url = new URL(req.url ?? "/", `https://${req.headers.host ?? fallbackHost}`);
  const method = req.method ?? "GET";
  let body: Uint8Array<ArrayBuffer> | undefined;
  if (method !== "GET" && method !== "HEAD") {
    const chunks: Uint8Array[] = [];
    for await (const chunk of req) chunks.push(chunk as Uint8Array);
    body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.length;
    }
  }
  return new Request(url, { method, headers, signal, ...(body ? { body } : {}) });
}

/** Writes a web `Response` to a node response, streaming the body with back-pressure. */
async function writeResponse(
  response: Response,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie") headers[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, response.statusText || undefined, headers);

  const body = response.body;
  if (!body || req.method === "HEAD" || signal.aborted) {
    await body?.cancel().catch(() => {});
    res.end();
    return;
  }
  res.flushHeaders(); // a watch must see its headers before the first event
  const reader = body.getReader();
  const cancel = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", cancel, { once: true });
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drained(res);
    }
    if (!res.destroyed) res.end();
  } catch {
    res.destroy();
  } finally {
    signal.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
}

/** Resolves when the response can take more data, or when it closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
