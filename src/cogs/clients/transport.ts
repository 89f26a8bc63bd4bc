/**
 * From credentials to requests: one {@link Transport} per
 * {@link ConnectionInfo} — the Authorization header, the TLS material loaded
 * into a `Deno.createHttpClient` (CA certificates, client certificate and
 * key), and a `fetch` bound to both. The vault caches one transport per
 * credentials and closes it when they leave the vault.
 *
 * TLS in Deno: `caCerts` are trusted in addition to the system roots; a
 * client certificate and key authenticate the client (mTLS). `insecure`
 * (skip server verification) has no per-client switch in Deno, so insecure
 * HTTPS credentials go through `node:https` with `rejectUnauthorized: false`
 * (see `_insecure_fetch.ts`); plain `http://` needs nothing.
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

/** The shape of `fetch` that transports use (a URL string and an init). */
export type FetchFn = (url: string, init: RequestInit) => Promise<Response>;

/** Requests with one set of credentials. */
export interface Transport {
  /** The server URL, without a trailing slash. */
  readonly server: string;
  /** Headers for every request: Authorization (if any) and User-Agent. */
  readonly headers: Headers;
  /**
   * Sends a request with the credentials' TLS material and headers.
   *
   * @param url The full URL.
   * @param init The request (headers are added to the transport's).
   * @returns The response.
   */
  fetch(url: string, init: RequestInit): Promise<Response>;
  /** Frees the HTTP client (idempotent). */
  close(): void;
}

/** Options of {@link createTransport}. */
export interface TransportOptions {
  /** A `fetch` to use instead of the global one (for tests). */
  fetch?: FetchFn | undefined;
  /** The User-Agent (default `kopf/<version>`). */
  userAgent?: string | undefined;
}

/**
 * Builds the transport for credentials: reads the CA, certificate and key
 * (files or data), and creates the HTTP client.
 *
 * @param info The credentials.
 * @param options A custom `fetch` (tests) and the User-Agent.
 * @returns The transport; close it when done.
 * @throws {LoginError} If a file is missing or the TLS material is not valid.
 * @throws {AccessError} If Deno may not read a file (`--allow-read`).
 *
 * @example
 * ```ts
 * import { ConnectionInfo } from "../structs/credentials.ts";
 * import { createTransport } from "./transport.ts";
 *
 * const transport = createTransport(new ConnectionInfo({ server: "http://127.0.0.1:6443/", token: "t0k" }));
 * console.log(transport.server, transport.headers.get("authorization")); // "http://127.0.0.1:6443" "Bearer t0k"
 * transport.close();
 * ```
 */
export function createTransport(info: ConnectionInfo, options: TransportOptions = {}): Transport {
  const server = info.server.replace(/\/+$/, "");
  const headers = new Headers({ "user-agent": options.userAgent ?? `kopf/${VERSION}` });
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
  if (tls || own) {
    try {
      client = Deno.createHttpClient({
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

  let closed = false;
  return {
    server,
    headers,
    fetch(url, init) {
      // A plain record (fetch converts it once): no Headers objects built per request.
      const merged: Record<string, string> = {};
      headers.forEach((value, name) => (merged[name] = value));
      const own = init.headers;
      if (own instanceof Headers || Array.isArray(own)) {
        new Headers(own).forEach((value, name) => (merged[name] = value));
      } else if (own) {
        for (const [name, value] of Object.entries(own)) merged[name.toLowerCase()] = value;
      }
      const request: RequestInit & { client?: Deno.HttpClient } = { ...init, headers: merged };
      if (client) request.client = client;
      return send(url, request);
    },
    close() {
      if (closed) return;
      closed = true;
      client?.close();
    },
  };
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
 * import { ConnectionInfo } from "../structs/credentials.ts";
 * import { authorizationOf } from "./transport.ts";
 * console.log(authorizationOf(new ConnectionInfo({ server: "x", username: "u", password: "p" }))); // "Basic dTpw"
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
 * import { pemText } from "./transport.ts";
 * const pem = "-----BEGIN CERTIFICATE-----\nMII=\n-----END CERTIFICATE-----\n";
 * console.log(pemText(btoa(pem)) === pem, pemText(pem) === pem); // true true
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
