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
 *   Other 4xx escalate at once. The last error escalates. A server
 *   certificate that fails TLS verification (unknown CA, wrong host name,
 *   expired) is a {@link TlsVerificationError} and escalates at once: it is
 *   a mistake of the kubeconfig or the server, not a passing failure.
 * - **Re-authentication**: a 401 invalidates the credentials in the vault,
 *   which makes the operator re-run the login handlers; the request waits for
 *   the new credentials and is sent again. When the login brings nothing
 *   new, a {@link LoginError} escalates.
 * - **Timeouts**: `settings.networking.requestTimeout` limits
 *   a whole request including its body; `connectTimeout` limits the time to
 *   the response headers (connecting included). Streams use
 *   `settings.watching.*` instead.
 * - **Settings** are `OperatorSettings`' (or any part of its groups), read at
 *   every use; one not given has `OperatorSettings`' default — also in a
 *   bare client (e.g. at most 64 requests in flight).
 * - **Cancellation**: every call takes a `signal`; an abort stops waiting,
 *   retrying and reading at once and rejects with the signal's reason.
 * - **Permissions**: a missing `--allow-net` is an {@link AccessError} that
 *   names the flag (never retried).
 * - **Traffic**: with `settings.networking.logTraffic` (`kopf run --debug`), every attempt is
 *   one debug line: method, path and query, code, duration — never a header or a token.
 * - **HTTP**: a lean HTTP/1.1 client with keep-alive connections (`http1.ts`), or
 *   Deno's `fetch` where that cannot serve or with `KOPF_HTTP_CLIENT=fetch` (see
 *   `transport.ts`).
 * - **Proxies**: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (and their
 *   lower-case names) are honoured, as Kopf's `trust_env`: with a proxy for the
 *   server, requests go through Deno's `fetch`, which uses it.
 * - **Limits**: a 2xx body over `networking.maxBodySize` is a
 *   {@link ResponseTooLargeError} (never retried); an error answer's body is
 *   read only up to `networking.errorBodySize` bytes and for
 *   `networking.errorBodyTimeout` seconds (a server that stalls in it cannot
 *   hold a request or a watch); with `expect: "object"`, a 2xx answer that is
 *   not a JSON object (e.g. empty) is an {@link ApiError} naming the request.
 * - **Metrics**: `onRequest` is called once per attempt with the verb, the
 *   resource (`plural.group`, as the API server counts), the HTTP code (0 for
 *   no answer) and the duration.
 *
 * @module
 */

import { AccessError, type ConnectionInfo, type Vault } from "../structs/credentials.ts";
import { Fifo } from "../aio/fifo.ts";
import { type Clock, realClock } from "../aio/clock.ts";
import {
  ApiConnectionError,
  ApiError,
  isRetryable,
  ResponseTooLargeError,
  TlsVerificationError,
  tlsVerificationFailure,
  UnauthorizedError,
} from "./errors.ts";
import {
  createTransport,
  type FetchFn,
  RequestTimeoutError,
  type Transport,
  type TransportAnswer,
  type TransportHead,
  type TransportStream,
} from "./transport.ts";
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
   * {@link ApiError} naming the request and what came). Default: any JSON, or undefined for an
   * empty body.
   */
  expect?: "object" | undefined;
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

/** One request as the client sends it (after the options are resolved); also the transport's init. */
interface SendRequest {
  query: Query | undefined;
  signal: AbortSignal | undefined;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  timeout: number | null;
  connectTimeout: number | null;
  stream: boolean;
  /** See {@link TransportRequest}: the body limit, the error bodies' bounds. */
  maxBodySize: number | null;
  errorBodySize: number;
  errorBodyTimeout: number | null;
  /** The path and query (set per credentials: the transport's `target`). */
  target?: string | undefined;
}

