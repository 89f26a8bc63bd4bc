/**
 * What the admission and conversion webhook callers share: HTTPS clients
 * that trust a webhook's `caBundle` (cached per bundle), and failures said
 * as Go's HTTP client says them, which is what kube-apiserver prints.
 *
 * @module
 */

/**
 * HTTP clients per `caBundle`, cached until closed.
 *
 * @example
 * ```ts
 * import { WebhookClients } from "./webhook_client.ts";
 * const clients = new WebhookClients();
 * console.log(clients.get(undefined)); // undefined (the system's trust roots)
 * clients.close();
 * ```
 */
export class WebhookClients {
  readonly #clients = new Map<string, Deno.HttpClient>();

  /**
   * The client that trusts a base64 PEM bundle.
   *
   * @param caBundle The base64 PEM bundle of `clientConfig.caBundle`, if any.
   * @returns The client, or undefined for the default trust roots.
   * @throws {Error} A bundle that is not base64 PEM.
   */
  get(caBundle: string | undefined): Deno.HttpClient | undefined {
    if (!caBundle) return undefined;
    let client = this.#clients.get(caBundle);
    if (!client) {
      const pem = new TextDecoder().decode(decodeBase64(caBundle));
      client = Deno.createHttpClient({ caCerts: [pem] });
      this.#clients.set(caBundle, client);
    }
    return client;
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
 * import { goReason } from "./webhook_client.ts";
 * const e = new TypeError("error sending request: Connection refused (os error 111)");
 * console.log(goReason(e, new URL("https://127.0.0.1:1/x"))); // "dial tcp 127.0.0.1:1: connect: connection refused"
 * ```
 */
export function goReason(e: unknown, url: URL): string {
  const parts: string[] = [];
  for (let c: unknown = e, i = 0; c && i < 5; c = (c as { cause?: unknown }).cause, i++) {
    parts.push(String((c as Error)?.message ?? c));
  }
  const text = parts.join(": ");
  const name = (e as Error)?.name;
  if (name === "TimeoutError" || name === "AbortError") return "context deadline exceeded";
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

/**
 * Decodes base64 (whitespace ignored).
 *
 * @param text The base64 text.
 * @returns The bytes.
 *
 * @example
 * ```ts
 * import { decodeBase64 } from "./webhook_client.ts";
 * console.log(new TextDecoder().decode(decodeBase64("aGk="))); // "hi"
 * ```
 */
export function decodeBase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ""));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
