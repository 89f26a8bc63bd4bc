/**
 * The protocol of webhook servers and tunnels — what `settings.admission.server`
 * may be: a function `(fn, { signal }) => AsyncIterable<WebhookClientConfig>` or an
 * object with such a `serve` method — and {@link serveWebhooks}, which runs either.
 *
 * @module
 */

import type { WebhookClientConfig, WebhookFn } from "../core/engines/admission.ts";

/** What servers may ask the Kubernetes API (the operator's API client has this method). */
export interface WebhookApi {
  /**
   * Makes one request.
   *
   * @param method The HTTP method.
   * @param path The API path, e.g. `/version`.
   * @param options The signal and the query.
   * @returns The parsed JSON answer.
   */
  request<T = unknown>(
    method: string,
    path: string,
    options?: { signal?: AbortSignal; query?: Record<string, string | number> },
  ): Promise<T>;
}

/** Where servers and tunnels log (the operator gives its `kopf.admission` logger). */
export interface WebhookLogger {
  /**
   * Logs a routine line.
   *
   * @param message The line.
   */
  debug(message: string): void;
  /**
   * Logs a line worth seeing (e.g. the public URL of a tunnel).
   *
   * @param message The line.
   */
  info(message: string): void;
  /**
   * Logs a problem that does not stop the server.
   *
   * @param message The line.
   */
  warning(message: string): void;
}

/** What the operator gives a webhook server besides the webhook function. */
export interface WebhookServeOptions {
  /** Aborted when the operator exits: the server stops and its iterable ends. */
  signal: AbortSignal;
  /** The operator's API client (for cluster detection); absent in bare use. */
  api?: WebhookApi | undefined;
  /** The operator's logger for servers and tunnels; absent in bare use (nothing is logged). */
  logger?: WebhookLogger | undefined;
}

/** A webhook server or tunnel as a function (Kopf's simple coroutine form). */
export type WebhookServerFn = (
  fn: WebhookFn,
  options: WebhookServeOptions,
) => AsyncIterable<WebhookClientConfig>;

/** A webhook server or tunnel as an object (Kopf's configurable class form). */
export interface WebhookServerObject {
  /** Serves until the signal aborts, yielding the client configs. */
  serve(fn: WebhookFn, options: WebhookServeOptions): AsyncIterable<WebhookClientConfig>;
  /** Frees what the server holds (called once the operator is done with it). */
  [Symbol.asyncDispose]?(): Promise<void>;
}

/** Anything `settings.admission.server` may be. */
export type WebhookServerProtocol = WebhookServerFn | WebhookServerObject;

/**
 * Iterates a server or tunnel in either form of the protocol.
 *
 * @param server A function or an object with `serve`.
 * @param fn The webhook function.
 * @param options The signal (and API client).
 * @returns The client configs.
 * @throws {TypeError} For something that is neither.
 */
export function serveWebhooks(
  server: unknown,
  fn: WebhookFn,
  options: WebhookServeOptions,
): AsyncIterable<WebhookClientConfig> {
  if (typeof server === "function") return (server as WebhookServerFn)(fn, options);
  if (server && typeof (server as WebhookServerObject).serve === "function") {
    return (server as WebhookServerObject).serve(fn, options);
  }
  throw new TypeError(
    "settings.admission.server must be a webhook server (e.g. new kopf.WebhookServer()) or a " +
      "function (fn, { signal }) => AsyncIterable<WebhookClientConfig>.",
  );
}
