/**
 * Webhook tunnels: admission requests from a cluster that cannot reach the
 * operator's machine come through an external endpoint (Kopf's
 * `kopf.WebhookNgrokTunnel` and `kopf.WebhookAutoTunnel`).
 *
 * The ngrok tunnel serves the webhooks locally with a plain-HTTP
 * {@link WebhookServer} (ngrok's free plan tunnels to HTTP only; the public
 * side is ngrok's HTTPS with a publicly trusted certificate, so no CA goes
 * into the client config), runs the ngrok agent pointed at it, and yields the
 * tunnel's public URL with the server's root path. Unlike Kopf (pyngrok), it
 * downloads nothing: the agent must be installed (`binary`, default `ngrok`
 * on PATH). The agent is stopped when the operator exits; if it dies while
 * the operator runs, the tunnel ends with an error and so does the operator
 * (as for any server that ends on its own).
 *
 * The auto-tunnel detects K3d/K3s and Minikube as `WebhookAutoServer` does
 * and serves locally under their magic host names; for any other cluster it
 * tunnels through ngrok. Beyond Kopf (which fails there): when the ngrok
 * agent is not installed, it says so in one warning and serves locally
 * instead, which a cluster on this machine (the embedded API server) reaches.
 *
 * @module
 */

import type { WebhookClientConfig, WebhookFn } from "../core/engines/admission.ts";
import type { NgrokAgent, NgrokAgentError } from "./_ngrok_agent.ts";
import type { WebhookServeOptions, WebhookServerObject } from "./webhook_protocol.ts";
import { WebhookServerError } from "./webhook_server_options.ts";
import { WebhookAutoServer, WebhookServer } from "./webhooks.ts";

/** Options of {@link WebhookNgrokTunnel} (Kopf's keyword arguments). */
export interface WebhookNgrokTunnelOptions {
  /** Where the local server listens (default 127.0.0.1). */
  addr?: string;
  /** The local server's port (default 0: a free one). */
  port?: number;
  /** The root path, locally and in the public URL (default none). */
  path?: string;
  /** The ngrok authtoken, given to the agent (v3) as `NGROK_AUTHTOKEN` (default: its own configuration). */
  token?: string;
  /** The ngrok region, e.g. `eu` (default: the agent's choice). */
  region?: string;
  /** The ngrok agent's executable: a name on PATH or a path (default `ngrok`). */
  binary?: string;
  /** How long to wait for the agent's tunnel, in seconds (default 30). */
  startupTimeout?: number;
}

/**
 * Tunnels admission requests through ngrok (https://ngrok.com/): a local plain-HTTP server, the
 * ngrok agent in front of it, and the tunnel's public https URL in the webhook configurations
 * (no `caBundle`: ngrok's certificates are publicly trusted). The agent is not downloaded: it
 * must be installed (on PATH, or give `binary`).
 *
 * Mind that the public URL is not protected: anyone who learns it can send requests to the
 * operator (the random host name and an optional random `path` are only a little safety, for
 * development). The free plan limits the number of requests per minute.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, ({ settings }) => {
 *   settings.admission.server = new kopf.WebhookNgrokTunnel({ path: "/xyz", region: "eu" });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookNgrokTunnel implements WebhookServerObject {
  /** The options, as given. */
  readonly options: Readonly<WebhookNgrokTunnelOptions>;
  #stop: (() => Promise<void>) | undefined;

  /**
   * Creates the tunnel (nothing runs until {@link WebhookNgrokTunnel.serve}).
   *
   * @param options The local endpoint, the ngrok options and the executable.
   */
  constructor(options: WebhookNgrokTunnelOptions = {}) {
    this.options = { ...options };
  }

  /**
   * Serves locally, starts the agent, yields the public URL, and holds until the signal aborts.
   *
   * @param fn The operator's webhook function.
   * @param options The operator's signal (and logger).
   * @returns The client configs (one).
   * @throws {WebhookServerError} When the agent is not installed, cannot be run, gives no tunnel
   *   in time, or exits while the operator runs.
   */
  async *serve(fn: WebhookFn, options: WebhookServeOptions): AsyncGenerator<WebhookClientConfig> {
    const o = this.options;
    const path = (o.path ?? "").replace(/\/+$/, "");
    const local = new WebhookServer({
      ...(o.addr !== undefined ? { addr: o.addr } : {}),
      port: o.port ?? 0,
      path,
      insecure: true,
    });
    const inner = new AbortController();
    const signal = AbortSignal.any([options.signal, inner.signal]);
    const served = local.serve(fn, { ...options, signal });
    let agent: NgrokAgent | undefined;
    try {
      const first = await served.next();
      if (first.done) return;
      const target = targetOf(o.addr, new URL(first.value.url!).port);
      // The agent's code (its process, its API) only for a tunnel that starts.
      const { NgrokAgentError, startNgrokAgent } = await import("./_ngrok_agent.ts");
      try {
        agent = await startNgrokAgent({
          binary: o.binary ?? "ngrok",
          target,
          token: o.token,
          region: o.region,
          startupTimeout: o.startupTimeout ?? 30,
          signal: options.signal,
          logger: options.logger,
        });
      } catch (e) {
        if (options.signal.aborted) return;
        throw e instanceof NgrokAgentError ? asServerError(e) : e;
      }
      this.#stop = agent.stop;
      const url = `${agent.publicUrl.replace(/\/+$/, "")}${path}`;
      options.logger?.info(`Accessing the webhooks at ${url} (an ngrok tunnel to ${target}).`);
      yield { url };
      const code = await Promise.race([agent.exited, aborted(options.signal)]);
      if (!options.signal.aborted) {
        const why = agent.lastError();
        throw new WebhookServerError(
          `The ngrok agent exited (code ${code})${why ? `: ${why}` : ""}; the tunnel is gone.`,
        );
      }
    } finally {
      await agent?.stop();
      this.#stop = undefined;
      inner.abort();
      await served.return(undefined);
    }
  }

  /** Stops the agent, if it still runs. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#stop?.();
  }
}

/** Options of {@link WebhookAutoTunnel}: the common ones of servers and tunnels. */
export interface WebhookAutoTunnelOptions {
  /** Where the local server listens. */
  addr?: string;
  /** The local server's port (default: the server's 9443; a free one behind ngrok). */
  port?: number;
  /** The root path (default none). */
  path?: string;
  /** The ngrok agent's executable, for the tunnel (default `ngrok` on PATH). */
  binary?: string;
}

