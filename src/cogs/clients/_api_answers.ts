/**
 * What the API client makes of an attempt: the error of an answer that is not 2xx, of an answer
 * that cannot be what was asked for, and of an attempt that got no answer; and the backoffs of
 * a request's retries.
 *
 * @module
 */

import { AccessError } from "../structs/credentials.ts";
import type { Query } from "./api_options.ts";
import {
  ApiConnectionError,
  ResponseTooLargeError,
  TlsVerificationError,
  tlsVerificationFailure,
} from "./connection_errors.ts";
import { ApiError } from "./errors.ts";
import {
  RequestTimeoutError,
  type TransportAnswer,
  type TransportHead,
  type TransportStream,
} from "./transport.ts";
import { permissionError, permissionHint } from "./_permissions.ts";
import type { ClientNetworking } from "./_settings.ts";

/** The error of a 2xx answer that cannot be what was asked for (see {@link RequestOptions.expect}). */
export function badAnswer(
  code: number,
  method: string,
  path: string,
  query: Query | undefined,
  what: string,
): ApiError {
  return new ApiError({ code, method, path: `${path}${queryString(query)}`, text: what });
}

/** The query as a URL's query string (with its `?`), or empty; `undefined`/`null` values are left out. */
export function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  const entries = query instanceof URLSearchParams ? query.entries() : Object.entries(query);
  for (const [k, v] of entries) {
    if (v !== undefined && v !== null) params.append(k, String(v));
  }
  const qs = params.toString();
  return qs ? `?${qs}` : "";
}

/** The backoffs of a request's retries (made at its first failure) and how many attempts they allow. */
export class Retries {
  /** Attempts in all (backoffs + 1), if known. */
  readonly count: number | undefined;
  /** The delays still to come. */
  readonly delays: Iterator<number>;

  constructor(setting: ClientNetworking["errorBackoffs"]) {
    const backoffs = typeof setting === "number" ? [setting] : setting;
    this.count = Array.isArray(backoffs) ? backoffs.length + 1 : undefined;
    this.delays = backoffs[Symbol.iterator]();
  }
}

/**
 * The error to throw or retry for an attempt that got no answer: the signal's reason when it
 * aborted, an {@link AccessError} without `--allow-net`, a {@link TlsVerificationError} for a
 * server certificate that fails verification, else an {@link ApiConnectionError}.
 */
export function connectionError(
  error: unknown,
  server: string,
  method: string,
  url: string,
  signal: AbortSignal | undefined,
): unknown {
  if (signal?.aborted) return signal.reason;
  if (error instanceof ResponseTooLargeError) return error.of(method, url);
  const denied = permissionError(error);
  if (denied) {
    return new AccessError(`Connecting to ${server} ${permissionHint(denied)}`, { cause: error });
  }
  // A certificate that fails verification fails so again: not retried, and said what to fix.
  const tls = tlsVerificationFailure(error);
  if (tls) return new TlsVerificationError(server, tls, { cause: error });
  const timedOut = error instanceof RequestTimeoutError ? error.seconds : undefined;
  return new ApiConnectionError(method, url, error, timedOut);
}

/** The error of an answer that is not 2xx; a stream's rest is read for it, then cancelled. */
export async function answerError(
  answer: TransportHead,
  method: string,
  path: string,
): Promise<unknown> {
  let text = "";
  if (typeof (answer as TransportAnswer).text === "string") text = (answer as TransportAnswer).text;
  else {
    const stream = answer as TransportStream;
    text = await stream.text().catch(() => "");
    stream.cancel();
  }
  return await apiErrorOf(answer, text, method, path);
}

/** The error of an answer that is not 2xx (a `Response` is built for it: a rare path). */
async function apiErrorOf(
  answer: TransportHead,
  text: string,
  method: string,
  path: string,
): Promise<ApiError> {
  let response: Response;
  try {
    response = new Response(text, { status: answer.status, headers: answer.headers() });
  } catch { // a status a Response cannot have (e.g. 304 with a body, or above 599)
    const code = answer.status;
    return new ApiError({ code, method, path, text: text.trim() || undefined });
  }
  return await ApiError.fromResponse(response, method, path);
}
