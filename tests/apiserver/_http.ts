/**
 * A tiny raw-HTTP client for API server tests: one call, status and parsed body.
 *
 * @module
 */

/** A parsed answer. */
export interface Answer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  headers: Headers;
}

/**
 * Sends one request to the API server.
 *
 * @param base The server URL.
 * @param method The HTTP method.
 * @param path The path with query.
 * @param body A body to send as JSON (or as-is if a string).
 * @param contentType The content type (default application/json).
 * @returns Status, parsed body and headers.
 */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = contentType;
  }
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: keep the text.
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * Reads watch events from a streaming response until `count` events or the timeout.
 *
 * @param res The watch response.
 * @param count How many events to wait for.
 * @param timeoutMs The bound.
 * @returns The events read.
 */
export async function readEvents(
  res: Response,
  count: number,
  timeoutMs = 5000,
  // deno-lint-ignore no-explicit-any
): Promise<any[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: unknown[] = [];
  let buffer = "";
  const timer = setTimeout(() => reader.cancel().catch(() => {}), timeoutMs);
  try {
    while (events.length < count) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += chunk.value;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim()) events.push(JSON.parse(line));
      }
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
  return events;
}

/**
 * Reads from a raw connection until the server closes it or `ms` pass (then the test's
 * assertions see `closed: false`); the connection is closed either way.
 */
export async function readUntilClosed(
  conn: Deno.Conn,
  ms = 10_000,
): Promise<{ text: string; closed: boolean }> {
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(64 * 1024);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.close();
  }, ms);
  let closed = false;
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) {
        closed = true;
        break;
      }
      chunks.push(buf.slice(0, n));
    }
  } catch {
    closed = !timedOut; // reset by the server
  } finally {
    clearTimeout(timer);
    if (!timedOut) {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return { text: new TextDecoder().decode(all), closed };
}
