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
 * recently used is reused first); bodies by `Content-Length`, by
 * `Transfer-Encoding: chunked` (extensions and trailers are read and
 * dropped), or up to the close of the connection; no body for HEAD, 1xx, 204
 * and 304; `Connection: close`. No compression (no `Accept-Encoding` is
 * sent), no HTTP/2, no proxies (the transport keeps `fetch` for those).
 *
 * Per request, little is built: the request's bytes go into a spare buffer
 * (up to 8 of 16 KiB are kept, each reused once its request is written), the
 * bytes of the API client's few usual headers are kept, and of the answer's
 * head only the status and the framing headers are parsed at once (the other
 * headers are looked up in its text when asked for). A body that arrived with
 * its head is decoded in place (`bufferedText()`); a stream's pieces can be
 * read in place too (`readView()`: no copy per chunk of a watch).
 *
 * Guarantees:
 * - A connection goes back to the pool only after its answer was read to the
 *   end with nothing left over; a connection whose answer was not read fully,
 *   which failed, timed out or was aborted is closed.
 * - An idle connection keeps a read pending (the next request's first read
 *   takes it over: no read of its own): bytes or the end that come while it is
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
 *   per request serves both ({@link realTimerOf}: no closure), set for the
 *   earlier and again for the later when that one still runs. An abort
 *   (signal or timeout) closes the connection; the request or the body read
 *   rejects with the signal's reason or a {@link RequestTimeoutError}.
 *
 * @module
 */

import { realTimerOf, type TargetTimer, type TimerTarget } from "../aio/clock.ts";
import { ResponseTooLargeError } from "./errors.ts";
import {
  ascii,
  concat,
  CONTENT_LENGTH,
  decimals,
  decode,
  decoder,
  digits,
  encoder,
  type Head,
  headerOf,
  headersOf,
  headTooLong,
  type Http1Connection,
  Http1Error,
  Link,
  type LinkPool,
  MAX_HEAD,
  MAX_SPARES,
  SPARE_SIZE,
  takeHead,
  TOKEN_HIGH,
  TOKEN_LOW,
  writeHeaders,
} from "./_http1_wire.ts";

export { Http1Error } from "./_http1_wire.ts";
export type { Http1Connection } from "./_http1_wire.ts";

/** An idle connection older than this is closed instead of reused (servers drop idle ones). */
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
}

/**
 * One request of {@link Http1Client.request}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Http1Client } from "./http1.ts";
 * import { ResponseTooLargeError } from "./errors.ts";
 *
 * // A connection whose answer declares 1 GB: refused by maxBodySize, nothing allocated.
 * const answer = new TextEncoder().encode("HTTP/1.1 200 OK\r\ncontent-length: 1000000000\r\n\r\n");
 * const conn = {
 *   read: (p: Uint8Array) => (p.set(answer), Promise.resolve(answer.length)),
 *   write: (p: Uint8Array) => Promise.resolve(p.length),
 *   close: () => {},
 * };
 * using client = new Http1Client("http://k8s.local", { connect: () => Promise.resolve(conn) });
 * const request = { method: "GET", target: "/api", headers: {}, maxBodySize: 1024 };
 * await assert.rejects(client.request(request), ResponseTooLargeError);
 * ```
 */
export interface Http1Request {
  /** The method, e.g. `GET`. */
  method: string;
  /** The path and query, e.g. `/api/v1/pods?limit=5`. */
  target: string;
  /** Header names (lower case) and values; `host` and `content-length` are added. */
  headers: Record<string, string>;
  /** The body. */
  body?: string | Uint8Array | undefined;
  /** Aborts the request and its body: the connection is closed. */
  signal?: AbortSignal | undefined;
  /** Seconds for the whole exchange including the body; null/undefined: none. */
  timeout?: number | null | undefined;
  /** Seconds up to the answer's headers (connecting included); null/undefined: none. */
  connectTimeout?: number | null | undefined;
  /**
   * Bytes a body read whole (`text()`, `bytes()`) may have: a longer one (or one that declares
   * more) fails with a {@link ResponseTooLargeError} and the connection is closed; nothing is
   * allocated from a declared length. null/undefined: none (`read()` is never limited).
   */
  maxBodySize?: number | null | undefined;
}

/** The setting named by the errors of {@link Http1Request.maxBodySize}. */
const BODY_SETTING = "networking.maxBodySize";

