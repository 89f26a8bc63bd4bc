/**
 * What the admission and conversion webhook callers share: HTTPS clients
 * that trust a webhook's `caBundle` (cached per bundle) and present the API
 * server's client certificate when it has one for webhooks, and failures said
 * as Go's HTTP client says them, which is what kube-apiserver prints.
 *
 * The client certificate is kube-apiserver's admission-configuration
 * kubeconfig (`client-certificate`/`client-key` per webhook host), reduced to
 * one certificate for every webhook: `startApiServer({ webhookClientCert })`.
 * `ApiServer` hands it to its callers (`Admission`, `Conversion`).
 *
 * Certificates are judged as kube-apiserver (Go) judges them: rustls (`fetch`)
 * first; a serving certificate it refuses only for being a CA
 * (`CaUsedAsEndEntity` — Python Kopf's self-signed certificates, which are
 * their own `caBundle`) is judged again by Go's rules (`webhook_tls.ts`),
 * and that bundle's calls go that way from then on (a fresh `node:https`
 * connection per call).
 *
 * @module
 */

import { httpClientAttributes } from "../../cogs/tracing/attributes.ts";
import {
  endSpan,
  injectTraceContext,
  SpanKinds,
  startSpan,
  TRACING,
} from "../../cogs/tracing/tracing.ts";
import { GoVerifyError } from "./webhook_tls.ts";

/**
 * HTTP clients per `caBundle`, cached until closed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WebhookClients } from "./webhook_client.ts";
 * const clients = new WebhookClients();
 * assert.deepEqual(clients.get(undefined), undefined); // the system's trust roots
 * clients.close();
 * ```
 */
export class WebhookClients {
  readonly #clients = new Map<string, Deno.HttpClient>();
  readonly #identity: WebhookClientCertificate | undefined;
  readonly #roots: string[];
  /** Bundles whose webhooks serve a CA certificate (rustls refuses it): called as Go judges. */
  readonly #goVerified = new Set<string>();

  /**
   * @param identity The client certificate to present, if any.
   * @param roots PEM certificates trusted besides the system's roots (the host's trust store).
   */
  constructor(identity?: WebhookClientCertificate, roots: string[] = []) {
    this.#identity = identity;
    this.#roots = roots;
  }

