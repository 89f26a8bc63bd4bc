/**
 * Webhook TLS as kube-apiserver (Go's crypto/x509) judges it: a self-signed serving
 * certificate with CA:true that is itself the `caBundle` — what Python Kopf's auto servers
 * make — is accepted (rustls alone refuses it as `CaUsedAsEndEntity`); a certificate that is
 * not in the bundle nor chained to it, one for other hosts, or an expired one is still
 * refused, worded as Go words it. Over real HTTPS, through the embedded API server.
 *
 * @module
 */

import { startApiServer } from "../../testing.ts";
import { GoVerifyError, verifyAsGo } from "../../src/apiserver/webhooks/webhook_tls.ts";
import { kopfLikeCertificate, type SelfSignedCertificate } from "./_kopf_certificate.ts";
import { call } from "./_http.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function assertEquals(actual: unknown, expected: unknown, what = ""): void {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what ? what + ": " : ""}expected ${e}\n           got ${a}`);
}

function assertMatch(text: string, pattern: RegExp, what = ""): void {
  if (!pattern.test(text)) throw new Error(`${what ? what + ": " : ""}${pattern} not in ${text}`);
}

const CMS = "/api/v1/namespaces/default/configmaps";
const RULES = [{
  operations: ["CREATE"],
  apiGroups: [""],
  apiVersions: ["v1"],
  resources: ["configmaps"],
}];

/** An HTTPS webhook with the given certificate: mutates (a label) or denies (`data.bad`). */
function serveWebhook(tls: SelfSignedCertificate, calls: string[]): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
    onError: () => new Response("no", { status: 500 }),
  }, async (req) => {
    const review = await req.json();
    const path = new URL(req.url).pathname;
    calls.push(path);
    const response: Json = { uid: review.request.uid, allowed: true };
    if (path === "/mutate") {
      response.patchType = "JSONPatch";
      response.patch = btoa(JSON.stringify([
        { op: "add", path: "/metadata/labels", value: { mutated: "yes" } },
      ]));
    } else if (review.request.object?.data?.bad) {
      response.allowed = false;
      response.status = { code: 403, message: "bad data" };
    }
    return Response.json({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response });
  });
}

async function configure(
  url: string,
  kind: "Validating" | "Mutating",
  name: string,
  origin: string,
  caBundle: string,
): Promise<void> {
  const plural = `${kind.toLowerCase()}webhookconfigurations`;
  const r = await call(url, "POST", `/apis/admissionregistration.k8s.io/v1/${plural}`, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [{
      name: `${name}.kopf.dev`,
      clientConfig: { url: `${origin}/${kind === "Mutating" ? "mutate" : "validate"}`, caBundle },
      rules: RULES,
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    }],
  });
  assertEquals(r.status, 201, `configure ${name}: ${JSON.stringify(r.body)}`);
}

Deno.test("a self-signed CA:true serving certificate that is its own caBundle (Kopf's) is accepted", async () => {
  await using api = await startApiServer();
  const tls = await kopfLikeCertificate(["localhost", "127.0.0.1"]);
  const calls: string[] = [];
  const hook = serveWebhook(tls, calls);
  try {
    const origin = `https://127.0.0.1:${hook.addr.port}`;
    await configure(api.url, "Mutating", "m", origin, btoa(tls.cert));
    await configure(api.url, "Validating", "v", origin, btoa(tls.cert));
    const made = await call(api.url, "POST", CMS, { metadata: { name: "good" }, data: {} });
    assertEquals(made.status, 201, JSON.stringify(made.body));
    assertEquals(made.body.metadata.labels, { mutated: "yes" }, "the mutation");
    const denied = await call(api.url, "POST", CMS, {
      metadata: { name: "bad" },
      data: { bad: "1" },
    });
    assertEquals(denied.status, 403, JSON.stringify(denied.body));
    assertEquals(
      denied.body.message,
      'admission webhook "v.kopf.dev" denied the request: bad data',
    );
    assertEquals(calls, ["/mutate", "/validate", "/mutate", "/validate"]);
  } finally {
    await hook.shutdown();
  }
});

