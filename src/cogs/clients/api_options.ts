/**
 * What an {@link ApiClient} is told: its options and settings, the options of a request and of a
 * stream, the query, and the record of an attempt that it reports for metrics.
 *
 * @module
 */

import type { Clock } from "../aio/clock.ts";
import type { WatchingSettings } from "../configs/settings.ts";
import type { Vault } from "../structs/credentials.ts";
import type { FetchFn } from "./transport.ts";
import type { ClientNetworking, Some } from "./_settings.ts";

/**
 * Settings the clients read: `OperatorSettings` fits, and so does any part of
 * its `networking` and `watching` groups — a setting not given has its
 * default in `OperatorSettings`. Read at every use, so changes apply.
 */
export interface ClientSettings {
  /** Regular requests: `OperatorSettings.networking`, or some of it. */
  networking?: Some<ClientNetworking> | undefined;
  /** Watch streams: `OperatorSettings.watching`, or some of it. */
  watching?: Some<WatchingSettings> | undefined;
}

/** One attempt, as reported to {@link ApiClientOptions.onRequest}. */
export interface RequestRecord {
  /** The Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection. */
  verb: string;
  /** `plural` or `plural.group`; empty for discovery and other non-resource paths. */
  resource: string;
  /** The subresource, if any (e.g. `status`). */
  subresource: string | undefined;
  /** The HTTP status code; 0 when there was no answer. */
  code: number;
  /** The HTTP method. */
  method: string;
  /** The path (no server, no query). */
  path: string;
  /** The attempt number, from 1. */
  attempt: number;
  /** Milliseconds until the answer (its headers for streams), or the failure. */
  durationMs: number;
}

/** Where the client reports retries and re-logins. */
export interface ClientLogger {
  /** Details. */
  debug(message: string): void;
  /** Something went wrong but is handled. */
  warn(message: string): void;
  /** A failed attempt. */
  error(message: string): void;
}

/** Options of {@link ApiClient}. */
export interface ApiClientOptions {
  /** Where the credentials come from. */
  vault: Vault;
  /** Operator settings (or just their networking/watching parts). */
  settings?: ClientSettings | undefined;
  /** A `fetch` to use instead of the global one (tests). */
  fetch?: FetchFn | undefined;
  /** Called once per attempt (metrics). */
  onRequest?: ((record: RequestRecord) => void) | undefined;
  /** Where to log retries (default: silent). */
  logger?: ClientLogger | undefined;
  /** The User-Agent (default `kopf/<version>`). */
  userAgent?: string | undefined;
  /**
   * The HTTP client, whatever `KOPF_HTTP_CLIENT` says (tests of both); default: see
   * `transport.ts`.
   */
  httpClient?: "http1" | "fetch" | undefined;
  /**
   * The clock the retries' backoffs sleep on (default `realClock`; tests pass a fake clock to
   * step through them). Request timeouts stay on real timers: they race a real socket.
   */
  clock?: Clock | undefined;
}

/** Query parameters; `undefined`/`null` values are left out. */
export type Query =
  | URLSearchParams
  | Record<string, string | number | boolean | undefined | null>;

/**
 * Options of {@link ApiClient.request}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo, Vault } from "../structs/credentials.ts";
 * import { ApiClient } from "./api.ts";
 * import { ApiError } from "./errors.ts";
 *
 * // A server that answers 200 with an empty body where an object is expected.
 * using vault = new Vault({ login: new ConnectionInfo({ server: "http://k8s.local" }) });
 * const empty = () => Promise.resolve(new Response("", { status: 200 }));
 * const api = new ApiClient({ vault, fetch: empty });
 * assert.equal(await api.request("GET", "/api/v1/namespaces/default"), undefined);
 * await assert.rejects(
 *   api.request("GET", "/api/v1/namespaces/default", { expect: "object" }),
 *   (error) => error instanceof ApiError && /200 OK: the answer is empty/.test(error.message),
 * );
 * ```
 */
export interface RequestOptions {
  /** Query parameters. */
  query?: Query | undefined;
  /** The body: JSON-encoded unless a string or bytes. */
  body?: unknown;
  /** The body's content type (default `application/json`). */
  contentType?: string | undefined;
  /** Extra headers. */
  headers?: Record<string, string> | undefined;
  /** Stops the request (and its retries). */
  signal?: AbortSignal | undefined;
  /** Seconds for the whole request; `null` for none (default: networking.requestTimeout). */
  timeout?: number | null | undefined;
  /**
   * `"low"`: the request takes a slot of `maxConcurrentRequests` only while no other request
   * waits for one and the others in flight hold at most a quarter of the slots, and it leaves a
   * quarter of the slots free (Kubernetes Events: they wait out a burst of the handling's
   * requests, and go at full speed when it calms down). Default `"normal"`.
   */
  priority?: "normal" | "low" | undefined;
  /**
   * `"object"`: the answer must be a JSON object (an empty body, `null`, a string, … is an
   * {@link ApiError} naming the request and what came). `"text"`: the answer's text as it came,
   * not parsed (for a caller that may not need it: parsing a body is most of what reading it
   * costs). Default: any JSON, or undefined for an empty body.
   */
  expect?: "object" | "text" | undefined;
}

/** Options of {@link ApiClient.stream}. */
export interface StreamOptions {
  /** Query parameters. */
  query?: Query | undefined;
  /** Stops the stream (and the opening retries). */
  signal?: AbortSignal | undefined;
  /** Seconds to the response headers; `null` for none. */
  connectTimeout?: number | null | undefined;
  /** Seconds for the whole stream including reading it; `null` for none. */
  clientTimeout?: number | null | undefined;
}
