/**
 * The health endpoint (`--liveness URL`): the results of the `on.probe`
 * handlers as JSON (`{"handler-id": result, …}`, as Kopf reports them), and on
 * the same server a Prometheus `/metrics` endpoint.
 *
 * Why the server starts before the startup handlers and answers 503 until the
 * operator is ready: a probe that gets 200 means the operator has finished its
 * startup, logged in and listed everything it serves; before that, Kubernetes
 * sees "not yet" rather than "nothing there". Why the probe results are cached
 * (10 seconds, as in Kopf; `settings.probing.cachePeriod`) and computed by one
 * request at a time: probes can be heavy, and mass-requesting the status must
 * not multiply that work.
 *
 * Readiness (`/readyz` on the same server) is not liveness: it answers 200
 * once the operator is ready, on every replica — leader, standby or paused —
 * with the role in the body (`{"role":"standby"}`), and 503 before. Why a
 * standby is ready: readiness gates a Service's traffic, and what a Service
 * sends to an operator — admission webhook calls, metrics scrapes — every
 * replica serves, standbys included (they are the ones that keep webhooks up
 * while a new leader is elected); and a Deployment's rolling update waits for
 * new pods to become ready, so a never-ready standby would stall it. The
 * role is also in the `X-Kopf-Role` header of the probe answers and in the
 * `kopf_operator_role` metric (roles.ts).
 *
 * The request handling is a plain `(Request) => Promise<Response>`
 * ({@link Prober.handle}): tests call it without a socket.
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import type { OperatorLogger } from "../actions/loggers.ts";
import type { ActivityHandler } from "../intents/handlers.ts";
import { type ActivityEnvironment, runActivity } from "./activities.ts";
import type { OperatorMetrics } from "./metrics.ts";
import type { OperatorRole } from "./roles.ts";
import { listenProbes, type ProbeAnswer } from "./_probe_listener.ts";

/** How long probe results are reused by default, in seconds (Kopf's `probing_max_age`). */
export const PROBE_CACHE_PERIOD = 10;

/** Options of {@link Prober}. */
export interface ProberOptions {
  /** The probe handlers (read at each refresh: handlers registered later count too). */
  probes: () => ActivityHandler[];
  /** Logger, memo, settings and indices for the probe handlers. */
  env: ActivityEnvironment;
  /** The path of the probe results (default `/healthz`). */
  path?: string;
  /** The metrics served on `/metrics` (absent: 404 there). */
  metrics?: OperatorMetrics | undefined;
  /**
   * Seconds to reuse probe results (default: the environment's `settings.probing.cachePeriod`,
   * read at each request, else {@link PROBE_CACHE_PERIOD}).
   */
  cachePeriod?: number;
  /** The time source (default: the probes' environment's, else the real clock). */
  clock?: Clock | undefined;
}

/**
 * Answers health requests: probe results (cached) once ready, 503 before; metrics on `/metrics`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prober } from "./probing.ts";
 * import { OperatorLogger } from "@kopf/kopf";
 * const prober = new Prober({
 *   probes: () => [{ kind: "activity", activity: "probe", id: "now", fn: () => "ok", param: undefined,
 *     errors: undefined, timeout: undefined, retries: undefined, backoff: undefined }],
 *   env: { logger: new OperatorLogger(() => {}), memo: {}, settings: {} as never, indices: {} },
 * });
 * assert.deepEqual((await prober.handle(new Request("http://x/healthz"))).status, 503);
 * prober.ready();
 * assert.deepEqual(await (await prober.handle(new Request("http://x/healthz"))).json(), { now: "ok" });
 * ```
 */
export class Prober {
  #options: ProberOptions;
  #path: string;
  #ready = false;
  #cached: { at: number; body: string } | undefined;
  #refreshing: Promise<{ at: number; body: string }> | undefined;
  #role: (() => OperatorRole) | undefined;

  /**
   * @param options Probe handlers, their environment, path, metrics, cache period.
   */
  constructor(options: ProberOptions) {
    this.#options = options;
    this.#path = options.path || "/healthz";
  }

  /** Whether the operator has finished its startup and is ready. */
  get isReady(): boolean {
    return this.#ready;
  }

  /** Marks the operator as ready: the probe path answers 200 from now on. */
  ready(): void {
    this.#ready = true;
  }

  /**
   * Reports the replica's role on `/readyz` and in the `X-Kopf-Role` header.
   *
   * @param role Reads the current role.
   */
  observeRole(role: () => OperatorRole): void {
    this.#role = role;
  }

  /**
   * Answers one request.
   *
   * @param request The request.
   * @returns 200 with the probe results (once ready), 503 (before), 500 (a probe failed),
   *   the metrics on `/metrics`, the readiness and role on `/readyz`, or 404.
   */
  async handle(request: Request): Promise<Response> {
    const { status, headers, body } = await this.answer(new URL(request.url).pathname);
    return new Response(body, { status, headers });
  }

