/**
 * The shapes of metrics — label values, options, and the `Counter`, `Gauge`
 * and `Histogram` an application increments — apart from the registry that
 * makes them (`registry.ts`) and the families that implement them
 * (`_families.ts`), so both can speak them without importing each other.
 *
 * @module
 */

/**
 * The values of a metric's labels, by label name (numbers are written as text).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type LabelValues, MetricsRegistry } from "@kopf/kopf";
 * const labels: LabelValues<"verb" | "code"> = { verb: "get", code: 200 };
 * const registry = new MetricsRegistry();
 * registry.counter({ name: "myop_calls_total", help: "Calls.", labelNames: ["verb", "code"] })
 *   .inc(labels);
 * assert.match(await registry.metrics(), /^myop_calls_total\{verb="get",code="200"\} 1$/m);
 * ```
 */
export type LabelValues<L extends string> = Readonly<Record<L, string | number>>;

/**
 * What every metric is declared with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type MetricOptions, MetricsRegistry } from "@kopf/kopf";
 * const options: MetricOptions<"kind"> = {
 *   name: "myop_things_total",
 *   help: "Things, by kind.",
 *   labelNames: ["kind"],
 * };
 * const registry = new MetricsRegistry();
 * registry.counter(options).inc({ kind: "widget" }, 2);
 * assert.match(await registry.metrics(), /^# HELP myop_things_total Things, by kind\.$/m);
 * assert.match(await registry.metrics(), /^myop_things_total\{kind="widget"\} 2$/m);
 * ```
 */
export interface MetricOptions<L extends string> {
  /** The metric's name (`[a-zA-Z_:][a-zA-Z0-9_:]*`, unique in its registry). */
  name: string;
  /** The HELP text. */
  help: string;
  /** The label names (none by default: then the metric has one series, from zero). */
  labelNames?: readonly L[];
}

/**
 * The options of a gauge: the metric's, and a function to read its values at each scrape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * registry.gauge({
 *   name: "myop_cache_entries",
 *   help: "Entries in the cache.",
 *   collect: (gauge) => gauge.set(42),
 * });
 * assert.match(await registry.metrics(), /^myop_cache_entries 42$/m); // collected at scrape time
 * ```
 */
export interface GaugeOptions<L extends string> extends MetricOptions<L> {
  /** Sets the gauge's values before each scrape (may be async; awaited). */
  collect?: (gauge: Gauge<L>) => void | Promise<void>;
}

/**
 * The options of a histogram: the metric's, and the buckets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * registry.histogram({ name: "myop_sizes_bytes", help: "Sizes.", buckets: [1e3, 1e6] })
 *   .observe(5e3);
 * const text = await registry.metrics();
 * assert.match(text, /^myop_sizes_bytes_bucket\{le="1000"\} 0$/m);
 * assert.match(text, /^myop_sizes_bytes_bucket\{le="1000000"\} 1$/m);
 * ```
 */
export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /**
   * The buckets' upper bounds; `+Inf` is always added (default: 0.005, 0.01, 0.025, 0.05,
   * 0.1, 0.25, 0.5, 1, 2.5, 5, 10 — seconds from 5 ms to 10 s, as prom-client and the Go client).
   */
  buckets?: readonly number[];
}

/**
 * A counter: a number per label set that only goes up (made by `MetricsRegistry.counter`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * const retries = registry.counter({ name: "myop_retries_total", help: "Retries, by reason.",
 *   labelNames: ["reason"] });
 * retries.inc({ reason: "conflict" });
 * retries.inc({ reason: "conflict" }, 2);
 * assert.deepEqual(retries.get({ reason: "conflict" }), 3);
 * ```
 */
export interface Counter<L extends string = never> {
  /** The metric's name. */
  readonly name: string;
  /**
   * Adds to the counter of a metric without labels.
   *
   * @param value How much (default 1); a finite number ≥ 0.
   * @throws {RangeError} When the value is negative or not finite.
   */
  inc(value?: number): void;
  /**
   * Adds to the counter of a label set.
   *
   * @param labels The label values (every label of the metric).
   * @param value How much (default 1); a finite number ≥ 0.
   * @throws {RangeError} When the value is negative or not finite.
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  inc(labels: LabelValues<L>, value?: number): void;
  /**
   * One label set's counter, found once: its `inc` does no look-up (for a hot path).
   *
   * @param labels The label values (every label of the metric; `{}` for a metric without).
   * @returns The label set's counter; after `reset()` it counts from zero again.
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  labels(labels: LabelValues<L>): BoundCounter;
  /**
   * The current value.
   *
   * @param labels The label values (none for a metric without labels).
   * @returns The value (0 for a label set never used).
   */
  get(labels?: LabelValues<L>): number;
  /** Forgets every label set (a metric without labels goes back to zero). */
  reset(): void;
}

/**
 * One label set of a counter (`Counter.labels()`): the same series as `inc(labels, value)`
 * adds to, found once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * const calls = registry.counter({ name: "myop_calls_total", help: "Calls, by verb.",
 *   labelNames: ["verb"] });
 * const gets = calls.labels({ verb: "get" });
 * gets.inc();
 * gets.inc(2);
 * assert.deepEqual([gets.get(), calls.get({ verb: "get" })], [3, 3]);
 * ```
 */
