/**
 * HTTP/1.1 framing for our listener (`http_listener.ts`), as pure functions:
 * request heads parsed with RFC 9112's refusals (431 for a head over Go's 1 MiB,
 * 400 for a bad line, 501 for an unknown transfer coding), and answer heads,
 * chunks and short error answers encoded, with the cached Date header.
 *
 * @module
 */

/** Go's DefaultMaxHeaderBytes, which kube-apiserver keeps: a larger head is 431. */
export const MAX_HEAD_BYTES = 1024 * 1024;

/** A chunk-size line (with extensions) longer than this is refused. */
export const MAX_CHUNK_LINE = 4096;

export const CR = 13;

export const LF = 10;

export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Control characters other than HTAB, and CR or LF not in a CRLF pair. */
// deno-lint-ignore no-control-regex -- control characters are what it looks for
export const BAD_HEAD_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;

/** What a Host header may hold (reg-name, IP literal, port): nothing that changes the path. */
export const HOST = /^[A-Za-z0-9.\-_~!$&'()*+,;=:%\[\]]*$/;

export const HEX = /^[0-9A-Fa-f]{1,15}$/;

export const utf8 = new TextDecoder();

/** Like {@linkcode BAD_HEAD_CHARS}, or any non-ASCII character (then decoded again as Latin-1). */
// deno-lint-ignore no-control-regex -- control characters are what it looks for
export const BAD_OR_NON_ASCII = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\uffff]|\r(?!\n)|(?<!\r)\n/;

/** Decodes bytes as Latin-1 (one character per byte), as HTTP field values are read. */
export function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return text;
}

export const encoder = new TextEncoder();

export const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

/** A field value without the spaces and tabs around it. */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) {
    end--;
  }
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** Thrown to answer a malformed request with `status` and close the connection. */
export class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The cached Date header value, renewed at most once a second. */
let dateValue = "";

let dateAt = 0;

export function httpDate(): string {
  const now = Date.now();
  if (now - dateAt >= 1000) {
    dateAt = now - (now % 1000);
    dateValue = new Date(now).toUTCString();
  }
  return dateValue;
}

/** A parsed request head. */
export interface Head {
  method: string;
  target: string;
  http10: boolean;
  /** The header lines as they came (names and values checked by `Request`). */
  headers: [string, string][];
  host: string | undefined;
  contentLength: number;
  chunked: boolean;
  close: boolean;
  keepAlive: boolean;
  expectContinue: boolean;
}

/** The size line and CRLFs around a chunk. */
export function frameOverhead(chunk: Uint8Array): number {
  return chunk.length.toString(16).length + 4;
}

/** Puts a chunk (framed if `chunked`) at `offset`; returns the offset after it. */
export function putChunk(
  out: Uint8Array,
  offset: number,
  chunk: Uint8Array,
  chunked: boolean,
): number {
  if (!chunked) {
    out.set(chunk, offset);
    return offset + chunk.length;
  }
  const size = chunk.length.toString(16);
  for (let i = 0; i < size.length; i++) out[offset++] = size.charCodeAt(i);
  out[offset++] = CR;
  out[offset++] = LF;
  out.set(chunk, offset);
  offset += chunk.length;
  out[offset++] = CR;
  out[offset++] = LF;
  return offset;
}

/** Encodes a head (Latin-1) into a new buffer with `extra` bytes of room after it. */
export function encodeHead(text: string, extra: number): { bytes: Uint8Array; length: number } {
  const bytes = new Uint8Array(text.length + extra);
  const { read, written } = encoder.encodeInto(text, bytes);
  if (read === text.length && written === text.length) return { bytes, length: written };
  // Not ASCII: header values are bytes, one per character.
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return { bytes, length: text.length };
}

