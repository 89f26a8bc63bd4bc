/**
 * The failures of a request that are not the API's answers: no answer at all (a refused or
 * reset connection, a broken TLS handshake, a timeout: {@link ApiConnectionError}, retried like
 * 5xx), a server certificate that fails verification ({@link TlsVerificationError}: the same
 * request would fail the same way, so never retried), and an answer bigger than a setting
 * allows ({@link ResponseTooLargeError}: never retried).
 *
 * @module
 */

/**
 * The request got no answer: the connection was refused or reset, the TLS
 * handshake broke, or it timed out. Retried with backoff like 5xx. (A server
 * certificate that fails verification is a {@link TlsVerificationError}.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiConnectionError } from "@kopf/kopf";
 * const e = new ApiConnectionError("GET", "http://127.0.0.1:9/api", new TypeError("refused"));
 * assert.deepEqual([e.name, e.timedOut], ["ApiConnectionError", false]);
 * ```
 */
export class ApiConnectionError extends Error {
  /** The HTTP method. */
  readonly method: string;
  /** The full URL. */
  readonly url: string;
  /** Whether it failed because a timeout ran out (else: a network error). */
  readonly timedOut: boolean;

  /**
   * Creates the error.
   *
   * @param method The HTTP method.
   * @param url The full URL.
   * @param cause The underlying failure.
   * @param timeout The timeout that ran out, in seconds, if that was the failure.
   */
  constructor(method: string, url: string, cause: unknown, timeout?: number) {
    const what = timeout !== undefined
      ? `timed out after ${timeout}s`
      : `failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    super(
      `${method} ${url} ${what} — check that the API server is running and reachable`,
      { cause },
    );
    this.name = "ApiConnectionError";
    this.method = method;
    this.url = url;
    this.timedOut = timeout !== undefined;
  }
}

/**
 * The API server's TLS certificate failed verification: it is not signed by a CA the
 * credentials trust, not issued for the server's host name, expired or not yet valid. Unlike
 * an {@link ApiConnectionError}, it is not transient, so it is never retried: the message names
 * the server, the TLS library's words, and what to change in the kubeconfig.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TlsVerificationError } from "@kopf/kopf";
 *
 * const e = new TlsVerificationError("https://10.0.0.1:6443", "invalid peer certificate: UnknownIssuer");
 * assert.equal(e.name, "TlsVerificationError");
 * assert.equal(e.problem, "untrusted");
 * assert.match(e.message, /^The API server https:\/\/10\.0\.0\.1:6443 .*certificate-authority-data/);
 * ```
 */
export class TlsVerificationError extends Error {
  /** The server as the credentials name it, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  /** The TLS library's words, e.g. `invalid peer certificate: UnknownIssuer`. */
  readonly reason: string;
  /** What is wrong: a CA not trusted, a host name not in it, or its validity period. */
  readonly problem: "untrusted" | "name" | "validity";

  /**
   * Creates the error.
   *
   * @param server The server as the credentials name it.
   * @param reason The TLS library's words.
   * @param options The usual error options (the failure as `cause`).
   */
  constructor(server: string, reason: string, options?: ErrorOptions) {
    const problem = /not valid for name|NotValidForName/i.test(reason)
      ? "name"
      : /expired|not valid (yet|before)|NotValidYet/i.test(reason)
      ? "validity"
      : "untrusted";
    const what = {
      untrusted: "its certificate is not signed by a CA that the kubeconfig trusts: set the " +
        "cluster's certificate-authority (a file) or certificate-authority-data in the " +
        "kubeconfig to the CA that signed it",
      name: "its certificate is not issued for the host name in the kubeconfig: make the " +
        "cluster's server in the kubeconfig a name or address that the certificate names",
      validity: "its certificate has expired or is not valid yet: renew the server's " +
        "certificate (or correct this machine's clock)",
    }[problem];
    super(
      `The API server ${server} failed TLS verification (${reason}): ${what} ` +
        "(insecure-skip-tls-verify: true in the kubeconfig skips the check, for testing only)",
      options,
    );
    this.name = "TlsVerificationError";
    this.server = server;
    this.reason = reason;
    this.problem = problem;
  }
}

/**
 * The TLS library's words when an error (or one of its causes) is a failed verification of
 * the server's certificate — as rustls puts it, through `Deno.connectTls` or `fetch`.
 *
 * @param error Any error.
 * @returns E.g. `invalid peer certificate: UnknownIssuer`, or undefined for other errors.
 */
export function tlsVerificationFailure(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const found = /invalid peer certificate: [^\n]*/.exec(e.message);
    if (found) return found[0];
  }
  return undefined;
}

/**
 * An answer was bigger than a setting allows: a body over
 * `networking.maxBodySize`, or a watch-stream's line over
 * `watching.maxLineSize`. Never retried (the same request would bring the
 * same answer); the message names the size, the setting and what to do.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 *
 * const error = new kopf.ResponseTooLargeError("The answer's body", 1024, "networking.maxBodySize");
 * assert.equal(error.name, "ResponseTooLargeError");
 * assert.equal(error.limit, 1024);
 * assert.match(error.message, /over 1024 bytes.*raise networking\.maxBodySize/);
 * const named = error.of("GET", "/api/v1/pods");
 * assert.match(named.message, /^GET \/api\/v1\/pods: The answer's body is over 1024 bytes/);
 * assert.equal(named.cause, error);
 * ```
 */
export class ResponseTooLargeError extends Error {
  /** What was too large (e.g. "The answer's body"), without the request. */
  readonly what: string;
  /** The limit in bytes. */
  readonly limit: number;
  /** The setting that sets the limit, e.g. `networking.maxBodySize`. */
  readonly setting: string;
  /** The size the answer declared (its `Content-Length`), if it did. */
  readonly size: number | undefined;

  /**
   * Creates the error.
   *
   * @param what What was too large, e.g. "The answer's body".
   * @param limit The limit in bytes.
   * @param setting The setting of the limit.
   * @param size The size the answer declared, if any.
   * @param options The usual error options.
   */
  constructor(
    what: string,
    limit: number,
    setting: string,
    size?: number,
    options?: ErrorOptions,
  ) {
    super(
      `${what} is over ${limit} bytes${size !== undefined ? ` (it declares ${size})` : ""}` +
        ` — raise ${setting} if such answers are expected, else the server is broken`,
      options,
    );
    this.name = "ResponseTooLargeError";
    this.what = what;
    this.limit = limit;
    this.setting = setting;
    this.size = size;
  }

  /**
   * The same error with the request named (its cause is this one).
   *
   * @param method The HTTP method.
   * @param path The request's path.
   * @returns The new error.
   */
  of(method: string, path: string): ResponseTooLargeError {
    return new ResponseTooLargeError(
      `${method} ${path}: ${this.what}`,
      this.limit,
      this.setting,
      this.size,
      { cause: this },
    );
  }
}
