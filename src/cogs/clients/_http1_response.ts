/**
 * The answer of an `Http1Client.request`: its status, its headers and its body, read by
 * the framing its head declares (a length, chunks, or up to the close). A connection goes back
 * to its pool only once its answer was read to the end with nothing left over.
 *
 * @module
 */

import { ResponseTooLargeError } from "./connection_errors.ts";
import type { Exchange, Http1Request } from "./_http1_exchange.ts";
import { decoder, Http1Error, type Link } from "./_http1_link.ts";
import { concat, decode, digits, type Head, headerOf, headersOf } from "./_http1_head.ts";

/** Where a connection goes when its answer was read to the end (the client's idle pool). */
export interface AnswerPool {
  /** Takes back a connection whose answer was read to its end. */
  release(link: Link): void;
}

/** The setting named by the errors of {@link Http1Request.maxBodySize}. */
const BODY_SETTING = "networking.maxBodySize";

type Framing = "none" | "length" | "chunked" | "close";

/** The first buffer of a big body of a known length (see {@link Http1Response.bytes}). */
const FIRST_BODY_BUFFER = 16 * 1024 * 1024;

/**
 * An answer of `Http1Client.request`: the status and headers; the body
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
  #pool: AnswerPool;
  /** See {@link Http1Request.maxBodySize} (Infinity: none). */
  #maxBody: number;

  /** @internal */
  constructor(
    pool: AnswerPool,
    link: Link,
    exchange: Exchange,
    head: Head,
    req: Http1Request,
    early: boolean,
  ) {
    this.#pool = pool;
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
   * decoded in place and the body is read; else undefined and nothing is read
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
    if (this.#keepAlive && link.start === link.end && !link.closed) this.#pool.release(link);
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
