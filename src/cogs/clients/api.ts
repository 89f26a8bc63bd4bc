/**
 * The one place where the operator talks HTTP to Kubernetes: {@link ApiClient}.
 *
 * Every request takes the best credentials from the {@link Vault}, goes
 * through the transport cached for them (TLS client, Authorization header),
 * and follows Kopf's rules:
 *
 * - **Retries** ("Retrying of API errors"): connection errors, timeouts, 429
 *   and 5xx are retried with the delays of `settings.networking.errorBackoffs`
 *   (attempts = delays + 1; a single number means one retry; `[]` disables
 *   retrying). A server's `Retry-After` (or `details.retryAfterSeconds`) is
 *   the minimum delay; with `enforceRetryAfter` it replaces the backoff.
 *   Other 4xx escalate at once. The last error escalates.
 * - **Re-authentication**: a 401 invalidates the credentials in the vault,
 *   which makes the operator re-run the login handlers; the request waits for
 *   the new credentials and is sent again. When the login brings nothing
 *   new, a {@link LoginError} escalates.
 * - **Timeouts**: `settings.networking.requestTimeout` limits
 *   a whole request including its body; `connectTimeout` limits the time to
 *   the response headers (Deno's `fetch` exposes no separate TCP/TLS connect
 *   phase). Streams use `settings.watching.*` instead.
 * - **Settings** are `OperatorSettings`' (or any part of its groups), read at
 *   every use; one not given has `OperatorSettings`' default — also in a
 *   bare client (e.g. at most 64 requests in flight).
 * - **Cancellation**: every call takes a `signal`; an abort stops waiting,
 *   retrying and reading at once and rejects with the signal's reason.
 * - **Permissions**: a missing `--allow-net` is an {@link AccessError} that
 *   names the flag (never retried).
 * - **Traffic**: with `settings.networking.logTraffic` (`kopf run --debug`), every attempt is
 *   one debug line: method, path and query, code, duration — never a header or a token.
 * - **Proxies**: Deno's `fetch` and `Deno.createHttpClient` honour `HTTPS_PROXY`,
 *   `HTTP_PROXY` and `NO_PROXY` (and their lower-case names), as Kopf's `trust_env`.
 * - **Metrics**: `onRequest` is called once per attempt with the verb, the
 *   resource (`plural.group`, as the API server counts), the HTTP code (0 for
 *   no answer) and the duration.
 *
 * @module
 */

import { AccessError, type Vault } from "../structs/credentials.ts";
import { sleep } from "../aio/sleep.ts";
import { ApiConnectionError, ApiError, isRetryable, UnauthorizedError } from "./errors.ts";
import { createTransport, type FetchFn, type Transport } from "./transport.ts";
import { permissionError, permissionHint } from "./_permissions.ts";
import { type ClientNetworking, DEFAULTS, setting, type Some } from "./_settings.ts";
import type { WatchingSettings } from "../configs/settings.ts";

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
  /** Milliseconds until the answer's headers (or the failure). */
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
}

/** Query parameters; `undefined`/`null` values are left out. */
export type Query =
  | URLSearchParams
  | Record<string, string | number | boolean | undefined | null>;

/** Options of {@link ApiClient.request}. */
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

const SILENT: ClientLogger = { debug() {}, warn() {}, error() {} };
let instances = 0;

/** One request as the client sends it (after the options are resolved). */
interface SendRequest {
  query: Query | undefined;
  signal: AbortSignal | undefined;
  headers: Record<string, string>;
  body: BodyInit | undefined;
  total: number | null;
  connect: number | null;
  stream: boolean;
}

/**
 * The Kubernetes API client (see the module doc for its rules).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../structs/credentials.ts";
 * import { ApiClient } from "./api.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const ns = await api.request<{ metadata: { name: string } }>("GET", "/api/v1/namespaces/default");
 * assert.equal(ns.metadata.name, "default");
 * ```
 */
export class ApiClient {
  /** The credentials store. */
  readonly vault: Vault;
  /** The settings, as given (read at every use). */
  readonly settings: ClientSettings;
  /** The logger. */
  readonly logger: ClientLogger;
  #fetch: FetchFn | undefined;
  #inFlight = 0;
  #waiting: Array<() => void> = [];
  #onRequest: ((record: RequestRecord) => void) | undefined;
  #userAgent: string | undefined;
  // Transports are cached in the vault per credentials and per client: two
  // clients on one vault may differ in `fetch` and User-Agent.
  #purpose = `transport#${++instances}`;

