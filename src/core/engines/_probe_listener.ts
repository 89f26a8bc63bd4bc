/**
 * The probes' HTTP server (`--liveness`): HTTP/1.1 over `Deno.listen`, one request per connection
 * (every answer says `Connection: close`, as the kubelet's probes ask anyway), answered by a
 * function of the request's path.
 *
 * Why not `Deno.serve`: its HTTP server, and the `Request`, `Response` and `Headers` it makes for
 * each request, are ≈2–3 MiB of an idle process's RSS (the pages of their code in Deno's binary and
 * their state), for requests that are a line and a few headers. What it would do for us is done
 * here, small:
 * - a request's head is read up to 16 KiB (more: 431) within 10 s (slower: the connection is
 *   closed); a line that is not `METHOD /path HTTP/1.x` is a 400; a body is not read;
 * - at most 64 connections at once (more are closed at once: a probe retries);
 * - `HEAD` is answered without the body; any other method as `GET` (as before); the query is not
 *   part of the path;
 * - the signal stops the listening and closes the connections still being read; answers being
 *   written are finished.
 *
 * @module
 */

/** One answer: what a `Response` would carry. */
export interface ProbeAnswer {
  /** The HTTP status. */
  status: number;
  /** The headers (lower-case names). */
  headers: Record<string, string>;
  /** The body. */
  body: string;
}

/** The most bytes a request's head may have. */
const MAX_HEAD = 16 * 1024;
/** The most connections served at once. */
const MAX_CONNECTIONS = 64;
/** How long a request's head may take to arrive (ms). */
const HEAD_TIMEOUT_MS = 10_000;

/** A request's head, byte for byte (its bytes are ASCII; any other is kept, not refused). */
const LATIN1 = new TextDecoder("latin1");

const REASONS: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  404: "Not Found",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** What {@link listenProbes} needs. */
export interface ProbeListenerOptions {
  /** The address to listen on. */
  hostname: string;
  /** The port (0: the system picks one). */
  port: number;
  /** Stops the listening. */
  signal: AbortSignal;
  /** Called once listening, with the address (its port, when 0 was asked). */
  onListen: (addr: Deno.NetAddr) => void;
  /** Answers one request, by its path. */
  answer: (path: string) => Promise<ProbeAnswer>;
  /** How long a request's head may take (default 10 s). */
  headTimeoutMs?: number;
}

/**
 * Listens and answers until the signal aborts.
 *
 * @param options The address, the signal, the answering function.
 * @returns When the listening and the last answer are done.
 * @throws {Deno.errors.AddrInUse} When the port is taken (at once, before it returns).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listenProbes } from "./_probe_listener.ts";
 * const stop = new AbortController();
 * let port = 0;
 * const finished = listenProbes({
 *   hostname: "127.0.0.1", port: 0, signal: stop.signal, onListen: (a) => (port = a.port),
 *   answer: async (path) => ({ status: 200, headers: {}, body: path }),
 * });
 * const answer = await fetch(`http://127.0.0.1:${port}/healthz`);
 * assert.equal(await answer.text(), "/healthz");
 * stop.abort();
 * await finished;
 * ```
 */
export function listenProbes(options: ProbeListenerOptions): Promise<void> {
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  options.onListen(listener.addr);
  const reading = new Set<Deno.Conn>();
  const serving = new Set<Promise<void>>();
  const close = () => {
    try {
      listener.close();
    } catch { /* closed already */ }
    for (const conn of reading) closeQuietly(conn);
  };
  if (options.signal.aborted) close();
  else options.signal.addEventListener("abort", close, { once: true });
  return (async () => {
    try {
      for await (const conn of listener) {
        if (serving.size >= MAX_CONNECTIONS) {
          closeQuietly(conn);
          continue;
        }
        const served: Promise<void> = serveOne(conn, options, reading)
          .catch(() => {/* the peer went away: nothing to answer */})
          .finally(() => {
            closeQuietly(conn);
            serving.delete(served);
          });
        serving.add(served);
      }
    } catch (e) {
      // The listener closed by the signal ends the loop with an error on some platforms.
      if (!options.signal.aborted) throw e;
    } finally {
      options.signal.removeEventListener("abort", close);
      await Promise.allSettled([...serving]);
    }
  })();
}

/** Reads one request's head, answers it, and leaves the connection to be closed. */
async function serveOne(
  conn: Deno.Conn,
  options: ProbeListenerOptions,
  reading: Set<Deno.Conn>,
): Promise<void> {
  reading.add(conn);
  const timer = setTimeout(() => closeQuietly(conn), options.headTimeoutMs ?? HEAD_TIMEOUT_MS);
  let head: string | number;
  try {
    head = await readHead(conn);
  } finally {
    clearTimeout(timer);
    reading.delete(conn);
  }
  if (typeof head === "number") {
    if (head) await respond(conn, head, { "content-type": "text/plain" }, `${REASONS[head]}.\n`);
    return;
  }
  const line = /^([A-Z]+) (\/\S*) HTTP\/1\.[01]$/.exec(head.split("\r\n", 1)[0]!);
  if (!line) {
    await respond(conn, 400, { "content-type": "text/plain" }, "Bad Request.\n");
    return;
  }
  const [, method, target] = line as unknown as [string, string, string];
  let answer: ProbeAnswer;
  try {
    answer = await options.answer(target.replace(/[?#].*$/, ""));
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    await respond(conn, 500, { "content-type": "text/plain" }, `${message}\n`);
    return;
  }
  const { status, headers, body } = answer;
  await respond(conn, status, headers, method === "HEAD" ? "" : body, body);
}

/**
 * Reads up to the end of a request's head.
 *
 * @returns The head (without its blank line), or a status to answer with (431), or 0 when the
 *   connection ended or timed out first (nothing to answer).
 */
async function readHead(conn: Deno.Conn): Promise<string | number> {
  const buffer = new Uint8Array(MAX_HEAD + 1);
  let length = 0;
  while (length <= MAX_HEAD) {
    let n: number | null;
    try {
      n = await conn.read(buffer.subarray(length));
    } catch {
      return 0;
    }
    if (n === null) return 0;
    const from = Math.max(0, length - 3);
    length += n;
    const text = LATIN1.decode(buffer.subarray(from, length));
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) return LATIN1.decode(buffer.subarray(0, from + end));
  }
  return 431;
}

/** Writes an answer: its status line, headers (with the length and `Connection: close`), body. */
async function respond(
  conn: Deno.Conn,
  status: number,
  headers: Record<string, string>,
  body: string,
  counted: string = body,
): Promise<void> {
  const bytes = new TextEncoder().encode(body);
  const length = counted === body ? bytes.length : new TextEncoder().encode(counted).length;
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (name !== "content-length" && name !== "connection") head += `${name}: ${value}\r\n`;
  }
  head += `content-length: ${length}\r\nconnection: close\r\n\r\n`;
  const start = new TextEncoder().encode(head);
  const all = new Uint8Array(start.length + bytes.length);
  all.set(start);
  all.set(bytes, start.length);
  for (let sent = 0; sent < all.length;) sent += await conn.write(all.subarray(sent));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed already */ }
}
