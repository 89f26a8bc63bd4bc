/**
 * The ngrok tunnel and the auto-tunnel, with a fake ngrok agent (`_ngrok.ts`): a real child
 * process started as the real binary would be, with the agent's log lines and local API.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { webhookFn } from "../../src/core/engines/admission.ts";
import type { AnyObject, WebhookClientConfig, WebhookFn } from "../../mod.ts";
import { cluster, until } from "../reactor/_setup.ts";
import { fakeNgrok } from "./_ngrok.ts";
import { startInProcess } from "../core/_in_process.ts";

const REVIEW = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "u-1",
    kind: { group: "kopf.dev", version: "v1", kind: "KopfExample" },
    resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
    operation: "CREATE",
    userInfo: { username: "alice", uid: "a-1", groups: ["devs"], extra: { scopes: ["x"] } },
    object: { metadata: { name: "kex1", namespace: "default" }, spec: { field: "value" } },
  },
};

function operatorFn(): { fn: WebhookFn; users: kopf.UserInfo[] } {
  const registry = new kopf.OperatorRegistry();
  const users: kopf.UserInfo[] = [];
  kopf.on.validate("kopfexamples", { registry }, function validate1({ spec, userinfo }) {
    users.push(userinfo);
    if (spec.field === "value") throw new kopf.AdmissionError("Meh! Change the field.", 400);
  });
  const fn = webhookFn({
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    sink: () => {},
  });
  return { fn, users };
}

interface Logged {
  lines: string[];
  logger: kopf.WebhookLogger;
}

function logged(): Logged {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      debug: (m) => lines.push(`debug ${m}`),
      info: (m) => lines.push(`info ${m}`),
      warning: (m) => lines.push(`warning ${m}`),
    },
  };
}

/** Starts a server/tunnel; its first config, and a stop that awaits its end. */
async function start(
  server: kopf.WebhookServerProtocol,
  fn: WebhookFn,
  extra: { api?: kopf.WebhookApi; logger?: kopf.WebhookLogger } = {},
): Promise<{
  config: WebhookClientConfig;
  rest: Promise<IteratorResult<WebhookClientConfig>>;
  stop: () => Promise<void>;
}> {
  const controller = new AbortController();
  const iterator = kopf.serveWebhooks(server, fn, { signal: controller.signal, ...extra })
    [Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.done, false);
  const rest = iterator.next();
  rest.catch(() => {}); // awaited by the tests that expect it to fail
  return {
    config: first.value,
    rest,
    stop: async () => {
      controller.abort();
      await rest.catch(() => {});
      await iterator.return?.();
    },
  };
}

function post(url: string, body: unknown, client?: Deno.HttpClient): Promise<Response> {
  return fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
    ...(client ? { client } : {}),
  });
}

/** Whether a process is still there (signal 0 is not allowed in Deno; /proc is). */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie is gone for our purpose
  } catch {
    return false;
  }
}

Deno.test("WebhookNgrokTunnel: the agent's public https URL with the path, no CA; requests come through to the handlers; the agent stops at exit", async () => {
  await using ngrok = await fakeNgrok("https");
  const { fn, users } = operatorFn();
  const log = logged();
  const tunnel = new kopf.WebhookNgrokTunnel({
    binary: ngrok.binary,
    path: "/xyz/",
    token: "s3cr3t",
    region: "eu",
  });
  const { config, stop } = await start(tunnel, fn, { logger: log.logger });
  const client = Deno.createHttpClient({ caCerts: [ngrok.ca!] });
  try {
    assert.match(config.url!, /^https:\/\/127\.0\.0\.1:\d+\/xyz$/);
    assert.equal(config.caBundle, undefined);
    assert.equal(config.service, undefined);

    const response = await post(`${config.url}/validate1`, REVIEW, client);
    assert.equal(response.status, 200);
    const review = await response.json();
    assert.deepEqual(review.response, {
      uid: "u-1",
      allowed: false,
      status: { message: "Meh! Change the field.", code: 400 },
    });
    assert.deepEqual(users, [REVIEW.request.userInfo]);

    const events = await ngrok.events();
    const started = events.find((e) => e.event === "started")!;
    const args = started.args as string[];
    assert.deepEqual(args.slice(0, 1), ["http"]);
    assert.match(args[1]!, /^http:\/\/127\.0\.0\.1:\d+$/); // the local plain-HTTP server
    assert.deepEqual(args.slice(2), ["--log=stdout", "--log-format=json", "--region=eu"]);
    assert.equal(started.token, "s3cr3t"); // in the environment, not in the arguments
    assert.deepEqual(
      events.filter((e) => e.event === "forwarded").map((e) => e.path),
      ["/xyz/validate1"],
    );
    assert.ok(log.lines.includes(
      `info Accessing the webhooks at ${config.url} (an ngrok tunnel to ${args[1]}).`,
    ));
    // The local server is plain HTTP on loopback, at the path.
    const local = await post(`${args[1]}/xyz/validate1`, REVIEW);
    assert.equal((await local.json()).response.allowed, false);
  } finally {
    client.close();
    await stop();
  }
  const events = await ngrok.events();
  assert.equal(events.at(-1)?.event, "stopped");
  const pid = events.find((e) => e.event === "started")!.pid as number;
  assert.equal(await alive(pid), false, "the agent is gone after the exit");
});

