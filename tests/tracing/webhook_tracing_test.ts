/**
 * One trace from a client through the embedded API server to the operator's admission
 * webhooks: the API server and the operator run as processes with `OTEL_DENO=true`, both
 * exporting to a receiver in the test; a create sent with a `traceparent` (as a client
 * instrumented with OpenTelemetry sends it) is continued by the server's span, its calls to
 * the mutating and validating webhooks, the operator's review spans and their handlers' spans;
 * the server's `node:https` webhook call (webhook_tls.ts) carries the request's trace too; and a
 * read at a version other than the stored one continues the client's trace to the operator's
 * conversion review and its converter's span.
 */
import assert from "node:assert/strict";
import { KEX_CRD } from "../reactor/_setup.ts";
import { type ExportedSpan, otlpReceiver, runOperator } from "./_otlp.ts";
import { kopfLikeCertificate } from "../apiserver/_kopf_certificate.ts";
import { findKubectls, Kubectl, testWithKubectl } from "../apiserver/_kubectl.ts";

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

testWithKubectl(
  "tracing: a create continues the client's trace through the API server to the operator's webhooks and their handlers; kubectl's create (no traceparent) starts one there",
  async () => {
    await using receiver = otlpReceiver();
    const dir = await Deno.makeTempDir({ prefix: "kopf-trace-hooks-" });
    try {
      await using api = await apiServerProcess(receiver.env("kopf-apiserver"), dir);
      await send(
        api.url,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        KEX_CRD,
      );
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

      // kubectl sends no traceparent (it has no tracing of its own): as kube-apiserver does, the
      // server's span of its request starts a trace, and the webhooks' reviews join that one.
      await using kubectl = await Kubectl.create(findKubectls(["1.33"])[0]!, api.kubeconfig);
      await kubectl.ok(["create", "-f", "-"], {
        stdin: JSON.stringify({
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name: "kex-kubectl", namespace: "default" },
          spec: { field: 2 },
        }),
      });
      const fromKubectl = await receiver.waitFor(
        "the server's span of kubectl's create",
        (s) =>
          s.service === "kopf-apiserver" && s.kind === 2 && s.traceId !== traceId &&
          s.name === "POST /apis/kopf.dev/v1/namespaces/{namespace}/kopfexamples",
      );
      assert.equal(fromKubectl.parentSpanId, "", "a root span: kubectl sent no trace");
      assert.match(String(fromKubectl.attributes["user_agent.original"]), /^kubectl/);
      for (const webhook of ["defaults", "checkSpec"]) {
        await receiver.waitFor(
          `the review of ${webhook} in kubectl's trace`,
          (s) =>
            s.service === "kopf-operator" && s.name === `kopf.admission ${webhook}` &&
            s.traceId === fromKubectl.traceId,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("tracing: the API server's node:https webhook call (a CA:true certificate that is its own caBundle) carries the request's trace to the webhook", async () => {
  await using receiver = otlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "kopf-trace-tls-" });
  // Python Kopf's kind of certificate: rustls refuses it (CaUsedAsEndEntity), Go accepts it, so
  // the API server calls this webhook over node:https (webhook_tls.ts), not fetch.
  const tls = await kopfLikeCertificate(["127.0.0.1"]);
  const seen: Array<string | null> = [];
  await using webhook = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
  }, async (req) => {
    seen.push(req.headers.get("traceparent"));
    const review = await req.json();
    return Response.json({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: review.request.uid, allowed: true },
    });
  });
  try {
    await using api = await apiServerProcess(receiver.env("kopf-apiserver"), dir);
    const configured = await send(
      api.url,
      "POST",
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "tls-trace" },
        webhooks: [{
          name: "tls-trace.kopf.dev",
          clientConfig: {
            url: `https://127.0.0.1:${webhook.addr.port}/validate`,
            caBundle: btoa(tls.cert),
          },
          rules: [{
            operations: ["CREATE"],
            apiGroups: [""],
            apiVersions: ["v1"],
            resources: ["configmaps"],
          }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        }],
      },
    );
    assert.equal(configured.status, 201, JSON.stringify(configured.body));

    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737";
    const parentId = "10f067aa0ba902b8";
    const created = await send(
      api.url,
      "POST",
      "/api/v1/namespaces/default/configmaps",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm-traced" } },
      { traceparent: `00-${traceId}-${parentId}-01` },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(seen.length, 1, "the webhook was called once");

    // The webhook saw the request's trace, its parent a client span of the API server's, under
    // the server span of the create.
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(seen[0] ?? "");
    assert.ok(m, `the webhook's traceparent: ${seen[0]}`);
    assert.equal(m[1], traceId);
    const server = await receiver.waitFor(
      "the server's span",
      (s) =>
        s.service === "kopf-apiserver" && s.traceId === traceId &&
        s.name === "POST /api/v1/namespaces/{namespace}/configmaps",
    );
    assert.equal(server.parentSpanId, parentId);
    const call = await receiver.waitFor("the webhook call's span", (s) => s.spanId === m[2]);
    assert.equal(call.service, "kopf-apiserver");
    assert.equal(call.kind, 3, "a client span");
    assert.equal(call.traceId, traceId);
    assert.equal(call.parentSpanId, server.spanId);
    assert.equal(call.attributes["http.request.method"], "POST");
    assert.match(String(call.attributes["url.full"]), /^https:\/\/127\.0\.0\.1:\d+\/validate/);
    assert.equal(Number(call.attributes["http.response.status_code"]), 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const CONVERTERS = `
import * as kopf from "KOPF";
kopf.on.startup(({ settings }) => {
  settings.admission.server = new kopf.WebhookServer({ port: 0 });
  settings.admission.managed = "trace-conversion.kopf.dev";
});
kopf.on.convert("kopfexamples", { from: "v1", to: "v2" }, function upgrade({ body }) {
  const { field, ...spec } = body.spec ?? {};
  return { ...body, spec: { ...spec, message: field } };
});
kopf.on.convert("kopfexamples", { from: "v2", to: "v1" }, function downgrade({ body }) {
  const { message, ...spec } = body.spec ?? {};
  return { ...body, spec: { ...spec, field: message } };
});
`;

/** KopfExample served at v1 (stored) and v2. */
function twoVersions() {
  // deno-lint-ignore no-explicit-any
  const crd = structuredClone(KEX_CRD) as any;
  const v1 = crd.spec.versions[0];
  crd.spec.versions = [v1, { ...structuredClone(v1), name: "v2", storage: false }];
  return crd;
}

Deno.test("tracing: a read at another version continues the client's trace through the API server to the operator's conversion review and its converter", async () => {
  await using receiver = otlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "kopf-trace-conv-" });
  try {
    await using api = await apiServerProcess(receiver.env("kopf-apiserver"), dir);
    const crd = await send(
      api.url,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      twoVersions(),
    );
    assert.equal(crd.status, 201, JSON.stringify(crd.body));
    await until(
      "the CRD served at v2",
      async () => (await send(api.url, "GET", "/apis/kopf.dev/v2")).status === 200,
    );
    await using op = await runOperator(CONVERTERS, {
      ...receiver.env("kopf-operator"),
      KUBECONFIG: api.kubeconfig,
    });
    await until("the CRD's conversion set to the operator's webhook", async () => {
      const got = await send(
        api.url,
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kopfexamples.kopf.dev",
      );
      return got.body?.spec?.conversion?.strategy === "Webhook";
    });
    void op;
    const created = await send(
      api.url,
      "POST",
      "/apis/kopf.dev/v1/namespaces/default/kopfexamples",
      {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "kex-conv" },
        spec: { field: "hi" },
      },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));

    // Stored at v1, read at v2: the API server converts it through the operator's webhook,
    // inside the traced read.
    const traceId = "6bf92f3577b34da6a3ce929d0e0e4738";
    const parentId = "20f067aa0ba902b9";
    const read = await send(
      api.url,
      "GET",
      "/apis/kopf.dev/v2/namespaces/default/kopfexamples/kex-conv",
      undefined,
      { traceparent: `00-${traceId}-${parentId}-01` },
    );
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.body.spec, { message: "hi" }, "converted by the operator");

    const server = await receiver.waitFor(
      "the server's span of the read",
      (s) =>
        s.service === "kopf-apiserver" && s.traceId === traceId &&
        s.name === "GET /apis/kopf.dev/v2/namespaces/{namespace}/kopfexamples/{name}",
    );
    assert.equal(server.parentSpanId, parentId);
    const review = await receiver.waitFor(
      "the conversion review",
      (s) =>
        s.service === "kopf-operator" && s.name === "kopf.conversion kopf.dev/v2" &&
        s.traceId === traceId,
    );
    assert.equal(review.kind, 2, "a server span");
    assert.equal(review.attributes["kopf.review.kind"], "ConversionReview");
    assert.equal(review.attributes["kopf.conversion.desired_api_version"], "kopf.dev/v2");
    assert.equal(review.attributes["kopf.conversion.objects"], 1);
    // Its parent: the API server's call (a client span) under the read's server span.
    const caller = await receiver.waitFor(
      "the API server's call of the webhook",
      (s) => s.spanId === review.parentSpanId,
    );
    assert.equal(caller.service, "kopf-apiserver");
    assert.equal(caller.kind, 3, "a client span");
    const byId = (id: string) => receiver.spans.find((s) => s.spanId === id);
    let up = byId(caller.parentSpanId);
    while (up && up.spanId !== server.spanId) up = byId(up.parentSpanId);
    assert.ok(up, "the call is under the read's server span");
    // The converter's span under the review.
    const run = await receiver.waitFor(
      "the converter's span",
      (s) => s.name === "kopf.handler upgrade" && s.parentSpanId === review.spanId,
    );
    assert.equal(run.traceId, traceId);
    assert.deepEqual(
      [run.attributes["kopf.handler.kind"], run.attributes["kopf.handler.outcome"]],
      ["conversion", "success"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
