/**
 * Prometheus metrics of one operator: handler runs, failures and durations by
 * handler id and kind, the per-object queues' depth, watch (re)connects by
 * resource, API requests by verb and code, and the Kubernetes Events posted,
 * folded, aggregated and dropped (see `event_recorder.ts`).
 *
 * Why a registry per operator and not a global default one:
 * several operators can run in one process (embedding, tests), and each must
 * report its own numbers — two operators never share or double-count a
 * metric. Why the recording is a small interface (`HandlerMetrics`, defined in
 * the actions layer): the code that runs handlers knows nothing of Prometheus,
 * and without a metrics object nothing is recorded and nothing costs.
 *
 * The exposition is the Prometheus text format 0.0.4 (our own registry,
 * `src/cogs/metrics/`), served on `/metrics` next to the liveness endpoint
 * (see `probing.ts`).
 *
 * @module
 */

import type {
  BoundCounter,
  BoundHistogram,
  Counter,
  Histogram,
} from "../../cogs/metrics/registry.ts";
import { MetricsRegistry } from "../../cogs/metrics/registry.ts";
import type { RequestRecord } from "../../cogs/clients/api.ts";
import type { HandlerMetrics } from "../actions/execution.ts";
import type { EventOutcome } from "./event_recorder.ts";

/** One sample of a stream's per-object queues, for the queue gauges. */
export interface QueueSample {
  /** The resource (`plural.group`, or as the operator names it). */
  resource: string;
  /** How many events wait in the queues of this resource's objects. */
  depth: number;
  /** How many objects have a live worker. */
  objects: number;
}

/** A handler's series of the handler metrics. */
interface HandlerSeries {
  labels: { handler: string; kind: string };
  runs: BoundCounter;
  failures: BoundCounter | undefined;
  durations: BoundHistogram;
}

/** Options of {@link OperatorMetrics}. */
export interface OperatorMetricsOptions {
  /** Buckets of the handler duration histogram, in seconds (default: 0.005 to 10, as Prometheus' clients). */
  buckets?: number[];
  /** Labels added to every metric (e.g. `{ operator: "my-op" }`). */
  labels?: Record<string, string>;
}

/**
 * The metrics of one operator, in their own Prometheus registry.
 *
 * Handler kinds are `changing`, `event` (watching handlers), `activity`; other
 * engines (daemons, timers) record theirs with their own kind through
 * {@link OperatorMetrics.handlerRun}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorMetrics } from "@kopf/kopf";
 * const metrics = new OperatorMetrics();
 * metrics.handlerRun("createFn", "changing", 0.12, false);
 * metrics.handlerRun("createFn", "changing", 0.05, true);
 * const text = await metrics.metrics();
 * assert.deepEqual(text.includes('kopf_handler_runs_total{handler="createFn",kind="changing"} 2'), true);
 * ```
 */
export class OperatorMetrics implements HandlerMetrics {
  /**
   * The Prometheus registry of this operator (there is no global one): an application adds its
   * own counters, gauges and histograms here, and they are served on the operator's `/metrics`.
   */
  readonly registry: MetricsRegistry;
  #runs: Counter<"handler" | "kind">;
  #failures: Counter<"handler" | "kind">;
  #durations: Histogram<"handler" | "kind">;
  #requests: Counter<"verb" | "code">;
  #watches: Counter<"resource">;
  #events: Record<EventOutcome, BoundCounter>;
  /** Per handler kind and id: its series of the three handler metrics (found once). */
  #handlers = new Map<string, Map<string, HandlerSeries>>();
  /** Per verb and code: the request counter's series (found once). */
  #verbs = new Map<string, Map<number, BoundCounter>>();
  #queues = new Set<() => Iterable<QueueSample>>();

