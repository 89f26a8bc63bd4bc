/**
 * Webhook servers: how admission requests from Kubernetes reach the
 * operator (Kopf's `kopf.WebhookServer`, `WebhookK3dServer`,
 * `WebhookMinikubeServer`, `WebhookAutoServer`). A server listens on HTTPS
 * (a self-signed CA and certificate are made when none is given), routes
 * `POST <path>/<handler-id>` (admission) and `POST <path>/convert/<plural>.<group>`
 * (CRD conversion, `kopf.on.convert`) to the operator's webhook function, and tells
 * the operator how Kubernetes reaches it: it yields client configs
 * (`{ url, caBundle }`), which go into the managed webhook configurations.
 *
 * The protocol, for custom servers and tunnels: `settings.admission.server`
 * is a function `(fn, { signal }) => AsyncIterable<WebhookClientConfig>` or
 * an object with such a `serve` method (and, optionally,
 * `[Symbol.asyncDispose]()` for cleanup). It calls `fn(review, { webhook,
 * headers, sslpeer })` for each request and sends back the JSON of what it
 * resolves to; it yields a config whenever its endpoint changes, and holds
 * control until the signal aborts (the operator's exit). If it ends on its
 * own, the operator stops. A tunnel wraps a `WebhookServer` and yields the
 * tunnel's public URL instead of the local one (`webhook_tunnels.ts`: ngrok,
 * and the auto-tunnel).
 *
 * Client certificates (Kopf's `verify_mode`, `verify_cafile`, `verify_capath`,
 * `verify_cadata`): `Deno.serve` cannot ask clients for certificates, so a
 * server with any of these options listens through `node:https` instead
 * (`_webhook_https.ts`); the request handling is the same. With a CA and no
 * mode, the mode is `optional`, as in Kopf (and `none` with a CA also becomes
 * `optional`); `required` refuses clients without a certificate from the CA at
 * the handshake. Handlers see the verified certificate as `sslpeer` in the
 * shape of Python's `getpeercert()` (`subject`, `issuer`, `version`,
 * `serialNumber`, `notBefore`, `notAfter`, `subjectAltName`), or `{}` when the
 * client gave none. The embedded API server presents one when started with
 * `webhookClientCert`.
 *
 * Where the pieces live: the protocol and `serveWebhooks()` in `webhook_protocol.ts`;
 * the servers' options, what is read from them (CAs, keys) and their error in
 * `webhook_server_options.ts`; the servers and the request handling here.
 *
 * @module
 */

import type { WebhookClientConfig, WebhookFn } from "../core/engines/admission.ts";
import { UnknownResourceError, WebhookError } from "../core/engines/review_errors.ts";
import type { WebhookServeOptions, WebhookServerObject } from "./webhook_protocol.ts";
import {
  decryptKey,
  encodeBase64,
  readCa,
  readVerifyCa,
  verifyModeOf,
  WebhookServerError,
  type WebhookServerOptions,
} from "./webhook_server_options.ts";

export {
  serveWebhooks,
  type WebhookApi,
  type WebhookLogger,
  type WebhookServeOptions,
  type WebhookServerFn,
  type WebhookServerObject,
  type WebhookServerProtocol,
} from "./webhook_protocol.ts";
export { WebhookServerError, type WebhookServerOptions } from "./webhook_server_options.ts";

