/**
 * One trace from a client through the embedded API server to the operator's admission
 * webhooks: the API server and the operator run as processes with `OTEL_DENO=true`, both
 * exporting to a receiver in the test; a create sent with a `traceparent` (as kubectl with
 * tracing, or any instrumented client, sends it) is continued by the server's span, its calls to
 * the mutating and validating webhooks, the operator's review spans and their handlers' spans.
 */
import assert from "node:assert/strict";
import { KEX_CRD } from "../reactor/_setup.ts";
import { type ExportedSpan, otlpReceiver, runOperator } from "./_otlp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

const HANDLERS = `
import * as kopf from "KOPF";
kopf.on.startup(({ settings }) => {
  settings.admission.server = new kopf.WebhookServer({ port: 0 });
  settings.admission.managed = "trace.kopf.dev";
});
kopf.on.mutate("kopfexamples", function defaults({ patch }) { patch.spec.defaulted = true; });
kopf.on.validate("kopfexamples", function checkSpec({ spec }) {
  if (spec.bad) throw new kopf.AdmissionError("bad spec");
});
`;

/** Starts `kopf apiserver` as a process; returns its URL and kubeconfig path. */
async function apiServerProcess(env: Record<string, string>, dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}cli.ts`,
      "apiserver",
      "--port",
      "0",
      "--kubeconfig",
      `${dir}/kc`,
    ],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const errText = new Response(child.stderr).text();
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the API server exited: ${out}${await errText}`);
    out += value;
    url = /listening at (\S+)/.exec(out)?.[1];
  }
  clearTimeout(timer);
  const draining = (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  return {
    url,
    kubeconfig: `${dir}/kc`,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await draining;
      await errText;
    },
  };
}

async function send(url: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function until(what: string, check: () => Promise<boolean>, seconds = 30): Promise<void> {
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

Deno.test("tracing: a create continues the client's trace through the API server to the operator's webhooks and their handlers", async () => {
  await using receiver = otlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "kopf-trace-hooks-" });
  try {
    await using api = await apiServerProcess(receiver.env("kopf-apiserver"), dir);
    await send(api.url, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", KEX_CRD);
    await until(
      "the CRD served",
      async () => (await send(api.url, "GET", "/apis/kopf.dev/v1")).status === 200,
    );
    await using op = await runOperator(HANDLERS, {
      ...receiver.env("kopf-operator"),
      KUBECONFIG: api.kubeconfig,
    });
    await until("the webhook configurations", async () => {
      const v = await send(
        api.url,
        "GET",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/trace.kopf.dev",
      );
      const m = await send(
        api.url,
        "GET",
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/trace.kopf.dev",
      );
      // deno-lint-ignore no-explicit-any
      const serves = (c: any) =>
        c.body?.webhooks?.[0]?.rules?.[0]?.resources?.[0] === "kopfexamples";
      return v.status === 200 && m.status === 200 && serves(v) && serves(m);
    });
    void op;

    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    const created = await send(
      api.url,
      "POST",
      "/apis/kopf.dev/v1/namespaces/default/kopfexamples",
      {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "kex-traced" },
        spec: { field: 1 },
      },
      { traceparent: `00-${traceId}-${parentId}-01` },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.spec.defaulted, true, "the mutating webhook ran");

    // The API server's span continues the client's trace.
    const server = await receiver.waitFor(
      "the server's span",
      (s) =>
        s.service === "kopf-apiserver" && s.traceId === traceId && s.kind === 2 &&
        s.name === "POST /apis/kopf.dev/v1/namespaces/{namespace}/kopfexamples",
    );
    assert.equal(server.parentSpanId, parentId);
    assert.equal(server.attributes["http.request.method"], "POST");
    assert.equal(server.attributes["http.response.status_code"], 201);

    // The operator's review spans: servers in the same trace, children of the API server's
    // calls (client spans of the server's process), each with its handler's span below it.
    const byId = (id: string) => receiver.spans.find((s) => s.spanId === id);
    const ancestors = (s: ExportedSpan): string[] => {
      const out: string[] = [];
      for (let p = byId(s.parentSpanId); p; p = byId(p.parentSpanId)) out.push(p.spanId);
      return out;
    };
    for (const [webhook, handler] of [["defaults", "defaults"], ["checkSpec", "checkSpec"]]) {
      const review = await receiver.waitFor(
        `the review of ${webhook}`,
        (s) => s.service === "kopf-operator" && s.name === `kopf.admission ${webhook}`,
      );
      assert.equal(review.traceId, traceId);
      assert.equal(review.kind, 2, "a server span");
      const caller = await receiver.waitFor(
        `the call of ${webhook}`,
        (s) => s.spanId === review.parentSpanId,
      );
      assert.equal(caller.service, "kopf-apiserver");
      assert.equal(caller.kind, 3, "a client span");
      assert.ok(ancestors(caller).includes(server.spanId), "the call is under the server's span");
      assert.equal(review.attributes["kopf.admission.operation"], "CREATE");
      assert.equal(review.attributes["kopf.admission.allowed"], true);
      const run = await receiver.waitFor(
        `the handler ${handler}`,
        (s) => s.name === `kopf.handler ${handler}` && s.parentSpanId === review.spanId,
      );
      assert.equal(run.attributes["kopf.handler.kind"], "admission");
      assert.equal(run.attributes["kopf.handler.outcome"], "success");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
