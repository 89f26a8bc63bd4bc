/**
 * A connection of the lean HTTP/1.1 client (`http1.ts`) with its read buffer ({@link Link}):
 * reading more bytes, lines and chunk sizes from it, and its time in the idle pool, where a read
 * is left pending so that bytes or an end arriving while idle drop it.
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
   * {@link Link.fill} takes it over.
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
