/**
 * A lean HTTP/1.1 client over `Deno.connect` / `Deno.connectTls`, for the
 * API client's requests to one server ({@link Http1Client}).
 *
 * Why it exists: the operator sends a few small requests per object and reads
 * a few watch events per object; with `fetch`, building and checking the
 * `Request`, `Headers`, `Response`, `AbortSignal` and `ReadableStream`
 * objects of every request cost more CPU than the operator's own work. This
 * client writes a request in one `write` and parses the answer from the
 * connection's bytes, with nothing but the status, a header lookup and the
 * body.
 *
 * What it does: a keep-alive pool of idle connections (new ones are opened
 * as needed, as `fetch` does; at most `maxIdle` idle ones are kept, the most
 * recently used is reused first; one idle for a minute is closed — as
 * client-go's transport closes its idle ones after 90 s —, so a burst's many
 * connections do not stay open for good once the load is a trickle again);
 * bodies by `Content-Length`, by
 * `Transfer-Encoding: chunked` (extensions and trailers are read and
 * dropped), or up to the close of the connection; no body for HEAD, 1xx, 204
 * and 304; `Connection: close`. No compression (no `Accept-Encoding` is
 * sent), no HTTP/2, no proxies (the transport keeps `fetch` for those).
 *
 * Where the parts live: the request's bytes in `_http1_request_bytes.ts`, the
 * connection and its buffer in `_http1_link.ts`, the answer's head in
 * `_http1_head.ts`, its body in `_http1_response.ts` ({@link Http1Response}),
 * a request's timeouts and abort in `_http1_exchange.ts`; here, the pool and
 * the request's way through it ({@link Http1Client}).
 *
 * Guarantees:
 * - A connection goes back to the pool only after its answer was read to the
 *   end with nothing left over; a connection whose answer was not read fully,
 *   which failed, timed out or was aborted is closed.
 * - An idle connection keeps a read pending (the next request's first read
 *   takes it over): bytes or the end that come while it is
 *   idle — a stray answer such as a 408 before the server closes, or the close
 *   itself — drop it at once, so nothing that came before a request is taken
 *   for its answer. (Bytes that come after the request was written are its
 *   answer: no client can tell them apart.)
 * - A stale keep-alive connection (the server closed it as the request was
 *   sent) fails a request only when sending it again could do harm: when a
 *   reused connection fails to write, or ends or fails before the first byte
 *   of the answer, the request is sent once more on a fresh connection if not a
 *   byte of it was taken (it provably did not reach the server) or its method
 *   is idempotent (GET, HEAD, PUT, DELETE, OPTIONS, TRACE — not POST, not
 *   PATCH). Idle connections older than the stale one are closed too.
 * - An early answer — the server answers and closes before it read the whole
 *   body, as kube-apiserver does with a 413 for a body over 3 MiB — is the
 *   request's answer when the body's write fails, not a connection error.
 *
 * Limits (RFC 9112): the head is at most 256 KiB; header lines need a name
 * and a colon right after it (no white space before it, no obs-fold lines);
 * `Transfer-Encoding` with `Content-Length` is refused; no buffer is sized by
 * a declared length alone; `maxBodySize` caps a 2xx body read whole. Each is
 * an {@link Http1Error} (or a `ResponseTooLargeError`) and the connection is
 * closed.
 * - Timeouts run on the real clock, cancelled when the answer ends:
 *   `timeout` for the whole exchange including the body, `connectTimeout` up
 *   to the answer's headers (the TCP and TLS connection included). One timer
 *   per request serves both, set for the earlier and again for the later when that one still runs. An abort
 *   (signal or timeout) closes the connection; the request or the body read
 *   rejects with the signal's reason or a {@link RequestTimeoutError}.
 *
 * @module
 */

import { type CancelTimer, type Clock, realClock } from "../aio/clock.ts";
import { Exchange, type Http1Request } from "./_http1_exchange.ts";
import { type Head, takeHead } from "./_http1_head.ts";
import {
  headTooLong,
  type Http1Connection,
  Http1Error,
  Link,
  type LinkPool,
  MAX_HEAD,
} from "./_http1_link.ts";
import { RequestBytes } from "./_http1_request_bytes.ts";
import { Http1Response } from "./_http1_response.ts";

export { Http1Error } from "./_http1_link.ts";
export type { Http1Connection } from "./_http1_link.ts";
export { type Http1Request, RequestTimeoutError } from "./_http1_exchange.ts";
export { Http1Response } from "./_http1_response.ts";

/**
 * An idle connection older than this is closed: not reused (servers drop idle ones), and closed
 * in the pool's next sweep (see {@link Http1Client}).
 */
const MAX_IDLE_MS = 60_000;

