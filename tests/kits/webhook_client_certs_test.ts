/**
 * Client certificates between the API server and a webhook server (Kopf's `verify_mode`,
 * `verify_cafile`/`verify_capath`/`verify_cadata`, and `sslpeer` in admission handlers), over
 * real HTTPS: the embedded API server calls the operator's managed validating webhook, with or
 * without the client certificate given by `startApiServer({ webhookClientCert })`.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { generateCertificates, type TlsBundle } from "../../src/apiserver/shared/tls.ts";
import { describePeerCertificate } from "../../src/kits/_certificates.ts";
import { webhookFn } from "../../src/core/engines/admission.ts";
import { goReason } from "../../src/apiserver/webhooks/webhook_client.ts";
import { cluster, until } from "../reactor/_setup.ts";

const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";

/** A CA with a client certificate (CN kube-apiserver, clientAuth) for the API server. */
let bundle: Promise<TlsBundle> | undefined;
function certificates(): Promise<TlsBundle> {
  return bundle ??= generateCertificates({ clientCommonName: "kube-apiserver" });
}

/**
 * Runs an operator with a validating handler behind a webhook server with these options
 * against an API server with (or without) a client certificate for webhooks, and creates
 * one KopfExample through the API server.
 */
async function admit(
  serverOptions: kopf.WebhookServerOptions,
  clientCert: boolean,
): Promise<{ status: number; body: kopf.AnyObject; seen: kopf.AnyObject[] }> {
  const tls = await certificates();
  await using c = await cluster(
    clientCert ? { webhookClientCert: { cert: tls.clientCert, key: tls.clientKey } } : {},
  );
  const seen: kopf.AnyObject[] = [];
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = new kopf.WebhookServer({ port: 0, ...serverOptions });
    settings.admission.managed = "certs.kopf.dev";
  });
  kopf.on.validate("kopfexamples", { registry }, function check({ sslpeer }) {
    seen.push(sslpeer);
  });
  const stop = new AbortController();
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  const running = kopf.operator({
    kubeconfig: c.api.kubeconfig.path,
    standalone: true,
    clusterwide: true,
    registry,
    signal: stop.signal,
    onReady: ready,
    logging: { format: "plain", level: "warning", write: () => {} },
  });
  try {
    await started;
    await until(async () => {
      const vwc = (await c.call("GET", `${VWC}/certs.kopf.dev`, undefined, [404])).body;
      return vwc?.webhooks?.length === 1;
    }, "the validating webhook");
    const answer = await c.call("POST", KEX, {
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name: "kex" },
      spec: {},
    }, [500]);
    return { status: answer.status, body: answer.body, seen };
  } finally {
    stop.abort();
    await running;
  }
}

Deno.test("verifyMode required: the API server's client certificate is verified and seen as sslpeer", async () => {
  const tls = await certificates();
  const { status, seen } = await admit({ verifyMode: "required", verifyCadata: tls.caCert }, true);
  assert.equal(status, 201);
  assert.equal(seen.length, 1);
  const peer = seen[0]!;
  assert.deepEqual(peer.subject, [
    [["organizationName", "system:masters"]],
    [["commonName", "kube-apiserver"]],
  ]);
  assert.deepEqual(peer.issuer, [[["commonName", "kopf-apiserver-ca"]]]);
  assert.equal(peer.version, 3);
  assert.match(peer.serialNumber, /^[0-9A-F]+$/);
  assert.match(peer.notBefore, /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/);
  assert.match(peer.notAfter, /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/);
});

Deno.test("verifyMode required: an API server without a client certificate fails the call as kube-apiserver reports it", async () => {
  const tls = await certificates();
  const { status, body, seen } = await admit(
    { verifyMode: "required", verifyCadata: tls.caCert },
    false,
  );
  assert.equal(status, 500);
  assert.equal(body.reason, "InternalError");
  assert.match(
    body.message,
    /^Internal error occurred: failed calling webhook "[^"]+": failed to call webhook: Post "https:\/\/[^"]+": remote error: tls: certificate required$/,
  );
  assert.deepEqual(seen, []);
});

Deno.test("verifyMode optional (by a CA alone): no client certificate is admitted with sslpeer {}", async () => {
  const tls = await certificates();
  const { status, seen } = await admit({ verifyCadata: tls.caCert }, false);
  assert.equal(status, 201);
  assert.deepEqual(seen, [{}]);
});