  /**
   * Creates the client.
   *
   * @param options The vault, settings, and hooks.
   */
  constructor(options: ApiClientOptions) {
    this.vault = options.vault;
    this.settings = options.settings ?? {};
    this.logger = options.logger ?? SILENT;
    this.#fetch = options.fetch;
    this.#onRequest = options.onRequest;
    this.#userAgent = options.userAgent;
  }

  /**
   * Sends a request and parses the JSON answer.
   *
   * @param method The HTTP method.
   * @param path The path from the server root, e.g. `/api/v1/namespaces`.
   * @param options Query, body, content type, signal, timeout.
   * @returns The parsed JSON (undefined for an empty body).
   * @throws {ApiError} (a subclass per code) for an error answer that is not
   *   retried or whose retries ran out.
   * @throws {ApiConnectionError} When the server cannot be reached.
   * @throws {LoginError} When no valid credentials are left.
   * @throws {AccessError} When Deno may not connect (`--allow-net`).
   */
  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<T> {
    const timeout = options.timeout !== undefined
      ? options.timeout
      : this.#networking("requestTimeout"); // null: no timeout
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    let body: BodyInit | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" || options.body instanceof Uint8Array
        ? options.body as BodyInit
        : JSON.stringify(options.body);
      headers["content-type"] = options.contentType ?? "application/json";
    }
    await this.#acquire(this.#networking("maxConcurrentRequests"));
    let sent;
    try {
      sent = await this.#send(method, path, {
        query: options.query,
        signal: options.signal,
        headers,
        body,
        total: timeout,
        connect: this.#networking("connectTimeout"),
        stream: false,
      });
    } finally {
      this.#release();
    }
    const { response, text } = sent;
    try {
      return (text?.trim() ? JSON.parse(text) : undefined) as T;
    } catch {
      const url = `${path}${queryString(options.query)}`;
      throw new ApiError({
        code: response.status,
        method,
        path: url,
        text: "the answer is not JSON",
      });
    }
  }

  /** A networking setting: as given, else `OperatorSettings`' default. */
  #networking<K extends keyof ClientNetworking>(key: K): ClientNetworking[K] {
    return setting(this.settings.networking, DEFAULTS.networking, key);
  }

  /** Waits for a request slot (bounded concurrency; the limit is read at every use). */
  #acquire(limit: number | null): Promise<void> {
    if (limit === null || this.#inFlight < limit) {
      this.#inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(() => (this.#inFlight++, resolve())));
  }

  #release(): void {
    this.#inFlight--;
    this.#waiting.shift()?.();
  }

  /**
   * Opens a streaming request (a watch) and returns the response once its
   * headers say 2xx; the caller reads and cancels the body. Opening follows
   * the same retry and re-login rules as {@link ApiClient.request}.
   *
   * @param path The path from the server root.
   * @param options Query, signal, and timeouts.
   * @returns The open response.
   * @throws The same errors as {@link ApiClient.request}.
   */
  async stream(path: string, options: StreamOptions = {}): Promise<Response> {
    const { response, deadline } = await this.#send("GET", path, {
      query: options.query,
      signal: options.signal,
      headers: { accept: "application/json" },
      body: undefined,
      total: options.clientTimeout ?? null,
      connect: options.connectTimeout ?? null,
      stream: true,
    });
    if (!response.body) {
      deadline.clear();
      return response;
    }
    // Without a client timeout there is no timer to clear: the body is returned as it is
    // (a wrapping stream costs a promise and a copy per chunk of every watch). The caller's
    // signal keeps aborting the body until it aborts or is collected with the stream.
    if (!deadline.running) return response;
    // Clear the client timeout's timer when the stream ends, however it ends.
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            deadline.clear();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          deadline.clear();
          controller.error(error);
        }
      },
      async cancel(reason) {
        deadline.clear();
        await reader.cancel(reason).catch(() => {});
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  }

  /**
   * The default namespace of the current credentials (for events of
   * cluster-scoped objects), waiting for credentials if needed.
   *
   * @param signal Stops the waiting.
   * @returns The namespace, or undefined.
   */
  async defaultNamespace(signal?: AbortSignal): Promise<string | undefined> {
    const { info } = await this.vault.select({ signal });
    return info.defaultNamespace;
  }

  async #send(method: string, path: string, req: SendRequest): Promise<Attempt> {
    const signal = req.signal;
    for (;;) {
      const { key, info } = await this.vault.select({ signal });
      const transport = this.vault.cached(
        info,
        this.#purpose,
        (i) => createTransport(i, { fetch: this.#fetch, userAgent: this.#userAgent }),
      );
      try {
        return await this.#retrying(transport, method, path, req);
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        this.logger.warn(`${method} ${path}: 401 Unauthorized; re-authenticating`);
        await this.vault.invalidate(key, info, { error, signal });
      }
    }
  }

  async #retrying(
    transport: Transport,
    method: string,
    path: string,
    req: SendRequest,
  ): Promise<Attempt> {
    const backoffsSetting = this.#networking("errorBackoffs");
    const backoffs = typeof backoffsSetting === "number" ? [backoffsSetting] : backoffsSetting;
    const count = Array.isArray(backoffs) ? backoffs.length + 1 : undefined;
    const delays = backoffs[Symbol.iterator]();
    const url = `${transport.server}${path}${queryString(req.query)}`;
    const what = `${method} ${path}${queryString(req.query)}`;
    for (let attempt = 1;; attempt++) {
      const idx = count !== undefined ? `#${attempt}/${count}` : `#${attempt}`;
      try {
        return await this.#attempt(transport, method, url, path, attempt, req);
      } catch (error) {
        if (req.signal?.aborted) throw req.signal.reason;
        if (!isRetryable(error)) throw error;
        const next = delays.next();
        if (next.done) {
          this.logger.error(`Request attempt ${idx} failed; escalating: ${what} -> ${error}`);
          throw error;
        }
        const retryAfter = error instanceof ApiError ? error.retryAfter : undefined;
        const delay = retryAfter === undefined
          ? next.value
          : this.#networking("enforceRetryAfter")
          ? retryAfter
          : Math.max(next.value, retryAfter);
        this.logger.error(
          `Request attempt ${idx} failed; will retry in ${delay}s: ${what} -> ${error}`,
        );
        if (!(await sleep(delay, req.signal))) throw req.signal!.reason;
      }
    }
  }

  async #attempt(
    transport: Transport,
    method: string,
    url: string,
    path: string,
    attempt: number,
    req: {
      signal: AbortSignal | undefined;
      headers: Record<string, string>;
      body: BodyInit | undefined;
      total: number | null;
      connect: number | null;
      stream: boolean;
    },
  ): Promise<Attempt> {
    const deadline = new Deadline(req.total, req.connect, req.signal);
    const started = performance.now();
    let response: Response;
    try {
      response = await transport.fetch(url, {
        method,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        ...(deadline.signal ? { signal: deadline.signal } : {}),
      });
    } catch (error) {
      deadline.clear();
      this.#record(method, url, path, 0, attempt, started);
      if (req.signal?.aborted) throw req.signal.reason;
      const denied = permissionError(error);
      if (denied) {
        throw new AccessError(`Connecting to ${transport.server} ${permissionHint(denied)}`, {
          cause: error,
        });
      }
      const timedOut = deadline.expired === "total"
        ? req.total
        : deadline.expired === "connect"
        ? req.connect
        : null;
      throw new ApiConnectionError(method, url, error, timedOut ?? undefined);
    }
    deadline.connected();
    this.#record(method, url, path, response.status, attempt, started);
    if (!response.ok) {
      deadline.clear();
      const shown = url.slice(transport.server.length);
      throw await ApiError.fromResponse(response, method, shown);
    }
    if (req.stream) return { response, deadline };
    try {
      return { response, deadline, text: await response.text() };
    } catch (error) {
      if (req.signal?.aborted) throw req.signal.reason;
      throw new ApiConnectionError(
        method,
        url,
        error,
        deadline.expired === "total" ? req.total ?? 0 : undefined,
      );
    } finally {
      deadline.clear();
    }
  }

  #record(
    method: string,
    url: string,
    path: string,
    code: number,
    attempt: number,
    started: number,
  ): void {
    if (this.#networking("logTraffic")) {
      const shown = url.replace(/^[a-z]+:\/\/[^/]*/i, "");
      const ms = Math.round(performance.now() - started);
      this.logger.debug(
        `API: ${method} ${shown} -> ${code || "no response"} in ${ms}ms` +
          (attempt > 1 ? ` (attempt ${attempt})` : ""),
      );
    }
    if (!this.#onRequest) return;
    const watch = /[?&]watch=(true|1)(&|$)/.test(url);
    const { verb, resource, subresource } = describeRequest(method, path, watch);
    try {
      this.#onRequest({
        verb,
        resource,
        subresource,
        code,
        method,
        path,
        attempt,
        durationMs: performance.now() - started,
      });
    } catch (error) {
      this.logger.warn(`The onRequest hook failed: ${error}`);
    }
  }
}

