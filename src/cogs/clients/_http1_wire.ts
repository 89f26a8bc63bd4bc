/**
 * The wire of the lean HTTP/1.1 client (`http1.ts`): a connection with its
 * read buffer ({@link Link}), the request head written straight into bytes,
 * and the answer's head found and parsed in the buffer — only the status and
 * the framing headers at once, the other headers looked up in the head's text
 * when asked for.
 *
 * @module
 */

/** The part of a `Deno.Conn` the client uses (tests pass fakes). */
export interface Http1Connection {
  /** Reads into `p`; resolves to the count, or null at the end. */
  read(p: Uint8Array): Promise<number | null>;
  /** Writes (some of) `p`; resolves to the count written. */
  write(p: Uint8Array): Promise<number>;
  /** Closes the connection (pending reads reject). */
  close(): void;
  /** Lets a pending read keep the process alive again (`Deno.Conn`'s). */
  ref?(): void;
  /** Lets the process end while a read is pending (`Deno.Conn`'s): for idle connections. */
  unref?(): void;
}

/** Where an idle {@link Link} goes when bytes or the end come while it is idle. */
export interface LinkPool {
  /** Drops the link from the idle ones (it is closed already). */
  drop(link: Link): void;
}
/**
 * The connection broke the protocol or ended too early (a network error, as
 * `fetch`'s `TypeError`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Http1Error } from "./http1.ts";
 * assert.deepEqual(new Http1Error("bad chunk size") instanceof TypeError, true);
 * ```
 */
export class Http1Error extends TypeError {
  /**
   * Creates the error.
   *
   * @param message What was wrong.
   * @param options The usual error options.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "Http1Error";
  }
}
export const encoder = new TextEncoder();
export const decoder = new TextDecoder();
export const MAX_HEAD = 256 * 1024;
const MAX_LINE = 64 * 1024;

/** The error of a head over {@link MAX_HEAD}. */
export function headTooLong(): Http1Error {
  return new Http1Error(
    `The answer's headers are over ${MAX_HEAD} bytes: the server is not a Kubernetes API server, or is broken`,
  );
}

/** A connection with its read buffer. */
export class Link {
  readonly conn: Http1Connection;
  buf = new Uint8Array(16 * 1024);
  start = 0;
  end = 0;
  /** Bytes read since the connection was opened. */
  received = 0;
  idleSince = 0;
  closed = false;
  /** In the idle pool (see {@link Link.idle}). */
  idling = false;
  /**
   * The read started when the connection went idle (its bytes go to `buf` from 0): the next
   * {@link Link.fill} takes it over, so watching an idle connection costs no read of its own.
   */
  #pending: Promise<number | null> | undefined = undefined;
  #pool: LinkPool | undefined = undefined;
  /** Bytes or the end came while idle: not an answer to anything — the link is dropped. */
  readonly #spoiled = (): void => {
    if (!this.idling) return; // taken meanwhile: the request's fill() gets the read's result
    this.idling = false;
    this.close();
    this.#pool?.drop(this);
  };

  constructor(conn: Http1Connection) {
    this.conn = conn;
  }

