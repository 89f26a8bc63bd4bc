/**
 * The metric types behind `MetricsRegistry`: a family of series per metric,
 * one series per label set, and the lines each type writes.
 *
 * A counter is incremented at each handler run and each API request, so a seen
 * label set is found by one Map lookup per label value; the escaped label text
 * is made once, when the series is new, and reused at every scrape.
 *
 * @module
 */

import { escapeHelp, formatLabels, formatValue } from "./_exposition.ts";
import type {
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

type Labels = Readonly<Record<string, string | number>>;

/** What the registry needs of a metric to expose it. */
export interface Exposable {
  /** The metric's name. */
  readonly name: string;
  /** Refreshes the values before a scrape (gauges with a `collect`). */
  collect(): void | Promise<void>;
  /** The metric's lines, given the registry's default labels. */
  expose(defaults: ReadonlyMap<string, string>): string;
}

/** One label set's values. */
class Series {
  /** The counter's or gauge's value; the histogram's count. */
  value = 0;
  /** The histogram's sum. */
  sum = 0;
  /** The histogram's per-bucket counts (not cumulative). */
  counts: Float64Array | undefined;

  /** @param pairs The label pairs, escaped, as they go between the braces. */
  constructor(readonly pairs: string) {}
}

/** A level of the label tree: by the value of one label, the next level or (last) the series. */
type Level = Map<string, Level | Series>;

/**
 * The series of one metric, in a tree of Maps by label value (one level per label): finding a
 * seen label set is a lookup per label with the caller's own strings, with no key to build.
 */
class Family {
  readonly name: string;
  readonly labelNames: readonly string[];
  #root: Level = new Map();
  /** Every series, in the order they were first used (the order of the exposition). */
  #all: Series[] = [];
  /** Counts the resets: a bound label set whose series was forgotten finds its new one. */
  generation = 0;
  #buckets: number;

  constructor(options: MetricOptions<string>, buckets = 0) {
    this.name = options.name;
    this.labelNames = options.labelNames ?? [];
    this.#buckets = buckets;
    this.reset();
  }

  /** The series of a label set, made on first use. */
  get(labels: Labels | undefined): Series {
    return this.#walk(labels, true)!;
  }

  /** The series of a label set if it was used, without making it. */
  find(labels: Labels | undefined): Series | undefined {
    return this.#walk(labels, false);
  }

  #walk(labels: Labels | undefined, make: boolean): Series | undefined {
    const names = this.labelNames;
    // A label this metric does not have can only be a mistake: refused, also on a seen label set.
    if (labels !== undefined) {
      let count = 0;
      for (const _ in labels) count++;
      if (count > names.length) this.#unknownLabel(labels);
    }
    if (!names.length) return this.#all[0];
    let level = this.#root;
    const last = names.length - 1;
    for (let i = 0; i < last; i++) {
      const value = this.#value(labels, i);
      let next = level.get(value) as Level | undefined;
      if (!next) {
        if (!make) return undefined;
        level.set(value, next = new Map());
      }
      level = next;
    }
    const value = this.#value(labels, last);
    const series = level.get(value) as Series | undefined;
    if (series || !make) return series;
    const made = this.#add(labels);
    level.set(value, made);
    return made;
  }

  #value(labels: Labels | undefined, i: number): string {
    const raw = labels?.[this.labelNames[i]!];
    if (typeof raw === "string") return raw;
    if (raw === undefined) {
      throw new TypeError(
        `The label ${JSON.stringify(this.labelNames[i])} of ${this.name} has no value.`,
      );
    }
    return String(raw);
  }

  #unknownLabel(labels: Labels): never {
    const name = Object.keys(labels).find((n) => !this.labelNames.includes(n)) ?? "";
    throw new TypeError(
      `Label ${JSON.stringify(name)} is not a label of ${this.name} ` +
        `(it has: ${this.labelNames.join(", ") || "none"}).`,
    );
  }

  #add(labels: Labels | undefined): Series {
    for (const name in labels) {
      if (!this.labelNames.includes(name)) this.#unknownLabel(labels);
    }
    const values = this.labelNames.map((_, i) => this.#value(labels, i));
    const series = new Series(formatLabels(this.labelNames, values));
    if (this.#buckets) series.counts = new Float64Array(this.#buckets);
    this.#all.push(series);
    return series;
  }

  /** Forgets every label set (a metric without labels keeps its one series, at zero). */
  reset(): void {
    this.generation++;
    this.#root.clear();
    this.#all = [];
    if (!this.labelNames.length) this.#add(undefined);
  }

  /** Every series, in the order they were first used. */
  all(): readonly Series[] {
    return this.#all;
  }

  /** The registry's default labels that this metric does not set itself, as label pairs. */
  defaults(defaults: ReadonlyMap<string, string>): string {
    const names: string[] = [], values: string[] = [];
    for (const [name, value] of defaults) {
      if (!this.labelNames.includes(name)) names.push(name), values.push(value);
    }
    return formatLabels(names, values);
  }
}