/**
 * The Kubernetes verb and resource of a request, as the API server's audit
 * and metrics name them.
 *
 * @param method The HTTP method.
 * @param path The path (no query).
 * @param watch Whether it is a watch (`?watch=true`).
 * @returns The verb, `plural[.group]`, and the subresource.
 *
 * @example
 * ```ts
 * import { describeRequest } from "./api.ts";
 * console.log(describeRequest("PATCH", "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex1/status"));
 * // { verb: "patch", resource: "kopfexamples.kopf.dev", subresource: "status" }
 * ```
 */
export function describeRequest(
  method: string,
  path: string,
  watch = false,
): { verb: string; resource: string; subresource: string | undefined } {
  const parts = path.split("?")[0]!.split("/").filter((p) => p);
  let group = "";
  let rest: string[] = [];
  if (parts[0] === "api" && parts.length >= 3) rest = parts.slice(2);
  else if (parts[0] === "apis" && parts.length >= 4) [group, rest] = [parts[1]!, parts.slice(3)];
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const [plural, name, subresource] = rest;
  const resource = plural ? (group ? `${plural}.${group}` : plural) : "";
  const verbs: Record<string, string> = name
    ? { GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete", POST: "create" }
    : { GET: watch ? "watch" : "list", HEAD: "list", POST: "create", DELETE: "deletecollection" };
  return { verb: verbs[method.toUpperCase()] ?? method.toLowerCase(), resource, subresource };
}

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  const entries = query instanceof URLSearchParams ? query.entries() : Object.entries(query);
  for (const [k, v] of entries) {
    if (v !== undefined && v !== null) params.append(k, String(v));
  }
  const qs = params.toString();
  return qs ? `?${qs}` : "";
}

