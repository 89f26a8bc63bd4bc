/**
 * kube-apiserver's request metrics, named and labelled as kube names them, served at `/metrics`
 * in Prometheus' text format — so a dashboard or a test written against a cluster reads the
 * embedded server unchanged:
 *
 * - `apiserver_request_total{code,component,dry_run,group,resource,scope,subresource,verb,version}`
 *   — a counter of the requests that reached a resource's handler;
 * - `apiserver_request_duration_seconds{component,dry_run,group,resource,scope,subresource,verb,version}`
 *   — a histogram with kube's buckets (5 ms to 60 s);
 * - `apiserver_current_inflight_requests{request_kind}` — the most requests in flight at once in
 *   the last second, `mutating` and `readOnly` (watches, long-running, not counted).
 *
 * Labels as kube's `MonitorRequest` sets them: `verb` upper-case (`GET`, `LIST`, `WATCH`,
 * `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE` — a deletecollection is a `DELETE`); `scope`
 * `resource` (a named object, or a create), `namespace` or `cluster`; `component` `apiserver`;
 * `dry_run` the sorted distinct `dryRun` values. Label names are written in sorted order, `le`
 * last, as Prometheus' Go client writes them; help texts carry kube's stability prefix.
 *
 * Cost: one string key and one Map update per request (and a bucket search for the histogram);
 * the text is built only when scraped.
 *
 * @module
 */

/** kube's buckets of `apiserver_request_duration_seconds`. */
export const DURATION_BUCKETS = [
  0.005,
  0.025,
  0.05,
  0.1,
  0.2,
  0.4,
  0.6,
  0.8,
  1.0,
  1.25,
  1.5,
  2,
  3,
  4,
  5,
  6,
  8,
  10,
  15,
  20,
  30,
  45,
  60,
];

/** What one request is counted by. */
export interface RequestLabels {
  /** Upper-case verb as kube reports it (`GET`, `LIST`, `WATCH`, `POST`, `APPLY`…). */
  verb: string;
  /** Sorted distinct `dryRun` values joined by commas ("" when none). */
  dryRun: string;
  group: string;
  version: string;
  /** The resource's plural. */
  resource: string;
  subresource: string;
  /** `resource`, `namespace` or `cluster`. */
  scope: string;
}

