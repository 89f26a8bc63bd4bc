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
 *   new, a {@link LoginError} escalates — at once with a vault that no
 *   authenticator watches (one's own, for `KubeClient.fromVault`).
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

import type { ConnectionInfo, Vault } from "../structs/credentials.ts";
import { type Clock, realClock } from "../aio/clock.ts";
import type {
  ApiClientOptions,
  ClientLogger,
  ClientSettings,
  Query,
  RequestOptions,
  RequestRecord,
  StreamOptions,
} from "./api_options.ts";
import { ApiError, isRetryable, UnauthorizedError } from "./errors.ts";
import { describeRequest } from "./request_description.ts";
import { RequestSlots } from "./request_slots.ts";
import {
  createTransport,
  type FetchFn,
  type Transport,
  type TransportAnswer,
  type TransportHead,
  type TransportStream,
} from "./transport.ts";
import { answerError, badAnswer, connectionError, queryString, Retries } from "./_api_answers.ts";
import { type ClientNetworking, DEFAULTS, setting } from "./_settings.ts";

export type * from "./api_options.ts";
export { describeRequest } from "./request_description.ts";

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
  /** The request slots: `maxConcurrentRequests`, read at every request. */
  #slots = new RequestSlots();
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
   * @returns The parsed JSON (undefined for an empty body); with `expect: "text"`, the text.
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
    await this.#slots.acquire(
      this.#networking("maxConcurrentRequests"),
      options.priority === "low",
    );
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
      this.#slots.release(options.priority === "low");
    }
    const text = (sent as TransportAnswer).text;
    if (options.expect === "text") return text as T;
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
   * How many requests of normal priority are in flight now (not the low-priority ones, e.g. the
   * Events' writes), each holding a slot of `maxConcurrentRequests` when it is set.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Vault } from "../structs/credentials.ts";
   * import { ApiClient } from "./api.ts";
   * using vault = new Vault();
   * assert.deepEqual(new ApiClient({ vault }).inFlight, 0);
   * ```
   */
  get inFlight(): number {
    return this.#slots.inFlight;
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
    return this.#slots.backlog;
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
   * re-logged-in as needed; what only a failure needs is built at the first one
   * ({@link ApiClient.#failure}).
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
    const durationMs = performance.now() - started;
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

/** Whether a text is empty or white space only (as `!text.trim()`). */
function isBlank(text: string): boolean {
  const first = text.charCodeAt(0);
  if (first > 32 && first < 127) return false; // e.g. `{`: JSON
  return !text.trim();
}
