/**
 * From credentials to requests: one {@link Transport} per
 * {@link ConnectionInfo} — the Authorization header, the TLS material (CA
 * certificates, client certificate and key), and an HTTP client bound to
 * both. The vault caches one transport per credentials and closes it when
 * they leave the vault.
 *
 * Two HTTP clients, one shape of answers (status, a header lookup, the body
 * as text or as a stream of byte chunks):
 * - **http1**: the lean HTTP/1.1 client of `http1.ts` over
 *   `Deno.connect`/`Deno.connectTls`, with a keep-alive pool per transport.
 *   No `Request`, `Response`, `Headers` or `ReadableStream` per request:
 *   about half the operator's CPU per object in a burst.
 * - **fetch**: Deno's `fetch` with a `Deno.createHttpClient` (`_fetch_transport.ts`).
 *
 * Which one: the environment variable `KOPF_HTTP_CLIENT` (`http1` or
 * `fetch`), else {@link DEFAULT_HTTP_CLIENT} (`http1`). Even when `http1` is asked for,
 * `fetch` serves: an injected `fetch` (tests), `insecure` HTTPS (see below),
 * and a server for which a proxy is configured (`HTTPS_PROXY`/`HTTP_PROXY`/
 * `ALL_PROXY` or their lower-case names, unless `NO_PROXY`/`no_proxy`
 * covers the host — `fetch` honours them; the lean client does not speak to
 * proxies) or when those variables cannot be read.
 *
 * Narrow permissions: Deno's `fetch` reads the proxy variables without
 * `--allow-env`, so when they cannot be read a proxy cannot be ruled out and
 * `fetch` is used. For the lean client under a narrow `--allow-env`, add
 * `KOPF_HTTP_CLIENT,HTTPS_PROXY,https_proxy,HTTP_PROXY,http_proxy,ALL_PROXY,all_proxy,NO_PROXY,no_proxy`.
 *
 * TLS in Deno: `caCerts` are trusted in addition to the system roots; a
 * client certificate and key authenticate the client (mTLS). `insecure`
 * (skip server verification) has no per-client switch in Deno, so insecure
 * HTTPS credentials go through `node:https` with `rejectUnauthorized: false`
 * (see `_insecure_fetch.ts`); plain `http://` needs nothing.
 *
 * Timeouts of both clients are {@link realClock} timers, cancelled when the
 * answer ends: `timeout` for the whole request including its body,
 * `connectTimeout` up to the answer's headers (connecting included). A
 * timeout rejects with a {@link RequestTimeoutError}; an abort with the
 * signal's reason. Both read an error answer's body (status 300 and up) only
 * within `errorBodySize` and `errorBodyTimeout` (`_bounded.ts`), and a 2xx
 * body read whole within `maxBodySize`.
 *
 * @module
 */

import {
  AccessError,
  type ConnectionInfo,
  LoginError,
  type PemData,
} from "../structs/credentials.ts";
import { VERSION } from "../configs/version.ts";
import { insecureFetch } from "./_insecure_fetch.ts";
import { permissionError, permissionHint } from "./_permissions.ts";
import { Http1Client, type Http1Response } from "./http1.ts";
import { fetchTransport, merged } from "./_fetch_transport.ts";
import { boundedText } from "./_bounded.ts";
import { TRACING } from "../tracing/tracing.ts";
import { tracedRequest } from "./_request_tracing.ts";

export { RequestTimeoutError } from "./http1.ts";

export type {
  FetchFn,
  Transport,
  TransportAnswer,
  TransportHead,
  TransportRequest,
  TransportStream,
} from "./transport_types.ts";
import type { FetchFn, Transport, TransportAnswer, TransportRequest } from "./transport_types.ts";

/** Options of {@link createTransport}. */
export interface TransportOptions {
  /** A `fetch` to use instead of the global one (for tests). */
  fetch?: FetchFn | undefined;
  /** The User-Agent (default `kopf/<version>`). */
  userAgent?: string | undefined;
  /**
   * The HTTP client, whatever the environment says (an injected `fetch` and
   * insecure HTTPS use `fetch` anyway); default: see the module doc.
   */
  client?: "http1" | "fetch" | undefined;
  /**
   * Reads `KOPF_HTTP_CLIENT` and the proxy variables when `client` is not given (default
   * `Deno.env.get`). Deno's `fetch` itself still reads the proxy variables of the process.
   */
  env?: ((name: string) => string | undefined) | undefined;
}

