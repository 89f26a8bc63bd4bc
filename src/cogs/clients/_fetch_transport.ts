/**
 * The transport over Deno's `fetch` (see `transport.ts` for when it serves):
 * a `Deno.createHttpClient` for the credentials' TLS material, the caller's
 * signal and the two timeouts in one {@link Deadline}, and `Response` bodies
 * read whole or as a stream of chunks.
 *
 * @module
 */

import { realClock } from "../aio/clock.ts";
import { RequestTimeoutError } from "./http1.ts";
import { boundedText } from "./_bounded.ts";
import { ResponseTooLargeError } from "./connection_errors.ts";
import type { FetchFn, Transport, TransportRequest } from "./transport_types.ts";

/**
 * A transport that sends through `fetch`.
 *
 * @param server The server URL, without a trailing slash.
 * @param headers The transport's headers (Authorization, User-Agent).
 * @param base The same headers as a plain record.
 * @param send The `fetch` to use.
 * @param client The HTTP client with the TLS material, if any (closed with the transport).
 * @returns The transport.
 */
export function fetchTransport(
  server: string,
  headers: Headers,
  base: Record<string, string>,
  send: FetchFn,
  client: Deno.HttpClient | undefined,
): Transport {
  let closed = false;
  async function open(
    method: string,
    url: string,
    init: TransportRequest,
  ): Promise<{ response: Response; deadline: Deadline }> {
    const deadline = new Deadline(init.timeout ?? null, init.connectTimeout ?? null, init.signal);
    const request: RequestInit & { client?: Deno.HttpClient } = {
      method,
      headers: merged(base, init.headers),
    };
    if (init.body !== undefined) request.body = init.body as BodyInit;
    if (deadline.signal) request.signal = deadline.signal;
    if (client) request.client = client;
    try {
      const response = await send(url, request);
      deadline.connected();
      return { response, deadline };
    } catch (error) {
      deadline.clear();
      throw deadline.reason(error);
    }
  }
  return {
    server,
    headers,
    client: "fetch",
    async request(method, url, init) {
      const { response, deadline } = await open(method, url, init);
      try {
        const text = response.status >= 300
          ? await errorText(response, init)
          : await bodyText(response, init.maxBodySize ?? null);
        return {
          status: response.status,
          text,
          header: (name) => response.headers.get(name),
          headers: () => response.headers,
        };
      } catch (error) {
        throw deadline.reason(error);
      } finally {
        deadline.clear();
      }
    },
    async stream(method, url, init) {
      const { response, deadline } = await open(method, url, init);
      const reader = response.body?.getReader();
      let done = false;
      const cancel = () => {
        if (done) return;
        done = true;
        deadline.clear();
        reader?.cancel().catch(() => {});
      };
      const chunks: AsyncIterable<Uint8Array> = {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            if (!reader || done) return { value: undefined, done: true };
            try {
              const result = await reader.read();
              if (result.done) cancel();
              return result.done ? { value: undefined, done: true } : result;
            } catch (error) {
              const reason = deadline.reason(error);
              cancel();
              throw reason;
            }
          },
          return: () => {
            cancel();
            return Promise.resolve({ value: undefined, done: true });
          },
        }),
      };
      return {
        status: response.status,
        chunks,
        header: (name) => response.headers.get(name),
        headers: () => response.headers,
        text: async () => {
          if (!reader || done) return "";
          const size = init.errorBodySize ?? Infinity;
          const seconds = init.errorBodyTimeout ?? null;
          const iterator = chunks[Symbol.asyncIterator]();
          const read = () => iterator.next().then((r) => r.done ? null : r.value);
          return await boundedText(read, cancel, size, seconds);
        },
        cancel,
      };
    },
    close() {
      if (closed) return;
      closed = true;
      client?.close();
    },
  };
}