Deno.test("WebhookServer: a bad verifyMode, or verification over plain HTTP, is refused in one line", async () => {
  const registry = new kopf.OperatorRegistry();
  const fn = webhookFn({
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    sink: () => {},
  });
  const signal = new AbortController().signal;
  const first = (options: Record<string, unknown>) =>
    kopf.serveWebhooks(new kopf.WebhookServer(options as kopf.WebhookServerOptions), fn, {
      signal,
    })[Symbol.asyncIterator]().next();
  await assert.rejects(() => first({ verifyMode: "CERT_REQUIRED" }), (e: Error) => {
    assert.ok(e instanceof kopf.WebhookServerError);
    assert.equal(
      e.message,
      'verifyMode must be "none", "optional" or "required", not "CERT_REQUIRED".',
    );
    return true;
  });
  await assert.rejects(
    () => first({ verifyMode: "required", insecure: true }),
    /needs HTTPS/,
  );
});

Deno.test("describePeerCertificate(): Python's getpeercert() shape, with subjectAltName", async () => {
  const tls = await generateCertificates({});
  const der = Uint8Array.from(
    atob(tls.serverCert.replace(/-----[^-]+-----|\s/g, "")),
    (ch) => ch.charCodeAt(0),
  );
  const peer = await describePeerCertificate(der);
  assert.deepEqual(peer.subject, [[["commonName", "localhost"]]]);
  assert.deepEqual(
    new Set(peer.subjectAltName),
    new Set([["DNS", "localhost"], ["IP Address", "127.0.0.1"], ["IP Address", "0:0:0:0:0:0:0:1"]]),
  );
  assert.equal(peer.version, 3);
});

Deno.test("WebhookServer: a certificate from another CA is refused in both modes; a good one is seen with optional", async () => {
  const tls = await certificates();
  const other = await generateCertificates({ clientCommonName: "mallory" });
  const registry = new kopf.OperatorRegistry();
  const seen: kopf.AnyObject[] = [];
  kopf.on.validate(
    "kopfexamples",
    { registry, id: "peek" },
    ({ sslpeer }) => void seen.push(sslpeer),
  );
  const fn = webhookFn({
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    sink: () => {},
  });
  const review = {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u-1",
      kind: { group: "kopf.dev", version: "v1", kind: "KopfExample" },
      resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
      operation: "CREATE",
      userInfo: { username: "admin" },
      object: { metadata: { name: "kex1", namespace: "default" }, spec: {} },
    },
  };
  for (const verifyMode of ["optional", "required"] as const) {
    const controller = new AbortController();
    const configs = kopf.serveWebhooks(
      new kopf.WebhookServer({ port: 0, verifyMode, verifyCadata: tls.caCert }),
      fn,
      { signal: controller.signal },
    )[Symbol.asyncIterator]();
    const { value: config } = await configs.next();
    const ca = atob(config!.caBundle!);
    const url = `${config!.url}/peek`;
    const call = async (cert?: { cert: string; key: string }) => {
      const client = Deno.createHttpClient({ caCerts: [ca], ...(cert ?? {}) });
      try {
        const res = await fetch(url, { method: "POST", body: JSON.stringify(review), client });
        return (await res.json()).response.allowed as boolean;
      } finally {
        client.close();
      }
    };
    try {
      await assert.rejects(() => call({ cert: other.clientCert, key: other.clientKey }));
      assert.equal(await call({ cert: tls.clientCert, key: tls.clientKey }), true);
      if (verifyMode === "optional") assert.equal(await call(), true);
      else await assert.rejects(() => call());
    } finally {
      controller.abort();
      await configs.return?.();
    }
  }
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[0]!.subject, [
    [["organizationName", "system:masters"]],
    [["commonName", "kube-apiserver"]],
  ]);
  assert.deepEqual(seen[1], {});
  assert.deepEqual(seen[2], seen[0]);
});

Deno.test("goReason(): refused client certificates are worded as Go's TLS client words them", () => {
  const url = new URL("https://127.0.0.1:9443/x");
  const failed = (why: string) => new TypeError("fetch failed", { cause: new Error(why) });
  assert.equal(
    goReason(failed("received fatal alert: CertificateRequired"), url),
    "remote error: tls: certificate required",
  );
  assert.equal(
    goReason(failed("received fatal alert: UnknownCA"), url),
    "remote error: tls: unknown certificate authority",
  );
  assert.equal(
    goReason(failed("peer closed connection without sending TLS close_notify: https://x"), url),
    "EOF",
  );
});
