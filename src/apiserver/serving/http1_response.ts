/**
 * Answers of our HTTP/1.1 listener (`http_listener.ts`): a `Response` written
 * with Content-Length in one write when its body is complete at once, else
 * chunked with the chunks already queued coalesced into one write (a watch in a
 * burst), its stream cancelled when the client goes away; and the request in
 * flight ({@linkcode Exchange}) whose signal is made only when asked for, and
 * the `Request` ({@linkcode ServedRequest}) that carries it.
 *
 * @module
 */

import {
  encodeHead,
  encoder,
  errorAnswer,
  frameOverhead,
  type Head,
  httpDate,
  putChunk,
  REASONS,
} from "./http1_framing.ts";

/** A streamed answer's chunks already queued are written together, up to this many bytes. */
const COALESCE_MAX = 256 * 1024;

/** A body that is complete at once up to this size is sent with Content-Length. */
const STATIC_BODY_MAX = 1024 * 1024;

/**
 * Whether a response's body is a stream (it may stay open) rather than bytes or a string given
 * whole: read from Deno's body slot when it behaves as checked below, else undefined (unknown).
 * And the string a body was given as, while unread (every JSON answer): encoded straight into
 * the buffer written, after the head — not by `bytes()` into bytes of its own, then copied.
 */
const [isStreamBody, staticText]: [
  (response: Response) => boolean | undefined,
  (response: Response) => string | undefined,
] = (() => {
  const slot = Object.getOwnPropertySymbols(Response.prototype).find((s) =>
    s.description === "body"
  );
  type Inner = { streamOrStatic?: unknown } | null | undefined;
  const inner = (response: Response): Inner =>
    (response as unknown as Record<symbol, Inner>)[slot!];
  const probe = (response: Response): boolean | undefined => {
    const body = inner(response);
    if (!body || !("streamOrStatic" in body)) return undefined;
    return body.streamOrStatic instanceof ReadableStream;
  };
  const text = (response: Response): string | undefined => {
    const body = inner(response)?.streamOrStatic as { body?: unknown; consumed?: unknown };
    return body && body.consumed === false && typeof body.body === "string" ? body.body : undefined;
  };
  try {
    if (
      slot && probe(new Response("x")) === false &&
      probe(new Response(new ReadableStream())) === true
    ) {
      const given = new Response("x");
      const read = new Response("y");
      void read.text();
      // The text only where it reads as checked: given and unread, else unknown.
      if (
        text(given) === "x" && text(read) === undefined &&
        text(new Response(new Uint8Array(1))) === undefined
      ) return [probe, text];
      return [probe, () => undefined];
    }
  } catch { /* another Deno: no hint */ }
  return [() => undefined, () => undefined];
})();

const LAST_CHUNK = encoder.encode("0\r\n\r\n");

/**
 * A request in flight: its signal is made only when asked for (most handlers never do), already
 * aborted if the client went away or the server stopped before.
 */