Deno.test("a CA:true serving certificate not in the caBundle, for other hosts, or expired is refused as Go refuses it", async () => {
  await using api = await startApiServer();
  const cases: [string, SelfSignedCertificate, string, RegExp][] = [];
  const served = await kopfLikeCertificate(["localhost", "127.0.0.1"]);
  const stranger = await kopfLikeCertificate(["localhost", "127.0.0.1"]);
  cases.push([
    "another certificate's bundle",
    served,
    stranger.cert,
    /: tls: failed to verify certificate: x509: certificate signed by unknown authority$/,
  ]);
  const named = await kopfLikeCertificate(["localhost"]);
  cases.push([
    "no IP SANs",
    named,
    named.cert,
    /: tls: failed to verify certificate: x509: cannot validate certificate for 127\.0\.0\.1 because it doesn't contain any IP SANs$/,
  ]);
  const elsewhere = await kopfLikeCertificate(["example.com", "10.1.2.3"]);
  cases.push([
    "other IPs",
    elsewhere,
    elsewhere.cert,
    /: tls: failed to verify certificate: x509: certificate is valid for 10\.1\.2\.3, not 127\.0\.0\.1$/,
  ]);
  const old = await kopfLikeCertificate(["127.0.0.1"], { days: -1 });
  cases.push([
    "expired",
    old,
    old.cert,
    // (rustls says this one before it looks at CA:true; worded as goReason words it)
    /: tls: failed to verify certificate: x509: certificate has expired or is not yet valid/,
  ]);
  for (const [what, tls, bundle, pattern] of cases) {
    const calls: string[] = [];
    const hook = serveWebhook(tls, calls);
    try {
      const name = what.toLowerCase().replace(/\W+/g, "-");
      await configure(
        api.url,
        "Validating",
        name,
        `https://127.0.0.1:${hook.addr.port}`,
        btoa(bundle),
      );
      const r = await call(api.url, "POST", CMS, { metadata: { name }, data: {} });
      assertEquals(r.status, 500, `${what}: ${JSON.stringify(r.body)}`);
      assertMatch(
        r.body.message,
        new RegExp(
          `^Internal error occurred: failed calling webhook "${name}\\.kopf\\.dev": failed to call webhook: Post "https://127\\.0\\.0\\.1:\\d+/validate\\?timeout=10s"`,
        ),
        what,
      );
      assertMatch(r.body.message, pattern, what);
      assertEquals(calls, [], `${what}: nothing reached the webhook`);
      const del = await call(
        api.url,
        "DELETE",
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
      );
      assertEquals(del.status, 200);
    } finally {
      await hook.shutdown();
    }
  }
});

/** The DER of a PEM certificate. */
function der(pem: string): Uint8Array {
  return Uint8Array.from(atob(pem.replace(/-----[^-]+-----|\s/g, "")), (c) => c.charCodeAt(0));
}

async function refusal(p: Promise<void>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GoVerifyError) return e.message;
    throw e;
  }
  return "accepted";
}

Deno.test("`verifyAsGo()`: roots, chains, names and key usage as Go's crypto/x509", async () => {
  const now = new Date();
  const self = await kopfLikeCertificate(["localhost", "127.0.0.1", "::1", "*.example.com"]);
  // In the bundle (alone or among others), for its hosts: accepted.
  const other = await kopfLikeCertificate(["other"]);
  for (const host of ["127.0.0.1", "[::1]", "localhost", "LOCALHOST", "a.example.com"]) {
    assertEquals(
      await refusal(verifyAsGo([der(self.cert)], other.cert + self.cert, host, now)),
      "accepted",
      host,
    );
  }
  assertEquals(
    await refusal(verifyAsGo([der(self.cert)], self.cert, "a.b.example.com", now)),
    "x509: certificate is valid for localhost, *.example.com, 127.0.0.1, ::1, not a.b.example.com",
  );
  // Not CA:true and in the bundle: accepted too (Go takes a root as a chain of one).
  const plain = await kopfLikeCertificate(["127.0.0.1"], { ca: false });
  assertEquals(
    await refusal(verifyAsGo([der(plain.cert)], plain.cert, "127.0.0.1", now)),
    "accepted",
  );
  // Signed by a CA in the bundle (the API server's generated chain): accepted; by another: not.
  const { generateCertificates } = await import("../../src/apiserver/shared/tls.ts");
  const chain = await generateCertificates({});
  assertEquals(
    await refusal(verifyAsGo([der(chain.serverCert)], chain.caCert, "127.0.0.1", now)),
    "accepted",
  );
  assertEquals(
    await refusal(verifyAsGo([der(chain.serverCert)], self.cert, "127.0.0.1", now)),
    "x509: certificate signed by unknown authority",
  );
  // A client-only certificate is no serving certificate.
  assertEquals(
    await refusal(verifyAsGo([der(chain.clientCert)], chain.caCert, "127.0.0.1", now)),
    "x509: certificate specifies an incompatible key usage",
  );
  // Not valid yet.
  assertEquals(
    (await refusal(verifyAsGo([der(self.cert)], self.cert, "localhost", new Date(0)))).replace(
      /\S+ is before \S+$/,
      "…",
    ),
    "x509: certificate has expired or is not yet valid: current time …",
  );
});