/**
 * The auto-server, but with tunnelling: a K3d/K3s or Minikube cluster (detected as
 * {@link WebhookAutoServer} does) gets a local HTTPS server under its magic host name; any other
 * cluster gets an ngrok tunnel ({@link WebhookNgrokTunnel}). When the ngrok agent is not
 * installed, one warning says so and a local server is used (reachable from a cluster on this
 * machine, such as the embedded API server). Tunnelling sends the webhooks through an external
 * service, so it is for the developer to choose it explicitly.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.startup({ registry }, ({ settings }) => {
 *   settings.admission.server = new kopf.WebhookAutoTunnel({ path: "/webhooks" });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookAutoTunnel implements WebhookServerObject {
  /** The options, as given. */
  readonly options: Readonly<WebhookAutoTunnelOptions>;
  #current: WebhookServerObject | undefined;

  /**
   * Creates the auto-tunnel (nothing runs until {@link WebhookAutoTunnel.serve}).
   *
   * @param options The local endpoint and the ngrok executable.
   */
  constructor(options: WebhookAutoTunnelOptions = {}) {
    this.options = { ...options };
  }

  /**
   * Detects the cluster, then serves through the chosen server or tunnel until the signal aborts.
   *
   * @param fn The operator's webhook function.
   * @param options The operator's signal, API client (for the detection) and logger.
   * @returns The client configs of the chosen server or tunnel.
   * @throws {WebhookServerError} As the chosen server or tunnel does (except a missing agent).
   */
  async *serve(fn: WebhookFn, options: WebhookServeOptions): AsyncGenerator<WebhookClientConfig> {
    const { addr, port, path, binary } = this.options;
    const common = {
      ...(addr !== undefined ? { addr } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(path !== undefined ? { path } : {}),
    };
    const host = await new WebhookAutoServer().guessHost(options);
    if (host !== undefined) {
      options.logger?.debug(`Cluster detection found the hostname: ${host}`);
      // As the K3d/Minikube servers do: all interfaces (the cluster comes from outside loopback).
      const server = new WebhookServer({ addr: "0.0.0.0", ...common, host });
      yield* this.#through(server, fn, options);
      return;
    }
    options.logger?.debug("Cluster detection failed, using an ngrok tunnel.");
    const tunnel = new WebhookNgrokTunnel({ ...common, ...(binary ? { binary } : {}) });
    try {
      yield* this.#through(tunnel, fn, options);
    } catch (e) {
      if (!(e instanceof WebhookServerError && (e.cause as NgrokAgentError)?.missing)) throw e;
      const server = new WebhookServer(common);
      let first = true;
      for await (const config of this.#through(server, fn, options)) {
        if (first) {
          first = false;
          options.logger?.warning(
            `${e.message.replace(/\.$/, "")} — serving the webhooks locally at ${config.url} ` +
              "instead, which only a cluster on this machine can reach.",
          );
        }
        yield config;
      }
    }
  }

  async *#through(
    server: WebhookServerObject,
    fn: WebhookFn,
    options: WebhookServeOptions,
  ): AsyncGenerator<WebhookClientConfig> {
    this.#current = server;
    try {
      yield* server.serve(fn, options);
    } finally {
      this.#current = undefined;
      await server[Symbol.asyncDispose]?.();
    }
  }

  /** Stops the chosen server or tunnel, if it still runs. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#current?.[Symbol.asyncDispose]?.();
  }
}

/** The agent's error as the servers' error (one line, the agent's error as its cause). */
function asServerError(e: NgrokAgentError): WebhookServerError {
  return new WebhookServerError(e.message, { cause: e });
}

/** What the agent forwards to: the local server's address (loopback for "all interfaces"). */
function targetOf(addr: string | undefined, port: string): string {
  let host = addr === undefined || addr === "0.0.0.0" || addr === "" ? "127.0.0.1" : addr;
  if (host === "::") host = "::1";
  if (host.includes(":") && !host.startsWith("[")) host = `[${host}]`;
  return `http://${host}:${port}`;
}

function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
}