/** One label set's series, looked up once (behind `labels()`), and again after a reset. */
class Bound {
  #family: Family;
  #labels: Labels | undefined;
  #series: Series;
  #generation: number;

  constructor(family: Family, labels: Labels | undefined) {
    this.#family = family;
    this.#labels = labels && Object.freeze({ ...labels }); // the caller's object may change
    this.#series = family.get(this.#labels); // refuses a wrong label set here, at once
    this.#generation = family.generation;
  }

  /** The series (made anew when the metric was reset since). */
  series(): Series {
    const family = this.#family;
    if (this.#generation === family.generation) return this.#series;
    this.#generation = family.generation;
    return this.#series = family.get(this.#labels);
  }

  /** The value (0 after a reset, until the series is used again). */
  value(): number {
    const family = this.#family;
    return this.#generation === family.generation
      ? this.#series.value
      : family.find(this.#labels)?.value ?? 0;
  }
}

function header(name: string, help: string, type: string): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}`;
}

/** Joins label pairs (any of them may be empty) into `{…}`, or nothing when all are. */
function braces(...parts: string[]): string {
  const inner = parts.filter(Boolean).join(",");
  return inner ? `{${inner}}` : "";
}

/** The labels of `(labels?, value?)` arguments (of `inc`, `dec`, `set`, `observe`). */
function labelsOf(a: Labels | number | undefined): Labels | undefined {
  return typeof a === "object" ? a : undefined;
}

/**
 * The value of `(labels?, value?)` arguments, or the fallback when none is given (undefined: a
 * value is required). Anything but a number is refused, as prom-client refused it: `set(labels)`
 * without a value, or a value of text, can only be a mistake.
 */
function valueOf(
  name: string,
  a: Labels | number | undefined,
  b: number | undefined,
  fallback?: number,
): number {
  return checked(name, (typeof a === "object" ? b : a) ?? fallback);
}

/** A value, refused when it is not a number. */
function checked(name: string, value: unknown): number {
  if (typeof value !== "number") {
    throw new TypeError(`The value for ${name} must be a number, not ${JSON.stringify(value)}.`);
  }
  return value;
}

/** A counter or a gauge: one number per label set. */
class Scalar implements Exposable {
  readonly name: string;
  protected family: Family;
  #help: string;
  #type: string;

  constructor(options: MetricOptions<string>, type: "counter" | "gauge") {
    this.family = new Family(options);
    this.name = options.name;
    this.#help = options.help;
    this.#type = type;
  }

  get(labels?: Labels): number {
    return this.family.find(labels)?.value ?? 0;
  }

  reset(): void {
    this.family.reset();
  }

  collect(): void | Promise<void> {}

  expose(defaults: ReadonlyMap<string, string>): string {
    let out = header(this.name, this.#help, this.#type);
    const extra = this.family.defaults(defaults);
    for (const s of this.family.all()) {
      out += `\n${this.name}${braces(s.pairs, extra)} ${formatValue(s.value)}`;
    }
    return out;
  }
}

/** A counter: a number that only goes up. */
export class CounterImpl<L extends string> extends Scalar implements Counter<L> {
  constructor(options: MetricOptions<L>) {
    super(options, "counter");
  }

  inc(a?: LabelValues<L> | number, b?: number): void {
    this.family.get(labelsOf(a)).value += increment(this.name, valueOf(this.name, a, b, 1));
  }

  labels(labels: LabelValues<L>): BoundCounter {
    const name = this.name;
    const bound = new Bound(this.family, labels);
    return {
      inc(value = 1) {
        if (typeof value !== "number" || !(value >= 0) || value === Infinity) {
          increment(name, checked(name, value)); // throws
        }
        bound.series().value += value;
      },
      get: () => bound.value(),
    };
  }
}

/** A counter's increment, refused when negative or not finite. */
function increment(name: string, n: number): number {
  if (!(n >= 0) || n === Infinity) {
    throw new RangeError(`A counter goes up by a finite number ≥ 0, not ${n} (${name}).`);
  }
  return n;
}

/** A gauge: a number that is set, or goes up and down; optionally read at each scrape. */
export class GaugeImpl<L extends string> extends Scalar implements Gauge<L> {
  #collect: ((gauge: Gauge<L>) => void | Promise<void>) | undefined;

  constructor(options: GaugeOptions<L>) {
    super(options, "gauge");
    this.#collect = options.collect;
  }

  set(a: LabelValues<L> | number, b?: number): void {
    this.family.get(labelsOf(a)).value = valueOf(this.name, a, b);
  }

  inc(a?: LabelValues<L> | number, b?: number): void {
    this.family.get(labelsOf(a)).value += valueOf(this.name, a, b, 1);
  }

  dec(a?: LabelValues<L> | number, b?: number): void {
    this.family.get(labelsOf(a)).value -= valueOf(this.name, a, b, 1);
  }

  labels(labels: LabelValues<L>): BoundGauge {
    const name = this.name;
    const bound = new Bound(this.family, labels);
    return {
      set(value) {
        bound.series().value = checked(name, value);
      },
      inc(value = 1) {
        bound.series().value += checked(name, value);
      },
      dec(value = 1) {
        bound.series().value -= checked(name, value);
      },
      get: () => bound.value(),
    };
  }

  override collect(): void | Promise<void> {
    return this.#collect?.(this);
  }
}

/** The buckets of prom-client and of the Go client: 5 ms to 10 s. */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

/** A histogram: counts of observations in cumulative buckets, their sum and count. */
export class HistogramImpl<L extends string> implements Histogram<L>, Exposable {
  readonly name: string;
  #help: string;
  #bounds: readonly number[];
  #family: Family;

  constructor(options: HistogramOptions<L>) {
    const bounds = [...new Set(options.buckets ?? DEFAULT_BUCKETS)]
      .filter((b) => b !== Infinity)
      .sort((a, b) => a - b);
    if (bounds.some((b) => Number.isNaN(b))) {
      throw new TypeError(`The buckets of ${options.name} must be numbers.`);
    }
    this.name = options.name;
    this.#help = options.help;
    this.#bounds = bounds;
    this.#family = new Family(options, bounds.length);
  }

  observe(a: LabelValues<L> | number, b?: number): void {
    this.#observe(this.#family.get(labelsOf(a)), valueOf(this.name, a, b));
  }

  labels(labels: LabelValues<L>): BoundHistogram {
    const name = this.name;
    const bound = new Bound(this.#family, labels);
    return { observe: (value) => this.#observe(bound.series(), checked(name, value)) };
  }

  #observe(series: Series, value: number): void {
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        series.counts![i]!++;
        break;
      }
    }
    series.value++;
    series.sum += value;
  }

  reset(): void {
    this.#family.reset();
  }

  collect(): void {}

  /**
   * The lines, with the label order prom-client wrote (`le` first, then the default labels,
   * then the metric's own), kept so that the scraped text did not change with the switch.
   */
  expose(defaults: ReadonlyMap<string, string>): string {
    const name = this.name;
    let out = header(name, this.#help, "histogram");
    const extra = this.#family.defaults(defaults);
    for (const s of this.#family.all()) {
      let cumulative = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        cumulative += s.counts![i]!;
        const le = `le="${formatValue(this.#bounds[i]!)}"`;
        out += `\n${name}_bucket${braces(le, extra, s.pairs)} ${formatValue(cumulative)}`;
      }
      out += `\n${name}_bucket${braces('le="+Inf"', extra, s.pairs)} ${formatValue(s.value)}`;
      out += `\n${name}_sum${braces(extra, s.pairs)} ${formatValue(s.sum)}`;
      out += `\n${name}_count${braces(extra, s.pairs)} ${formatValue(s.value)}`;
    }
    return out;
  }
}