/** A bare answer to a request that cannot be served, closing the connection. */
export function errorAnswer(status: number, message: string): string {
  const body = `${message}\n`;
  return `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\ncontent-type: text/plain\r\n` +
    `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
}

/** The index of the CRLFCRLF ending a head in `buf[from, end)`, or -1. */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  const view = buf.subarray(0, end);
  let i = from;
  while (true) {
    i = view.indexOf(CR, i);
    if (i < 0 || i + 3 >= end) return -1;
    if (view[i + 1] === LF && view[i + 2] === CR && view[i + 3] === LF) return i;
    i++;
  }
}

/** Concatenates `parts` (`size` bytes in all). */
export function concat(parts: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  if (parts.length === 1) return parts[0] as Uint8Array<ArrayBuffer>;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Parses and checks a request head in `buf[start, end)` (without the final CRLFCRLF). */
export function parseHead(buf: Uint8Array, start: number, end: number): Head {
  let text = utf8.decode(buf.subarray(start, end));
  if (BAD_OR_NON_ASCII.test(text)) {
    text = latin1(buf.subarray(start, end));
    if (BAD_HEAD_CHARS.test(text)) throw new Refusal(400, "Bad Request: control characters");
  }
  const lines = text.split("\r\n");
  const requestLine = lines[0]!;
  const sp1 = requestLine.indexOf(" ");
  const sp2 = sp1 < 0 ? -1 : requestLine.indexOf(" ", sp1 + 1);
  if (sp1 <= 0 || sp2 < 0) throw new Refusal(400, "Bad Request: the request line");
  const method = requestLine.slice(0, sp1);
  const target = requestLine.slice(sp1 + 1, sp2);
  const version = requestLine.slice(sp2 + 1);
  if (!TOKEN.test(method) || target === "" || !/^HTTP\/1\.\d$/.test(version)) {
    throw new Refusal(400, "Bad Request: the request line");
  }
  const head: Head = {
    method,
    target,
    http10: version === "HTTP/1.0",
    headers: [],
    host: undefined,
    contentLength: 0,
    chunked: false,
    close: false,
    keepAlive: false,
    expectContinue: false,
  };
  const headers = head.headers;
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) throw new Refusal(400, "Bad Request: an obs-fold line");
    if (colon <= 0) throw new Refusal(400, "Bad Request: a header line without a colon");
    const name = line.slice(0, colon);
    const last = name.charCodeAt(name.length - 1);
    if (last === 32 || last === 9) throw new Refusal(400, "Bad Request: whitespace before a colon");
    if (!TOKEN.test(name)) throw new Refusal(400, "Bad Request: a field name");
    const value = trimOws(line.slice(colon + 1));
    headers.push([name, value]);
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === "host") {
          if (head.host !== undefined) throw new Refusal(400, "Bad Request: more than one Host");
          const host = value.trim();
          if (!HOST.test(host)) throw new Refusal(400, "Bad Request: the Host header");
          head.host = host;
        }
        break;
      case 6:
        if (name.toLowerCase() === "expect" && value.trim().toLowerCase() === "100-continue") {
          head.expectContinue = true;
        }
        break;
      case 10:
        if (name.toLowerCase() === "connection") {
          for (const token of value.split(",")) {
            const t = token.trim().toLowerCase();
            if (t === "close") head.close = true;
            else if (t === "keep-alive") head.keepAlive = true;
          }
        }
        break;
      case 14:
        if (name.toLowerCase() === "content-length") {
          for (const part of value.split(",")) {
            const v = part.trim();
            if (!/^\d+$/.test(v)) throw new Refusal(400, "Bad Request: Content-Length");
            if (contentLength !== undefined && v.replace(/^0+(?=\d)/, "") !== contentLength) {
              throw new Refusal(400, "Bad Request: differing Content-Length values");
            }
            contentLength = v.replace(/^0+(?=\d)/, "");
          }
        }
        break;
      case 17:
        if (name.toLowerCase() === "transfer-encoding") {
          transferEncoding = transferEncoding === undefined
            ? value
            : `${transferEncoding},${value}`;
        }
        break;
    }
  }
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) {
      throw new Refusal(400, "Bad Request: Transfer-Encoding with Content-Length");
    }
    if (head.http10) throw new Refusal(400, "Bad Request: Transfer-Encoding in HTTP/1.0");
    const codings = transferEncoding.split(",").map((c) => c.trim().toLowerCase());
    for (const coding of codings) {
      if (coding !== "chunked") throw new Refusal(501, "Not Implemented: a transfer coding");
    }
    if (codings.length !== 1) throw new Refusal(400, "Bad Request: chunked more than once");
    head.chunked = true;
  } else if (contentLength !== undefined) {
    // Digits only; a length past 2^53 is still larger than any limit.
    head.contentLength = contentLength.length > 15
      ? Number.MAX_SAFE_INTEGER
      : Number(contentLength);
  }
  return head;
}
