/**
 * Tests for the embedded API server's TLS: the generated chain, server
 * authentication, client-certificate identity, streaming and shutdown — with
 * real clients (Deno fetch, and openssl/kubectl where installed).
 *
 * @module
 */

import { generateCertificates } from "../../src/apiserver/shared/tls.ts";
import type { TlsBundle } from "../../src/apiserver/shared/tls.ts";
import { serveTls } from "../../src/apiserver/serving/tls_listener.ts";
import type {
  TlsHandler,
  TlsRequestInfo,
  TlsServer,
} from "../../src/apiserver/serving/tls_listener.ts";
import { testWithKubectl } from "./_kubectl.ts";

function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

function assertEquals(actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`expected ${e}, got ${a}`);
}

async function assertRejects(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

function assertThrowsAsync(
  fn: () => Promise<unknown>,
  type: new (...args: never[]) => Error,
): Promise<void> {
  return assertRejects(fn).then((error) => {
    assert(error instanceof type, `expected ${type.name}, got ${error}`);
  });
}

/** One chain for the whole file: generating is cheap, but sharing keeps tests focused. */
const tls: TlsBundle = await generateCertificates({});

async function withServer(
  handler: TlsHandler,
  body: (server: TlsServer) => Promise<void>,
  hostname = "127.0.0.1",
): Promise<void> {
  const server = await serveTls({
    hostname,
    cert: tls.serverCert,
    key: tls.serverKey,
    ca: tls.caCert,
    handler,
  });
  try {
    await body(server);
  } finally {
    await server.shutdown();
  }
}

function clientFor(bundle: { cert?: string; key?: string } = {}): Deno.HttpClient {
  return Deno.createHttpClient({
    caCerts: [tls.caCert],
    ...(bundle.cert && bundle.key ? { cert: bundle.cert, key: bundle.key } : {}),
  });
}

const echoInfo: TlsHandler = (req, info) =>
  Response.json({ info, authorization: req.headers.get("authorization") });

async function has(command: string, args: string[]): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, {
      args,
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

const hasOpenssl = await has("openssl", ["version"]);

async function run(command: string, args: string[]): Promise<string> {
  const { success, stdout, stderr } = await new Deno.Command(command, { args }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (!success) throw new Error(`${command} ${args.join(" ")} failed:\n${text}`);
  return text;
}

Deno.test("`generateCertificates()` returns PEM certificates and PKCS#8 keys", () => {
  for (const cert of [tls.caCert, tls.serverCert, tls.clientCert]) {
    assert(cert.startsWith("-----BEGIN CERTIFICATE-----\n"));
    assert(cert.endsWith("-----END CERTIFICATE-----\n"));
  }
  for (const key of [tls.caKey, tls.serverKey, tls.clientKey]) {
    assert(key.startsWith("-----BEGIN PRIVATE KEY-----\n"));
    assert(key.endsWith("-----END PRIVATE KEY-----\n"));
  }
});

Deno.test("`generateCertificates()` rejects bad days and bad hosts", async () => {
  await assertThrowsAsync(() => generateCertificates({ days: 0 }), RangeError);
  await assertThrowsAsync(() => generateCertificates({ days: NaN }), RangeError);
  await assertThrowsAsync(() => generateCertificates({ hosts: ["not a host"] }), TypeError);
  await assertThrowsAsync(() => generateCertificates({ hosts: ["1::2::3"] }), TypeError);
});

Deno.test("the generated chain is trusted by Deno.serve's TLS (rustls) with the CA only", async () => {
  await using server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.serverCert,
    key: tls.serverKey,
    onListen: () => {},
  }, () => new Response("ok"));
  const url = `https://127.0.0.1:${server.addr.port}/`;

  const client = clientFor();
  try {
    const response = await fetch(url, { client });
    assertEquals(await response.text(), "ok");
  } finally {
    client.close();
  }
  await assertRejects(() => fetch(url));
});

Deno.test("`serveTls()` serves HTTPS that verifies with the CA and fails without it", async () => {
  await withServer(() => new Response("ok"), async (server) => {
    const url = `https://127.0.0.1:${server.port}/`;
    const client = clientFor();
    try {
      assertEquals(await (await fetch(url, { client })).text(), "ok");
    } finally {
      client.close();
    }
    await assertRejects(() => fetch(url));
    const other = await generateCertificates({});
    const wrong = Deno.createHttpClient({ caCerts: [other.caCert] });
    try {
      await assertRejects(() => fetch(url, { client: wrong }));
    } finally {
      wrong.close();
    }
  });
});

/** Everything a raw connection gets back until the server closes it (bounded by a timer). */
async function rawExchange(port: number, bytes: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), 5000);
  const chunks: Uint8Array[] = [];
  try {
    await conn.write(new TextEncoder().encode(bytes));
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.BadResource || e instanceof Deno.errors.Interrupted)) throw e;
    throw new Error(`no end of the answer within 5 s; got ${JSON.stringify(chunks.length)} chunks`);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
  return new TextDecoder("latin1").decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