/** TLS material of an {@link Http1Client}. */
export interface Http1Tls {
  /** CA certificates (PEM) trusted in addition to the system's. */
  caCerts?: string[] | undefined;
  /** The client certificate (PEM), for mTLS. */
  cert?: string | undefined;
  /** The client key (PEM), for mTLS. */
  key?: string | undefined;
}

/** Options of {@link Http1Client}. */
export interface Http1ClientOptions {
  /** At most this many idle connections are kept (default 64, as many as requests in flight by default). */
  maxIdle?: number | undefined;
  /** Opens a connection instead of `Deno.connect`/`Deno.connectTls` (tests). */
  connect?: (() => Promise<Http1Connection>) | undefined;
  /** TLS material; used for `https:` origins. */
  tls?: Http1Tls | undefined;
  /** The clock of the idle connections' expiry (default: the real clock; tests). */
  clock?: Clock | undefined;
}

/** The methods whose request may be sent again on a fresh connection (RFC 9110 §9.2.2). */
const IDEMPOTENT: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "PUT",
  "DELETE",
  "OPTIONS",
  "TRACE",
]);

/** The error of a connection that ended before the answer's head did. */
function noHead(link: Link): Http1Error {
  return new Http1Error(
    link.end > link.start
      ? "The connection closed in the middle of the answer's headers"
      : "The connection closed before an answer",
  );
}

/**
 * Reads on until the answer's head is in the buffer: `scanned` is where {@link takeHead} said
 * to go on looking for its end.
 */
async function readHead(link: Link, scanned: number): Promise<Head> {
  let head: Head | number = scanned;
  while (typeof head === "number") {
    if (link.end - link.start > MAX_HEAD) throw headTooLong();
    const offset = link.start;
    if (!(await link.fill())) throw noHead(link);
    head = takeHead(link, head - (offset - link.start)); // fill() may move the bytes to the front
  }
  return head;
}

/**
 * HTTP/1.1 requests to one origin, over a pool of keep-alive connections
 * (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { Http1Client } from "./http1.ts";
 *
 * await using server = await startApiServer();
 * using client = new Http1Client(server.url);
 * const answer = await client.request({ method: "GET", target: "/version", headers: {} });
 * assert.equal(answer.status, 200);
 * assert.match(answer.header("Content-Type") ?? "", /json/);
 * assert.ok(JSON.parse(await answer.text()).gitVersion);
 * ```
 */
export class Http1Client {
  #idle: Link[] = [];
  #maxIdle: number;
  #connect: () => Promise<Http1Connection>;
  /** The request's bytes, into reused buffers. */
  #bytes: RequestBytes;
  #closed = false;
  #clock: Clock;
  /** The pending sweep of the idle connections, set while there are any. */
  #sweep: CancelTimer | undefined = undefined;

