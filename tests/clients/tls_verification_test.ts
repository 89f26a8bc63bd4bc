/**
 * A server certificate that fails TLS verification is not a passing failure: an unknown CA, a
 * host name the certificate was not issued for, an expired certificate — each is a
 * `TlsVerificationError` at the first attempt (never retried, though the backoffs would allow
 * it), naming the server and the TLS library's words, on both transports (the lean HTTP/1.1
 * client and Deno's `fetch`). The same server with the right CA answers, so the rule does not
 * catch good TLS.
 *
 * Under `KOPF_HTTP_CLIENT=fetch` (as when the whole folder runs so; `fetch_suite_test.ts` lists
 * this file as not run on fetch) these tests are skipped: they pick each transport themselves.
 */

import assert from "node:assert/strict";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { ApiConnectionError, TlsVerificationError } from "../../src/cogs/clients/errors.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { generateCertificates, type TlsBundle } from "../../src/apiserver/shared/tls.ts";

const ignore = Deno.env.get("KOPF_HTTP_CLIENT") === "fetch";
const CLIENTS = ["http1", "fetch"] as const;
/** Retries would take 30 s: a failure within 5 s was not retried. */
const BACKOFFS = [10, 10, 10];

/** An HTTPS server with the bundle's server certificate, answering `{}` to everything. */
function serve(hostname: string, bundle: TlsBundle): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({
    hostname,
    port: 0,
    cert: bundle.serverCert,
    key: bundle.serverKey,
    onListen: () => {},
  }, () => Response.json({ kind: "APIVersions", versions: ["v1"] }));
}

/** GET /api with these credentials: the answer, or the error and how long it took. */
async function get(
  server: string,
  ca: string,
  httpClient: "http1" | "fetch",
): Promise<{ body?: unknown; error?: unknown; ms: number }> {
  using vault = new Vault({ raw: new ConnectionInfo({ server, caData: ca }) });
  const api = new ApiClient({
    vault,
    httpClient,
    settings: { networking: { errorBackoffs: BACKOFFS } },
    logger: { debug: () => {}, warn: () => {}, error: () => {} },
  });
  const started = Date.now();
  try {
    return { body: await api.request("GET", "/api"), ms: Date.now() - started };
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
}

/** Whether this machine can listen on 127.0.0.2 (Linux: all of 127/8 is loopback). */
function canListenOnSecondLoopback(): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.2", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "TLS verification failures (unknown CA, wrong host name, expired) fail at once, named",
  ignore,
  async fn(t) {
    const [good, other, expiring] = await Promise.all([
      generateCertificates({}),
      generateCertificates({}),
      generateCertificates({ days: 1e-9 }), // valid until a moment after now
    ]);
    await new Promise((r) => setTimeout(r, 1100)); // …and then expired (seconds' precision)
    const second = canListenOnSecondLoopback();
    const servers = [serve("127.0.0.1", good), serve("127.0.0.1", expiring)];
    if (second) servers.push(serve("127.0.0.2", good));
    const url = (i: number, host = "127.0.0.1") => `https://${host}:${servers[i]!.addr.port}`;
    const rows: Array<[string, string, string, TlsVerificationError["problem"] | null, RegExp]> = [
      ["the right CA", url(0), good.caCert, null, /./],
      ["an unknown CA", url(0), other.caCert, "untrusted", /BadSignature|UnknownIssuer/],
      ["an expired certificate", url(1), expiring.caCert, "validity", /expired/],
      ...(second
        ? [["a host name not in the certificate", url(2, "127.0.0.2"), good.caCert, "name", /name/]]
        : []) as Array<[string, string, string, "name", RegExp]>,
    ];
    try {
      for (const httpClient of CLIENTS) {
        for (const [what, server, ca, problem, words] of rows) {
          await t.step(`${httpClient}: ${what}`, async () => {
            const r = await get(server, ca, httpClient);
            if (problem === null) {
              assert.equal(r.error, undefined, String(r.error));
              assert.deepEqual(r.body, { kind: "APIVersions", versions: ["v1"] });
              return;
            }
            assert.ok(r.error instanceof TlsVerificationError, String(r.error));
            assert.ok(!(r.error instanceof ApiConnectionError));
            assert.equal(r.error.problem, problem);
            assert.equal(r.error.server, server);
            assert.match(r.error.reason, /^invalid peer certificate: /);
            assert.match(r.error.reason, words);
            assert.ok(
              r.error.message.startsWith(`The API server ${server} failed TLS verification (`),
              r.error.message,
            );
            assert.match(r.error.message, /insecure-skip-tls-verify: true/);
            assert.doesNotMatch(r.error.message, /\n/);
            assert.ok(r.ms < 5000, `not retried (${r.ms} ms)`);
          });
        }
      }
      if (!second) {
        console.warn("The host-name row did not run: this machine cannot listen on 127.0.0.2.");
      }
    } finally {
      await Promise.all(servers.map((s) => s.shutdown()));
    }
  },
});
