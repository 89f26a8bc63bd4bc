/**
 * Helpers of the probing and metrics tests: a free port, the value of one
 * sample in a Prometheus text exposition, and an operator started in this
 * process with a liveness URL.
 *
 * @module
 */

import * as kopf from "../../mod.ts";

/**
 * The URL the operator's health server listens at, from its log line (it binds port 0, so only
 * the line says which port the system picked).
 *
 * @param output The operator's log lines (debug or info level), joined or not.
 * @returns The liveness URL, or undefined when the server has not listened yet.
 */
export function servedAt(output: string | string[]): string | undefined {
  const text = Array.isArray(output) ? output.join("\n") : output;
  return text.match(/Serving health status at (http:\/\/\S+)/)?.[1];
}

/**
 * The value of a sample `name{labels}` in a text exposition (labels in any order).
 *
 * @param text The exposition.
 * @param name The sample's name.
 * @param labels Labels the sample must have (others may be there too).
 * @returns The value (summed over the matching samples), or undefined when none matches.
 */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let total: number | undefined;
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = new Map(
      [...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) {
      total = (total ?? 0) + Number(m[3]);
    }
  }
  return total;
}

/** An operator running in this process. */
export interface RunningOperator extends AsyncDisposable {
  /**
   * The liveness URL (`http://127.0.0.1:<port>/healthz`); throws before the server listens
   * (it does before the startup handlers run).
   */
  readonly url: string;
  /** The metrics URL on the same server. */
  readonly metricsUrl: string;
  /** Resolves when the operator is ready. */
  ready: Promise<void>;
  /** The log lines. */
  lines: string[];
  /** Stops the operator and waits for it. */
  stop(): Promise<void>;
}

/**
 * Starts an operator in this process, serving its health at a port the system picks.
 *
 * @param options Operator options (the kubeconfig and the registry at least).
 * @returns The running operator; dispose it with `await using`.
 */
export function startOperator(options: kopf.OperatorOptions): RunningOperator {
  const stop = new AbortController();
  const lines: string[] = [];
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const done = kopf.operator({
    standalone: true,
    liveness: "http://127.0.0.1:0/healthz", // the port is read back from the log
    signal: stop.signal,
    onReady,
    logging: { format: "plain", level: "debug", write: (l) => lines.push(l) },
    ...options,
    ...(options.sink ? { sink: teed(options.sink, lines) } : {}),
  });
  // A failed start is reported by stop(); the readiness only waits for it.
  const settled = done.then(() => {}, () => {});
  const stopping = async () => {
    stop.abort();
    await done;
  };
  const url = () => {
    const found = servedAt(lines);
    if (!found) throw new Error("The operator's health server has not listened (yet)");
    return found;
  };
  return {
    get url() {
      return url();
    },
    get metricsUrl() {
      return url().replace("/healthz", "/metrics");
    },
    ready: Promise.race([ready, settled]),
    lines,
    stop: stopping,
    [Symbol.asyncDispose]: stopping,
  };
}

/** A sink that also keeps the messages in `lines` (for the health server's address). */
function teed(sink: kopf.LogSink, lines: string[]): kopf.LogSink {
  const tee = (record: kopf.LogRecord) => {
    lines.push(record.message);
    sink(record);
  };
  return sink.level === undefined ? tee : Object.assign(tee, { level: sink.level });
}
