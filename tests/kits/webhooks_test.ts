import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { webhookFn } from "../../src/core/engines/admission.ts";
import { serveConversion } from "../../src/core/engines/conversion.ts";
import { makeServerCertificates } from "../../src/kits/_certificates.ts";
import type { AnyObject, WebhookClientConfig, WebhookFn } from "../../mod.ts";

const REVIEW = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "u-1",
    kind: { group: "kopf.dev", version: "v1", kind: "KopfExample" },
    resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
    operation: "CREATE",
    userInfo: { username: "admin" },
    object: { metadata: { name: "kex1", namespace: "default" }, spec: { field: "value" } },
  },
};

function operatorFn(): { fn: WebhookFn; seen: AnyObject[] } {
  const registry = new kopf.OperatorRegistry();
  const seen: AnyObject[] = [];
  kopf.on.validate("kopfexamples", { registry }, function validate1({ spec, headers, sslpeer }) {
    seen.push({ headers, sslpeer });
    if (spec.field === "value") throw new kopf.AdmissionError("Meh! Change the field.", 400);
  });
  kopf.on.validate("kopfexamples", { registry }, function warn({ warnings }) {
    warnings.push("Checked.");
  });
  const fn = webhookFn({
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    sink: () => {},
  });
  return { fn, seen };
}

/** Starts a server, returns its first config and a stop function that awaits its end. */
async function start(
  server: kopf.WebhookServerProtocol,
  fn: WebhookFn,
  api?: unknown,
): Promise<{ config: WebhookClientConfig; stop: () => Promise<void> }> {
  const controller = new AbortController();
  const iterator = kopf.serveWebhooks(server, fn, {
    signal: controller.signal,
    api: api as kopf.WebhookApi,
  })[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.done, false);
  return {
    config: first.value,
    stop: async () => {
      controller.abort();
      await iterator.return?.();
    },
  };
}

function post(url: string, body: unknown, client?: Deno.HttpClient): Promise<Response> {
  return fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", authorization: "Bearer t0ken" },
    ...(client ? { client } : {}),
  });
}