/** The methods whose request may be sent again on a fresh connection (RFC 9110 §9.2.2). */
const IDEMPOTENT: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "PUT",
  "DELETE",
  "OPTIONS",
  "TRACE",
]);

/**
 * A timeout of a request ran out (a `DOMException` named `TimeoutError`, as
 * `AbortSignal.timeout` makes), with which one and its seconds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestTimeoutError } from "./http1.ts";
 * const error = new RequestTimeoutError("connect", 5);
 * assert.deepEqual([error.name, error.phase, error.seconds], ["TimeoutError", "connect", 5]);
 * ```
 */
export class RequestTimeoutError extends DOMException {
  /** `total`: the whole request's timeout; `connect`: the one up to the headers. */
  readonly phase: "total" | "connect";
  /** The timeout in seconds. */
  readonly seconds: number;

  /**
   * Creates the error.
   *
   * @param phase Which timeout ran out.
   * @param seconds Its seconds.
   */
  constructor(phase: "total" | "connect", seconds: number) {
    super(`The request timed out after ${seconds}s`, "TimeoutError");
    this.phase = phase;
    this.seconds = seconds;
  }
}

type Framing = "none" | "length" | "chunked" | "close";

/** The first buffer of a big body of a known length (see {@link Http1Response.bytes}). */
const FIRST_BODY_BUFFER = 16 * 1024 * 1024;

/**
 * An answer of {@link Http1Client.request}: the status and headers; the body
 * is read with `text()`, `bytes()`, `read()` (in pieces) or `readView()` (in
 * pieces left in the connection's buffer), or dropped with `cancel()`.
 */
export class Http1Response {
  /** The status code. */
  readonly status: number;
  #head: Head;
  #link: Link;
  #exchange: Exchange;
  #framing: Framing;
  #left: number; // bytes left of the body (length) or of the chunk (chunked)
  #chunk: "size" | "data" | "crlf" | "trailer" = "size";
  #ended = false;
  #keepAlive: boolean;
  #client: Http1Client;
  /** See {@link Http1Request.maxBodySize} (Infinity: none). */
  #maxBody: number;

