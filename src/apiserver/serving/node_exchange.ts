/**
 * One request of the node-based listener (`tls_listener.ts`) as a web-standard
 * exchange: node's `IncomingMessage` becomes a `Request` (its body limited,
 * its client certificate's identity read), the handler's `Response` is written
 * back chunk by chunk with back-pressure, and `request.signal` aborts when the
 * client goes away.
 *
 * @module
 */

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

/** How one exchange is run: what `serveTls` was given. */
export interface ExchangeSettings {
  fallbackHost: string;
  scheme: string;
  verifying: boolean;
  maxBodyBytes: number;
  bodyTooLarge: () => Response;
}

/** Thrown while reading a body over the limit. */
class BodyTooLarge extends Error {
  override name = "BodyTooLarge";
}

/** Runs one request through the handler and writes its response. */
export async function handleExchange(
  req: IncomingMessage,
  res: ServerResponse,
  controller: AbortController,
  handler: TlsHandler,
  settings: ExchangeSettings,
): Promise<void> {
  const { verifying } = settings;
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
      const request = await toRequest(req, settings, controller.signal);
      response = await handler(request, info);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        await refuseBody(req, res, settings.bodyTooLarge(), controller.signal);
        return;
      }
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

/**
 * Answers a request whose body is over the limit, and closes its connection: what the client
 * still sends is read and dropped meanwhile (closing on unread data would reset the connection
 * and lose the answer), for at most a second.
 */
async function refuseBody(
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  signal: AbortSignal,
): Promise<void> {
  const socket = req.socket;
  const linger = setTimeout(() => socket.destroy(), 1000);
  socket.once("close", () => clearTimeout(linger));
  const close = () => {
    clearTimeout(linger);
    socket.end();
  };
  if (req.complete) res.once("finish", close);
  else req.once("end", () => (res.writableFinished ? close() : res.once("finish", close)));
  req.resume();
  response.headers.set("connection", "close"); // the client must not send another request on it
  // Node would destroy the socket as soon as the answer is written — with the client's bytes
  // unread, which resets the connection; the socket is closed here instead, as above.
  const node = res as unknown as { _last: boolean; shouldKeepAlive: boolean };
  res.once("prefinish", () => {
    node._last = false;
    node.shouldKeepAlive = true;
  });
  await writeResponse(response, req, res, signal);
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

/** Converts a node request to a web `Request`, buffering its body (up to `limit` bytes). */
async function toRequest(
  req: IncomingMessage,
  settings: ExchangeSettings,
  signal: AbortSignal,
): Promise<Request> {
  const { fallbackHost, scheme, maxBodyBytes: limit } = settings;
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const url = new URL(req.url ?? "/", `${scheme}://${req.headers.host ?? fallbackHost}`);
  const method = req.method ?? "GET";
  let body: Uint8Array<ArrayBuffer> | undefined;
  if (method !== "GET" && method !== "HEAD") {
    if (Number(req.headers["content-length"] ?? 0) > limit) throw new BodyTooLarge();
    const chunks: Uint8Array[] = [];
    let size = 0;
    // Not `for await`: leaving it early destroys the socket, and the 413 must still be written.
    await new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", onError);
        req.off("close", onClose);
      };
      const onData = (chunk: Uint8Array) => {
        size += chunk.length;
        if (size > limit) {
          cleanup();
          req.pause();
          reject(new BodyTooLarge());
        } else chunks.push(chunk);
      };
      const onEnd = () => (cleanup(), resolve());
      const onError = (e: Error) => (cleanup(), reject(e));
      const onClose = () => {
        cleanup();
        if (req.complete) resolve();
        else reject(new DOMException("The client closed the connection.", "AbortError"));
      };
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("error", onError);
      req.on("close", onClose);
    });
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
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
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