export class Exchange {
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  /** The request's signal. */
  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the request's signal (once). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** Resolves with the read's result if it settles within a few microtask turns, else undefined. */
async function soon<T>(promise: Promise<T>): Promise<T | undefined> {
  let settled = false;
  let failed = false;
  let value: T | undefined;
  let error: unknown;
  promise.then((v) => {
    settled = true;
    value = v;
  }, (e) => {
    settled = failed = true;
    error = e;
  });
  // Deno's body of a string or bytes settles its reads within two turns.
  for (let turn = 0; turn < 4 && !settled; turn++) await undefined;
  if (failed) throw error;
  return value;
}

/** Writes all of `bytes` to the connection. */
export async function writeAll(conn: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  let written = await conn.write(bytes);
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

/**
 * Writes a response: with Content-Length in one write when its body is complete at once,
 * else chunked, a write per chunk. Returns whether the connection may be kept; `isClosed`
 * says whether the connection was closed meanwhile.
 */
export async function writeResponse(
  conn: Deno.TcpConn,
  isClosed: () => boolean,
  response: Response,
  head: Head,
  keepAlive: boolean,
  exchange: Exchange,
): Promise<boolean> {
  const status = response.status;
  let text = `HTTP/1.1 ${status} ${response.statusText || REASONS[status] || ""}\r\n`;
  let hasDate = false;
  let givenLength: string | undefined;
  // forEach, not for…of: the same pairs, without an iterator's objects (a quarter of the cost).
  response.headers.forEach((value, name) => {
    switch (name) {
      case "connection":
      case "keep-alive":
      case "transfer-encoding":
      case "upgrade":
        return;
      case "content-length":
        givenLength = value;
        return;
      case "date":
        hasDate = true;
    }
    text += `${name}: ${value}\r\n`;
  });
  if (!hasDate) text += `date: ${httpDate()}\r\n`;
  if (!keepAlive) text += "connection: close\r\n";
  else if (head.http10) text += "connection: keep-alive\r\n";

  const noBody = head.method === "HEAD" || status === 204 || status === 304 || status < 200;
  if (isStreamBody(response) === false) {
    // Bytes or a string given whole: one write with the head.
    const given = noBody ? undefined : staticText(response);
    if (given !== undefined) {
      // ASCII (a JSON answer's usual text): as many bytes as characters, encoded in place.
      const out = encodeHead(text + `content-length: ${given.length}\r\n\r\n`, given.length);
      const { read, written } = encoder.encodeInto(given, out.bytes.subarray(out.length));
      if (read === given.length && written === given.length) {
        const sent = await conn.write(out.bytes);
        if (sent < out.bytes.length) await writeAll(conn, out.bytes.subarray(sent));
        return keepAlive;
      }
    }
    const bytes = await response.bytes();
    if (noBody) {
      if (status !== 204 && status !== 304 && status >= 200) {
        text += `content-length: ${bytes.length}\r\n`;
      }
      await writeAll(conn, encodeHead(text + "\r\n", 0).bytes);
      return keepAlive;
    }
    text += `content-length: ${bytes.length}\r\n\r\n`;
    const out = encodeHead(text, bytes.length);
    out.bytes.set(bytes, out.length);
    // Written here, not by writeAll: one async frame less on the hot path.
    const written = await conn.write(out.bytes);
    if (written < out.bytes.length) await writeAll(conn, out.bytes.subarray(written));
    return keepAlive;
  }

  const body = response.body;
  if (!body) {
    if (status !== 204 && status !== 304 && status >= 200) {
      text += `content-length: ${head.method === "HEAD" && givenLength ? givenLength : "0"}\r\n`;
    }
    await writeAll(conn, encodeHead(text + "\r\n", 0).bytes);
    return keepAlive;
  }

  // Read what is there at once: a body that ends meanwhile gets a Content-Length.
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  let complete = false;
  try {
    while (total <= STATIC_BODY_MAX) {
      const read = reader.read();
      const result = await soon(read);
      if (result === undefined) {
        pending = read;
        break;
      }
      if (result.done) {
        complete = true;
        break;
      }
      const chunk = result.value;
      if (!(chunk instanceof Uint8Array)) throw new TypeError("a body chunk is not bytes");
      chunks.push(chunk);
      total += chunk.length;
    }
  } catch (error) {
    // The body failed before anything was sent: a 500 instead.
    await reader.cancel(error).catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    await writeAll(conn, encoder.encode(errorAnswer(500, `Internal Server Error: ${message}`)));
    return false;
  }

  if (complete || noBody) {
    if (!complete) {
      pending?.catch(() => {});
      await reader.cancel().catch(() => {});
    }
    if (noBody) {
      if (status !== 204 && status !== 304 && status >= 200) {
        const length = complete ? String(total) : givenLength;
        if (length !== undefined) text += `content-length: ${length}\r\n`;
      }
      await writeAll(conn, encodeHead(text + "\r\n", 0).bytes);
      return keepAlive;
    }
    text += `content-length: ${total}\r\n\r\n`;
    const { bytes, length } = encodeHead(text, total);
    let offset = length;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    await writeAll(conn, bytes);
    return keepAlive;
  }

  // Streaming: chunked (HTTP/1.0: raw, ended by closing).
  const chunked = !head.http10;
  if (chunked) text += "transfer-encoding: chunked\r\n";
  else keepAlive = false;
  if (!chunked && !text.includes("connection: close")) text += "connection: close\r\n";
  const signal = exchange.signal();
  const cancel = () => void reader.cancel(signal.reason).catch(() => {});
  if (signal.aborted) cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  try {
    let frameSize = 0;
    for (const chunk of chunks) frameSize += chunk.length + (chunked ? frameOverhead(chunk) : 0);
    const { bytes, length } = encodeHead(text + "\r\n", frameSize);
    let offset = length;
    for (const chunk of chunks) offset = putChunk(bytes, offset, chunk, chunked);
    await writeAll(conn, bytes);
    let ended = false;
    while (!ended) {
      const result = await (pending ?? reader.read());
      pending = undefined;
      if (result.done) break;
      // What the stream already holds goes out with it, in one write: a watch in a burst of
      // changes queues events while the previous write is under way.
      const batch = [result.value];
      let size = result.value.length;
      while (size < COALESCE_MAX) {
        const next = reader.read();
        const more = await soon(next);
        if (more === undefined) {
          pending = next;
          break;
        }
        if (more.done) {
          ended = true;
          break;
        }
        batch.push(more.value);
        size += more.value.length;
      }
      let frameSize = 0;
      for (const chunk of batch) {
        if (!(chunk instanceof Uint8Array)) throw new TypeError("a body chunk is not bytes");
        if (chunk.length > 0) frameSize += chunk.length + (chunked ? frameOverhead(chunk) : 0);
      }
      if (frameSize === 0) continue;
      const frame = new Uint8Array(frameSize);
      let at = 0;
      for (const chunk of batch) if (chunk.length > 0) at = putChunk(frame, at, chunk, chunked);
      const written = await conn.write(frame);
      if (written < frame.length) await writeAll(conn, frame.subarray(written));
    }
    if (chunked && !isClosed()) await writeAll(conn, LAST_CHUNK);
  } catch {
    // The client went away, or the body failed midway: nothing more can be said on it.
    pending?.catch(() => {});
    await reader.cancel().catch(() => {});
    return false;
  } finally {
    signal.removeEventListener("abort", cancel);
  }
  return keepAlive && !signal.aborted;
}

/** A `Request` whose `signal` is its {@linkcode Exchange}'s, made on first use. */
export class ServedRequest extends Request {
  #exchange: Exchange;

  constructor(exchange: Exchange, url: string, init: RequestInit) {
    super(url, init);
    this.#exchange = exchange;
  }

  override get signal(): AbortSignal {
    return this.#exchange.signal();
  }
}