Deno.test("`serveTls()` answers plain HTTP as Go's net/http does, and still serves TLS", async () => {
  await withServer(() => new Response("ok"), async (server) => {
    for (const request of ["GET /version HTTP/1.1\r\nHost: x\r\n\r\n", "POST /api HTTP/1.1\r\n"]) {
      assertEquals(
        await rawExchange(server.port, request),
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n",
      );
    }
    const client = clientFor();
    try {
      const url = `https://127.0.0.1:${server.port}/`;
      assertEquals(await (await fetch(url, { client })).text(), "ok");
    } finally {
      client.close();
    }
  });
});

Deno.test("`serveTls()` looks at the first bytes whole: HTTP sent a byte at a time, silence, a short hello", async () => {
  const server = await serveTls({
    cert: tls.serverCert,
    key: tls.serverKey,
    handler: () => new Response("ok"),
    headersTimeoutMs: 300,
  });
  try {
    // Plain HTTP in single bytes: recognised by its first five (then answered and closed).
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    for (const ch of "GET /") {
      await conn.write(new TextEncoder().encode(ch));
      await new Promise((r) => setTimeout(r, 5));
    }
    const buf = new Uint8Array(200);
    const n = await conn.read(buf);
    conn.close();
    assertEquals(
      new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0],
      "HTTP/1.0 400 Bad Request",
    );
    // Nothing sent: closed after the headers timeout.
    const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    const started = Date.now();
    const end = await silent.read(new Uint8Array(10)).catch(() => null);
    silent.close();
    assertEquals(end, null);
    assert(Date.now() - started < 3000, `closed after ${Date.now() - started} ms`);
    // Three bytes and the end: no answer, no crash; TLS still served afterwards.
    assertEquals(await rawExchange(server.port, "\x16\x03\x01"), "");
    const client = clientFor();
    try {
      assertEquals(
        await (await fetch(`https://127.0.0.1:${server.port}/`, { client })).text(),
        "ok",
      );
    } finally {
      client.close();
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("`serveTls()` passes the verified client identity to the handler", async () => {
  await withServer(echoInfo, async (server) => {
    const client = clientFor({ cert: tls.clientCert, key: tls.clientKey });
    try {
      const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
      const { info } = await response.json() as { info: TlsRequestInfo };
      assertEquals(info.clientCertificate, {
        commonName: "kopf-admin",
        organizations: ["system:masters"],
      });
    } finally {
      client.close();
    }
  });
});

Deno.test("`serveTls()` reports a custom user and group, or no group", async () => {
  const custom = await generateCertificates({
    clientCommonName: "alice",
    clientOrganization: "developers",
  });
  const noGroup = await generateCertificates({ clientCommonName: "bob", clientOrganization: "" });
  const server = await serveTls({
    cert: custom.serverCert,
    key: custom.serverKey,
    ca: [custom.caCert, noGroup.caCert].join(""),
    handler: echoInfo,
  });
  try {
    const expectations = [
      [custom, { commonName: "alice", organizations: ["developers"] }],
      [noGroup, { commonName: "bob", organizations: [] }],
    ] as const;
    for (const [bundle, expected] of expectations) {
      const client = Deno.createHttpClient({
        caCerts: [custom.caCert],
        cert: bundle.clientCert,
        key: bundle.clientKey,
      });
      try {
        const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
        const { info } = await response.json() as { info: TlsRequestInfo };
        assertEquals(info.clientCertificate, expected);
      } finally {
        client.close();
      }
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("`serveTls()` lets requests without a certificate through with no identity", async () => {
  await withServer(echoInfo, async (server) => {
    const client = clientFor();
    try {
      const response = await fetch(`https://127.0.0.1:${server.port}/`, {
        client,
        headers: { authorization: "Bearer token-1" },
      });
      assertEquals(await response.json(), { info: {}, authorization: "Bearer token-1" });
    } finally {
      client.close();
    }
  });
});

Deno.test("`serveTls()` gives no identity to a client certificate from another CA", async () => {
  const foreign = await generateCertificates({ clientCommonName: "mallory" });
  await withServer(echoInfo, async (server) => {
    const client = clientFor({ cert: foreign.clientCert, key: foreign.clientKey });
    try {
      // The request goes through (a bearer token could still authenticate it),
      // but the unverified certificate yields no identity.
      const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
      const { info } = await response.json() as { info: TlsRequestInfo };
      assertEquals(info, {});
    } finally {
      client.close();
    }
  });
});

Deno.test("`serveTls()` gives no identity to a server certificate used as a client one", async () => {
  await withServer(echoInfo, async (server) => {
    const client = clientFor({ cert: tls.serverCert, key: tls.serverKey });
    try {
      // Same CA, but its extendedKeyUsage is serverAuth only.
      const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
      const { info } = await response.json() as { info: TlsRequestInfo };
      assertEquals(info, {});
    } finally {
      client.close();
    }
  });
});

Deno.test("`serveTls()` passes method, path, headers and body through", async () => {
  const handler: TlsHandler = async (req) => {
    const url = new URL(req.url);
    return new Response(`${req.method} ${url.pathname}${url.search} ${await req.text()}`, {
      status: 201,
      headers: [["x-kind", req.headers.get("content-type") ?? ""], ["set-cookie", "a=1"], [
        "set-cookie",
        "b=2",
      ]],
    });
  };
  await withServer(handler, async (server) => {
    const client = clientFor();
    try {
      const response = await fetch(`https://127.0.0.1:${server.port}/api/v1/pods?limit=1`, {
        client,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"kind":"Pod"}',
      });
      assertEquals(response.status, 201);
      assertEquals(response.headers.get("x-kind"), "application/json");
      assertEquals(response.headers.getSetCookie(), ["a=1", "b=2"]);
      assertEquals(await response.text(), 'POST /api/v1/pods?limit=1 {"kind":"Pod"}');
    } finally {
      client.close();
    }
  });
});

Deno.test("`serveTls()` answers 500 when the handler throws", async () => {
  await withServer(() => {
    throw new Error("boom");
  }, async (server) => {
    const client = clientFor();
    try {
      const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
      assertEquals(response.status, 500);
      assert((await response.text()).includes("boom"));
    } finally {
      client.close();
    }
  });
});

/** A watch-like handler: one JSON line per tick until cancelled. */
function watchHandler(events: { cancelled: number; aborted: number }): TlsHandler {
  return (req) => {
    req.signal.addEventListener("abort", () => events.aborted++);
    let timer: ReturnType<typeof setInterval> | undefined;
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => {
          const line = JSON.stringify({ type: "ADDED", object: { n: n++ } }) + "\n";
          controller.enqueue(new TextEncoder().encode(line));
        }, 10);
      },
      cancel() {
        clearInterval(timer);
        events.cancelled++;
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  };
}

async function readLines(
  reader: ReadableStreamDefaultReader<string>,
  count: number,
): Promise<string[]> {
  const lines: string[] = [];
  let buffer = "";
  while (lines.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  }
  return lines;
}

Deno.test("`serveTls()` streams a watch and ends it cleanly on shutdown", async () => {
  const events = { cancelled: 0, aborted: 0 };
  const server = await serveTls({
    cert: tls.serverCert,
    key: tls.serverKey,
    ca: tls.caCert,
    handler: watchHandler(events),
  });
  const client = clientFor({ cert: tls.clientCert, key: tls.clientKey });
  try {
    const response = await fetch(`https://127.0.0.1:${server.port}/api/v1/pods?watch=true`, {
      client,
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const lines = await readLines(reader, 3);
    assertEquals(lines.slice(0, 3).map((l) => JSON.parse(l).object.n), [0, 1, 2]);

    await server.shutdown();
    await server.finished;
    // The stream ends (chunked terminator) rather than erroring.
    while (!(await reader.read()).done) { /* drain what was in flight */ }
    assertEquals(events.cancelled, 1);
    assertEquals(events.aborted, 1);
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("`serveTls()` cancels a stream and aborts the request when the client leaves", async () => {
  const events = { cancelled: 0, aborted: 0 };
  await withServer(watchHandler(events), async (server) => {
    const client = clientFor();
    try {
      const response = await fetch(`https://127.0.0.1:${server.port}/?watch=true`, { client });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      await readLines(reader, 2);
      await reader.cancel();
    } finally {
      client.close();
    }
    for (let i = 0; i < 100 && events.cancelled === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assertEquals(events, { cancelled: 1, aborted: 1 });
  });
});

Deno.test("`serveTls()` shuts down when its signal aborts", async () => {
  const controller = new AbortController();
  const server = await serveTls({
    cert: tls.serverCert,
    key: tls.serverKey,
    handler: () => new Response("ok"),
    signal: controller.signal,
  });
  assert(server.port > 0);
  controller.abort();
  await server.finished;
  await assertRejects(() => Deno.connect({ hostname: "127.0.0.1", port: server.port }));
});

Deno.test("the server certificate is valid for the IPv6 loopback [::1]", async () => {
  let server: TlsServer;
  try {
    server = await serveTls({
      hostname: "::1",
      cert: tls.serverCert,
      key: tls.serverKey,
      handler: () => new Response("v6"),
    });
  } catch {
    return; // no IPv6 loopback on this machine
  }
  const client = clientFor();
  try {
    assertEquals(await (await fetch(`https://[::1]:${server.port}/`, { client })).text(), "v6");
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test({
  name: "openssl sees the SANs, key usages and a valid chain" +
    (hasOpenssl ? "" : " (not run: openssl not found on PATH)"),
  ignore: !hasOpenssl,
  fn: async () => {
    const bundle = await generateCertificates({ hosts: ["kopf.test", "10.0.0.7", "fd00::7"] });
    const dir = await Deno.makeTempDir();
    try {
      for (const [name, pem] of Object.entries(bundle)) {
        await Deno.writeTextFile(`${dir}/${name}.pem`, pem);
      }
      const server = await run("openssl", [
        "x509",
        "-in",
        `${dir}/serverCert.pem`,
        "-noout",
        "-text",
      ]);
      for (
        const expected of [
          "DNS:localhost",
          "IP Address:127.0.0.1",
          "IP Address:0:0:0:0:0:0:0:1",
          "DNS:kopf.test",
          "IP Address:10.0.0.7",
          "IP Address:FD00:0:0:0:0:0:0:7",
          "TLS Web Server Authentication",
          "ecdsa-with-SHA256",
        ]
      ) assert(server.includes(expected), `server certificate lacks ${expected}:\n${server}`);

      const client = await run("openssl", [
        "x509",
        "-in",
        `${dir}/clientCert.pem`,
        "-noout",
        "-text",
      ]);
      assert(client.includes("O = system:masters, CN = kopf-admin"), client);
      assert(client.includes("TLS Web Client Authentication"), client);

      const ca = await run("openssl", ["x509", "-in", `${dir}/caCert.pem`, "-noout", "-text"]);
      assert(/CA:TRUE/.test(ca) && ca.includes("Certificate Sign"), ca);

      const ok = await run("openssl", [
        "verify",
        "-CAfile",
        `${dir}/caCert.pem`,
        `${dir}/serverCert.pem`,
        `${dir}/clientCert.pem`,
      ]);
      assert(ok.includes("serverCert.pem: OK") && ok.includes("clientCert.pem: OK"), ok);
      await run("openssl", ["pkey", "-in", `${dir}/clientKey.pem`, "-noout"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

testWithKubectl({
  name: "kubectl (Go crypto/tls) accepts the CA, the client certificate and the PKCS#8 key",
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const seen: TlsRequestInfo[] = [];
    try {
      for (const [name, pem] of Object.entries(tls)) {
        await Deno.writeTextFile(`${dir}/${name}.pem`, pem);
      }
      await withServer((_req, info) => {
        seen.push(info);
        return Response.json({ major: "1", minor: "33", gitVersion: "v1.33.0" });
      }, async (server) => {
        const out = await run("kubectl", [
          `--server=https://127.0.0.1:${server.port}`,
          `--certificate-authority=${dir}/caCert.pem`,
          `--client-certificate=${dir}/clientCert.pem`,
          `--client-key=${dir}/clientKey.pem`,
          "get",
          "--raw",
          "/version",
        ]);
        assertEquals(JSON.parse(out).gitVersion, "v1.33.0");
      });
      assertEquals(seen[0]?.clientCertificate?.commonName, "kopf-admin");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