  /**
   * The client that trusts a base64 PEM bundle (and presents the client certificate, if any).
   *
   * @param caBundle The base64 PEM bundle of `clientConfig.caBundle`, if any.
   * @returns The client, or undefined for the default trust roots and no client certificate.
   * @throws {Error} A bundle that is not base64 PEM, or a bad client certificate or key.
   */
  get(caBundle: string | undefined): Deno.HttpClient | undefined {
    if (!caBundle && !this.#identity && !this.#roots.length) return undefined;
    const key = caBundle ?? "";
    let client = this.#clients.get(key);
    if (!client) {
      const pem = caBundle ? new TextDecoder().decode(decodeBase64(caBundle)) : undefined;
      const caCerts = pem ? [...this.#roots, pem] : this.#roots;
      client = Deno.createHttpClient({
        ...(caCerts.length ? { caCerts } : {}),
        ...(this.#identity ? { cert: this.#identity.cert, key: this.#identity.key } : {}),
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  /**
   * POSTs a review to a webhook's `clientConfig`, as kube-apiserver's REST client does: the
   * URL with `?timeout=<n>s`, TLS checked against `caBundle`, the answer's text for a 2xx.
   *
   * @param config The webhook's `clientConfig`.
   * @param timeoutSeconds How long to wait.
   * @param body The review.
   * @returns The answer's text.
   * @throws {WebhookCallError} For no URL (a service), no client, a failed call or a non-2xx
   *   answer; `transport` tells a failed call (worded `Post "<url>": <why>`) from the others.
   */
  async post(
    config: WebhookClientConfig,
    timeoutSeconds: number,
    body: unknown,
  ): Promise<string> {
    if (!config.url) {
      const svc = config.service;
      throw new WebhookCallError(
        svc
          ? `service "${svc.namespace}/${svc.name}" is not reachable from the embedded API server (it has no service network; use clientConfig.url)`
          : "the webhook has neither clientConfig.url nor clientConfig.service",
      );
    }
    const url = new URL(config.url);
    url.searchParams.set("timeout", `${timeoutSeconds}s`);
    const target = url.toString();
    let client: Deno.HttpClient | undefined;
    try {
      client = this.get(config.caBundle);
    } catch (e) {
      throw new WebhookCallError(`could not get REST client: ${(e as Error).message}`);
    }
    const signal = AbortSignal.timeout(timeoutSeconds * 1000);
    const json = JSON.stringify(body);
    let answer: { status: number; text: string };
    try {
      answer = config.caBundle && this.#goVerified.has(config.caBundle)
        ? await this.#postAsGo(config.caBundle, url, json, signal)
        : await this.#fetch(target, json, signal, client).catch((e) => {
          // rustls refuses a CA certificate as the serving one; Go (kube-apiserver) accepts
          // it when it is in the bundle (Kopf's self-signed certificates): judge it as Go does.
          if (!config.caBundle || !/CaUsedAsEndEntity/.test(causes(e))) throw e;
          this.#goVerified.add(config.caBundle);
          return this.#postAsGo(config.caBundle, url, json, signal);
        });
    } catch (e) {
      const why = e instanceof GoVerifyError
        ? `tls: failed to verify certificate: ${e.message}`
        : goReason(e, url);
      throw new WebhookCallError(`Post "${target}": ${why}`, true);
    }
    const { status, text } = answer;
    if (status < 200 || status >= 300) {
      throw new WebhookCallError(
        `an error on the server ("${
          text.slice(0, 200)
        }") has prevented the request from succeeding`,
        true,
      );
    }
    return text;
  }

  /** One call through `fetch` (rustls verifies the server's certificate). */
  async #fetch(
    target: string,
    body: string,
    signal: AbortSignal,
    client: Deno.HttpClient | undefined,
  ): Promise<{ status: number; text: string }> {
    const res = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, */*" },
      body,
      signal,
      ...(client ? { client } : {}),
    });
    return { status: res.status, text: await res.text().catch(() => "") };
  }

  /** One call over `node:https`, the server's certificate judged by Go's rules. */
  async #postAsGo(
    caBundle: string,
    url: URL,
    body: string,
    signal: AbortSignal,
  ): Promise<{ status: number; text: string }> {
    const { postVerifyingAsGo } = await import("./webhook_tls.ts");
    // Not Deno's fetch: the trace goes on through a client span of our own (fetch makes its own).
    const span = TRACING
      ? startSpan("POST", httpClientAttributes("POST", url.toString()), { kind: SpanKinds.CLIENT })
      : undefined;
    const headers: Record<string, string> = {};
    injectTraceContext(span, headers);
    try {
      const answer = await postVerifyingAsGo({
        url,
        body,
        rootsPem: new TextDecoder().decode(decodeBase64(caBundle)),
        identity: this.#identity,
        signal,
        headers,
      });
      span?.setAttribute("http.response.status_code", answer.status);
      endSpan(span);
      return answer;
    } catch (e) {
      endSpan(span, e);
      throw e;
    }
  }

  /** Closes the cached clients. */
  close(): void {
    for (const client of this.#clients.values()) client.close();
    this.#clients.clear();
  }
}

/**
 * Why a call failed, as Go's HTTP client says it (what kube-apiserver prints).
 *
 * @param e The error `fetch` threw.
 * @param url The URL called.
 * @returns E.g. `dial tcp 127.0.0.1:1: connect: connection refused`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { goReason } from "./webhook_client.ts";
 * const e = new TypeError("error sending request: Connection refused (os error 111)");
 * assert.deepEqual(goReason(e, new URL("https://127.0.0.1:1/x")), "dial tcp 127.0.0.1:1: connect: connection refused");
 * ```
 */
export function goReason(e: unknown, url: URL): string {
  const text = causes(e);
  const name = (e as Error)?.name;
  if (name === "TimeoutError" || name === "AbortError") return "context deadline exceeded";
  const alert = /received fatal alert: (\w+)/.exec(text);
  if (alert) return `remote error: tls: ${GO_ALERTS[alert[1]!] ?? alert[1]!}`;
  if (/close_notify|unexpected eof|UnexpectedEof/i.test(text)) return "EOF";
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const hostPort = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  if (/UnknownIssuer|unknown issuer|BadSignature/i.test(text)) {
    return "tls: failed to verify certificate: x509: certificate signed by unknown authority";
  }
  if (/NotValidForName|not valid for name/i.test(text)) {
    return `tls: failed to verify certificate: x509: certificate is not valid for ${host}`;
  }
  if (/Expired/i.test(text)) {
    return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid";
  }
  if (/refused/i.test(text)) return `dial tcp ${hostPort}: connect: connection refused`;
  return text;
}

/** An error's message with those of its causes, joined by ": ". */
function causes(e: unknown): string {
  const parts: string[] = [];
  for (let c: unknown = e, i = 0; c && i < 5; c = (c as { cause?: unknown }).cause, i++) {
    parts.push(String((c as Error)?.message ?? c));
  }
  return parts.join(": ");
}

/** rustls' names of TLS alerts, as Go's `crypto/tls` words them. */
const GO_ALERTS: Record<string, string> = {
  CertificateRequired: "certificate required",
  BadCertificate: "bad certificate",
  UnsupportedCertificate: "unsupported certificate",
  CertificateRevoked: "revoked certificate",
  CertificateExpired: "expired certificate",
  CertificateUnknown: "unknown certificate",
  UnknownCA: "unknown certificate authority",
  AccessDenied: "access denied",
  DecryptError: "error decrypting message",
  HandshakeFailure: "handshake failure",
  InternalError: "internal error",
  ProtocolVersion: "protocol version not supported",
};

/** A client certificate (chain) and its private key, PEM, for calling webhooks. */
export interface WebhookClientCertificate {
  /** The certificate (chain), PEM. */
  cert: string;
  /** Its private key, PEM. */
  key: string;
}

/**
 * Decodes base64 (whitespace ignored).
 *
 * @param text The base64 text.
 * @returns The bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeBase64 } from "./webhook_client.ts";
 * assert.deepEqual(new TextDecoder().decode(decodeBase64("aGk=")), "hi");
 * ```
 */
export function decodeBase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ""));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A webhook's `clientConfig`: a URL, or a service (not reachable here), and the CA bundle. */
export interface WebhookClientConfig {
  /** The HTTPS URL. */
  url?: string;
  /** A service reference (the embedded server has no service network). */
  service?: { namespace?: string; name?: string };
  /** The base64 PEM bundle to trust. */
  caBundle?: string;
}

/** A failed webhook call, worded as kube-apiserver's REST client words it. */
export class WebhookCallError extends Error {
  override name = "WebhookCallError";
  /** True when the call itself failed or answered non-2xx (kube-apiserver adds "failed to call webhook: " for admission). */
  readonly transport: boolean;

  /**
   * @param message The reason.
   * @param transport Whether the call itself failed or answered non-2xx.
   */
  constructor(message: string, transport = false) {
    super(message);
    this.transport = transport;
  }
}