Deno.test("WebhookServer: self-signed HTTPS, the CA in caBundle and cadump, handlers by path", async () => {
  const dir = await Deno.makeTempDir();
  const { fn, seen } = operatorFn();
  const { config, stop } = await start(
    new kopf.WebhookServer({ port: 0, cadump: `${dir}/ca.pem` }),
    fn,
  );
  try {
    assert.match(config.url!, /^https:\/\/localhost:\d+$/);
    const ca = atob(config.caBundle!);
    assert.equal(await Deno.readTextFile(`${dir}/ca.pem`), ca);
    const client = Deno.createHttpClient({ caCerts: [ca] });
    try {
      let response = await post(`${config.url}/validate1`, REVIEW, client);
      assert.deepEqual(await response.json(), {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: {
          uid: "u-1",
          allowed: false,
          status: { message: "Meh! Change the field.", code: 400 },
        },
      });
      assert.equal(seen[0]!.headers.authorization, "Bearer t0ken");
      assert.deepEqual(seen[0]!.sslpeer, {});
      response = await post(`${config.url}/warn`, REVIEW, client);
      assert.deepEqual((await response.json()).response, {
        uid: "u-1",
        allowed: true,
        warnings: ["Checked."],
      });
      // Not JSON: 400; a request the engine cannot serve: 400.
      response = await fetch(`${config.url}/warn`, { method: "POST", body: "{", client });
      assert.equal(response.status, 400);
      await response.body?.cancel();
      response = await post(`${config.url}/warn`, { request: { uid: "x" } }, client);
      assert.equal(response.status, 400);
      assert.match(await response.text(), /User info is missing/);
    } finally {
      client.close();
    }
  } finally {
    await stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WebhookServer: insecure HTTP with a root path; the iterable ends when the signal aborts", async () => {
  const { fn } = operatorFn();
  const { config, stop } = await start(
    new kopf.WebhookServer({ port: 0, insecure: true, path: "/hooks/" }),
    fn,
  );
  try {
    assert.match(config.url!, /^http:\/\/localhost:\d+\/hooks$/);
    assert.equal(config.caBundle, undefined);
    let response = await post(`${config.url}/warn`, REVIEW);
    assert.equal((await response.json()).response.allowed, true);
    response = await post(config.url!.replace("/hooks", "/other/warn"), REVIEW);
    assert.equal(response.status, 404);
    await response.body?.cancel();
  } finally {
    await stop();
  }
});

Deno.test("WebhookServer: given certfile/pkeyfile and cafile are used as they are", async () => {
  const dir = await Deno.makeTempDir();
  const made = await makeServerCertificates(["localhost", "127.0.0.1"]);
  await Deno.writeTextFile(`${dir}/cert.pem`, made.serverCert);
  await Deno.writeTextFile(`${dir}/key.pem`, made.serverKey);
  await Deno.writeTextFile(`${dir}/ca.pem`, made.caCert);
  const { fn } = operatorFn();
  const { config, stop } = await start(
    new kopf.WebhookServer({
      port: 0,
      certfile: `${dir}/cert.pem`,
      pkeyfile: `${dir}/key.pem`,
      cafile: `${dir}/ca.pem`,
    }),
    fn,
  );
  const client = Deno.createHttpClient({ caCerts: [made.caCert] });
  try {
    assert.equal(atob(config.caBundle!), made.caCert);
    const response = await post(`${config.url}/warn`, REVIEW, client);
    assert.equal((await response.json()).response.allowed, true);
  } finally {
    client.close();
    await stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WebhookServer: an encrypted private key is served with its password; without it or with a wrong one, one line", async () => {
  const { createPrivateKey } = await import("node:crypto");
  const made = await makeServerCertificates(["localhost", "127.0.0.1"]);
  const dir = await Deno.makeTempDir();
  const encrypted = String(
    createPrivateKey(made.serverKey).export({
      format: "pem",
      type: "pkcs8",
      cipher: "aes-256-cbc",
      passphrase: "s3cret",
    }),
  );
  assert.match(encrypted, /BEGIN ENCRYPTED PRIVATE KEY/);
  await Deno.writeTextFile(`${dir}/cert.pem`, made.serverCert);
  await Deno.writeTextFile(`${dir}/key.pem`, encrypted);
  const { fn } = operatorFn();
  const files = { port: 0, certfile: `${dir}/cert.pem`, pkeyfile: `${dir}/key.pem` };
  const client = Deno.createHttpClient({ caCerts: [made.caCert] });
  try {
    const { config, stop } = await start(
      new kopf.WebhookServer({ ...files, password: "s3cret" }),
      fn,
    );
    try {
      const response = await post(`${config.url}/warn`, REVIEW, client);
      assert.equal((await response.json()).response.allowed, true);
    } finally {
      await stop();
    }
    const signal = new AbortController().signal;
    for (
      const [password, message] of [
        [undefined, `The private key ${dir}/key.pem is encrypted: give its password.`],
        ["wrong", `The private key ${dir}/key.pem cannot be decrypted with the given password.`],
      ] as const
    ) {
      await assert.rejects(
        () =>
          kopf.serveWebhooks(
            new kopf.WebhookServer({ ...files, ...(password ? { password } : {}) }),
            fn,
            { signal },
          )[Symbol.asyncIterator]().next(),
        (e: Error) => e instanceof kopf.WebhookServerError && e.message === message,
      );
    }
  } finally {
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("K3d and Minikube servers: their magic host names in the URL and the certificate", async () => {
  const { fn } = operatorFn();
  for (
    const [server, host] of [
      [new kopf.WebhookK3dServer({ port: 0 }), "host.k3d.internal"],
      [new kopf.WebhookMinikubeServer({ port: 0 }), "host.minikube.internal"],
    ] as const
  ) {
    const { config, stop } = await start(server, fn);
    try {
      assert.match(config.url!, new RegExp(`^https://${host.replaceAll(".", "\\.")}:\\d+$`));
      // The certificate also names localhost: reachable from here, verified against the CA.
      const port = new URL(config.url!).port;
      const client = Deno.createHttpClient({ caCerts: [atob(config.caBundle!)] });
      try {
        const response = await post(`https://localhost:${port}/warn`, REVIEW, client);
        assert.equal((await response.json()).response.allowed, true);
      } finally {
        client.close();
      }
    } finally {
      await stop();
    }
  }
});

Deno.test("WebhookAutoServer: K3s by /version, Minikube by node labels, else a local server", async () => {
  const { fn } = operatorFn();
  const api = (version: string, labels: Record<string, string>) => ({
    request: (_method: string, path: string) =>
      Promise.resolve(
        path === "/version" ? { gitVersion: version } : { items: [{ metadata: { labels } }] },
      ),
  });
  const cases: [unknown, RegExp][] = [
    [api("v1.27.4+k3s1", {}), /^https:\/\/host\.k3d\.internal:/],
    [
      api("v1.27.4", { "minikube.k8s.io/name": "minikube" }),
      /^https:\/\/host\.minikube\.internal:/,
    ],
    [api("v1.27.4", {}), /^https:\/\/localhost:/],
    [{ request: () => Promise.reject(new Error("forbidden")) }, /^https:\/\/localhost:/],
    [undefined, /^https:\/\/localhost:/],
  ];
  for (const [client, url] of cases) {
    const { config, stop } = await start(new kopf.WebhookAutoServer({ port: 0 }), fn, client);
    await stop();
    assert.match(config.url!, url);
  }
});

Deno.test("custom servers: a function yielding configs is served by the same protocol", async () => {
  const { fn } = operatorFn();
  const calls: AnyObject[] = [];
  async function* mytunnel(
    webhook: WebhookFn,
    { signal }: kopf.WebhookServeOptions,
  ): AsyncGenerator<WebhookClientConfig> {
    calls.push(await webhook(REVIEW, { webhook: "warn" }));
    yield { url: "https://tunnel.example/hooks" };
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
  }
  const { config, stop } = await start(mytunnel, fn);
  await stop();
  assert.deepEqual(config, { url: "https://tunnel.example/hooks" });
  assert.deepEqual(calls[0]!.response.warnings, ["Checked."]);
  assert.throws(
    () => kopf.serveWebhooks({}, fn, { signal: AbortSignal.abort() }),
    /settings\.admission\.server must be a webhook server/,
  );
});

Deno.test("WebhookServer: conversion reviews at <path>/convert/<plural>.<group> reach the converters", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, ({ body }) => {
    body.spec.renamed = body.spec.field;
    delete body.spec.field;
  });
  const parts = { registry, settings: new kopf.OperatorSettings(), memo: {}, sink: () => {} };
  const webhooks: (string | undefined)[] = [];
  const fn: WebhookFn = (review, request) => {
    webhooks.push(request?.webhook);
    return serveConversion(review, parts, request);
  };
  const { config, stop } = await start(new kopf.WebhookServer({ port: 0, path: "/hooks" }), fn);
  const client = Deno.createHttpClient({ caCerts: [atob(config.caBundle!)] });
  try {
    const object = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "a" } };
    const response = await post(`${config.url}/convert/kopfexamples.kopf.dev`, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      request: {
        uid: "c-1",
        desiredAPIVersion: "kopf.dev/v2",
        objects: [{ ...object, spec: { field: 1 } }],
      },
    }, client);
    assert.deepEqual((await response.json()).response, {
      uid: "c-1",
      convertedObjects: [{ ...object, apiVersion: "kopf.dev/v2", spec: { renamed: 1 } }],
      result: { status: "Success" },
    });
    assert.deepEqual(webhooks, ["convert/kopfexamples.kopf.dev"]);
  } finally {
    client.close();
    await stop();
  }
});