  /**
   * Creates the client; connections are opened by the requests.
   *
   * @param origin The server: `http://host:port` or `https://host:port`.
   * @param options TLS material, the idle pool's size, a custom connect and clock (tests).
   */
  constructor(origin: string, options: Http1ClientOptions = {}) {
    const url = new URL(origin);
    this.#clock = options.clock ?? realClock;
    this.#bytes = new RequestBytes(`host: ${url.host}\r\n`);
    this.#maxIdle = options.maxIdle ?? 64;
    const https = url.protocol === "https:";
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = url.port ? Number(url.port) : https ? 443 : 80;
    const tls = options.tls ?? {};
    this.#connect = options.connect ?? (https
      ? async () => {
        const conn = await Deno.connectTls({
          hostname,
          port,
          alpnProtocols: ["http/1.1"],
          ...(tls.caCerts?.length ? { caCerts: tls.caCerts } : {}),
          ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
        });
        try {
          await conn.handshake();
        } catch (error) {
          conn.close();
          throw error;
        }
        return conn;
      }
      : async () => {
        const conn = await Deno.connect({ hostname, port });
        conn.setNoDelay(true);
        return conn;
      });
  }

  /**
   * Sends a request and waits for the answer's headers; read or cancel its
   * body then (the connection is busy until then).
   *
   * @param req The method, target, headers, body, signal and timeouts.
   * @returns The answer.
   * @throws The signal's reason, a {@link RequestTimeoutError}, a network error
   *   (e.g. `Deno.errors.ConnectionRefused`, an {@link Http1Error}), or Deno's
   *   `NotCapable` without `--allow-net`.
   */
  async request(req: Http1Request): Promise<Http1Response> {
    if (this.#closed) throw new Http1Error("The HTTP client is closed");
    let bytes: Uint8Array | undefined = this.#bytes.encode(req);
    try {
      const exchange = new Exchange(req);
      if (exchange.failure !== undefined) throw exchange.failure;
      for (let fresh = false;; fresh = true) {
        let link = fresh ? undefined : this.#take();
        const reused = link !== undefined;
        if (!link) {
          const opening = this.#connect();
          try {
            link = new Link(await exchange.race(opening));
          } catch (error) {
            exchange.finish();
            if (exchange.failure === undefined) throw error;
            opening.then((conn) => conn.close(), () => {}); // it may still come: close it then
            throw exchange.failure;
          }
        }
        exchange.link = link;
        if (exchange.failure !== undefined) link.close();
        const before = link.received;
        let written = 0; // bytes of this request that the connection took
        try {
          bytes ??= this.#bytes.encode(req); // its buffer went back to the spares: encoded again
          try {
            for (written = await link.conn.write(bytes); written < bytes.length;) {
              written += await link.conn.write(bytes.subarray(written));
            }
          } catch (error) {
            // The server may have answered before reading all of the request and closed (e.g.
            // kube-apiserver's 413 for a body over its limit): that answer is the outcome.
            if (exchange.failure !== undefined || written === 0) throw error;
            const early = await this.#earlyHead(link);
            if (early === undefined) throw error;
            exchange.headers();
            return new Http1Response(this, link, exchange, early, req, true);
          }
          this.#bytes.recycle(bytes); // written: the buffer may serve the next request
          bytes = undefined;
          // The head, from the bytes read so far or read on (no await when they hold it all).
          const scanned = takeHead(link, link.start);
          const head = typeof scanned === "number" ? await readHead(link, scanned) : scanned;
          exchange.headers();
          return new Http1Response(this, link, exchange, head, req, false);
        } catch (error) {
          link.close();
          if (exchange.failure !== undefined) {
            exchange.finish();
            throw exchange.failure;
          }
          // Stale: the server closed the idle connection (no byte of an answer came). Sent
          // again only if it provably did not reach the server (not a byte was taken) or if
          // sending it twice does no harm (an idempotent method).
          if (
            reused && link.received === before && (written === 0 || IDEMPOTENT.has(req.method))
          ) {
            // The older idle connections were likely dropped by the server as well.
            for (const old of this.#idle.splice(0)) old.close();
            continue;
          }
          exchange.finish();
          throw error;
        }
      }
    } finally {
      // Whatever the way out, no write is pending: the buffer may serve another request.
      if (bytes !== undefined) this.#bytes.recycle(bytes);
    }
  }

  /**
   * The head of an answer that came before the request was all written (the write failed),
   * or undefined if none can be read (the exchange's timeouts and signal still apply).
   */
  async #earlyHead(link: Link): Promise<Head | undefined> {
    try {
      const scanned = takeHead(link, link.start);
      return typeof scanned === "number" ? await readHead(link, scanned) : scanned;
    } catch {
      return undefined;
    }
  }

  /** @internal Takes back a connection whose answer was read to its end. */
  release(link: Link): void {
    if (this.#closed || this.#idle.length >= this.#maxIdle) return link.close();
    link.idleSince = this.#clock.now();
    this.#idle.push(link);
    link.idle(this.#pool);
    this.#sweep ??= this.#clock.timer(MAX_IDLE_MS, this.#expire, { unref: true });
  }

  /**
   * Closes the connections idle for {@link MAX_IDLE_MS} or more, and sets the next sweep for the
   * oldest one left. One timer per pool, not per connection: the pool is in the order the
   * connections went idle (the most recent is taken first), so the oldest is at its front.
   */
  readonly #expire = (): void => {
    this.#sweep = undefined;
    const now = this.#clock.now();
    let n = 0;
    while (n < this.#idle.length && now - this.#idle[n]!.idleSince >= MAX_IDLE_MS) n++;
    for (const link of this.#idle.splice(0, n)) {
      link.idling = false;
      link.close();
    }
    const oldest = this.#idle[0];
    if (oldest && !this.#closed) {
      const wait = oldest.idleSince + MAX_IDLE_MS - now;
      this.#sweep = this.#clock.timer(wait, this.#expire, { unref: true });
    }
  };

  /** Where idle links that got bytes or the end while idle are dropped from. */
  readonly #pool: LinkPool = {
    drop: (link) => {
      const at = this.#idle.indexOf(link);
      if (at >= 0) this.#idle.splice(at, 1);
    },
  };

  /** How many idle connections are kept now. */
  get idle(): number {
    return this.#idle.length;
  }

  /** Closes the idle connections; busy ones close when their answers end. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#sweep?.();
    this.#sweep = undefined;
    for (const link of this.#idle.splice(0)) {
      link.idling = false;
      link.close();
    }
  }

  /** Closes the client (as {@link Http1Client.close}). */
  [Symbol.dispose](): void {
    this.close();
  }

  #take(): Link | undefined {
    if (this.#idle.length === 0) return undefined;
    const now = this.#clock.now();
    for (let link = this.#idle.pop(); link; link = this.#idle.pop()) {
      link.take();
      if (now - link.idleSince < MAX_IDLE_MS) return link;
      link.close();
    }
    return undefined;
  }
}