/**
 * A local HTTPS (or, with `insecure`, HTTP) endpoint for admission requests.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, ({ settings }) => {
 *   settings.admission.server = new kopf.WebhookServer({ port: 9443, cadump: "ca.pem" });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookServer implements WebhookServerObject {
  /** The host of webhook URLs when none is given (the K3d and Minikube servers set it). */
  static readonly DEFAULT_HOST: string | undefined = undefined;
  /** The port when none is given. */
  static readonly DEFAULT_PORT: number = 9443;
  /** The options, as given. */
  readonly options: Readonly<WebhookServerOptions>;
  #server: { shutdown(): Promise<void> } | undefined;

  /**
   * Creates the server (nothing listens until {@link WebhookServer.serve}).
   *
   * @param options Where to listen, the URL's host and path, the certificates.
   */
  constructor(options: WebhookServerOptions = {}) {
    this.options = { ...options };
  }

  /**
   * The host to put into the webhook URLs (K3d, Minikube and the auto server override it).
   *
   * @param _options The serving options (the auto server detects the cluster through the API).
   * @returns The host.
   */
  guessHost(_options: WebhookServeOptions): Promise<string | undefined> | string | undefined {
    return (this.constructor as typeof WebhookServer).DEFAULT_HOST;
  }

  /**
   * Listens and serves until the signal aborts; yields the client config once listening.
   *
   * @param fn The operator's webhook function.
   * @param options The operator's signal (and API client).
   * @returns The client configs (one).
   * @throws {WebhookServerError} For options that cannot be served (a bad `verifyMode`, client
   *   verification without TLS, an encrypted key without its password or with a wrong one), and
   *   for a port in use (naming the address and the `port` option).
   */
  async *serve(fn: WebhookFn, options: WebhookServeOptions): AsyncGenerator<WebhookClientConfig> {
    const o = this.options;
    const verifyCa = await readVerifyCa(o);
    const mode = verifyModeOf(o.verifyMode, verifyCa !== undefined);
    if (mode !== "none" && o.insecure) {
      throw new WebhookServerError(
        "Client-certificate verification (verifyMode/verifyCa*) needs HTTPS: drop insecure or them.",
      );
    }
    const guessed = await this.guessHost(options);
    const addr = o.addr ?? (guessed ? "0.0.0.0" : "127.0.0.1");
    const host = o.host ?? guessed ?? o.addr ?? "localhost";
    const path = (o.path ?? "").replace(/\/+$/, "");
    let cadata = await readCa(o);
    let tls: { cert: string; key: string } | undefined;
    if (!o.insecure) {
      if (o.certfile || o.pkeyfile) {
        if (!o.certfile || !o.pkeyfile) {
          throw new WebhookServerError("certfile and pkeyfile go together: give both or neither.");
        }
        tls = {
          cert: await Deno.readTextFile(o.certfile),
          key: await decryptKey(await Deno.readTextFile(o.pkeyfile), o.pkeyfile, o.password),
        };
      } else {
        const sans = [host, ...(o.addr ? [o.addr] : []), ...(o.extraSans ?? []), "localhost"];
        // The certificates' modules (x509, node:net) only when a server makes its own.
        const { makeServerCertificates } = await import("./_certificates.ts");
        const made = await makeServerCertificates(
          [...sans, "127.0.0.1", "::1"].filter((h) => h !== "0.0.0.0" && h !== "::"),
        );
        tls = { cert: made.serverCert, key: made.serverKey };
        cadata ??= made.caCert;
      }
    }
    if (o.cadump && cadata !== undefined) await Deno.writeTextFile(o.cadump, cadata);
    const port = o.port ?? (this.constructor as typeof WebhookServer).DEFAULT_PORT;
    let server: { finished: Promise<void>; shutdown(): Promise<void> };
    let bound: { port: number };
    // A busy port: the address and the fix (the server's `port` option, not a kopf flag).
    const busy = (e: unknown): unknown => {
      if (
        !(e instanceof Deno.errors.AddrInUse) && (e as { code?: unknown })?.code !== "EADDRINUSE"
      ) {
        return e;
      }
      const where = addr.includes(":") ? `[${addr}]:${port}` : `${addr}:${port}`;
      const cls = this.constructor.name || "WebhookServer";
      const example = `new kopf.${cls}({ port: ${port === 65535 ? 9443 : port + 1} })`;
      return new WebhookServerError(
        `The webhook server (settings.admission.server) cannot listen on ${where}: ` +
          "the address is already in use: give it another port in the handlers, e.g. " +
          `settings.admission.server = ${example} in an on.startup handler ` +
          "(port: 0 picks a free one), or stop what listens there",
        { cause: e },
      );
    };
    if (tls && mode !== "none") {
      // node:https (Node's HTTP stack in Deno: a few MiB) only for a server that verifies clients.
      const { serveVerifyingHttps } = await import("./_webhook_https.ts");
      const { describePeerCertificate } = await import("./_certificates.ts");
      const https = await serveVerifyingHttps({
        hostname: addr,
        port,
        ...tls,
        ca: verifyCa,
        mode,
        signal: options.signal,
        handler: async (request, peer) =>
          handle(request, fn, path, peer ? await describePeerCertificate(peer) : {}),
      }).catch((e) => {
        throw busy(e);
      });
      server = https;
      bound = https;
    } else {
      const listening = Promise.withResolvers<Deno.NetAddr>();
      try {
        server = Deno.serve({
          hostname: addr,
          port,
          signal: options.signal,
          onListen: (a) => listening.resolve(a as Deno.NetAddr),
          ...(tls ?? {}),
        }, (request) => handle(request, fn, path, {}));
      } catch (e) {
        throw busy(e);
      }
      bound = await listening.promise.catch(async (e) => {
        await server.shutdown();
        throw busy(e);
      });
    }
    this.#server = server;
    try {
      const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
      const config: WebhookClientConfig = {
        url: `${o.insecure ? "http" : "https"}://${hostPart}:${bound.port}${path}`,
      };
      if (cadata !== undefined) config.caBundle = encodeBase64(cadata);
      yield config;
      await server.finished;
    } finally {
      if (!options.signal.aborted) await server.shutdown();
      await server.finished;
      this.#server = undefined;
    }
  }

  /** Stops listening, if it still does. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#server?.shutdown();
  }
}

/**
 * A webhook server for K3d/K3s clusters (even in a VM): Kubernetes reaches it at
 * `host.k3d.internal`, which the self-signed certificate names.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, ({ settings }) => {
 *   settings.admission.server = new kopf.WebhookK3dServer({ port: 54321 });
 * });
 * ```
 */