  /**
   * Creates the metrics in a registry of their own.
   *
   * @param options Histogram buckets and default labels.
   */
  constructor(options: OperatorMetricsOptions = {}) {
    const registry = this.registry = new MetricsRegistry(
      options.labels ? { labels: options.labels } : {},
    );
    this.#runs = registry.counter({
      name: "kopf_handler_runs_total",
      help: "Runs of handlers (each attempt), by handler id and kind.",
      labelNames: ["handler", "kind"],
    });
    this.#failures = registry.counter({
      name: "kopf_handler_failures_total",
      help: "Failed runs of handlers (temporary or permanent), by handler id and kind.",
      labelNames: ["handler", "kind"],
    });
    this.#durations = registry.histogram({
      name: "kopf_handler_duration_seconds",
      help: "Durations of handler runs, by handler id and kind.",
      labelNames: ["handler", "kind"],
      ...(options.buckets ? { buckets: options.buckets } : {}),
    });
    this.#requests = registry.counter({
      name: "kopf_api_requests_total",
      help: "Requests to the Kubernetes API (each attempt), by verb and HTTP code (0: no answer).",
      labelNames: ["verb", "code"],
    });
    this.#watches = registry.counter({
      name: "kopf_watch_connects_total",
      help: "Watch-streams opened (connects and reconnects), by resource.",
      labelNames: ["resource"],
    });
    const written = {
      posted: registry.counter({
        name: "kopf_events_posted_total",
        help: "Kubernetes Events created (a POST each).",
      }),
      folded: registry.counter({
        name: "kopf_events_folded_total",
        help: "Repeats of an event folded into its existing Event's count (a PATCH, as client-go).",
      }),
      aggregated: registry.counter({
        name: "kopf_events_aggregated_total",
        help: "Similar events (one object and reason, 10 messages in 10 minutes) " +
          "posted or folded as one '(combined from similar events)' Event.",
      }),
    };
    const dropped = registry.counter({
      name: "kopf_events_dropped_total",
      help: "Events not written, by reason: spam (the per-object rate limit), failed (the API " +
        "refused or was unreachable), overflow (too many pending), unflushed (pending at exit).",
      labelNames: ["reason"],
    });
    this.#events = {
      posted: written.posted.labels({}),
      folded: written.folded.labels({}),
      aggregated: written.aggregated.labels({}),
      spam: dropped.labels({ reason: "spam" }), // each reason shown from 0, as they are bound
      failed: dropped.labels({ reason: "failed" }),
      overflow: dropped.labels({ reason: "overflow" }),
      unflushed: dropped.labels({ reason: "unflushed" }),
    };
    const samples = (): Map<string, { depth: number; objects: number }> => {
      const out = new Map<string, { depth: number; objects: number }>();
      for (const source of this.#queues) {
        for (const s of source()) {
          const total = out.get(s.resource) ?? { depth: 0, objects: 0 };
          total.depth += s.depth;
          total.objects += s.objects;
          out.set(s.resource, total);
        }
      }
      return out;
    };
    registry.gauge({
      name: "kopf_queue_depth",
      help: "Events waiting in the per-object queues, by resource.",
      labelNames: ["resource"],
      collect(gauge) {
        gauge.reset();
        for (const [resource, s] of samples()) gauge.set({ resource }, s.depth);
      },
    });
    registry.gauge({
      name: "kopf_queue_objects",
      help: "Objects with a live per-object worker, by resource.",
      labelNames: ["resource"],
      collect(gauge) {
        gauge.reset();
        for (const [resource, s] of samples()) gauge.set({ resource }, s.objects);
      },
    });
  }

  /** The content type of {@link OperatorMetrics.metrics} (text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Records one run of a handler.
   *
   * @param handler The handler's id.
   * @param kind Its kind: `changing`, `event`, `activity`, `daemon`, `timer`, …
   * @param seconds How long it ran.
   * @param failed Whether it failed (temporarily or permanently).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorMetrics } from "@kopf/kopf";
   * const metrics = new OperatorMetrics();
   * metrics.handlerRun("checkFn", "timer", 0.01, false);
   * const text = await metrics.metrics();
   * assert.deepEqual(text.includes('kopf_handler_runs_total{handler="checkFn",kind="timer"} 1'), true);
   * assert.deepEqual(text.includes('kopf_handler_failures_total{handler="checkFn"'), false);
   * ```
   */
  handlerRun(handler: string, kind: string, seconds: number, failed: boolean): void {
    let ids = this.#handlers.get(kind);
    if (!ids) this.#handlers.set(kind, ids = new Map());
    let series = ids.get(handler);
    if (!series) {
      const labels = { handler, kind };
      series = {
        labels,
        runs: this.#runs.labels(labels),
        failures: undefined, // its series is shown from the first failure, not at 0
        durations: this.#durations.labels(labels),
      };
      ids.set(handler, series);
    }
    series.runs.inc();
    if (failed) (series.failures ??= this.#failures.labels(series.labels)).inc();
    series.durations.observe(seconds);
  }

  /**
   * Records one attempt of an API request (give it to `ApiClient`'s `onRequest`);
   * a `watch` request also counts as a watch (re)connect of its resource.
   *
   * @param record The attempt as the client reports it.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorMetrics } from "@kopf/kopf";
   * const metrics = new OperatorMetrics();
   * metrics.apiRequest({ verb: "watch", resource: "pods", subresource: undefined, code: 200,
   *   method: "GET", path: "/api/v1/pods", attempt: 1, durationMs: 3 });
   * assert.deepEqual((await metrics.metrics()).includes('kopf_watch_connects_total{resource="pods"} 1'), true);
   * ```
   */
  apiRequest(record: RequestRecord): void {
    const { verb, code } = record;
    let codes = this.#verbs.get(verb);
    if (!codes) this.#verbs.set(verb, codes = new Map());
    let counter = codes.get(code);
    if (!counter) codes.set(code, counter = this.#requests.labels({ verb, code: String(code) }));
    counter.inc();
    if (record.verb === "watch") this.watchConnect(record.resource);
  }

  /**
   * Records a watch-stream opened (a connect or a reconnect).
   *
   * @param resource The resource.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorMetrics } from "@kopf/kopf";
   * const metrics = new OperatorMetrics();
   * metrics.watchConnect("kopfexamples.kopf.dev");
   * metrics.watchConnect("kopfexamples.kopf.dev");
   * const text = await metrics.metrics();
   * assert.deepEqual(text.includes('kopf_watch_connects_total{resource="kopfexamples.kopf.dev"} 2'), true);
   * ```
   */
  watchConnect(resource: string): void {
    this.#watches.inc({ resource });
  }

  /**
   * Counts occurrences of Kubernetes Events by outcome (give it to the event recorder).
   *
   * @param outcome Posted, folded, aggregated, or a reason to drop.
   * @param n How many.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorMetrics } from "@kopf/kopf";
   * const metrics = new OperatorMetrics();
   * metrics.countEvents("spam", 3);
   * assert.deepEqual((await metrics.metrics()).includes('kopf_events_dropped_total{reason="spam"} 3'), true);
   * ```
   */
  countEvents(
    outcome: "posted" | "folded" | "aggregated" | "spam" | "failed" | "overflow" | "unflushed",
    n: number,
  ): void {
    this.#events[outcome].inc(n);
  }

  /**
   * Adds a source of queue samples, read at each scrape.
   *
   * @param source Gives the current samples.
   * @returns A function that removes the source.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorMetrics } from "@kopf/kopf";
   * const metrics = new OperatorMetrics();
   * const remove = metrics.observeQueues(() => [{ resource: "pods", depth: 3, objects: 2 }]);
   * assert.deepEqual((await metrics.metrics()).includes('kopf_queue_depth{resource="pods"} 3'), true);
   * remove();
   * ```
   */
  observeQueues(source: () => Iterable<QueueSample>): () => void {
    this.#queues.add(source);
    return () => void this.#queues.delete(source);
  }

  /**
   * The metrics in the Prometheus text exposition format 0.0.4.
   *
   * @returns The text.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorMetrics } from "@kopf/kopf";
   * assert.deepEqual((await new OperatorMetrics().metrics()).includes("# TYPE kopf_queue_depth gauge"), true);
   * ```
   */
  async metrics(): Promise<string> {
    return await this.registry.metrics();
  }
}
