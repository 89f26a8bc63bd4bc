/**
 * One connection of our HTTP/1.1 listener (`http_listener.ts`): a read pump
 * and the request loop — heads and bodies read with the limits and deadlines
 * of the module doc there, each request handed to the handler as a `Request`
 * whose signal aborts when the client goes away, and the answers written in
 * order (`http1_response.ts`).
 *
 * @module
 */

import {
  concat,
  CR,
  encoder,
  errorAnswer,
  findHeadEnd,
  type Head,
  HEX,
  latin1,
  LF,
  MAX_CHUNK_LINE,
  MAX_HEAD_BYTES,
  parseHead,
  Refusal,
} from "./http1_framing.ts";
import { Exchange, ServedRequest, writeAll, writeResponse } from "./http1_response.ts";

/** A web-standard request handler. */
export type HttpHandler = (request: Request) => Response | Promise<Response>;

/** Read ahead at most this much unconsumed input (pipelined requests) before pausing. */
const READ_AHEAD = MAX_HEAD_BYTES + 64 * 1024;

/** The read buffer's starting size; it grows while a head is longer, and shrinks back. */
const BUFFER_SIZE = 16 * 1024;

/** How long, and how much, a refused body is still read and dropped before closing. */
const LINGER_MS = 1000;

const LINGER_BYTES = 8 * 1024 * 1024;

const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");

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

/** Settings shared by every connection of one server. */
export interface Settings {
  handler: HttpHandler;
  fallbackHost: string;
  maxBodyBytes: number;
  bodyTooLarge: () => Response;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  requestTimeoutMs: number;
  stopping: boolean;
}

/** One accepted connection: a read pump and the request loop. */
export class Connection {
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
    keepAlive = await writeResponse(
      this.#conn,
      () => this.#isClosed,
      response,
      head,
      keepAlive,
      exchange,
    );
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
  #write(bytes: Uint8Array): Promise<void> {
    return writeAll(this.#conn, bytes);
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
      await writeResponse(this.#conn, () => this.#isClosed, response, fake, false, new Exchange());
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
}