Deno.test("WebhookNgrokTunnel: with no https tunnel, the http one; a default token and region are not passed", async () => {
  await using ngrok = await fakeNgrok("http");
  const { fn } = operatorFn();
  const { config, stop } = await start(new kopf.WebhookNgrokTunnel({ binary: ngrok.binary }), fn);
  try {
    assert.match(config.url!, /^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await post(`${config.url}/validate1`, REVIEW);
    assert.equal((await response.json()).response.allowed, false);
    const started = (await ngrok.events()).find((e) => e.event === "started")!;
    assert.deepEqual((started.args as string[]).slice(2), ["--log=stdout", "--log-format=json"]);
    assert.equal(started.token, null);
  } finally {
    await stop();
  }
});

Deno.test("WebhookNgrokTunnel: a missing binary is one line naming the option and the fix", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { fn } = operatorFn();
    const tunnel = new kopf.WebhookNgrokTunnel({ binary: `${dir}/no-such-ngrok` });
    const iterator = tunnel.serve(fn, { signal: new AbortController().signal });
    await assert.rejects(() => iterator.next(), (e: Error) => {
      assert.ok(e instanceof kopf.WebhookServerError);
      assert.equal(
        e.message,
        `The ngrok agent "${dir}/no-such-ngrok" was not found: install ngrok ` +
          `(https://ngrok.com/download) and put it on PATH, or give its path as ` +
          `new kopf.WebhookNgrokTunnel({ binary: "/path/to/ngrok" }).`,
      );
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WebhookNgrokTunnel: an agent that fails at start is reported with its own error", async () => {
  await using ngrok = await fakeNgrok("fail");
  const { fn } = operatorFn();
  const tunnel = new kopf.WebhookNgrokTunnel({ binary: ngrok.binary, token: "bad" });
  const iterator = tunnel.serve(fn, { signal: new AbortController().signal });
  await assert.rejects(() => iterator.next(), (e: Error) => {
    assert.ok(e instanceof kopf.WebhookServerError);
    assert.match(
      e.message,
      /^The ngrok agent gave no tunnel: it exited with code 1: authentication failed: The authtoken/,
    );
    assert.ok(!e.message.includes("\n"));
    return true;
  });
});

Deno.test("WebhookNgrokTunnel: an agent that gives no tunnel in time is stopped and reported", async () => {
  await using ngrok = await fakeNgrok("silent");
  const { fn } = operatorFn();
  const tunnel = new kopf.WebhookNgrokTunnel({ binary: ngrok.binary, startupTimeout: 1 });
  const iterator = tunnel.serve(fn, { signal: new AbortController().signal });
  await assert.rejects(
    () => iterator.next(),
    /^WebhookServerError: The ngrok agent gave no tunnel: none in 1s\.$/,
  );
  // Started, then stopped (SIGTERM) — no agent is left behind.
  assert.deepEqual((await ngrok.events()).map((e) => e.event), ["started", "stopped"]);
});

Deno.test("WebhookNgrokTunnel: an agent that dies while serving ends the tunnel with an error", async () => {
  await using ngrok = await fakeNgrok("http");
  const { fn } = operatorFn();
  const { rest, stop } = await start(new kopf.WebhookNgrokTunnel({ binary: ngrok.binary }), fn);
  try {
    const pid = (await ngrok.events()).find((e) => e.event === "started")!.pid as number;
    Deno.kill(pid, "SIGKILL");
    await assert.rejects(
      () => rest,
      /^WebhookServerError: The ngrok agent exited \(code 137\); the tunnel is gone\.$/,
    );
  } finally {
    await stop();
  }
});

Deno.test("WebhookNgrokTunnel: the operator's managed webhooks get the tunnel's URL; the API server's admission goes through it", async () => {
  // ngrok's public URL is https under a publicly trusted certificate; the fake's test CA stands
  // in for the system's roots (a real kube-apiserver refuses http webhook URLs).
  await using ngrok = await fakeNgrok("https");
  await using c = await cluster({ webhookTrustedCAs: [ngrok.ca!] });
  const registry = new kopf.OperatorRegistry();
  kopf.on.startup({ registry }, ({ settings }) => {
    settings.admission.server = new kopf.WebhookNgrokTunnel({
      binary: ngrok.binary,
      path: "/r4nd",
    });
    settings.admission.managed = "tunnel.kopf.dev";
  });
  const users: kopf.UserInfo[] = [];
  kopf.on.validate("kopfexamples", { registry }, function no_bad({ spec, userinfo }) {
    users.push(userinfo);
    if (spec.bad) throw new kopf.AdmissionError("Bad is bad.", 422);
  });
  await using operator = await startInProcess(c.api.kubeconfig.path, registry);
  const lines = operator.lines;
  const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
  let webhooks: AnyObject[] = [];
  await until(async () => {
    const got = await c.call("GET", `${VWC}/tunnel.kopf.dev`, undefined, [404]);
    webhooks = got.body?.webhooks ?? [];
    return webhooks.length > 0;
  }, "the validating configuration with the tunnel's URL");
  const publicUrl = lines.find((l) => l.includes("Accessing the webhooks at"));
  assert.ok(publicUrl, "the tunnel's URL is logged");
  const url = webhooks[0]!.clientConfig.url as string;
  assert.match(url, /^https:\/\/127\.0\.0\.1:\d+\/r4nd\/no_bad$/);
  assert.equal(webhooks[0]!.clientConfig.caBundle, undefined);
  assert.ok(publicUrl.includes(url.replace(/\/no_bad$/, "")));

  const path = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
  const denied = await c.call("POST", path, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "bad" },
    spec: { bad: true },
  }, [400, 422]);
  assert.match(JSON.stringify(denied.body), /Bad is bad\./);
  await c.call("POST", path, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "good" },
    spec: {},
  });
  const forwarded = (await ngrok.events()).filter((e) => e.event === "forwarded");
  assert.deepEqual(forwarded.map((e) => e.path), ["/r4nd/no_bad", "/r4nd/no_bad"]);
  assert.equal(typeof users[0]?.username, "string");
  await operator.stop(); // what follows checks the operator's exit
  assert.equal((await ngrok.events()).at(-1)?.event, "stopped");
});