/** One successful attempt: the response, its running deadline, and the body text (non-streams). */
interface Attempt {
  response: Response;
  deadline: Deadline;
  text?: string;
}

/**
 * The signal of one attempt: the caller's signal, the whole request's timeout and the
 * timeout to the response headers, in one controller with at most two timers that can be
 * cleared (`AbortSignal.timeout` cannot). Without timeouts it is the caller's signal itself:
 * no controller, no `AbortSignal.any` and no timer per request.
 */
class Deadline {
  readonly signal: AbortSignal | undefined;
  /** Which timeout aborted the attempt, if one did. */
  expired: "total" | "connect" | undefined;
  #total: ReturnType<typeof setTimeout> | undefined;
  #connect: ReturnType<typeof setTimeout> | undefined;
  #outer: AbortSignal | undefined;
  #onAbort: (() => void) | undefined;

  constructor(total: number | null, connect: number | null, outer: AbortSignal | undefined) {
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
      this.#outer = outer;
      this.#onAbort = () => controller.abort(outer.reason);
      outer.addEventListener("abort", this.#onAbort, { once: true });
    }
    const expire = (which: "total" | "connect") => () => {
      this.expired ??= which;
      controller.abort(new DOMException("The request timed out", "TimeoutError"));
    };
    if (withTotal) this.#total = setTimeout(expire("total"), total * 1000);
    if (withConnect) this.#connect = setTimeout(expire("connect"), connect * 1000);
  }

  /** Whether the whole request's timer runs (to be cleared when a stream ends). */
  get running(): boolean {
    return this.#total !== undefined;
  }

  /** The response headers arrived: the connect timeout no longer applies. */
  connected(): void {
    if (this.#connect === undefined) return;
    clearTimeout(this.#connect);
    this.#connect = undefined;
  }

  /** The attempt ended: no timer runs, the caller's signal no longer aborts it. */
  clear(): void {
    this.connected();
    if (this.#total !== undefined) clearTimeout(this.#total);
    this.#total = undefined;
    if (this.#onAbort) this.#outer?.removeEventListener("abort", this.#onAbort);
    this.#onAbort = undefined;
  }
}