  /**
   * The connection goes idle (its answer was read to the end, nothing left over): a read is
   * left pending on it, so that a stray answer (e.g. a 408 before the server closes) or the
   * server's close, arriving while idle, drops it at once instead of being taken for the
   * answer to the next request. The read does not keep the process alive (`unref`).
   *
   * @param pool Told when the link is dropped.
   */
  idle(pool: LinkPool): void {
    this.idling = true;
    this.#pool = pool;
    // After the caller's synchronous work: the body's last bytes in `buf` are copied by then.
    queueMicrotask(this.#watch);
  }

  readonly #watch = (): void => {
    if (!this.idling || this.closed || this.#pending !== undefined) return; // taken already
    this.start = this.end = 0;
    const reading = this.conn.read(this.buf);
    this.#pending = reading;
    reading.then(this.#spoiled, this.#spoiled);
    this.conn.unref?.();
  };

  /** The connection is taken for a request (from the idle pool). */
  take(): void {
    this.idling = false;
    this.conn.ref?.();
  }

  /** Reads more bytes; false at the end of the connection. */
  async fill(): Promise<boolean> {
    const pending = this.#pending;
    if (pending !== undefined) {
      // Taken from the idle pool: the read started then (into `buf` from 0) brings the bytes.
      this.#pending = undefined;
      const n = await pending;
      if (n === null) return false;
      this.end = n;
      this.received += n;
      return true;
    }
    if (this.start === this.end) this.start = this.end = 0;
    else if (this.end === this.buf.length) {
      const size = this.end - this.start;
      if (this.start === 0) {
        const bigger = new Uint8Array(this.buf.length * 2);
        bigger.set(this.buf);
        this.buf = bigger;
      } else {
        this.buf.copyWithin(0, this.start, this.end);
        this.start = 0;
        this.end = size;
      }
    }
    // Into the whole buffer when it is empty (the usual case: no view).
    const n = await this.conn.read(this.end === 0 ? this.buf : this.buf.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    this.received += n;
    return true;
  }

  /** A line (without CR LF) if one is buffered, else undefined. */
  line(): string | undefined {
    const buf = this.buf;
    let at = this.start;
    while (at < this.end && buf[at] !== 10) at++; // the bytes read so far only (stale ones follow)
    if (at === this.end) {
      if (this.end - this.start > MAX_LINE) {
        throw new Http1Error("A line of the answer is too long");
      }
      return undefined;
    }
    let stop = at;
    if (stop > this.start && buf[stop - 1] === 13) stop--;
    const text = stop === this.start ? "" : decoder.decode(buf.subarray(this.start, stop));
    this.start = at + 1;
    return text;
  }

  /**
   * A line of 1–12 hex digits (a chunk's size, CR LF or LF after it) as its number, else as
   * {@link Link.line} gives it (text or undefined).
   */
  hexLine(): number | string | undefined {
    const buf = this.buf;
    let n = 0;
    for (let at = this.start; at < this.end && at - this.start <= 12; at++) {
      const c = buf[at]!;
      const digit = c >= 48 && c <= 57
        ? c - 48
        : c >= 97 && c <= 102
        ? c - 87
        : c >= 65 && c <= 70
        ? c - 55
        : -1;
      if (digit >= 0) {
        n = n * 16 + digit;
        continue;
      }
      const digits = at - this.start;
      if (digits === 0) break;
      if (c === 10 || (c === 13 && at + 1 < this.end && buf[at + 1] === 10)) {
        this.start = at + (c === 13 ? 2 : 1);
        return n;
      }
      break;
    }
    return this.line();
  }

  /** Consumes up to `max` buffered bytes: their count (they are at `buf[start - count, start)`). */
  skip(max: number): number {
    const n = Math.min(max, this.end - this.start);
    this.start += n;
    return n;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch { /* closed already */ }
  }
}
/** An answer's status line and headers. */
export interface Head {
  status: number;
  /** The head as it came (decoded), from the status line to the empty line. */
  text: string;
  /** Where the header lines start in `text`. */
  from: number;
  keepAlive: boolean;
  transferEncoding: string | undefined;
  contentLength: string | undefined;
}
export const CONTENT_LENGTH = "content-length: ";
/** The size of the spare buffers of requests (bigger requests get their own). */
export const SPARE_SIZE = 16 * 1024;
/** At most this many spare buffers are kept. */
export const MAX_SPARES = 8;
// Characters (by code: bits of 0–31 and of 32–63) that a part of the head may not have; the
// fast encoding leaves those to the slow one, which throws the error.
const VALUE_LOW = (1 << 10) | (1 << 13); // LF, CR
export const TOKEN_LOW = VALUE_LOW | (1 << 9) | (1 << 11) | (1 << 12); // and TAB, VT, FF
export const TOKEN_HIGH = 1 << 0; // space
const NAME_LOW = TOKEN_LOW;
const NAME_HIGH = TOKEN_HIGH | (1 << (58 - 32)); // and ":"

/** Writes the host line and the headers (see {@link ascii}). */
export function writeHeaders(
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
export function decimals(n: number): number {
  let count = 1;
  for (; n >= 10; n = Math.floor(n / 10)) count++;
  return count;
}

/**
 * Writes an ASCII string into `out` at `at`: the position after it, or -1 if `at` is -1 or a
 * character is not ASCII or is one of those whose bits `low` (codes 0–31) and `high` (32–63) set.
 */
export function ascii(
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
 * Takes the answer's head from the bytes read so far (skipping 1xx answers but 101): the head,
 * or where to go on looking for its end once more bytes are read. The head is decoded once;
 * only the framing headers (`Content-Length`, `Transfer-Encoding`, `Connection`) are taken out
 * now, the others are looked up in the text when asked for ({@link headerOf}). Not async: the
 * request's own loop reads (no promise per answer for this).
 */
export function takeHead(link: Link, scanned: number): Head | number {
  for (;;) {
    // Only the bytes read so far: the buffer holds stale bytes past `end`.
    const buf = link.buf;
    const end = link.end;
    let stop = -1;
    for (let i = scanned; i < end; i++) {
      if (buf[i] !== 10) continue;
      const next = buf[i + 1];
      if (i + 1 < end && next === 10) stop = i + 2;
      else if (i + 2 < end && next === 13 && buf[i + 2] === 10) stop = i + 3;
      if (stop >= 0) break;
    }
    if (stop < 0) return Math.max(link.start, link.end - 2);
    const head = parseHead(link, stop);
    if (head !== undefined) return head;
    scanned = link.start;
  }
}

/** Parses the head that ends at `stop` and consumes it; undefined for a 1xx answer (but 101). */
function parseHead(link: Link, stop: number): Head | undefined {
  if (stop - link.start > MAX_HEAD) throw headTooLong();
  const text = decoder.decode(link.buf.subarray(link.start, stop));
  link.start = stop;
  const first = text.indexOf("\n"); // there is one: the head ends with an empty line
  const code = statusOf(text, first);
  if (code < 0) {
    throw new Http1Error(
      `The answer is not HTTP/1.x: ${JSON.stringify(text.slice(0, first).slice(0, 80))}`,
    );
  }
  if (code >= 100 && code < 200 && code !== 101) return undefined;
  const head: Head = {
    status: code,
    text,
    from: first + 1,
    keepAlive: false,
    transferEncoding: undefined,
    contentLength: undefined,
  };
  let connection: string | undefined;
  for (let at = first + 1; at < text.length;) {
    let eol = text.indexOf("\n", at);
    if (eol < 0) eol = text.length;
    if (eol === at || (eol === at + 1 && text.charCodeAt(at) === 13)) break; // the empty line
    // RFC 9112 §5: a name, then at once a colon; no obs-fold (a line that starts with white
    // space continues the one before: refused, as hyper refuses it). A few reads per line.
    const colon = text.indexOf(":", at);
    const c = text.charCodeAt(at);
    if (colon <= at || colon > eol || c === 32 || c === 9 || isSpace(text.charCodeAt(colon - 1))) {
      throw new Http1Error(`The answer has a bad header line: ${badLine(text, at, eol, colon)}`);
    }
    const name = framingName(text, at, colon);
    if (name !== undefined) {
      const value = valueOf(text, colon + 1, eol);
      if (name === "content-length") head.contentLength = joined(head.contentLength, value);
      else if (name === "transfer-encoding") {
        head.transferEncoding = joined(head.transferEncoding, value);
      } else connection = joined(connection, value);
    }
    at = eol + 1;
  }
  if (connection === undefined) head.keepAlive = text.charCodeAt(7) === 49; // HTTP/1.1
  else {
    connection = connection.toLowerCase();
    head.keepAlive = text.charCodeAt(7) === 49
      ? !/(^|,)\s*close\s*(,|$)/.test(connection)
      : /(^|,)\s*keep-alive\s*(,|$)/.test(connection);
  }
  return head;
}

/** What is wrong with a refused header line, and the line (cut to 80 characters). */
function badLine(text: string, at: number, eol: number, colon: number): string {
  const c = text.charCodeAt(at);
  const why = c === 32 || c === 9
    ? "a continuation line (obs-fold)"
    : colon <= at || colon > eol
    ? colon === at ? "no name before the colon" : "no colon"
    : "white space before the colon";
  return `${why} (RFC 9112 §5): ${JSON.stringify(text.slice(at, Math.min(eol, at + 80)))}`;
}

/** The framing headers by the length of their names. */
const FRAMING: Record<number, string> = {
  10: "connection",
  14: "content-length",
  17: "transfer-encoding",
};

/**
 * The status code of a status line `HTTP/1.x NNN[ reason]` (the line is `text` up to `eol`,
 * perhaps with a CR at its end), or -1 if it is not one.
 */
function statusOf(text: string, eol: number): number {
  if (!text.startsWith("HTTP/1.", 0)) return -1;
  const minor = text.charCodeAt(7);
  if ((minor !== 48 && minor !== 49) || text.charCodeAt(8) !== 32) return -1;
  let code = 0;
  for (let i = 9; i < 12; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (!(digit >= 0 && digit <= 9)) return -1;
    code = code * 10 + digit;
  }
  // After the code: a space, or the end of the line (a CR allowed before it).
  if (eol === 12 || (eol === 13 && text.charCodeAt(12) === 13)) return code;
  return text.charCodeAt(12) === 32 ? code : -1;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** The name of the header `text[from, to)` if it is a framing header (lower case), else undefined. */
function framingName(text: string, from: number, to: number): string | undefined {
  while (from < to && isSpace(text.charCodeAt(from))) from++;
  while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
  const name = FRAMING[to - from];
  if (name !== undefined) return nameIs(text, from, to, name) ? name : undefined;
  if (to > from && (text.charCodeAt(from) > 127 || text.charCodeAt(to - 1) > 127)) {
    // Non-ASCII white space around the name (rare): as trim() does.
    const trimmed = text.slice(from, to).trim().toLowerCase();
    return FRAMING[trimmed.length] === trimmed ? trimmed : undefined;
  }
  return undefined;
}

/**
 * Whether the header name `text[from, to)` is `lower` (a lower-case name), as
 * `text.slice(from, to).trim().toLowerCase() === lower` (which it falls back to for names
 * that are not ASCII), without a copy.
 */
function nameIs(text: string, from: number, to: number, lower: string): boolean {
  while (from < to && isSpace(text.charCodeAt(from))) from++;
  while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
  if (to - from !== lower.length) return slowNameIs(text, from, to, lower);
  for (let i = 0; i < lower.length; i++) {
    let c = text.charCodeAt(from + i);
    if (c > 127) return slowNameIs(text, from, to, lower);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

function slowNameIs(text: string, from: number, to: number, lower: string): boolean {
  for (let i = from; i < to; i++) {
    if (text.charCodeAt(i) > 127) return text.slice(from, to).trim().toLowerCase() === lower;
  }
  return false; // ASCII of another length
}

/** The header value `text[from, to)` trimmed (as `String.prototype.trim`). */
function valueOf(text: string, from: number, to: number): string {
  while (from < to && isSpace(text.charCodeAt(from))) from++;
  while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
  const value = text.slice(from, to);
  if (!value) return value;
  // Non-ASCII white space at the edges (rare): as trim() does.
  return text.charCodeAt(from) > 127 || text.charCodeAt(to - 1) > 127 ? value.trim() : value;
}

/** The number that `text` spells in up to 15 decimal digits (no sign, no space), else undefined. */
export function digits(text: string): number | undefined {
  if (text.length === 0 || text.length > 15) return undefined;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (!(digit >= 0 && digit <= 9)) return undefined;
    n = n * 10 + digit;
  }
  return n;
}

function joined(had: string | undefined, value: string): string {
  return had === undefined ? value : `${had}, ${value}`;
}

/**
 * A header's value in a head's text (`name` in lower case; repeated headers joined by ", "),
 * or undefined.
 */
export function headerOf(head: Head, name: string): string | undefined {
  const text = head.text;
  let value: string | undefined;
  for (let at = head.from; at < text.length;) {
    let eol = text.indexOf("\n", at);
    if (eol < 0) eol = text.length;
    const colon = text.indexOf(":", at);
    if (colon > at && colon < eol && nameIs(text, at, colon, name)) {
      value = joined(value, valueOf(text, colon + 1, eol));
    }
    at = eol + 1;
  }
  return value;
}

/** All headers of a head: lower-case names, repeated headers joined by ", ". */
export function headersOf(head: Head): Map<string, string> {
  const text = head.text;
  const headers = new Map<string, string>();
  for (let at = head.from; at < text.length;) {
    let eol = text.indexOf("\n", at);
    if (eol < 0) eol = text.length;
    const colon = text.indexOf(":", at);
    if (colon > at && colon < eol) {
      const name = text.slice(at, colon).trim().toLowerCase();
      headers.set(name, joined(headers.get(name), valueOf(text, colon + 1, eol)));
    }
    at = eol + 1;
  }
  return headers;
}

export function decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

export function concat(pieces: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const piece of pieces) size += piece.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
