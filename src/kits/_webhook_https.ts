/**
 * An HTTPS listener that asks clients for certificates, for webhook servers
 * with `verifyMode`/`verifyCa*` (Kopf's client-certificate verification).
 *
 * Why not `Deno.serve`: in Deno 2.9.6 its TLS never sends a
 * CertificateRequest and exposes no peer certificate. Deno's `node:https`
 * does (`requestCert`, `ca`, `socket.authorized`,
 * `getPeerCertificate().raw`), so this adapts it to the same
 * `(Request) => Response` handling that `Deno.serve` drives; a webhook
 * server has one request handler whichever listener serves it.
 *
 * Modes, as Python's `ssl.VerifyMode` on a server:
 * - `required`: a client without a certificate that chains to the CA is
 *   refused at the handshake (`certificate required`, or a hang-up for a
 *   foreign certificate).
 * - `optional`: a client may present none (the handler gets no peer); one
 *   that presents a certificate the CA does not vouch for is disconnected.
 *
 * Caveats: HTTP/1.1 only; request and response bodies are buffered (admission
 * and conversion reviews are small JSON documents).
 *
 * @module
 */

import { createServer } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";

/** Options of {@link serveVerifyingHttps}. */
export interface VerifyingHttpsOptions {
  /** The address to bind. */
  hostname: string;
  /** The port (0 for a free one). */
  port: number;
  /** The server certificate (PEM). */
  cert: string;
  /** Its private key (PEM). */
  key: string;
  /** The CAs trusted for client certificates (PEM); undefined: the default trust roots. */
  ca: string[] | undefined;
  /** Whether a client certificate is required or optional. */
  mode: "optional" | "required";
  /** Stops the server when aborted. */
  signal: AbortSignal;
  /** Handles a request; `peer` is the verified client certificate (DER), if any. */
  handler: (request: Request, peer: Uint8Array | undefined) => Promise<Response>;
}

/** A running listener. */
export interface VerifyingHttpsServer {
  /** The bound port. */
  port: number;
  /** Resolves when the listener has closed. */
  finished: Promise<void>;
  /** Stops accepting, lets in-flight requests finish, closes the connections. */
  shutdown(): Promise<void>;
}

/**
 * Listens on HTTPS, asking clients for certificates.
 *
 * @param o Address, certificates, the CAs and mode for client certificates, the handler.
 * @returns The running listener.
 * @throws {Error} If the address cannot be bound or the PEM material is invalid.
 */
export async function serveVerifyingHttps(
  o: VerifyingHttpsOptions,
): Promise<VerifyingHttpsServer> {
  const server = createServer({
    cert: o.cert,
    key: o.key,
    requestCert: true,
    rejectUnauthorized: o.mode === "required",
    ...(o.ca ? { ca: o.ca } : {}),
  });
  // A presented but unverified certificate fails the connection, as with Python's CERT_OPTIONAL.
  server.on("secureConnection", (socket: TLSSocket) => {
    if (!socket.authorized && socket.getPeerCertificate()?.raw) socket.destroy();
  });
  server.on("tlsClientError", () => {}); // refused handshakes are the clients' business
  const inflight = new Set<Promise<void>>();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const done = exchange(req, res, o).catch(() => void res.destroy());
    inflight.add(done);
    done.finally(() => inflight.delete(done));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : o.port;
  const finished = new Promise<void>((resolve) => server.once("close", () => resolve()));
  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    stopping ??= (async () => {
      server.close();
      server.closeIdleConnections();
      await Promise.allSettled([...inflight]);
      server.closeAllConnections();
      await finished;
    })();
  if (o.signal.aborted) await shutdown();
  else o.signal.addEventListener("abort", () => void shutdown(), { once: true });
  return { port, finished, shutdown };
}

async function exchange(
  req: IncomingMessage,
  res: ServerResponse,
  o: VerifyingHttpsOptions,
): Promise<void> {
  const socket = req.socket as TLSSocket;
  const raw = socket.authorized ? socket.getPeerCertificate()?.raw : undefined;
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  for await (const chunk of req) chunks.push(chunk as Uint8Array<ArrayBuffer>);
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : await new Blob(chunks).bytes();
  const url = new URL(req.url ?? "/", `https://${req.headers.host ?? `${o.hostname}:0`}`);
  const request = new Request(url, { method, headers, ...(body ? { body } : {}) });
  const response = await o.handler(request, raw ? new Uint8Array(raw) : undefined);
  const content = new Uint8Array(await response.arrayBuffer());
  const out: Record<string, string> = {};
  response.headers.forEach((v, k) => out[k] = v);
  out["content-length"] = String(content.length);
  res.writeHead(response.status, out);
  res.end(content);
}