export interface BoundCounter {
  /**
   * Adds to the counter.
   *
   * @param value How much (default 1); a finite number ≥ 0.
   * @throws {RangeError} When the value is negative or not finite.
   */
  inc(value?: number): void;
  /**
   * The current value.
   *
   * @returns The value.
   */
  get(): number;
}

/**
 * A gauge: a number per label set that is set or goes up and down, or is read at each scrape
 * (made by `MetricsRegistry.gauge`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * const inflight = registry.gauge({ name: "myop_inflight", help: "Requests in flight." });
 * inflight.inc();
 * inflight.inc();
 * inflight.dec();
 * assert.deepEqual(inflight.get(), 1);
 * ```
 */
export interface Gauge<L extends string = never> {
  /** The metric's name. */
  readonly name: string;
  /**
   * Sets the gauge of a metric without labels.
   *
   * @param value The value.
   */
  set(value: number): void;
  /**
   * Sets the gauge of a label set.
   *
   * @param labels The label values (every label of the metric).
   * @param value The value.
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  set(labels: LabelValues<L>, value: number): void;
  /**
   * Adds to the gauge of a metric without labels.
   *
   * @param value How much (default 1).
   */
  inc(value?: number): void;
  /**
   * Adds to the gauge of a label set.
   *
   * @param labels The label values.
   * @param value How much (default 1).
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  inc(labels: LabelValues<L>, value?: number): void;
  /**
   * Subtracts from the gauge of a metric without labels.
   *
   * @param value How much (default 1).
   */
  dec(value?: number): void;
  /**
   * Subtracts from the gauge of a label set.
   *
   * @param labels The label values.
   * @param value How much (default 1).
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  dec(labels: LabelValues<L>, value?: number): void;
  /**
   * One label set's gauge, found once: its methods do no look-up (for a hot path).
   *
   * @param labels The label values (every label of the metric; `{}` for a metric without).
   * @returns The label set's gauge; after `reset()` it starts from zero again.
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  labels(labels: LabelValues<L>): BoundGauge;
  /**
   * The current value.
   *
   * @param labels The label values (none for a metric without labels).
   * @returns The value (0 for a label set never used).
   */
  get(labels?: LabelValues<L>): number;
  /** Forgets every label set (a metric without labels goes back to zero). */
  reset(): void;
}

/**
 * One label set of a gauge (`Gauge.labels()`), found once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * const open = registry.gauge({ name: "myop_open", help: "Open things, by kind.",
 *   labelNames: ["kind"] });
 * const files = open.labels({ kind: "file" });
 * files.set(5);
 * files.inc();
 * files.dec(2);
 * assert.deepEqual([files.get(), open.get({ kind: "file" })], [4, 4]);
 * ```
 */
export interface BoundGauge {
  /**
   * Sets the gauge.
   *
   * @param value The value.
   */
  set(value: number): void;
  /**
   * Adds to the gauge.
   *
   * @param value How much (default 1).
   */
  inc(value?: number): void;
  /**
   * Subtracts from the gauge.
   *
   * @param value How much (default 1).
   */
  dec(value?: number): void;
  /**
   * The current value.
   *
   * @returns The value.
   */
  get(): number;
}

/**
 * A histogram: observations counted in cumulative buckets, with their sum and count
 * (made by `MetricsRegistry.histogram`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * const latency = registry.histogram({ name: "myop_latency_seconds", help: "Latency.",
 *   buckets: [0.1, 1] });
 * latency.observe(0.3);
 * assert.deepEqual((await registry.metrics()).includes('myop_latency_seconds_bucket{le="1"} 1'), true);
 * ```
 */
export interface Histogram<L extends string = never> {
  /** The metric's name. */
  readonly name: string;
  /**
   * Observes a value of a metric without labels.
   *
   * @param value The value.
   */
  observe(value: number): void;
  /**
   * Observes a value of a label set.
   *
   * @param labels The label values (every label of the metric).
   * @param value The value.
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  observe(labels: LabelValues<L>, value: number): void;
  /**
   * One label set's histogram, found once: its `observe` does no look-up (for a hot path).
   *
   * @param labels The label values (every label of the metric; `{}` for a metric without).
   * @returns The label set's histogram; after `reset()` it starts empty again.
   * @throws {TypeError} When a label has no value or is not the metric's.
   */
  labels(labels: LabelValues<L>): BoundHistogram;
  /** Forgets every label set. */
  reset(): void;
}

/**
 * One label set of a histogram (`Histogram.labels()`), found once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry();
 * const took = registry.histogram({ name: "myop_took_seconds", help: "Durations, by step.",
 *   labelNames: ["step"], buckets: [1] });
 * took.labels({ step: "fetch" }).observe(0.5);
 * assert.match(await registry.metrics(), /^myop_took_seconds_count\{step="fetch"\} 1$/m);
 * ```
 */
export interface BoundHistogram {
  /**
   * Observes a value.
   *
   * @param value The value.
   */
  observe(value: number): void;
}
