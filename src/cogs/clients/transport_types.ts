/**
 * The shapes of a transport — a request, its answer (whole or streamed) and
 * the {@link Transport} itself — apart from the code that builds one
 * (`transport.ts`), so the HTTP clients behind it (`_fetch_transport.ts`,
 * the lean client) can speak them without importing their own chooser.
 *
 * @module
 */

/** The shape of `fetch` that transports use (a URL string and an init). */
export type FetchFn = (url: string, init: RequestInit) => Promise<Response>;

/**
 * One request of a {@link Transport}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo } from "../structs/credentials.ts";
 * import { createTransport } from "./transport.ts";
 *
 * // An error answer's body is read only up to errorBodySize (here: 16 bytes of 1 MB).
 * const huge = () => Promise.resolve(new Response("e".repeat(1_000_000), { status: 500 }));
 * const info = new ConnectionInfo({ server: "http://k8s.local" });
 * const transport = createTransport(info, { fetch: huge });
 * const answer = await transport.request("GET", "http://k8s.local/api", { errorBodySize: 16 });
 * assert.equal(answer.status, 500);
 * assert.equal(answer.text, "e".repeat(16));
 * transport.close();
 * ```
 */
export interface TransportRequest {
  /** Headers (added to the transport's; names in any case). */
  headers?: Record<string, string> | undefined;
  /** The body. */
  body?: string | Uint8Array | undefined;
  /** Aborts the request (and the body of a stream). */
  signal?: AbortSignal | undefined;
  /** Seconds for the whole request including its body; null/undefined: none. */
  timeout?: number | null | undefined;
  /** Seconds up to the answer's headers; null/undefined: none. */
  connectTimeout?: number | null | undefined;
  /**
   * The URL without the server (its path and query), when the caller has it: the lean client
   * sends it as is instead of cutting it from the URL (which must then be the server's URL and
   * this). Undefined: cut from the URL.
   */
  target?: string | undefined;
  /**
   * Bytes a 2xx body read whole ({@link Transport.request}) may have: a longer one fails with a
   * `ResponseTooLargeError` (`networking.maxBodySize`); null/undefined: none.
   */
  maxBodySize?: number | null | undefined;
  /**
   * Bytes of an error answer's body (status 300 and up, of requests and streams) that are read
   * for its `Status`; the rest is dropped with the connection. Undefined: no bound.
   */
  errorBodySize?: number | undefined;
  /** Seconds an error answer's body is read for at most (null/undefined: none). */
  errorBodyTimeout?: number | null | undefined;
}

/** The status and headers of an answer. */
export interface TransportHead {
  /** The HTTP status code. */
  readonly status: number;
  /**
   * A header's value (case-insensitive name).
   *
   * @param name The header name.
   * @returns The value, or null.
   */
  header(name: string): string | null;
  /**
   * All headers, built at the call (for the rare error paths).
   *
   * @returns The headers.
   */
  headers(): Headers;
}

/** A whole answer: status, headers, and the body as text. */
export interface TransportAnswer extends TransportHead {
  /** The body. */
  readonly text: string;
}

/** A streamed answer (a watch): the body as chunks of bytes as they arrive. */
export interface TransportStream extends TransportHead {
  /**
   * The body's bytes, in chunks cut anywhere; ends with the body, throws if the connection
   * breaks. A chunk may be a view of the HTTP client's buffer, valid only until the next chunk is
   * asked for: decode or copy it before (the lean client gives views: no copy per chunk).
   */
  readonly chunks: AsyncIterable<Uint8Array>;
  /**
   * The next chunk of {@link TransportStream.chunks}, null at the end, when the HTTP client can give
   * it without an iterator (the lean client: no iterator result and no promise step per chunk);
   * undefined otherwise. The same rules as for `chunks` (a view, valid until the next read); use
   * one or the other.
   */
  readonly read?: (() => Promise<Uint8Array | null>) | undefined;
  /**
   * The rest of the body as text (for error answers), within the request's `errorBodySize` and
   * `errorBodyTimeout`: what came within them (the rest is dropped with the connection).
   *
   * @returns The text.
   */
  text(): Promise<string>;
  /** Stops reading: the connection is closed (idempotent). */
  cancel(): void;
}

/** Requests with one set of credentials. */
export interface Transport {
  /** The server URL, without a trailing slash. */
  readonly server: string;
  /** Headers for every request: Authorization (if any) and User-Agent. */
  readonly headers: Headers;
  /** Which HTTP client the transport uses (see the module doc). */
  readonly client: "http1" | "fetch";
  /**
   * Sends a request and reads the whole answer.
   *
   * @param method The HTTP method.
   * @param url The full URL (the server's, with path and query).
   * @param init Headers, body, signal, timeouts.
   * @returns The answer, whatever its status.
   */
  request(method: string, url: string, init: TransportRequest): Promise<TransportAnswer>;
  /**
   * Sends a request and returns at the answer's headers; the caller reads the
   * chunks or cancels. The `timeout` runs until the body ends.
   *
   * @param method The HTTP method.
   * @param url The full URL.
   * @param init Headers, body, signal, timeouts.
   * @returns The answer, whatever its status.
   */
  stream(method: string, url: string, init: TransportRequest): Promise<TransportStream>;
  /** Frees the HTTP client and its idle connections (idempotent). */
  close(): void;
}
