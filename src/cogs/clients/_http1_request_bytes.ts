/**
 * The request's bytes of the lean HTTP/1.1 client (`http1.ts`): the request line, the headers
 * and the body written straight into one buffer, with the characters a head may not have
 * left to a slower path that throws the error.
 *
 * @module
 */
import type { Http1Request } from "./_http1_exchange.ts";
import { encoder } from "./_http1_link.ts";

const CONTENT_LENGTH = "content-length: ";
/** The size of the spare buffers of requests (bigger requests get their own). */
const SPARE_SIZE = 16 * 1024;
/** At most this many spare buffers are kept. */
const MAX_SPARES = 8;
// Characters (by code: bits of 0–31 and of 32–63) that a part of the head may not have; the
// fast encoding leaves those to the slow one, which throws the error.
const VALUE_LOW = (1 << 10) | (1 << 13); // LF, CR
const TOKEN_LOW = VALUE_LOW | (1 << 9) | (1 << 11) | (1 << 12); // and TAB, VT, FF
const TOKEN_HIGH = 1 << 0; // space
const NAME_LOW = TOKEN_LOW;
const NAME_HIGH = TOKEN_HIGH | (1 << (58 - 32)); // and ":"

/** Writes the host line and the headers (see {@link ascii}). */
function writeHeaders(
  hostLine: string,
  headers: Record<string, string>,
  out: Uint8Array,
  at: number,
): number {
  at = ascii(hostLine, out, at, 0, 0);
  for (const name in headers) {
    at = ascii(name, out, at, NAME_LOW, NAME_HIGH);
    at = ascii(": ", out, at, 0, 0);
    at = ascii(headers[name]!, out, at, VALUE_LOW, 0);
    at = ascii("\r\n", out, at, 0, 0);
  }
  return at;
}

/** The count of decimal digits of a non-negative integer. */
function decimals(n: number): number {
  let count = 1;
  for (; n >= 10; n = Math.floor(n / 10)) count++;
  return count;
}

/**
 * Writes an ASCII string into `out` at `at`: the position after it, or -1 if `at` is -1 or a
 * character is not ASCII or is one of those whose bits `low` (codes 0–31) and `high` (32–63) set.
 */
function ascii(
  text: string,
  out: Uint8Array,
  at: number,
  low: number,
  high: number,
): number {
  if (at < 0) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 127 || (c < 32 ? (low >>> c) & 1 : c < 64 ? (high >>> (c - 32)) & 1 : 0)) return -1;
    out[at++] = c;
  }
  return at;
}

/**
 * The bytes of requests to one host: the head and the body in one buffer, reused once a request
 * is written, with the bytes of the host line and of the API client's few usual headers kept.
 */
export class RequestBytes {
  /** `host: …` and its CR LF. */
  #hostLine: string;
  /**
   * The first 8 frozen headers objects (the API client's few usual ones, found by identity)
   * and the bytes of the host line and of each ({@link RequestBytes.#blockOf}).
   */
  #blocked: Record<string, string>[] = [];
  #blocks: Uint8Array[] = [];
  /** Buffers for the requests' bytes, reused once a request is written. */
  #spares: ArrayBuffer[] = [];
  /** How many spare buffers were made. */
  #made = 0;

  /** @param hostLine `host: …` and its CR LF. */
  constructor(hostLine: string) {
    this.#hostLine = hostLine;
  }

  /**
   * The request's bytes: written straight into one buffer of the right size when the head
   * and the body are ASCII with no character a header may not have (the usual case), else by {@link RequestBytes.#encodeSlowly}.
   */
  encode(req: Http1Request): Uint8Array {
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
  recycle(bytes: Uint8Array): void {
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
