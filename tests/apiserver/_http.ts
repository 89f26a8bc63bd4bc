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