Deno.test("WebhookServer on a busy port: one line naming the address and the server's port option (not a kopf flag), for each listener", async () => {
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const { fn } = operatorFn();
  const { caCert } = await makeServerCertificates(["localhost"]);
  const signal = new AbortController().signal;
  const servers: Array<[string, kopf.WebhookServer, string]> = [
    ["plain HTTP", new kopf.WebhookServer({ port, insecure: true }), "WebhookServer"],
    ["self-signed HTTPS", new kopf.WebhookServer({ port }), "WebhookServer"],
    [
      "HTTPS verifying clients (node:https)",
      new kopf.WebhookAutoServer({ port, verifyMode: "required", verifyCadata: caCert }),
      "WebhookAutoServer",
    ],
  ];
  for (const [what, server, cls] of servers) {
    await assert.rejects(
      () => kopf.serveWebhooks(server, fn, { signal })[Symbol.asyncIterator]().next(),
      (e: Error) => {
        assert.ok(e instanceof kopf.WebhookServerError, `${what}: ${e}`);
        assert.equal(
          e.message,
          `The webhook server (settings.admission.server) cannot listen on 127.0.0.1:${port}: ` +
            "the address is already in use: give it another port in the handlers, e.g. " +
            `settings.admission.server = new kopf.${cls}({ port: ${port + 1} }) in an on.startup ` +
            "handler (port: 0 picks a free one), or stop what listens there",
          what,
        );
        return true;
      },
    );
  }
});
