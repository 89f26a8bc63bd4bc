/**
 * The operator under test of the operator benchmark (`operator_bench.ts`), in
 * a process of its own so that its CPU time (all its threads, and its main
 * thread apart) and its RSS (`VmHWM`, the exact peak) are its own and not
 * mixed with the load generator's or with what earlier phases left behind.
 *
 * It runs the benchmark's handlers: a create handler with a result (which
 * logs one line when events are on) and a non-optional delete handler, so
 * every object carries the finalizer; with `account`, a counting
 * `kopf.on.event` handler and a sink that counts log messages by their first
 * words. Only the public `mod.ts` is imported, so the benchmark runs against
 * earlier commits too (`compare.ts`).
 *
 * stdout is a line protocol, one JSON object per line:
 * - `{"event":"ready"}` once the operator watches;
 * - `{"event":"report", …}` in answer to a `report` line on stdin;
 * - `{"event":"stopped", …}` as the last line, after SIGTERM stopped the
 *   operator (pending events flushed or dropped), then the process exits.
 *
 * A report holds the processing cycles and the log messages counted
 * (`account`), the create handler's start time per object in epoch ms with
 * sub-millisecond precision (`starts`), the log records with an object at
 * `info` and above (`events`), and the operator's metrics in the Prometheus
 * text format (`kopf.OperatorMetrics().metrics()`).
 *
 * Usage: `deno run -A bench/_bench_operator.ts <kubeconfig> [options as JSON]`
 * (options: {@link ChildOptions}).
 *
 * @module
 */

import * as kopf from "../mod.ts";

/** What the benchmark asks of its operator. */
export interface ChildOptions {
  /** `settings.batching.batchWindow` (default: the default). */
  batchWindow?: number;
  /** `settings.batching.workerLimit` (default: none). */
  workerLimit?: number;
  /** Count processing cycles (a `kopf.on.event` handler) and log messages. */
  account?: boolean;
  /** Keep the create handler's start time per object (for latencies). */
  starts?: boolean;
  /** Post events: the create handler logs a line; log records with an object are counted. */
  events?: boolean;
  /**
   * Post events as the default settings do (the framework's own lines at `info` and above,
   * e.g. "Handler 'create_fn' succeeded."), the create handler logging nothing: the operator
   * as shipped. Without it (and without `events`), posting is off.
   */
  posting?: boolean;
  /** Watch this namespace only (default: cluster-wide), e.g. two operators side by side. */
  namespace?: string;
  /** Without `kopf.OperatorMetrics` (as `kopf run` without `--liveness`); reports have none. */
  noMetrics?: boolean;
}

/** One report of the child (a `report` or `stopped` line). */
export interface ChildReport {
  event: "report" | "stopped";
  /** Processing cycles seen by the counting event handler (`account` only). */
  cycles: number;
  /** Log messages by their first words (`account` only). */
  messages: Record<string, number>;
  /** Name → when the create handler started (epoch ms; `starts` only). */
  starts: Record<string, number>;
  /** Log records with an object at info and above (`events` only). */
  occurrences: number;
  /** The operator's metrics, Prometheus text format. */
  metrics: string;
  /** Its memory now, in bytes (`Deno.memoryUsage()`: V8's heap, used and reserved, and the memory outside it). */
  memory: { rss: number; heapTotal: number; heapUsed: number; external: number };
}

/**
 * Answers the `report` requests on stdin (one per line) as they come, in the background.
 *
 * @param answer Prints a report line.
 */
export function answerReports(answer: () => unknown): void {
  // Plain reads, not web streams (`readable.pipeThrough(new TextDecoderStream())`): the harness's
  // own code should not be what the idle operator's RSS shows (≈0.5 MiB of streams machinery).
  void (async () => {
    let buffer = "";
    const bytes = new Uint8Array(256);
    const decoder = new TextDecoder();
    for (let n; (n = await Deno.stdin.read(bytes)) !== null;) {
      buffer += decoder.decode(bytes.subarray(0, n), { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const request = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (request === "report") await answer();
      }
    }
  })();
}

if (import.meta.main) {
  const [kubeconfig, json = "{}"] = Deno.args;
  if (!kubeconfig) throw new Error("usage: _bench_operator.ts <kubeconfig> [options as JSON]");
  const options = JSON.parse(json) as ChildOptions;

  const encoder = new TextEncoder();
  const out = (line: Record<string, unknown>) =>
    Deno.stdout.writeSync(encoder.encode(JSON.stringify(line) + "\n"));
  const now = () => performance.timeOrigin + performance.now();

  const registry = new kopf.OperatorRegistry();
  const starts: Record<string, number> = {};
  const messages: Record<string, number> = {};
  let cycles = 0;
  let occurrences = 0;
  const chatty = !!options.events;
  const keepStarts = !!options.starts;
  kopf.on.create("kopf.dev", "v1", "kopfexamples", { registry, id: "create_fn" }, (c) => {
    if (keepStarts) starts[c.name as string] = now();
    if (chatty) c.logger.info("Created.");
    return { message: "created" };
  });
  kopf.on.delete("kopf.dev", "v1", "kopfexamples", { registry, id: "delete_fn" }, () => {});
  if (options.account) {
    kopf.on.event("kopf.dev", "v1", "kopfexamples", { registry, id: "count_fn" }, () => {
      cycles++;
    });
  }
  const settings = new kopf.OperatorSettings();
  settings.posting.enabled = chatty || !!options.posting;
  if (options.batchWindow !== undefined) settings.batching.batchWindow = options.batchWindow;
  if (options.workerLimit !== undefined) settings.batching.workerLimit = options.workerLimit;

  const metrics = options.noMetrics ? undefined : new kopf.OperatorMetrics();
  const logs = chatty
    ? {
      sink: Object.assign((record: kopf.LogRecord) => {
        if (record.object && record.level !== "debug") occurrences++;
      }, { level: "info" as const }),
    }
    : options.account
    ? {
      sink: (record: kopf.LogRecord) => {
        const key = record.message.split(": ")[0]!;
        messages[key] = (messages[key] ?? 0) + 1;
      },
    }
    : { logging: { level: "warning" as const, write: () => {} } };

  const report = async (event: ChildReport["event"]): Promise<ChildReport> => ({
    event,
    cycles,
    messages,
    starts,
    occurrences,
    metrics: metrics ? await metrics.metrics() : "",
    memory: Deno.memoryUsage(),
  });

  const stop = new AbortController();
  Deno.addSignalListener("SIGTERM", () => stop.abort());
  const running = kopf.operator({
    registry,
    settings,
    ...(options.namespace ? { namespaces: [options.namespace] } : { clusterwide: true }),
    kubeconfig,
    signal: stop.signal,
    ...(metrics ? { metrics } : {}),
    onReady: () => out({ event: "ready" }),
    ...logs,
  });

  answerReports(async () => out({ ...await report("report") }));

  let code = 0;
  try {
    await running;
  } catch (e) {
    console.error(`the benchmark's operator failed: ${e instanceof Error ? e.stack : e}`);
    code = 1;
  }
  out({ ...await report("stopped") });
  Deno.exit(code);
}