/**
 * Builds the transport for credentials: reads the CA, certificate and key
 * (files or data), and creates the HTTP client.
 *
 * @param info The credentials.
 * @param options A custom `fetch` (tests), the User-Agent, the HTTP client.
 * @returns The transport; close it when done.
 * @throws {LoginError} If a file is missing or the TLS material is not valid.
 * @throws {AccessError} If Deno may not read a file (`--allow-read`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo } from "../structs/credentials.ts";
 * import { createTransport } from "./transport.ts";
 *
 * const transport = createTransport(new ConnectionInfo({ server: "http://127.0.0.1:6443/", token: "t0k" }));
 * assert.deepEqual([transport.server, transport.headers.get("authorization")], ["http://127.0.0.1:6443", "Bearer t0k"]);
 * transport.close();
 * ```
 */
export function createTransport(info: ConnectionInfo, options: TransportOptions = {}): Transport {
  const server = info.server.replace(/\/+$/, "");
  const userAgent = options.userAgent ?? `kopf/${VERSION}`;
  const headers = new Headers({ "user-agent": userAgent });
  const authorization = authorizationOf(info);
  if (authorization) headers.set("authorization", authorization);

  const ca = readPem(info.caPath, info.caData, "CA certificate");
  const cert = readPem(info.certificatePath, info.certificateData, "client certificate");
  const key = readPem(info.privateKeyPath, info.privateKeyData, "client private key");
  if ((cert === undefined) !== (key === undefined)) {
    throw new LoginError(
      `Credentials for ${server} have a client ${
        cert ? "certificate without a key" : "key without a certificate"
      }: give both`,
    );
  }
  const https = server.startsWith("https:");
  const base: Record<string, string> = { "user-agent": userAgent };
  if (authorization) base.authorization = authorization;

  const lean = !options.fetch && !(https && info.insecure) &&
    (options.client ?? httpClientFor(server, options.env)) === "http1";
  if (lean) {
    if (https) checkPem(server, ca, cert, key);
    const client = new Http1Client(server, {
      tls: { caCerts: ca ? [ca] : undefined, cert, key },
    });
    return leanTransport(server, headers, base, client);
  }

  let client: Deno.HttpClient | undefined;
  let send: FetchFn;
  if (options.fetch) {
    send = options.fetch;
  } else if (https && info.insecure) {
    send = insecureFetch({ cert, key });
  } else {
    send = fetch;
  }
  const tls = https && !(info.insecure && !options.fetch) && (ca || cert);
  // A client of its own also without TLS material: closing the transport then
  // closes its connections instead of leaving them in the process-wide pool
  // (a burst of requests opens as many connections as there are requests in flight).
  const own = !options.fetch && !(https && info.insecure);
  if (tls || own) client = httpClientOf(server, ca, cert, key);
  return fetchTransport(server, headers, base, send, client);
}

/**
 * The HTTP client when `KOPF_HTTP_CLIENT` does not name one (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_HTTP_CLIENT } from "./transport.ts";
 * assert.deepEqual(DEFAULT_HTTP_CLIENT, "http1");
 * ```
 */
export const DEFAULT_HTTP_CLIENT: "http1" | "fetch" = "http1";

/**
 * Which HTTP client serves a server: the one `KOPF_HTTP_CLIENT` names, else
 * `preferred`; but `fetch` when a proxy is configured for the server and
 * `NO_PROXY` does not exclude it, or when the environment cannot be read
 * (see the module doc).
 *
 * @param server The server URL.
 * @param env Reads an environment variable (default `Deno.env.get`; may throw without `--allow-env`).
 * @param preferred The client when `KOPF_HTTP_CLIENT` is not set (default {@link DEFAULT_HTTP_CLIENT}).
 * @returns `http1` or `fetch`.
 * @throws {LoginError} When `KOPF_HTTP_CLIENT` names neither (a mistake, not a preference).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { httpClientFor } from "./transport.ts";
 * const env = (vars: Record<string, string>) => (name: string) => vars[name];
 * assert.deepEqual(httpClientFor("https://k8s:6443", env({ KOPF_HTTP_CLIENT: "http1" })), "http1");
 * assert.deepEqual(httpClientFor("https://k8s:6443", env({}), "http1"), "http1");
 * assert.deepEqual(httpClientFor("https://k8s:6443", env({ HTTPS_PROXY: "http://proxy:3128" }), "http1"), "fetch");
 * assert.deepEqual(httpClientFor("https://k8s:6443", env({ https_proxy: "http://p:3128", NO_PROXY: ".local,k8s" }), "http1"), "http1");
 * assert.deepEqual(httpClientFor("http://k8s:8080", env({ KOPF_HTTP_CLIENT: "fetch" }), "http1"), "fetch");
 * ```
 */