/** An error answer's body, within the request's bounds (see `_bounded.ts`). */
function errorText(response: Response, init: TransportRequest): Promise<string> {
  const size = init.errorBodySize;
  const seconds = init.errorBodyTimeout ?? null;
  const body = response.body;
  if ((size === undefined && seconds === null) || !body) return response.text();
  const reader = body.getReader();
  const read = () => reader.read().then((r) => r.done ? null : r.value);
  const cancel = () => void reader.cancel().catch(() => {});
  return boundedText(read, cancel, size ?? Infinity, seconds);
}

/**
 * A 2xx body as text, at most `max` bytes: a longer one (or one that declares more) fails with
 * a {@link ResponseTooLargeError} and is dropped. Without a limit, `Response.text()`.
 */
async function bodyText(response: Response, max: number | null): Promise<string> {
  if (max === null || !response.body) return await response.text();
  const declared = response.headers.get("content-length");
  if (declared !== null && Number(declared) > max) {
    await response.body.cancel().catch(() => {});
    throw new ResponseTooLargeError(
      "The answer's body",
      max,
      "networking.maxBodySize",
      Number(declared),
    );
  }
  // A declared length within the limit: fetch holds the body to it (the usual case).
  if (declared !== null && /^\d+$/.test(declared)) return await response.text();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    got += value.length;
    if (got > max) {
      await reader.cancel().catch(() => {});
      throw new ResponseTooLargeError("The answer's body", max, "networking.maxBodySize");
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * The signal of one `fetch`: the caller's signal, the whole request's timeout and the
 * timeout to the response headers, in one controller with at most two timers that can be
 * cancelled. Without timeouts it is the caller's signal itself: no controller and no timer.
 */
class Deadline {
  readonly signal: AbortSignal | undefined;
  #expired: RequestTimeoutError | undefined;
  #total: (() => void) | undefined;
  #connect: (() => void) | undefined;
  #outer: AbortSignal | undefined;
  #onAbort: (() => void) | undefined;

  constructor(total: number | null, connect: number | null, outer: AbortSignal | undefined) {
    this.#outer = outer;
    const withTotal = total !== null && total > 0;
    const withConnect = connect !== null && connect > 0;
    if (!withTotal && !withConnect) {
      this.signal = outer;
      return;
    }
    const controller = new AbortController();
    this.signal = controller.signal;
    if (outer?.aborted) controller.abort(outer.reason);
    else if (outer) {
      this.#onAbort = () => controller.abort(outer.reason);
      outer.addEventListener("abort", this.#onAbort, { once: true });
    }
    const expire = (phase: "total" | "connect", seconds: number) => () => {
      const error = new RequestTimeoutError(phase, seconds);
      this.#expired ??= error;
      controller.abort(error);
    };
    if (withTotal) this.#total = realClock.timer(total * 1000, expire("total", total));
    if (withConnect) this.#connect = realClock.timer(connect * 1000, expire("connect", connect));
  }

  /** Why the request failed: the caller's abort, a timeout, or the error itself. */
  reason(error: unknown): unknown {
    if (this.#outer?.aborted) return this.#outer.reason;
    return this.#expired ?? error;
  }

  /** The response headers arrived: the connect timeout no longer applies. */
  connected(): void {
    this.#connect?.();
    this.#connect = undefined;
  }

  /** The request ended: no timer runs, the caller's signal no longer aborts it. */
  clear(): void {
    this.connected();
    this.#total?.();
    this.#total = undefined;
    if (this.#onAbort) this.#outer?.removeEventListener("abort", this.#onAbort);
    this.#onAbort = undefined;
  }
}

/**
 * The transport's headers with a request's own (lower-cased names; the request's win).
 *
 * @param base The transport's headers.
 * @param own The request's headers.
 * @returns One record.
 */
export function merged(
  base: Record<string, string>,
  own: Record<string, string> | undefined,
): Record<string, string> {
  const all = { ...base };
  if (own) { for (const name in own) all[name.toLowerCase()] = own[name]!; }
  return all;
}
