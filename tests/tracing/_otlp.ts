/**
 * The real exporter path of the tracing tests: an OTLP/HTTP receiver (the JSON encoding, which
 * Deno's exporter sends with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), a recording proxy in
 * front of the embedded API server (the headers each request carried), and an operator run as
 * a process with `OTEL_DENO=true` exporting to the receiver.
 *
 * @module
 */

/** One exported span, flattened. */
export interface ExportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string | number | boolean>;
  events: Array<{ name: string; attributes: Record<string, string | number | boolean> }>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  status: { code: number; message: string };
  /** The service that exported it (`service.name`). */
  service: string;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpKeyValue = { key: string; value: OtlpValue };

function attrs(list: OtlpKeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

/** The receiver: the spans so far, and the env vars that send an operator's spans here. */
export interface Receiver extends AsyncDisposable {
  spans: ExportedSpan[];
  /** The environment of a process that exports to this receiver, flushing every 50 ms. */
  env(service: string): Record<string, string>;
  /** Waits until a span matches (fails by name after `seconds`). */
  waitFor(
    what: string,
    match: (s: ExportedSpan) => boolean,
    seconds?: number,
  ): Promise<ExportedSpan>;
}

/**
 * Starts an OTLP/HTTP JSON receiver on a free port.
 *
 * @returns The receiver; dispose it with `await using`.
 */
export function otlpReceiver(): Receiver {
  const spans: ExportedSpan[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/v1/traces") {
      // deno-lint-ignore no-explicit-any
      const body = await req.json() as any;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              name: s.name,
              kind: s.kind,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              attributes: attrs(s.attributes),
              // deno-lint-ignore no-explicit-any
              events: (s.events ?? []).map((e: any) => ({
                name: e.name,
                attributes: attrs(e.attributes),
              })),
              // deno-lint-ignore no-explicit-any
              links: (s.links ?? []).map((l: any) => ({
                traceId: l.traceId,
                spanId: l.spanId,
                attributes: attrs(l.attributes),
              })),
              status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
              service,
            });
          }
        }
      }
    } else {
      await req.body?.cancel();
    }
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  return {
    spans,
    env: (service) => ({
      OTEL_DENO: "true",
      OTEL_SERVICE_NAME: service,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_METRIC_EXPORT_INTERVAL: "60000",
    }),
    async waitFor(what, match, seconds = 20) {
      const end = Date.now() + seconds * 1000;
      while (Date.now() < end) {
        const found = spans.find(match);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(
        `No span of ${what} within ${seconds}s; spans: ${spans.map((s) => s.name).join(", ")}`,
      );
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** A request the proxy passed on: its method, target and trace context header. */
export interface ProxiedRequest {
  method: string;
  target: string;
  traceparent: string | null;
}

/** A proxy in front of a server that records each request's `traceparent`. */
export interface RecordingProxy extends AsyncDisposable {
  url: string;
  requests: ProxiedRequest[];
}

/**
 * Starts an HTTP proxy to a server (plain HTTP), recording each request's trace context.
 *
 * @param upstream The server's URL.
 * @returns The proxy; dispose it with `await using`.
 */
export function recordingProxy(upstream: string): RecordingProxy {
  const requests: ProxiedRequest[] = [];
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, signal: controller.signal },
    async (req) => {
      const url = new URL(req.url);
      const target = url.pathname + url.search;
      requests.push({ method: req.method, target, traceparent: req.headers.get("traceparent") });
      const headers = new Headers(req.headers);
      headers.delete("host");
      const body = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
      try {
        const res = await fetch(upstream + target, {
          method: req.method,
          headers,
          ...(body ? { body } : {}),
        });
        return new Response(res.body, { status: res.status, headers: res.headers });
      } catch {
        return new Response("proxy: upstream failed", { status: 502 });
      }
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    async [Symbol.asyncDispose]() {
      controller.abort();
      await server.finished;
    },
  };
}

/** A kubeconfig (YAML) for a plain-HTTP server with no credentials. */
export function kubeconfigFor(server: string): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;
}

const ROOT = new URL("../../", import.meta.url).pathname;

/** An operator process: its stderr so far, and its stop. */
export interface OperatorProcess extends AsyncDisposable {
  /** What it wrote to stderr so far. */
  readonly stderr: string;
  /** Waits until its stderr matches (fails by name after `seconds`). */
  waitFor(pattern: RegExp, seconds?: number): Promise<void>;
}

/**
 * Runs `kopf run --standalone -A` on a handlers file as a process (SIGTERM at dispose).
 *
 * @param handlers The handlers' code (imports `mod.ts` as `KOPF`).
 * @param env The process's environment (the receiver's, the kubeconfig…).
 * @param flags More flags of `kopf run`.
 * @returns The process.
 */
export async function runOperator(
  handlers: string,
  env: Record<string, string>,
  flags: string[] = [],
): Promise<OperatorProcess> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-tracing-" });
  const file = `${dir}/handlers.ts`;
  await Deno.writeTextFile(file, handlers.replaceAll("KOPF", `${ROOT}mod.ts`));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}cli.ts`,
      "run",
      "--standalone",
      "-A",
      ...flags,
      file,
    ],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const reading = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) stderr += dec.decode(chunk, { stream: true });
  })();
  return {
    get stderr() {
      return stderr;
    },
    async waitFor(pattern, seconds = 20) {
      const end = Date.now() + seconds * 1000;
      while (Date.now() < end) {
        if (pattern.test(stderr)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`The operator did not log ${pattern} within ${seconds}s:\n${stderr}`);
    },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 15_000);
      await child.status;
      clearTimeout(timer);
      await reading;
      await Deno.remove(dir, { recursive: true });
    },
  };
}
