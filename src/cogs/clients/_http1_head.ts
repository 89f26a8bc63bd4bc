/**
 * The answer's head of the lean HTTP/1.1 client (`http1.ts`), found and parsed in the
 * connection's buffer: only the status and the framing headers at once, the other headers looked
 * up in the head's text when asked for.
 *
 * @module
 */

import { decoder, headTooLong, Http1Error, type Link, MAX_HEAD } from "./_http1_link.ts";

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

/**
 * Takes the answer's head from the bytes read so far (skipping 1xx answers but 101): the head,
 * or where to go on looking for its end once more bytes are read. The head is decoded once;
 * only the framing headers (`Content-Length`, `Transfer-Encoding`, `Connection`) are taken out
 * now, the others are looked up in the text when asked for ({@link headerOf}). Not async: the
 * caller reads more bytes and calls again.
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
 * that are not ASCII).
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