/**
 * The Kubernetes API client (see the module doc for its rules).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
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
  /** How many of those are low-priority. */
  #inFlightLow = 0;
  /** Requests waiting for a slot, first come first served; low-priority ones after all others. */
  #waiting = new Fifo<() => void>();
  #waitingLow = new Fifo<() => void>();
  /** The concurrency limit as last read (low-priority requests are woken by it). */
  #limit: number | null = null;
  /** Who is told when the waiting requests are all gone ({@link ApiClient.onCalm}). */
  #calmListeners = new Set<() => void>();
  #onRequest: ((record: RequestRecord) => void) | undefined;
  /** See {@link ApiClient.#headersOf}. */
  #headers = new Map<string | undefined, Record<string, string>>();
  #userAgent: string | undefined;
  #httpClient: "http1" | "fetch" | undefined;
  #clock: Clock;
  // Transports are cached in the vault per credentials and per client: two
  // clients on one vault may differ in `fetch` and User-Agent.
  #purpose = `transport#${++instances}`;
  #createTransport = (info: ConnectionInfo): Transport =>
    createTransport(info, {
      fetch: this.#fetch,
      userAgent: this.#userAgent,
      client: this.#httpClient,
    });

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
    this.#httpClient = options.httpClient;
    this.#clock = options.clock ?? realClock;
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
    let body: string | Uint8Array | undefined;
    let contentType: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" || options.body instanceof Uint8Array
        ? options.body
        : JSON.stringify(options.body);
      contentType = options.contentType ?? "application/json";
    }
    const headers = options.headers ? { accept: "application/json", ...options.headers } : (
      this.#headers.get(contentType) ?? this.#headersOf(contentType)
    );
    if (options.headers && contentType !== undefined) headers["content-type"] = contentType;
    await this.#acquire(this.#networking("maxConcurrentRequests"), options.priority === "low");
    let sent;
    try {
      sent = await this.#send(method, path, {
        query: options.query,
        signal: options.signal,
        headers,
        body,
        timeout,
        connectTimeout: this.#networking("connectTimeout"),
        stream: false,
        maxBodySize: this.#networking("maxBodySize"),
        errorBodySize: this.#networking("errorBodySize"),
        errorBodyTimeout: this.#networking("errorBodyTimeout"),
      });
    } finally {
      this.#release(options.priority === "low");
    }
    const text = (sent as TransportAnswer).text;
    let parsed: unknown;
    try {
      parsed = isBlank(text) ? undefined : JSON.parse(text);
    } catch {
      throw badAnswer(sent.status, method, path, options.query, "the answer is not JSON");
    }
    if (options.expect === "object" && (typeof parsed !== "object" || parsed === null)) {
      const what = parsed === undefined
        ? "empty"
        : `JSON ${parsed === null ? "null" : typeof parsed}`;
      throw badAnswer(
        sent.status,
        method,
        path,
        options.query,
        `the answer is ${what} where a JSON object was expected: the server is broken or is not a Kubernetes API server`,
      );
    }
    return parsed as T;
  }

  /**
   * The headers of requests without extra headers, per content type (undefined: no body):
   * one frozen object each, sent as they are (the transport may cache what it derives).
   */
  #headersOf(contentType: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (contentType !== undefined) headers["content-type"] = contentType;
    Object.freeze(headers);
    if (this.#headers.size < 16) this.#headers.set(contentType, headers);
    return headers;
  }

  /** A networking setting: as given, else `OperatorSettings`' default. */
  #networking<K extends keyof ClientNetworking>(key: K): ClientNetworking[K] {
    return setting(this.settings.networking, DEFAULTS.networking, key);
  }

  /**
   * How many requests (of normal priority) wait for a slot now: more than
   * `maxConcurrentRequests` were asked for at once.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Vault } from "../structs/credentials.ts";
   * import { ApiClient } from "./api.ts";
   * using vault = new Vault();
   * assert.deepEqual(new ApiClient({ vault }).backlog, 0);
   * ```
   */
  get backlog(): number {
    return this.#waiting.size;
  }

  /**
   * Calls `listener` each time the {@link ApiClient.backlog} empties (the last waiting request
   * got its slot), synchronously and without arguments.
   *
   * @param listener What to call.
   * @returns A function that stops the calls.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ConnectionInfo, Vault } from "../structs/credentials.ts";
   * import { ApiClient } from "./api.ts";
   * using vault = new Vault({ login: new ConnectionInfo({ server: "http://k8s.local" }) });
   * const gate = Promise.withResolvers<void>();
   * const fetch = async () => (await gate.promise, Response.json({}));
   * const settings = { networking: { maxConcurrentRequests: 1 } };
   * const api = new ApiClient({ vault, fetch, settings });
   * let calms = 0;
   * const stop = api.onCalm(() => calms++);
   * const both = Promise.all([api.request("GET", "/a"), api.request("GET", "/b")]);
   * while (api.backlog === 0) await new Promise((resolve) => setTimeout(resolve, 1));
   * assert.equal(calms, 0); // one request waits for the other's slot
   * gate.resolve();
   * await both;
   * assert.equal(calms, 1); // it got the slot: the backlog emptied once
   * stop();
   * ```
   */
  onCalm(listener: () => void): () => void {
    const own = () => listener();
    this.#calmListeners.add(own);
    return () => this.#calmListeners.delete(own);
  }

  /** Waits for a request slot (bounded concurrency; the limit is read at every use). */
  #acquire(limit: number | null, low = false): Promise<void> {
    this.#limit = limit;
    if (limit === null) {
      this.#inFlight++;
      return RESOLVED;
    }
    if (!low) {
      if (this.#inFlight < limit) {
        this.#inFlight++;
        return RESOLVED;
      }
      return new Promise((resolve) => this.#waiting.push(resolve));
    }
    if (!this.#waitingLow.size && this.#lowFits(limit)) {
      this.#inFlight++;
      this.#inFlightLow++;
      return RESOLVED;
    }
    return new Promise((resolve) => this.#waitingLow.push(resolve));
  }

  /**
   * Whether a low-priority request may start: no other request waits, the others in flight
   * hold at most a quarter of the slots (the handling is calm, not in a burst), and a quarter
   * of the slots stays free.
   */
  #lowFits(limit: number | null): boolean {
    if (limit === null) return true;
    const others = this.#inFlight - this.#inFlightLow;
    return !this.#waiting.size && others <= Math.floor(limit / 4) &&
      this.#inFlight < lowLimit(limit);
  }

  #release(low = false): void {
    this.#inFlight--;
    if (low) this.#inFlightLow--;
    const next = this.#waiting.shift();
    if (next) {
      this.#inFlight++;
      next();
      if (!this.#waiting.size && this.#calmListeners.size) {
        for (const listener of this.#calmListeners) listener();
      }
      return;
    }
    // Low-priority requests fill what is free below their limit (several may be woken at once
    // when the other requests have drained).
    while (this.#waitingLow.size && this.#lowFits(this.#limit)) {
      this.#inFlight++;
      this.#inFlightLow++;
      this.#waitingLow.shift()!();
    }
  }

  /**
   * Opens a streaming request (a watch) and returns the answer once its
   * headers say 2xx; the caller reads its chunks and cancels it. Opening follows
   * the same retry and re-login rules as {@link ApiClient.request}.
   *
   * @param path The path from the server root.
   * @param options Query, signal, and timeouts.
   * @returns The open answer: status, headers, `chunks` of the body, `cancel()`.
   * @throws The same errors as {@link ApiClient.request}.
   */
  async stream(path: string, options: StreamOptions = {}): Promise<TransportStream> {
    return await this.#send("GET", path, {
      query: options.query,
      signal: options.signal,
      headers: this.#headers.get(undefined) ?? this.#headersOf(undefined),
      body: undefined,
      timeout: options.clientTimeout ?? null,
      connectTimeout: options.connectTimeout ?? null,
      stream: true,
      maxBodySize: null, // a watch's lines are limited instead (watching.maxLineSize)
      errorBodySize: this.#networking("errorBodySize"),
      errorBodyTimeout: this.#networking("errorBodyTimeout"),
    }) as TransportStream;
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

  /**
   * Sends a request by the rules of the module doc: with the best credentials, retried and
   * re-logged-in as needed. One async frame for the whole of it (the attempts are inline: in a
   * burst, most requests make one attempt and the frame of each costs a promise and a hop); what
   * only a failure needs is built at the first one ({@link ApiClient.#failure}).
   */
  async #send(method: string, path: string, req: SendRequest): Promise<TransportHead> {
    const signal = req.signal;
    for (;;) { // per credentials: a 401 invalidates them, and the request starts over
      const { key, info } = this.vault.selectNow() ?? await this.vault.select({ signal });
      const transport = this.vault.cached(info, this.#purpose, this.#createTransport);
      // The target goes to the transport as it is (the lean one sends it: no URL cut back).
      const target = path + queryString(req.query);
      req.target = target;
      const url = transport.server + target;
      let retries: Retries | undefined; // the backoffs: at the first failure only
      for (let attempt = 1;; attempt++) {
        const started = performance.now();
        let answer: TransportHead | undefined;
        let error: unknown;
        try {
          answer = req.stream
            ? await transport.stream(method, url, req)
            : await transport.request(method, url, req);
        } catch (failure) {
          error = failure;
        }
        if (answer !== undefined) {
          this.#record(method, url, target, path, answer.status, attempt, started);
          if (answer.status >= 200 && answer.status < 300) return answer;
          error = await answerError(answer, method, url.slice(transport.server.length));
        } else {
          this.#record(method, url, target, path, 0, attempt, started);
          error = connectionError(error, transport.server, method, url, signal);
        }
        if (signal?.aborted) throw signal.reason;
        if (error instanceof UnauthorizedError) {
          this.logger.warn(`${method} ${path}: 401 Unauthorized; re-authenticating`);
          await this.vault.invalidate(key, info, { error, signal });
          break;
        }
        if (!isRetryable(error)) throw error;
        retries ??= new Retries(this.#networking("errorBackoffs"));
        const what = `${method} ${url.slice(transport.server.length)}`;
        const delay = this.#failure(retries, error, attempt, what);
        if (!(await this.#clock.sleep(delay, signal))) throw signal!.reason;
      }
    }
  }

  /**
   * A retryable failure of an attempt: the delay before the next one, logged; or, when the
   * backoffs ran out, the error is logged and thrown.
   */
  #failure(retries: Retries, error: unknown, attempt: number, what: string): number {
    const idx = retries.count !== undefined ? `#${attempt}/${retries.count}` : `#${attempt}`;
    const next = retries.delays.next();
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
    return delay;
  }

  #record(
    method: string,
    url: string,
    target: string,
    path: string,
    code: number,
    attempt: number,
    started: number,
  ): void {
    const logTraffic = this.#networking("logTraffic");
    if (!logTraffic && !this.#onRequest) return;
    const durationMs = performance.now() - started; // one clock read for both
    if (logTraffic) {
      const shown = url.replace(/^[a-z]+:\/\/[^/]*/i, "");
      const ms = Math.round(durationMs);
      this.logger.debug(
        `API: ${method} ${shown} -> ${code || "no response"} in ${ms}ms` +
          (attempt > 1 ? ` (attempt ${attempt})` : ""),
      );
    }
    if (!this.#onRequest) return;
    const watch = target.includes("watch=") && /[?&]watch=(true|1)(&|$)/.test(target);
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
        durationMs,
      });
    } catch (error) {
      this.logger.warn(`The onRequest hook failed: ${error}`);
    }
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

/** The error of a 2xx answer that cannot be what was asked for (see {@link RequestOptions.expect}). */
function badAnswer(
  code: number,
  method: string,
  path: string,
  query: Query | undefined,
  what: string,
): ApiError {
  return new ApiError({ code, method, path: `${path}${queryString(query)}`, text: what });
}

/** The slots low-priority requests may take: three quarters of the limit, at least one. */
function lowLimit(limit: number): number {
  return Math.max(1, Math.floor(limit * 0.75));
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
 * import assert from "node:assert/strict";
 * import { describeRequest } from "./api.ts";
 * assert.deepEqual(describeRequest("PATCH", "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex1/status"), { verb: "patch", resource: "kopfexamples.kopf.dev", subresource: "status" });
 * ```
 */
export function describeRequest(
  method: string,
  path: string,
  watch = false,
): { verb: string; resource: string; subresource: string | undefined } {
  // The first 8 non-empty segments of the path (no more are looked at), as offsets: no split.
  const query = path.indexOf("?");
  const stop = query < 0 ? path.length : query;
  let count = 0;
  for (let from = 0; from < stop;) {
    let to = path.indexOf("/", from);
    if (to < 0 || to > stop) to = stop;
    if (to > from) {
      if (count < 8) {
        SEGMENTS[2 * count] = from;
        SEGMENTS[2 * count + 1] = to;
      }
      count++;
    }
    from = to + 1;
  }
  let group = "";
  let at = count; // where the resource's part starts (none: at the end)
  if (segmentIs(path, count, 0, "api") && count >= 3) at = 2;
  else if (segmentIs(path, count, 0, "apis") && count >= 4) {
    group = segment(path, count, 1)!;
    at = 3;
  }
  if (segmentIs(path, count, at, "namespaces") && count - at >= 3) at += 2;
  const plural = segment(path, count, at);
  const named = at + 1 < count;
  const subresource = segment(path, count, at + 2);
  const resource = plural ? (group ? `${plural}.${group}` : plural) : "";
  const upper = method.toUpperCase();
  const verb = named ? ITEM_VERBS[upper] : watch && upper === "GET" ? "watch" : LIST_VERBS[upper];
  return { verb: verb ?? method.toLowerCase(), resource, subresource };
}

/** Offsets of path segments in {@link describeRequest} (start and end of each; reused). */
const SEGMENTS = new Int32Array(16);

/** The i-th segment that {@link describeRequest} found, or undefined. */
function segment(path: string, count: number, i: number): string | undefined {
  return i < count ? path.slice(SEGMENTS[2 * i], SEGMENTS[2 * i + 1]) : undefined;
}

/** Whether the i-th segment that {@link describeRequest} found is `word`. */
function segmentIs(path: string, count: number, i: number, word: string): boolean {
  return i < count && SEGMENTS[2 * i + 1]! - SEGMENTS[2 * i]! === word.length &&
    path.startsWith(word, SEGMENTS[2 * i]);
}

/** Whether a text is empty or white space only (as `!text.trim()`), without a copy. */
function isBlank(text: string): boolean {
  const first = text.charCodeAt(0);
  if (first > 32 && first < 127) return false; // e.g. `{`: JSON
  return !text.trim();
}

const ITEM_VERBS: Record<string, string> = {
  GET: "get",
  HEAD: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
  POST: "create",
};
const LIST_VERBS: Record<string, string> = {
  GET: "list",
  HEAD: "list",
  POST: "create",
  DELETE: "deletecollection",
};

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

/** The backoffs of a request's retries (made at its first failure) and how many attempts they allow. */
class Retries {
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
function connectionError(
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
async function answerError(answer: TransportHead, method: string, path: string): Promise<unknown> {
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