  /**
   * Answers one request for a path, as {@link handle} does, without `Request` and `Response`
   * (the probes' server writes the answer itself: see `_probe_listener.ts`).
   *
   * @param path The request's path.
   * @returns The status, headers and body.
   */
  async answer(path: string): Promise<ProbeAnswer> {
    const metrics = this.#options.metrics;
    if (path === "/metrics" && metrics && path !== this.#path) {
      return {
        status: 200,
        headers: { "content-type": metrics.contentType },
        body: await metrics.metrics(),
      };
    }
    const role = this.#role?.();
    const headers: Record<string, string> = role ? { "x-kopf-role": role } : {};
    if (path === "/readyz" && path !== this.#path) {
      if (!this.#ready) return json({ ready: false, role }, 503, headers);
      return json({ ready: true, role: role ?? "leader" }, 200, headers);
    }
    if (path !== this.#path) {
      return { status: 404, headers: { "content-type": "text/plain" }, body: "Not found.\n" };
    }
    if (!this.#ready) {
      const error = "The operator is not ready yet: its startup is in progress.";
      return json({ error }, 503, headers);
    }
    try {
      const { body } = await this.#results();
      return { status: 200, headers: { "content-type": "application/json", ...headers }, body };
    } catch (e) {
      return json({ error: e instanceof Error ? e.message : String(e) }, 500, headers);
    }
  }

  /** The probe results: cached, or refreshed by one request while the others wait for it. */
  #results(): Promise<{ at: number; body: string }> {
    const clock = this.#options.clock ?? this.#options.env.clock ?? realClock;
    const now = () => clock.now();
    const period = (this.#options.cachePeriod ?? this.#options.env.settings?.probing?.cachePeriod ??
      PROBE_CACHE_PERIOD) * 1000;
    const cached = this.#cached;
    if (cached && now() - cached.at < period) return Promise.resolve(cached);
    this.#refreshing ??= (async () => {
      try {
        const results = await runActivity("probe", this.#options.probes(), this.#options.env);
        this.#cached = { at: now(), body: JSON.stringify(Object.fromEntries(results)) };
        return this.#cached;
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }
}

function json(body: unknown, status: number, headers: Record<string, string> = {}): ProbeAnswer {
  return {
    status,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}

/** Options of {@link serveProbes}. */
export interface ServeProbesOptions extends Omit<ProberOptions, "path"> {
  /** The liveness URL, e.g. `http://0.0.0.0:8080/healthz` (its path serves the probes). */
  url: string;
  /** Stops the server. */
  signal: AbortSignal;
  /** Where to log the serving. */
  logger: OperatorLogger;
}

/** A running health server. */
export interface ProbeServer {
  /** Marks the operator as ready (503 → 200). */
  ready(): void;
  /** Reports the replica's role (leader, standby, paused) on `/readyz`. */
  observeRole(role: () => OperatorRole): void;
  /** Stops the server (also stopped by the signal) and waits until it is closed. */
  shutdown(): Promise<void>;
}

/**
 * Serves the probes and the metrics at the liveness URL until the signal aborts.
 *
 * @param options The URL, the probe handlers and their environment, metrics, signal, logger.
 * @returns The server: mark it ready, shut it down.
 * @throws {Error} When the URL is not `http://` or its port cannot be bound (a busy port: a
 *   `Deno.errors.AddrInUse` naming the address and the `--liveness` flag).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveProbes } from "./probing.ts";
 * import { OperatorLogger } from "@kopf/kopf";
 * const lines: string[] = [];
 * const logger = new OperatorLogger((record) => lines.push(record.message));
 * const server = serveProbes({
 *   url: "http://127.0.0.1:0/healthz", probes: () => [], logger, signal: new AbortController().signal,
 *   env: { logger, memo: {}, settings: {} as never, indices: {} },
 * });
 * // Port 0: the log names the port the system picked.
 * const url = lines.join("\n").match(/Serving health status at (\S+)/)![1]!;
 * const early = await fetch(url);
 * assert.equal(early.status, 503); // not ready yet
 * await early.body?.cancel();
 * server.ready();
 * const answer = await fetch(url);
 * assert.equal(answer.status, 200);
 * await answer.body?.cancel();
 * await server.shutdown();
 * ```
 */
export function serveProbes(options: ServeProbesOptions): ProbeServer {
  const parsed = new URL(options.url);
  if (parsed.protocol !== "http:") {
    throw new Error(
      `Unsupported liveness URL ${options.url}: only http:// is served (e.g. http://0.0.0.0:8080/healthz).`,
    );
  }
  const prober = new Prober({ ...options, path: parsed.pathname || "/" });
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, options.signal]);
  const hostname = parsed.hostname.replace(/^\[|\]$/g, "");
  const port = Number(parsed.port || 80);
  let finished: Promise<void>;
  try {
    finished = listenProbes({
      hostname: hostname === "localhost" ? "127.0.0.1" : hostname,
      port,
      signal,
      onListen: (addr) => {
        // With port 0 the system picks a free port: only this line tells it (so at info).
        const bound = new URL(parsed.href);
        bound.port = String(addr.port);
        const line = `Serving health status at ${bound.href}`;
        port === 0 ? options.logger.info(line) : options.logger.debug(line);
      },
      answer: (path) => prober.answer(path),
    });
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse)) throw e;
    // The address, and the flag to change with an example (the same URL, the next port).
    const other = new URL(parsed.href);
    other.port = String(port === 65535 ? 8080 : port + 1);
    throw new Deno.errors.AddrInUse(
      `${parsed.host} is already in use: give the liveness URL another port, e.g. ` +
        `kopf run --liveness=${other.href}, or stop what listens there`,
      { cause: e },
    );
  }
  return {
    ready: () => prober.ready(),
    observeRole: (role) => prober.observeRole(role),
    shutdown: async () => {
      stop.abort();
      await finished;
    },
  };
}
