/**
 * A registry of Prometheus metrics — counters, gauges, histograms — and their
 * exposition in the text format 0.0.4 (what `/metrics` serves).
 *
 * Why our own and not prom-client: prom-client is a CommonJS package, and
 * loading it (with Deno's CommonJS layer) cost the operator several MiB of
 * resident memory at idle for what is a few Maps and a text writer. The
 * metrics kept their names, HELP texts, labels and values — and their text,
 * byte for byte (see tests/engines/metrics_text_test.ts).
 *
 * There is no global default registry: each operator has its own (see
 * `OperatorMetrics`), so two operators in one process never share a metric.
 *
 * @module
 */

import { checkNames, CONTENT_TYPE } from "./_exposition.ts";
import { CounterImpl, GaugeImpl, HistogramImpl } from "./_families.ts";
import type { Exposable } from "./_families.ts";
import type {
  Counter,
  Gauge,
  GaugeOptions,
  Histogram,
  HistogramOptions,
  MetricOptions,
} from "./types.ts";

export type {
  BoundCounter,
  BoundGauge,
  BoundHistogram,
  Counter,
  Gauge,
  GaugeOptions,
  Histogram,
  HistogramOptions,
  LabelValues,
  MetricOptions,
} from "./types.ts";

/** Options of {@link MetricsRegistry}. */
export interface MetricsRegistryOptions {
  /** Labels added to every sample of every metric that does not have them itself. */
  labels?: Readonly<Record<string, string>>;
}

/**
 * A registry of Prometheus metrics and their text exposition (format 0.0.4).
 *
 * The operator's own is `OperatorMetrics.registry`; an application adds its metrics there and
 * they are served on the operator's `/metrics` with the operator's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MetricsRegistry } from "@kopf/kopf";
 * const registry = new MetricsRegistry({ labels: { app: "shop" } });
 * const orders = registry.counter({ name: "shop_orders_total", help: "Orders, by state.",
 *   labelNames: ["state"] });
 * orders.inc({ state: "paid" });
 * const text = await registry.metrics();
 * assert.deepEqual(text.includes('shop_orders_total{state="paid",app="shop"} 1'), true);
 * assert.deepEqual(registry.contentType, "text/plain; version=0.0.4; charset=utf-8");
 * ```
 */
export class MetricsRegistry {
  /** The content type of {@link MetricsRegistry.metrics}. */
  readonly contentType: string = CONTENT_TYPE;
  #metrics = new Map<string, Exposable>();
  #defaults: ReadonlyMap<string, string>;

  /**
   * Creates an empty registry.
   *
   * @param options The default labels.
   * @throws {TypeError} When a default label's name is not valid.
   */
  constructor(options: MetricsRegistryOptions = {}) {
    const defaults = new Map(Object.entries(options.labels ?? {}));
    checkNames("default_labels", [...defaults.keys()]);
    this.#defaults = defaults;
  }

  /**
   * Declares a counter.
   *
   * @param options Its name, HELP text and label names.
   * @returns The counter.
   * @throws {TypeError} When a name is not valid or the metric's name is taken.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { MetricsRegistry } from "@kopf/kopf";
   * const registry = new MetricsRegistry();
   * const jobs = registry.counter({ name: "myop_jobs_total", help: "Jobs done." });
   * jobs.inc();
   * assert.match(await registry.metrics(), /^myop_jobs_total 1$/m);
   * ```
   */
  counter<L extends string = never>(options: MetricOptions<L>): Counter<L> {
    checkNames(options.name, options.labelNames ?? []);
    return this.#add(new CounterImpl<L>(options));
  }

  /**
   * Declares a gauge.
   *
   * @param options Its name, HELP text, label names and an optional `collect`.
   * @returns The gauge.
   * @throws {TypeError} When a name is not valid or the metric's name is taken.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { MetricsRegistry } from "@kopf/kopf";
   * const registry = new MetricsRegistry();
   * registry.gauge({ name: "myop_up", help: "Always 1.", collect: (g) => g.set(1) });
   * assert.deepEqual((await registry.metrics()).includes("myop_up 1"), true);
   * ```
   */
  gauge<L extends string = never>(options: GaugeOptions<L>): Gauge<L> {
    checkNames(options.name, options.labelNames ?? []);
    return this.#add(new GaugeImpl<L>(options));
  }

  /**
   * Declares a histogram.
   *
   * @param options Its name, HELP text, label names and buckets.
   * @returns The histogram.
   * @throws {TypeError} When a name is not valid (`le` is reserved) or the metric's name is taken.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { MetricsRegistry } from "@kopf/kopf";
   * const registry = new MetricsRegistry();
   * const sizes = registry.histogram({ name: "myop_batch_size", help: "Sizes.",
   *   buckets: [1, 10, 100] });
   * sizes.observe(7);
   * const text = await registry.metrics();
   * assert.match(text, /^myop_batch_size_bucket\{le="1"\} 0$/m);
   * assert.match(text, /^myop_batch_size_bucket\{le="10"\} 1$/m);
   * assert.match(text, /^myop_batch_size_sum 7$/m);
   * ```
   */
  histogram<L extends string = never>(options: HistogramOptions<L>): Histogram<L> {
    checkNames(options.name, options.labelNames ?? [], ["le"]);
    return this.#add(new HistogramImpl<L>(options));
  }

  #add<M extends Exposable>(metric: M): M {
    if (this.#metrics.has(metric.name)) {
      throw new TypeError(`A metric named ${metric.name} is registered already.`);
    }
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  /**
   * The metrics in the Prometheus text exposition format 0.0.4, in the order they were
   * declared (the gauges' `collect` functions run first, one after another).
   *
   * @returns The text.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { MetricsRegistry } from "@kopf/kopf";
   * const registry = new MetricsRegistry();
   * registry.counter({ name: "myop_jobs_total", help: "Jobs done." }).inc(2);
   * assert.equal(
   *   await registry.metrics(),
   *   "# HELP myop_jobs_total Jobs done.\n# TYPE myop_jobs_total counter\nmyop_jobs_total 2\n",
   * );
   * ```
   */
  async metrics(): Promise<string> {
    for (const metric of this.#metrics.values()) await metric.collect();
    const blocks: string[] = [];
    for (const metric of this.#metrics.values()) blocks.push(metric.expose(this.#defaults));
    return blocks.join("\n\n") + "\n";
  }
}