export function httpClientFor(
  server: string,
  env: ((name: string) => string | undefined) | undefined = (name) => Deno.env.get(name),
  preferred: "http1" | "fetch" = DEFAULT_HTTP_CLIENT,
): "http1" | "fetch" {
  let named: string | undefined;
  try {
    named = env("KOPF_HTTP_CLIENT")?.trim().toLowerCase();
  } catch {
    return "fetch"; // the environment cannot be read: a proxy cannot be ruled out
  }
  if (named && named !== "http1" && named !== "fetch") {
    throw new LoginError(
      `KOPF_HTTP_CLIENT is "${named}": set it to "http1" or "fetch", or unset it (default ${DEFAULT_HTTP_CLIENT})`,
    );
  }
  try {
    const chosen = named || preferred;
    if (chosen !== "http1") return "fetch";
    const url = new URL(server);
    const names = url.protocol === "https:"
      ? ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
      : ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
    if (!names.some((name) => env(name)?.trim())) return "http1";
    const noProxy = env("NO_PROXY") ?? env("no_proxy") ?? "";
    return bypassesProxy(url, noProxy) ? "http1" : "fetch";
  } catch {
    return "fetch"; // the environment cannot be read: a proxy cannot be ruled out
  }
}

/** Whether `NO_PROXY` excludes the URL's host (`*`, a host or domain suffix, `host:port`). */
function bypassesProxy(url: URL, noProxy: string): boolean {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  for (let entry of noProxy.split(",")) {
    entry = entry.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return true;
    let entryPort: string | undefined;
    const m = /^(.*):(\d+)$/.exec(entry);
    if (m && !entry.startsWith("[") && (m[1]!.match(/:/g)?.length ?? 0) === 0) {
      [entry, entryPort] = [m[1]!, m[2]];
    }
    entry = entry.replace(/^\[(.*)\]$/, "$1").replace(/^\*?\./, ".");
    if (entryPort !== undefined && entryPort !== port) continue;
    const domain = entry.startsWith(".") ? entry.slice(1) : entry;
    if (host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

function checkPem(
  server: string,
  ca: string | undefined,
  cert: string | undefined,
  key: string | undefined,
): void {
  // The lean client meets its TLS material at the first connection; check it now, as fetch's client does.
  if (ca || cert) httpClientOf(server, ca, cert, key).close();
}

function httpClientOf(
  server: string,
  ca: string | undefined,
  cert: string | undefined,
  key: string | undefined,
): Deno.HttpClient {
  try {
    return Deno.createHttpClient({
      ...(ca ? { caCerts: [ca] } : {}),
      ...(cert && key ? { cert, key } : {}),
    });
  } catch (error) {
    throw new LoginError(
      `Credentials for ${server} have TLS material that is not valid PEM: ${
        (error as Error).message
      }`,
      { cause: error },
    );
  }
}

function targetOf(server: string, url: string): string {
  if (!url.startsWith(server)) {
    throw new TypeError(`The URL ${url} is not on the transport's server ${server}`);
  }
  return url.slice(server.length) || "/";
}

function leanTransport(
  server: string,
  headers: Headers,
  base: Record<string, string>,
  client: Http1Client,
): Transport {
  // The merged headers of frozen request headers (the API client's few usual ones) are made
  // once, for the first 8 such objects: found by identity in a short list.
  const frozen: Record<string, string>[] = []; // own, merged, own, merged, …
  const headersOf = (own: Record<string, string> | undefined) => {
    if (own === undefined || !Object.isFrozen(own)) return merged(base, own);
    for (let i = 0; i < frozen.length; i += 2) if (frozen[i] === own) return frozen[i + 1]!;
    const all = Object.freeze(merged(base, own));
    if (frozen.length < 16) frozen.push(own, all);
    return all;
  };
  const send = (method: string, url: string, init: TransportRequest) =>
    client.request({
      method,
      target: init.target || targetOf(server, url),
      headers: headersOf(init.headers),
      body: init.body,
      signal: init.signal,
      timeout: init.timeout,
      connectTimeout: init.connectTimeout,
      maxBodySize: init.maxBodySize,
    });
  const request = (method: string, url: string, init: TransportRequest) => {
    // No async frame: the answer's text is usually all buffered when its head is read.
    let sent;
    try {
      sent = send(method, url, init);
    } catch (error) { // a URL not on the server: a rejection, as from an async function
      return Promise.reject(error);
    }
    return sent.then((answer) => leanAnswerOf(answer, init));
  };
  return {
    server,
    headers,
    client: "http1",
    // With tracing on, a client span per request (fetch's are the runtime's own).
    request: TRACING
      ? (method, url, init) => tracedRequest(request, method, url, init)
      : (request as Transport["request"]),
    async stream(method, url, init) {
      const answer = await send(method, url, init);
      const chunks: AsyncIterable<Uint8Array> = {
        [Symbol.asyncIterator]: () => ({
          // No async frame per chunk; a view of the connection's buffer (see `chunks`).
          next: () => answer.readView().then(chunkResult),
          return: () => {
            answer.cancel();
            return Promise.resolve(DONE);
          },
        }),
      };
      return {
        status: answer.status,
        chunks,
        read: () => answer.readView(),
        header: (name) => answer.header(name),
        headers: () => answer.headers(),
        text: () => errorText(answer, init),
        cancel: () => answer.cancel(),
      };
    },
    close() {
      client.close();
    },
  };
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/** A chunk of a lean stream as an iterator's result (null: the end). */
function chunkResult(value: Uint8Array | null): IteratorResult<Uint8Array, undefined> {
  return value ? { value, done: false } : DONE;
}

/** The whole answer of a lean client's answer: at once when its body is all buffered. */
function leanAnswerOf(
  answer: Http1Response,
  init: TransportRequest,
): LeanAnswer | Promise<LeanAnswer> {
  if (answer.status >= 300) return errorText(answer, init).then((t) => new LeanAnswer(answer, t));
  const text = answer.bufferedText();
  if (text !== undefined) return new LeanAnswer(answer, text);
  return answer.text().then((text) => new LeanAnswer(answer, text));
}

/** An error answer's body, within the request's bounds (see `_bounded.ts`). */
function errorText(answer: Http1Response, init: TransportRequest): Promise<string> {
  const size = init.errorBodySize;
  const seconds = init.errorBodyTimeout ?? null;
  if (size === undefined && seconds === null) return answer.text();
  const buffered = answer.bufferedText(size); // the usual small Status, all arrived: at once
  if (buffered !== undefined) return Promise.resolve(buffered);
  return boundedText(() => answer.read(), () => answer.cancel(), size ?? Infinity, seconds);
}

/** A whole answer of the lean client (its methods on the prototype: no closures per answer). */
class LeanAnswer implements TransportAnswer {
  readonly status: number;
  readonly text: string;
  #answer: Http1Response;

  constructor(answer: Http1Response, text: string) {
    this.status = answer.status;
    this.text = text;
    this.#answer = answer;
  }

  header(name: string): string | null {
    return this.#answer.header(name);
  }

  headers(): Headers {
    return this.#answer.headers();
  }
}

/**
 * The Authorization header for credentials, as Kopf builds it: the scheme
 * and the token (scheme `Bearer` by default), else Basic for a username and
 * password, else none.
 *
 * @param info The credentials.
 * @returns The header value, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo } from "../structs/credentials.ts";
 * import { authorizationOf } from "./transport.ts";
 * assert.deepEqual(authorizationOf(new ConnectionInfo({ server: "x", username: "u", password: "p" })), "Basic dTpw");
 * ```
 */
export function authorizationOf(info: ConnectionInfo): string | undefined {
  if (info.scheme && info.token) return `${info.scheme} ${info.token}`;
  if (info.scheme) return info.scheme;
  if (info.token) return `Bearer ${info.token}`;
  if (info.username && info.password) {
    const bytes = new TextEncoder().encode(`${info.username}:${info.password}`);
    return `Basic ${btoa(String.fromCharCode(...bytes))}`;
  }
  return undefined;
}

/**
 * PEM text from PEM data: as is if it is PEM already, else decoded from
 * base64 (kubeconfig's `*-data` fields).
 *
 * @param data PEM text, base64 of PEM, or bytes of either.
 * @returns The PEM text.
 * @throws {LoginError} If it is neither PEM nor base64.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pemText } from "./transport.ts";
 * const pem = "-----BEGIN CERTIFICATE-----\nMII=\n-----END CERTIFICATE-----\n";
 * assert.deepEqual([pemText(btoa(pem)) === pem, pemText(pem) === pem], [true, true]);
 * ```
 */
export function pemText(data: PemData): string {
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  if (text.includes("-----BEGIN")) return text;
  try {
    return new TextDecoder().decode(
      Uint8Array.from(atob(text.replace(/\s+/g, "")), (c) => c.charCodeAt(0)),
    );
  } catch (error) {
    throw new LoginError("TLS data in the credentials is neither PEM nor base64 of PEM", {
      cause: error,
    });
  }
}

function readPem(
  path: string | undefined,
  data: PemData | undefined,
  what: string,
): string | undefined {
  if (data) return pemText(data);
  if (!path) return undefined;
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    const denied = permissionError(error);
    if (denied) {
      throw new AccessError(`Reading the ${what} ${path} ${permissionHint(denied)}`, {
        cause: error,
      });
    }
    if (error instanceof Deno.errors.NotFound) {
      throw new LoginError(
        `The ${what} file ${path} does not exist: fix the kubeconfig or the login handler`,
        { cause: error },
      );
    }
    throw new LoginError(`Cannot read the ${what} file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
