/**
 * Settings of requests to the Kubernetes API (`settings.networking`): timeouts,
 * retries and their backoffs, proxies and traffic logging.
 *
 * @module
 */

import { bool, delays, integer, optionalSeconds } from "./_checks.ts";

/**
 * Settings of requests to the Kubernetes API.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().networking;
 * s.errorBackoffs = 2; // one retry after 2 s
 * assert.deepEqual([[...s.errorBackoffs], s.requestTimeout], [[2], 300]);
 * ```
 */
export class NetworkingSettings {
  #requestTimeout: number | null = 300;
  #connectTimeout: number | null = null;
  #errorBackoffs: Iterable<number> = Object.freeze([1, 1, 2, 3, 5, 8, 13, 21]);
  #enforceRetryAfter = false;
  #maxConcurrentRequests: number | null = 64;
  #logTraffic = false;
  #maxBodySize: number | null = 512 * 1024 * 1024;
  #errorBodySize = 1024 * 1024;
  #errorBodyTimeout: number | null = 5;

  /**
   * Bytes an API answer's body (watch streams excepted: `watching.maxLineSize`) may have;
   * a bigger one fails with a `ResponseTooLargeError` (not retried). `null`: none.
   * Default 512 MiB: the longest string a JavaScript engine holds (V8: 2²⁹−24 characters), so
   * no body that could be parsed at all is refused; the operator's lists come in pages
   * (`watching.listPageSize`) far below it.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().networking;
   * assert.equal(s.maxBodySize, 512 * 1024 * 1024);
   * s.maxBodySize = 64 * 1024 * 1024;
   * assert.throws(() => (s.maxBodySize = -1), /networking.maxBodySize/);
   * ```
   */
  get maxBodySize(): number | null {
    return this.#maxBodySize;
  }
  set maxBodySize(value: number | null) {
    this.#maxBodySize = value === null ? null : integer("networking.maxBodySize", value, 1);
  }

  /**
   * Bytes of an error answer's body (4xx, 5xx) that are read for its `Status`; the rest is
   * dropped with the connection. Default 1 MiB: a `Status` is a few hundred bytes; a server's
   * error page a few KiB.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().networking;
   * s.errorBodySize = 4096;
   * assert.equal(s.errorBodySize, 4096);
   * assert.throws(() => (s.errorBodySize = 0), /networking.errorBodySize/);
   * ```
   */
  get errorBodySize(): number {
    return this.#errorBodySize;
  }
  set errorBodySize(value: number) {
    this.#errorBodySize = integer("networking.errorBodySize", value, 1);
  }

  /**
   * Seconds an error answer's body is read for at most, once its headers came (`null`: no
   * bound but the request's timeout); what came by then makes the error. Without it, a watch
   * whose server answers 5xx or 410 and then stalls would hang: its inactivity timeout watches
   * only 2xx streams. Default 5.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().networking;
   * assert.equal(s.errorBodyTimeout, 5);
   * s.errorBodyTimeout = null;
   * assert.equal(s.errorBodyTimeout, null);
   * ```
   */
  get errorBodyTimeout(): number | null {
    return this.#errorBodyTimeout;
  }
  set errorBodyTimeout(value: number | null) {
    this.#errorBodyTimeout = optionalSeconds("networking.errorBodyTimeout", value);
  }

  /**
   * How many API requests (watches excepted) may be in flight at once; `null`: unlimited.
   * Default 64: a burst of thousands of objects then queues its writes instead of opening
   * thousands of connections at once (which costs hundreds of MB), at the same throughput.
   */
  get maxConcurrentRequests(): number | null {
    return this.#maxConcurrentRequests;
  }
  set maxConcurrentRequests(value: number | null) {
    this.#maxConcurrentRequests = value === null
      ? null
      : integer("networking.maxConcurrentRequests", value, 1);
  }

  /** Limit of one API request, watches excepted (seconds; `null`: none). Default 300. */
  get requestTimeout(): number | null {
    return this.#requestTimeout;
  }
  set requestTimeout(value: number | null) {
    this.#requestTimeout = optionalSeconds("networking.requestTimeout", value);
  }

  /** Limit of connecting for API requests (`null`: only the request timeout). Default null. */
  get connectTimeout(): number | null {
    return this.#connectTimeout;
  }
  set connectTimeout(value: number | null) {
    this.#connectTimeout = optionalSeconds("networking.connectTimeout", value);
  }

  /**
   * Pauses between retries of API requests that failed on the network or
   * with 5xx; one more attempt than pauses; a single number is one pause;
   * `[]` disables retrying. Default 1, 1, 2, 3, 5, 8, 13, 21.
   */
  get errorBackoffs(): Iterable<number> {
    return this.#errorBackoffs;
  }
  set errorBackoffs(value: number | Iterable<number>) {
    this.#errorBackoffs = delays("networking.errorBackoffs", value);
  }

  /** Whether `Retry-After` always wins over the backoff (else the longer one). Default false. */
  get enforceRetryAfter(): boolean {
    return this.#enforceRetryAfter;
  }
  set enforceRetryAfter(value: boolean) {
    this.#enforceRetryAfter = bool("networking.enforceRetryAfter", value);
  }

  /**
   * Whether every API request is logged at the debug level: the method, the path with its
   * query, the HTTP code and the duration (never a header, so never a token). `kopf run --debug`
   * turns it on. Default false. Requests go through the HTTP(S) proxy of `HTTPS_PROXY` /
   * `HTTP_PROXY` (`NO_PROXY` excepted, lower-case names too), as Kopf's `trust_env` does.
   */
  get logTraffic(): boolean {
    return this.#logTraffic;
  }
  set logTraffic(value: boolean) {
    this.#logTraffic = bool("networking.logTraffic", value);
  }
}