export class WebhookK3dServer extends WebhookServer {
  /** `host.k3d.internal`. */
  static override readonly DEFAULT_HOST: string | undefined = "host.k3d.internal";
}

/**
 * A webhook server for Minikube clusters (even in a VM): Kubernetes reaches it at
 * `host.minikube.internal`, which the self-signed certificate names.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, ({ settings }) => {
 *   settings.admission.server = new kopf.WebhookMinikubeServer({ port: 54321 });
 * });
 * ```
 */
export class WebhookMinikubeServer extends WebhookServer {
  /** `host.minikube.internal`. */
  static override readonly DEFAULT_HOST: string | undefined = "host.minikube.internal";
}

/**
 * A webhook server that detects K3s/K3d and Minikube clusters and uses their magic host
 * names; for other clusters (and the embedded API server), a plain local server. It never
 * tunnels. Detection: the API server's `/version` (`+k3s` in `gitVersion`), then the nodes'
 * labels (`minikube.k8s.io/name`, `node.kubernetes.io/instance-type: k3s`); any failure to
 * ask means no detection.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, ({ settings }) => {
 *   settings.admission.server = new kopf.WebhookAutoServer({ port: 0 });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookAutoServer extends WebhookServer {
  /**
   * The magic host of the detected cluster, or undefined.
   *
   * @param options The serving options (their API client is asked).
   * @returns The host, or undefined.
   */
  override async guessHost(options: WebhookServeOptions): Promise<string | undefined> {
    const api = options.api;
    if (!api) return undefined;
    try {
      const version = await api.request<{ gitVersion?: string }>("GET", "/version", {
        signal: options.signal,
      });
      if (version?.gitVersion?.includes("k3s")) return WebhookK3dServer.DEFAULT_HOST;
      const nodes = await api.request<
        { items?: { metadata?: { labels?: Record<string, string> } }[] }
      >(
        "GET",
        "/api/v1/nodes",
        { signal: options.signal, query: { limit: 1 } },
      );
      const labels = nodes?.items?.[0]?.metadata?.labels ?? {};
      if ("minikube.k8s.io/name" in labels) return WebhookMinikubeServer.DEFAULT_HOST;
      if (labels["node.kubernetes.io/instance-type"] === "k3s") {
        return WebhookK3dServer.DEFAULT_HOST;
      }
    } catch {
      // No access: no detection; a plain local server.
    }
    return undefined;
  }
}

async function handle(
  request: Request,
  fn: WebhookFn,
  root: string,
  sslpeer: Record<string, unknown>,
): Promise<Response> {
  const url = new URL(request.url);
  if (request.method !== "POST") return text(405, "Admission reviews are POSTed.");
  if (root && url.pathname !== root && !url.pathname.startsWith(`${root}/`)) {
    return text(404, "Not found.");
  }
  const rest = url.pathname.slice(root.length).replace(/^\/+|\/+$/g, "");
  let webhook: string | undefined;
  try {
    webhook = rest ? decodeURIComponent(rest) : undefined;
  } catch {
    return text(400, "Bad webhook id in the path.");
  }
  let review: unknown;
  try {
    review = await request.json();
  } catch (e) {
    return text(400, `The body is not JSON: ${(e as Error).message}`);
  }
  const headers: Record<string, string> = {};
  request.headers.forEach((v, k) => headers[k] = v);
  try {
    const answer = await fn(review as Record<string, unknown>, { webhook, headers, sslpeer });
    return Response.json(answer);
  } catch (e) {
    if (e instanceof UnknownResourceError) return text(404, e.message);
    if (e instanceof WebhookError) return text(400, e.message);
    return text(500, e instanceof Error ? e.message : String(e));
  }
}

function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain" } });
}