Deno.test("WebhookAutoTunnel: a detected K3s cluster gets a local server under its magic host; ngrok is not run", async () => {
  await using ngrok = await fakeNgrok("http");
  const { fn } = operatorFn();
  const api: kopf.WebhookApi = {
    request: <T>(_m: string, path: string) =>
      Promise.resolve((path === "/version" ? { gitVersion: "v1.31.4+k3s1" } : {}) as T),
  };
  const auto = new kopf.WebhookAutoTunnel({ port: 0, binary: ngrok.binary });
  const { config, stop } = await start(auto, fn, { api });
  try {
    assert.match(config.url!, /^https:\/\/host\.k3d\.internal:\d+$/);
    assert.ok(config.caBundle);
    // It listens on all interfaces, as the K3d server does (the cluster is not on loopback).
    const outside = Deno.networkInterfaces().find((i) =>
      i.family === "IPv4" && i.address !== "127.0.0.1"
    );
    if (outside) {
      const port = Number(new URL(config.url!).port);
      const conn = await Deno.connect({ hostname: outside.address, port });
      conn.close();
    } else {
      console.warn("No non-loopback IPv4 interface here: not checking that it listens on all.");
    }
  } finally {
    await stop();
  }
  assert.deepEqual(await ngrok.events(), []);
});

Deno.test("WebhookAutoTunnel: an undetected cluster goes through ngrok", async () => {
  await using ngrok = await fakeNgrok("https");
  const { fn } = operatorFn();
  const auto = new kopf.WebhookAutoTunnel({ path: "/p", binary: ngrok.binary });
  const { config, stop } = await start(auto, fn, {}); // no API: no detection
  const client = Deno.createHttpClient({ caCerts: [ngrok.ca!] });
  try {
    assert.match(config.url!, /^https:\/\/127\.0\.0\.1:\d+\/p$/);
    const response = await post(`${config.url}/validate1`, REVIEW, client);
    assert.equal((await response.json()).response.allowed, false);
  } finally {
    client.close();
    await stop();
  }
  assert.equal((await ngrok.events()).at(-1)?.event, "stopped");
});

Deno.test("WebhookAutoTunnel: without the ngrok agent, a local server and one warning saying why", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { fn } = operatorFn();
    const log = logged();
    const auto = new kopf.WebhookAutoTunnel({ port: 0, binary: `${dir}/ngrok` });
    const { config, stop } = await start(auto, fn, { logger: log.logger });
    try {
      assert.match(config.url!, /^https:\/\/localhost:\d+$/);
      const client = Deno.createHttpClient({ caCerts: [atob(config.caBundle!)] });
      try {
        const response = await post(`${config.url}/validate1`, REVIEW, client);
        assert.equal((await response.json()).response.allowed, false);
      } finally {
        client.close();
      }
      const warnings = log.lines.filter((l) => l.startsWith("warning "));
      assert.deepEqual(warnings, [
        `warning The ngrok agent "${dir}/ngrok" was not found: install ngrok ` +
        `(https://ngrok.com/download) and put it on PATH, or give its path as ` +
        `new kopf.WebhookNgrokTunnel({ binary: "/path/to/ngrok" }) — serving the webhooks ` +
        `locally at ${config.url} instead, which only a cluster on this machine can reach.`,
      ]);
    } finally {
      await stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("UserInfo and WebhookClientConfigService: the public types fit what Kubernetes sends", () => {
  const user: kopf.UserInfo = REVIEW.request.userInfo;
  const name: string | undefined = user.username;
  const groups: string[] | undefined = user.groups;
  assert.equal(name, "alice");
  assert.deepEqual(groups, ["devs"]);
  const service: kopf.WebhookClientConfigService = { namespace: "ns", name: "op", port: 443 };
  const config: kopf.WebhookClientConfig = { service, caBundle: "Q0E=" };
  assert.equal(config.service?.port, 443);
});