/** One series of labels: its counts by code and its durations. */
interface Series {
  labels: RequestLabels;
  codes: Map<number, number>;
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * The request metrics of one server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestMetrics } from "./request_metrics.ts";
 * const metrics = new RequestMetrics();
 * const labels = { verb: "GET", dryRun: "", group: "", version: "v1", resource: "pods", subresource: "", scope: "resource" };
 * metrics.observe(labels, 200, 0.003);
 * assert.match(metrics.text(), /^apiserver_request_total\{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"\} 1$/m);
 * ```
 */
export class RequestMetrics {
  /** By a short key of the labels; the Prometheus text of the labels is made only when scraped. */
  #series = new Map<string, Series>();
  #last: Series | undefined;
  #inflight = { mutating: 0, readOnly: 0 };
  #peak = { mutating: 0, readOnly: 0 };
  #peakSince = -Infinity;

  /**
   * Counts a request that reached a resource's handler.
   *
   * @param labels The request's labels.
   * @param code The HTTP status code answered.
   * @param seconds How long it took (not observed for watches: theirs is the stream's life).
   */
  observe(labels: RequestLabels, code: number, seconds: number | undefined): void {
    // Requests come in runs of the same labels: the last series is tried before the key is built.
    let series = this.#last && sameLabels(this.#last.labels, labels) ? this.#last : undefined;
    if (!series) {
      const key =
        `${labels.verb} ${labels.group} ${labels.version} ${labels.resource} ${labels.subresource} ${labels.scope} ${labels.dryRun}`;
      series = this.#series.get(key);
      if (!series) {
        series = {
          labels: { ...labels },
          codes: new Map(),
          buckets: new Array(DURATION_BUCKETS.length).fill(0),
          sum: 0,
          count: 0,
        };
        this.#series.set(key, series);
      }
      this.#last = series;
    }
    series.codes.set(code, (series.codes.get(code) ?? 0) + 1);
    if (seconds === undefined) return;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    if (i < DURATION_BUCKETS.length) series.buckets[i]!++;
    series.sum += seconds;
    series.count++;
  }

  /**
   * A request (not a long-running one) starts: counted in flight until `done` is called.
   *
   * @param mutating Whether it writes (not GET, HEAD or OPTIONS).
   * @param now The time in milliseconds (`performance.now()`), for the one-second window.
   * @returns Call when it is answered.
   */
  start(mutating: boolean, now: number = performance.now()): () => void {
    const kind = mutating ? "mutating" : "readOnly";
    this.#rollWindow(now);
    const n = ++this.#inflight[kind];
    if (n > this.#peak[kind]) this.#peak[kind] = n;
    return () => {
      this.#inflight[kind]--;
    };
  }

  /** The peak is "in the last second": an older window starts again from what is in flight. */
  #rollWindow(now: number): void {
    if (now - this.#peakSince >= 1000) {
      this.#peakSince = now;
      this.#peak = { ...this.#inflight };
    }
  }

  /**
   * The metrics in Prometheus' text format (version 0.0.4).
   *
   * @returns The text.
   */
  text(): string {
    this.#rollWindow(performance.now());
    const lines: string[] = [
      "# HELP apiserver_current_inflight_requests [STABLE] Maximal number of currently used " +
      "inflight request limit of this apiserver per request kind in last second.",
      "# TYPE apiserver_current_inflight_requests gauge",
      `apiserver_current_inflight_requests{request_kind="mutating"} ${this.#peak.mutating}`,
      `apiserver_current_inflight_requests{request_kind="readOnly"} ${this.#peak.readOnly}`,
    ];
    const series = [...this.#series.values()]
      .map((s) => ({ key: labelText(s.labels), s }))
      .sort((a, b) => compare(a.key, b.key));
    const timed = series.filter(({ s }) => s.count > 0);
    if (timed.length) {
      lines.push(
        "# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in " +
          "seconds for each verb, dry run value, group, version, resource, subresource, scope " +
          "and component.",
        "# TYPE apiserver_request_duration_seconds histogram",
      );
      for (const { key, s } of timed) {
        let cumulative = 0;
        for (const [i, le] of DURATION_BUCKETS.entries()) {
          cumulative += s.buckets[i]!;
          lines.push(`apiserver_request_duration_seconds_bucket{${key},le="${le}"} ${cumulative}`);
        }
        lines.push(
          `apiserver_request_duration_seconds_bucket{${key},le="+Inf"} ${s.count}`,
          `apiserver_request_duration_seconds_sum{${key}} ${s.sum}`,
          `apiserver_request_duration_seconds_count{${key}} ${s.count}`,
        );
      }
    }
    if (series.length) {
      lines.push(
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for " +
          "each verb, dry run value, group, version, resource, scope, component, and HTTP " +
          "response code.",
        "# TYPE apiserver_request_total counter",
      );
      // `code` sorts first among the label names.
      const rows: [string, number][] = [];
      for (const { key, s } of series) {
        for (const [code, n] of s.codes) rows.push([`code="${code}",${key}`, n]);
      }
      for (const [labels, n] of rows.sort((a, b) => compare(a[0], b[0]))) {
        lines.push(`apiserver_request_total{${labels}} ${n}`);
      }
    }
    return lines.join("\n") + "\n";
  }
}

function sameLabels(a: RequestLabels, b: RequestLabels): boolean {
  return a.resource === b.resource && a.verb === b.verb && a.group === b.group &&
    a.version === b.version && a.subresource === b.subresource && a.scope === b.scope &&
    a.dryRun === b.dryRun;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const LABEL_NAMES = [
  "component",
  "dry_run",
  "group",
  "resource",
  "scope",
  "subresource",
  "verb",
  "version",
] as const;

/** The labels (but `code`), sorted by name, as Prometheus writes them. */
function labelText(l: RequestLabels): string {
  const values: Record<(typeof LABEL_NAMES)[number], string> = {
    component: "apiserver",
    dry_run: l.dryRun,
    group: l.group,
    resource: l.resource,
    scope: l.scope,
    subresource: l.subresource,
    verb: l.verb,
    version: l.version,
  };
  return LABEL_NAMES.map((n) => `${n}="${escapeLabel(values[n])}"`).join(",");
}

/** Prometheus' label value escapes: backslash, double quote, newline. */
function escapeLabel(value: string): string {
  return /[\\"\n]/.test(value)
    ? value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
    : value;
}