  /** @internal */
  constructor(
    client: Http1Client,
    link: Link,
    exchange: Exchange,
    head: Head,
    req: Http1Request,
    early: boolean,
  ) {
    this.#client = client;
    this.#link = link;
    this.#exchange = exchange;
    this.status = head.status;
    this.#head = head;
    // An early answer (the request's body was not all sent): the connection cannot serve again.
    this.#keepAlive = head.keepAlive && !early;
    this.#maxBody = req.maxBodySize ?? Infinity;
    const method = req.method;
    const te = head.transferEncoding;
    const cl = head.contentLength;
    this.#left = 0;
    if (te !== undefined && cl !== undefined) {
      // RFC 9112 §6.3: a sign of response splitting or smuggling; refused, the connection closed.
      throw new Http1Error(
        "The answer has both Transfer-Encoding and Content-Length (RFC 9112 §6.3): refused",
      );
    }
    if (
      method === "HEAD" || head.status === 204 || head.status === 304 ||
      (head.status >= 100 && head.status < 200)
    ) this.#framing = "none";
    else if (te !== undefined) {
      this.#framing = te === "chunked" || /(^|,)\s*chunked\s*$/i.test(te) ? "chunked" : "close";
    } else if (cl !== undefined) {
      const length = digits(cl) ?? (/^\s*\d+\s*$/.test(cl) ? Number(cl) : NaN);
      if (!Number.isSafeInteger(length)) {
        throw new Http1Error(`The answer has a bad Content-Length: ${JSON.stringify(cl)}`);
      }
      this.#framing = "length";
      this.#left = length;
      if (length > this.#maxBody && head.status < 300) { // error bodies: read within bounds
        throw new ResponseTooLargeError("The answer's body", this.#maxBody, BODY_SETTING, length);
      }
    } else this.#framing = "close";
    if (this.#framing === "close" || head.status === 101) this.#keepAlive = false;
    if (this.#framing === "none" || (this.#framing === "length" && this.#left === 0)) {
      this.#end();
    }
  }

  /**
   * A header's value (names are case-insensitive; repeated headers are joined by ", ").
   *
   * @param name The header name.
   * @returns The value, or null.
   */
  header(name: string): string | null {
    return headerOf(this.#head, name.toLowerCase()) ?? null;
  }

  /**
   * All headers as a `Headers` object (built at every call: for the rare error paths).
   *
   * @returns The headers.
   */
  headers(): Headers {
    return new Headers([...headersOf(this.#head)]);
  }

  /**
   * The next piece of the body: all of it that arrived, up to what one read brought.
   *
   * @returns The bytes (a copy), or null at the end of the body.
   * @throws The signal's reason, a {@link RequestTimeoutError}, or a network error.
   */
  read(): Promise<Uint8Array | null> {
    return this.#read(false);
  }

  /**
   * The next piece of the body as {@link Http1Response.read} gives it, but as a view of the
   * connection's buffer where it can be (no copy; the body bytes of several buffered chunks are
   * moved together): valid only until the next read of this answer — decode or copy it at once.
   * The last piece of a body is a copy (the connection may serve another request then).
   *
   * @returns The bytes, or null at the end of the body.
   * @throws The same errors as {@link Http1Response.read}.
   */
  readView(): Promise<Uint8Array | null> {
    return this.#read(true);
  }

  async #read(view: boolean): Promise<Uint8Array | null> {
    const link = this.#link;
    try {
      if (this.#exchange.failure !== undefined) throw this.#exchange.failure;
      for (;;) {
        if (this.#ended) return null;
        const piece = view ? this.#viewPiece() : this.#copyPiece();
        if (piece !== undefined) return piece;
        if (this.#ended) return null;
        if (!(await link.fill())) {
          if (this.#framing !== "close") {
            throw new Http1Error("The connection closed before the end of the answer");
          }
          this.#end();
          return null;
        }
      }
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /**
   * The whole body.
   *
   * @returns The bytes.
   * @throws The same errors as {@link Http1Response.read}.
   */
  async bytes(): Promise<Uint8Array> {
    const link = this.#link;
    if (this.#framing === "length" && !this.#ended && this.#left > link.buf.length) {
      // A big body of a known size (a list): read straight into its own buffer, no pieces.
      // The buffer grows with the bytes that came (never allocated from the declared length
      // alone, which a broken server may make huge): up to 16 MiB at once, then doubling.
      try {
        if (this.#exchange.failure !== undefined) throw this.#exchange.failure;
        const size = this.#left;
        let out = new Uint8Array(Math.min(size, FIRST_BODY_BUFFER));
        let got = Math.min(this.#left, link.end - link.start);
        out.set(link.buf.subarray(link.start, link.start + got));
        link.start += got;
        while (got < size) {
          if (got === out.length) {
            const bigger = new Uint8Array(Math.min(size, out.length * 2));
            bigger.set(out);
            out = bigger;
          }
          const n = await link.conn.read(out.subarray(got));
          if (n === null) {
            throw new Http1Error("The connection closed before the end of the answer");
          }
          got += n;
          link.received += n;
        }
        this.#left = 0;
        this.#end();
        return out;
      } catch (error) {
        throw this.#fail(error);
      }
    }
    const pieces: Uint8Array[] = [];
    let total = 0;
    for (let piece = await this.read(); piece; piece = await this.read()) {
      total += piece.length;
      if (total > this.#maxBody) {
        throw this.#fail(
          new ResponseTooLargeError("The answer's body", this.#maxBody, BODY_SETTING),
        );
      }
      pieces.push(piece);
    }
    return pieces.length === 1 ? pieces[0]! : concat(pieces);
  }

  /**
   * The whole body as UTF-8 text.
   *
   * @returns The text.
   * @throws The same errors as {@link Http1Response.read}.
   */
  text(): Promise<string> {
    try {
      const text = this.bufferedText();
      if (text !== undefined) return Promise.resolve(text);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.bytes().then(decode);
  }

  /**
   * The whole body as UTF-8 text if all of it is buffered already (the usual small answer): it is
   * decoded in place and the body is read (no copy, no promise); else undefined and nothing is read
   * (use {@link Http1Response.text}).
   *
   * @param max The most bytes to decode so: a longer body is left unread (undefined).
   * @returns The text, or undefined.
   */
  bufferedText(max: number = Infinity): string | undefined {
    const link = this.#link;
    if (
      this.#framing !== "length" || this.#ended || this.#exchange.failure !== undefined ||
      link.end - link.start < this.#left || this.#left > max
    ) return undefined;
    const text = decoder.decode(link.buf.subarray(link.start, link.start + this.#left));
    link.start += this.#left;
    this.#left = 0;
    this.#end();
    return text;
  }

  /** Drops the rest of the body: the connection is closed unless the body was read to its end. */
  cancel(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#exchange.finish();
    this.#link.close();
  }

  /** The body bytes that need no reading, as a copy; undefined if none. */
  #copyPiece(): Uint8Array | undefined {
    const link = this.#link;
    let first: Uint8Array | undefined;
    let pieces: Uint8Array[] | undefined;
    for (let n = this.#step(); n > 0; n = this.#step()) {
      const piece = link.buf.slice(link.start - n, link.start);
      if (first === undefined) first = piece;
      else (pieces ??= [first]).push(piece);
    }
    return pieces ? concat(pieces) : first;
  }

  /**
   * The body bytes that need no reading, in place: those of later chunks are moved down over
   * the chunks' size lines, next to the first ones (bytes before `link.start` are read already),
   * and one view of them is given. A copy if the body ended (its connection is free for others).
   */
  #viewPiece(): Uint8Array | undefined {
    const link = this.#link;
    const buf = link.buf; // no fill() in this loop: the buffer stays
    let from = -1;
    let to = -1;
    for (let n = this.#step(); n > 0; n = this.#step()) {
      const at = link.start - n;
      if (from < 0) from = to = at;
      else buf.copyWithin(to, at, link.start);
      to += n;
    }
    if (from < 0) return undefined;
    return this.#ended ? buf.slice(from, to) : buf.subarray(from, to);
  }

  /**
   * Body bytes that need no reading: consumes a piece and gives its length (its bytes are at
   * `link.buf[link.start - length, link.start)` until the next step); 0 for none (the end, or
   * more must be read).
   */
  #step(): number {
    const link = this.#link;
    switch (this.#framing) {
      case "none":
        return 0;
      case "length": {
        // Ended: bytes past the body (a server that sent more than it said) are not body.
        if (this.#left === 0 || link.start === link.end) return 0;
        const n = link.skip(this.#left);
        this.#left -= n;
        if (this.#left === 0) this.#end();
        return n;
      }
      case "close":
        return link.skip(Infinity);
      case "chunked":
        for (;;) {
          if (this.#chunk === "data") {
            if (link.start === link.end) return 0;
            const n = link.skip(this.#left);
            this.#left -= n;
            if (this.#left === 0) this.#chunk = "crlf";
            return n;
          }
          // A size line of hex digits only (the usual case) is read from the bytes.
          const line = this.#chunk === "size" ? link.hexLine() : link.line();
          if (line === undefined) return 0;
          if (this.#chunk === "crlf") {
            if (line !== "") throw new Http1Error("A chunk of the answer is longer than its size");
            this.#chunk = "size";
          } else if (this.#chunk === "size") {
            let size: number;
            if (typeof line === "number") size = line;
            else {
              const hex = line.split(";", 1)[0]!.trim();
              size = /^[0-9a-f]+$/i.test(hex) ? parseInt(hex, 16) : NaN;
            }
            if (!Number.isSafeInteger(size)) {
              throw new Http1Error(`The answer has a bad chunk size: ${JSON.stringify(line)}`);
            }
            if (size === 0) this.#chunk = "trailer";
            else {
              this.#left = size;
              this.#chunk = "data";
            }
          } else if (line === "") { // the empty line after the trailers
            this.#end();
            return 0;
          }
        }
    }
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#exchange.finish();
    const link = this.#link;
    if (this.#keepAlive && link.start === link.end && !link.closed) this.#client.release(link);
    else link.close();
  }

  #fail(error: unknown): unknown {
    const reason = this.#exchange.failure ?? error;
    this.#ended = true;
    this.#exchange.finish();
    this.#link.close();
    return reason;
  }
}

/**
 * The one abort listener of a signal for all the exchanges that it may abort (a listener added
 * and removed per request costs more than a set's add and delete: the API client's requests
 * usually share a few long-lived signals). Kept while the signal lives (a weak map's value).
 */
class SignalListener {
  /** The exchanges in flight with this signal: a list through their own links (no allocation). */
  head: Exchange | undefined = undefined;
  readonly #signal: AbortSignal;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener("abort", this, ONCE);
  }

  /** The listener of a signal that has not aborted (made at its first exchange). */
  static of(signal: AbortSignal): SignalListener {
    let listener = listeners.get(signal);
    if (listener === undefined) listeners.set(signal, listener = new SignalListener(signal));
    return listener;
  }

  add(exchange: Exchange): void {
    exchange.next = this.head;
    if (this.head) this.head.prev = exchange;
    this.head = exchange;
  }

  remove(exchange: Exchange): void {
    if (exchange.prev) exchange.prev.next = exchange.next;
    else if (this.head === exchange) this.head = exchange.next;
    if (exchange.next) exchange.next.prev = exchange.prev;
    exchange.prev = exchange.next = undefined;
  }

  /** The signal aborted: every exchange with it fails with its reason, in the order they began. */
  handleEvent(): void {
    const reason = this.#signal.reason;
    const all: Exchange[] = [];
    for (let exchange = this.head; exchange; exchange = exchange.next) all.push(exchange);
    for (let i = all.length - 1; i >= 0; i--) all[i]!.fail(reason);
  }
}

/** The error of a connection that ended before the answer's head did. */
function noHead(link: Link): Http1Error {
  return new Http1Error(
    link.end > link.start
      ? "The connection closed in the middle of the answer's headers"
      : "The connection closed before an answer",
  );
}

const ONCE = { once: true } as const;
/** The abort listener of each signal of a request (see {@link SignalListener}). */
const listeners = new WeakMap<AbortSignal, SignalListener>();

/**
 * The timeouts and the abort of one request, and why it failed. One timer serves both
 * timeouts (it is the exchange's target: no closure): it is set for the earlier of the two and,
 * when it fires with the other one still to come (e.g. the connect timeout after the headers
 * arrived), set again for the rest of that one. With the usual single timeout (the total), one
 * timer is made and cancelled per request.
 */
class Exchange implements TimerTarget {
  failure: unknown = undefined;
  link: Link | undefined;
  /** The neighbours in the list of its signal's {@link SignalListener}. */
  prev: Exchange | undefined = undefined;
  next: Exchange | undefined = undefined;
  /** The signal while its {@link SignalListener} holds the exchange. */
  #signal: AbortSignal | undefined;
  #timer: TargetTimer | undefined;
  /** The timeouts in seconds (null: none, or that one ended: the headers arrived). */
  #totalSeconds: number | null = null;
  #connectSeconds: number | null = null;
  /** When the exchange started (`performance.now()`), known from the first timer. */
  #start = 0;
  #reject: ((reason: unknown) => void) | undefined;
  #done = false;

  constructor(req: Http1Request) {
    const signal = req.signal;
    if (signal) {
      if (signal.aborted) {
        this.failure = signal.reason;
        return;
      }
      this.#signal = signal;
      SignalListener.of(signal).add(this);
    }
    const total = req.timeout;
    const connect = req.connectTimeout;
    if (total != null && total > 0) this.#totalSeconds = total;
    if (connect != null && connect > 0) this.#connectSeconds = connect;
    const first = this.#totalSeconds === null
      ? this.#connectSeconds
      : this.#connectSeconds === null
      ? this.#totalSeconds
      : Math.min(this.#totalSeconds, this.#connectSeconds);
    if (first !== null) {
      const ms = first * 1000;
      this.#timer = realTimerOf(ms, this);
      this.#start = this.#timer.due - ms;
    }
  }

  /**
   * The timer is due: the timeout that ran out fails the exchange (the earlier one if both did;
   * the total one if they are due at once), else the timer is set for the one still to come.
   */
  onTimer(): void {
    this.#timer = undefined;
    if (this.#done || this.failure !== undefined) return;
    const now = performance.now();
    const total = this.#totalSeconds;
    const connect = this.#connectSeconds;
    const totalDue = total === null ? Infinity : this.#start + total * 1000;
    const connectDue = connect === null ? Infinity : this.#start + connect * 1000;
    if (connectDue < totalDue && connectDue <= now) {
      this.fail(new RequestTimeoutError("connect", connect!));
    } else if (totalDue <= now) this.fail(new RequestTimeoutError("total", total!));
    else if (connectDue <= now) this.fail(new RequestTimeoutError("connect", connect!));
    else this.#timer = realTimerOf(Math.min(totalDue, connectDue) - now, this);
  }

  /** Aborts: remembers why, closes the connection, stops the wait for a connection. */
  fail(reason: unknown): void {
    if (this.#done || this.failure !== undefined) return;
    this.failure = reason;
    this.link?.close();
    this.#reject?.(reason);
  }

  /** Waits for `promise`, or rejects at once when the exchange fails. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      promise.then(resolve, reject).finally(() => (this.#reject = undefined));
    });
  }

  /** The headers arrived: the connect timeout no longer runs (its timer, if set, re-arms for the total). */
  headers(): void {
    this.#connectSeconds = null;
    if (this.#totalSeconds === null) this.#cancelTimer();
  }

  /** The exchange ended (however): no timer runs, the signal no longer aborts it. */
  finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#cancelTimer();
    if (this.#signal) listeners.get(this.#signal)?.remove(this);
    this.#signal = undefined;
  }

  #cancelTimer(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }
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
  /** `host: …` and its CR LF. */
  #hostLine: string;
  /**
   * The first 8 frozen headers objects (the API client's few usual ones, found by identity)
   * and the bytes of the host line and of each ({@link Http1Client.#blockOf}).
   */
  #blocked: Record<string, string>[] = [];
  #blocks: Uint8Array[] = [];
  /**
   * Buffers for the requests' bytes, reused once a request is written (a new typed array per
   * request costs more than filling it).
   */
  #spares: ArrayBuffer[] = [];
  /** How many spare buffers were made. */
  #made = 0;
  #closed = false;

  /**
   * Creates the client; connections are opened by the requests.
   *
   * @param origin The server: `http://host:port` or `https://host:port`.
   * @param options TLS material, the idle pool's size, a custom connect (tests).
   */
  constructor(origin: string, options: Http1ClientOptions = {}) {
    const url = new URL(origin);
    this.#hostLine = `host: ${url.host}\r\n`;
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
    let bytes: Uint8Array | undefined = this.#encode(req);
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
          bytes ??= this.#encode(req); // its buffer went back to the spares: encoded again
          try {
            // The first write (usually the only one) takes the bytes as they are: no view.
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
          this.#recycle(bytes); // written: the buffer may serve the next request
          bytes = undefined;
          // The head, read here (no async call of #head() per request: a promise and a frame).
          let head = takeHead(link, link.start);
          while (typeof head === "number") {
            if (link.end - link.start > MAX_HEAD) throw headTooLong();
            const offset = link.start;
            if (!(await link.fill())) throw noHead(link);
            head = takeHead(link, head - (offset - link.start)); // fill() may move the bytes to the front
          }
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
      if (bytes !== undefined) this.#recycle(bytes);
    }
  }

  /** Reads the answer's head (of an early answer: the request's own loop does it inline). */
  async #head(link: Link): Promise<Head> {
    let head = takeHead(link, link.start);
    while (typeof head === "number") {
      if (link.end - link.start > MAX_HEAD) throw headTooLong();
      const offset = link.start;
      if (!(await link.fill())) throw noHead(link);
      head = takeHead(link, head - (offset - link.start)); // fill() may move the bytes to the front
    }
    return head;
  }

  /**
   * The head of an answer that came before the request was all written (the write failed),
   * or undefined if none can be read (the exchange's timeouts and signal still apply).
   */
  async #earlyHead(link: Link): Promise<Head | undefined> {
    try {
      return await this.#head(link);
    } catch {
      return undefined;
    }
  }

  /** @internal Takes back a connection whose answer was read to its end. */
  release(link: Link): void {
    if (this.#closed || this.#idle.length >= this.#maxIdle) return link.close();
    link.idleSince = performance.now();
    this.#idle.push(link);
    link.idle(this.#pool);
  }

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
    if (this.#idle.length === 0) return undefined; // no clock read for nothing
    const now = performance.now();
    for (let link = this.#idle.pop(); link; link = this.#idle.pop()) {
      link.take();
      if (now - link.idleSince < MAX_IDLE_MS) return link;
      link.close();
    }
    return undefined;
  }

  /**
   * The request's bytes: written straight into one buffer of the right size when the head
   * and the body are ASCII with no character a header may not have (the usual case: no
   * string is built, no character is checked twice), else by {@link Http1Client.#encodeSlowly}.
   */
  #encode(req: Http1Request): Uint8Array {
    const { method, target, headers, body } = req;
    // The host and the headers: their bytes are kept for a frozen headers object (the API
    // client sends the same few ones), else written one by one.
    let block: Uint8Array | undefined;
    if (Object.isFrozen(headers)) {
      const known = this.#blocked.indexOf(headers);
      block = known >= 0 ? this.#blocks[known] : this.#blockOf(headers);
    }
    let size = method.length + target.length + 12; // "M T HTTP/1.1\r\n"
    if (block !== undefined) size += block.length;
    else {
      size += this.#hostLine.length;
      for (const name in headers) size += name.length + headers[name]!.length + 4;
    }
    let length = -1; // of the body: -1 for none and no content-length
    if (typeof body === "string" || body !== undefined) length = body.length;
    else if (method === "POST" || method === "PUT" || method === "PATCH") length = 0;
    if (length >= 0) size += CONTENT_LENGTH.length + decimals(length) + 2 + length;
    size += 2; // the empty line
    let spare: ArrayBuffer | undefined;
    if (size <= SPARE_SIZE) {
      spare = this.#spares.pop();
      if (!spare && this.#made < MAX_SPARES) {
        this.#made++;
        spare = new ArrayBuffer(SPARE_SIZE);
      }
    }
    const out = spare ? new Uint8Array(spare, 0, size) : new Uint8Array(size);
    let at = ascii(method, out, 0, TOKEN_LOW, TOKEN_HIGH);
    at = ascii(" ", out, at, 0, 0);
    at = ascii(target, out, at, TOKEN_LOW, TOKEN_HIGH);
    at = ascii(" HTTP/1.1\r\n", out, at, 0, 0);
    if (block !== undefined) {
      if (at >= 0) {
        out.set(block, at);
        at += block.length;
      }
    } else at = writeHeaders(this.#hostLine, headers, out, at);
    if (length >= 0) {
      at = ascii(CONTENT_LENGTH, out, at, 0, 0);
      at = ascii(String(length), out, at, 0, 0);
      at = ascii("\r\n", out, at, 0, 0);
    }
    at = ascii("\r\n", out, at, 0, 0);
    if (at < 0 || at + Math.max(length, 0) !== size) {
      if (spare) this.#spares.push(spare);
      return this.#encodeSlowly(req);
    }
    if (typeof body === "string") {
      if (!length) return out;
      const { read, written } = encoder.encodeInto(body, out.subarray(at));
      if (read === length && written === length) return out;
      if (spare) this.#spares.push(spare);
      return this.#encodeSlowly(req);
    }
    if (body !== undefined) out.set(body, at);
    return out;
  }

  /**
   * Gives a written request's buffer back to the spares, if it is one of their size (the
   * write resolved: nothing reads it any more).
   */
  #recycle(bytes: Uint8Array): void {
    const buffer = bytes.buffer;
    if (
      buffer instanceof ArrayBuffer && buffer.byteLength === SPARE_SIZE &&
      this.#spares.length < MAX_SPARES
    ) this.#spares.push(buffer);
  }

  /** The bytes of the host line and of frozen headers (kept), or undefined if they are not ASCII or not valid. */
  #blockOf(headers: Record<string, string>): Uint8Array | undefined {
    let size = this.#hostLine.length;
    for (const name in headers) size += name.length + headers[name]!.length + 4;
    const block = new Uint8Array(size);
    if (writeHeaders(this.#hostLine, headers, block, 0) !== size) return undefined;
    if (this.#blocked.length < 8) {
      this.#blocked.push(headers);
      this.#blocks.push(block);
    }
    return block;
  }

  /** The request's bytes, whatever the characters: checks the headers, encodes the body. */
  #encodeSlowly(req: Http1Request): Uint8Array {
    let head = `${req.method} ${req.target} HTTP/1.1\r\n${this.#hostLine}`;
    for (const name in req.headers) {
      const value = req.headers[name]!;
      if (/[\r\n]/.test(value) || /[\r\n:\s]/.test(name)) {
        throw new TypeError(`The header ${JSON.stringify(name)} has a bad name or value`);
      }
      head += `${name}: ${value}\r\n`;
    }
    if (/[\s]/.test(req.target) || /[\s]/.test(req.method)) {
      throw new TypeError(`The request target ${JSON.stringify(req.target)} has spaces`);
    }
    const body = typeof req.body === "string" ? encoder.encode(req.body) : req.body;
    if (body !== undefined) head += `${CONTENT_LENGTH}${body.length}\r\n`;
    else if (req.method === "POST" || req.method === "PUT" || req.method === "PATCH") {
      head += `${CONTENT_LENGTH}0\r\n`;
    }
    head += "\r\n";
    if (!body?.length) return encoder.encode(head);
    const out = new Uint8Array(head.length * 3 + body.length);
    const { written } = encoder.encodeInto(head, out);
    out.set(body, written);
    return out.subarray(0, written + body.length);
  }
}
