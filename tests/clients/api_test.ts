import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { ApiClient, describeRequest, type RequestRecord } from "../../src/cogs/clients/api.ts";
import { runAuthenticator } from "../../src/cogs/clients/auth.ts";
import {
  ApiConnectionError,
  type ApiError,
  ConflictError,
  NotFoundError,
  ServerError,
  TooManyRequestsError,
  UnprocessableError,
} from "../../src/cogs/clients/errors.ts";
import { ConnectionInfo, LoginError, Vault } from "../../src/cogs/structs/credentials.ts";
import { CONFIGMAPS, setup } from "./_setup.ts";
import { closedPort } from "../examples/_setup.ts";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";

/**
 * Waits (on the real clock: the request goes over a real socket) until the request sleeps its
 * backoff on the fake clock; returns the backoff in seconds.
 */
async function backoffOf(clock: FakeClock): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (clock.pending === 0) {
    if (Date.now() > deadline) assert.fail("no backoff within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return clock.nextIn! / 1000;
}

Deno.test("request() parses JSON; error answers become typed errors with code, reason, Status", async () => {
  await using env = await setup();
  const { api } = env;
  const url = CONFIGMAPS.getUrl({ namespace: "default" });
  const made = await api.request<{ metadata: { name: string } }>("POST", url, {
    body: { metadata: { name: "cm1" }, data: { a: "1" } },
  });
  assert.equal(made.metadata.name, "cm1");

  const conflict = await api.request("POST", url, { body: { metadata: { name: "cm1" } } }).catch((
    e,
  ) => e);
  assert.ok(conflict instanceof ConflictError);
  assert.equal(conflict.code, 409);
  assert.equal(conflict.reason, "AlreadyExists");
  assert.equal(conflict.status?.kind, "Status");
  assert.equal(conflict.status?.details?.name, "cm1");
  assert.ok(!conflict.message.includes("\n"));

  const missing = await api.request(
    "GET",
    CONFIGMAPS.getUrl({ namespace: "default", name: "absent" }),
  )
    .catch((e) => e);
  assert.ok(missing instanceof NotFoundError);
  assert.equal(
    missing.message,
    `GET /api/v1/namespaces/default/configmaps/absent: 404 NotFound: configmaps "absent" not found`,
  );

  const invalid = await api.request(
    "PATCH",
    CONFIGMAPS.getUrl({ namespace: "default", name: "cm1" }),
    {
      body: [{ op: "test", path: "/data/a", value: "2" }],
      contentType: "application/json-patch+json",
    },
  ).catch((e) => e);
  assert.ok(invalid instanceof UnprocessableError);
  assert.equal(invalid.code, 422);
});

Deno.test("an unreachable server is retried with the backoffs, then a clear ApiConnectionError", async () => {
  const records: RequestRecord[] = [];
  using vault = new Vault({
    x: new ConnectionInfo({ server: `http://127.0.0.1:${closedPort()}` }),
  });
  const clock = new FakeClock();
  const api = new ApiClient({
    vault,
    settings: { networking: { errorBackoffs: [0.05, 0.1] } },
    onRequest: (r) => records.push(r),
    clock,
  });
  const failed = api.request("GET", "/api/v1/namespaces").catch((e) => e);
  assert.equal(await backoffOf(clock), 0.05);
  await clock.advance(0.05);
  assert.equal(await backoffOf(clock), 0.1);
  await clock.advance(0.1);
  const error = await failed;
  assert.equal(clock.pending, 0);
  assert.ok(error instanceof ApiConnectionError, String(error));
  assert.equal(error.timedOut, false);
  assert.match(
    error.message,
    /^GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces failed: .* — check that the API server is running and reachable$/,
  );
  assert.deepEqual(records.map((r) => [r.attempt, r.code, r.verb, r.resource]), [
    [1, 0, "list", "namespaces"],
    [2, 0, "list", "namespaces"],
    [3, 0, "list", "namespaces"],
  ]);
});

Deno.test("429 with Retry-After is retried no sooner than the server asked", async () => {
  const clock = new FakeClock();
  await using env = await setup({ faults: { rate429: 1, retryAfterSeconds: 1 } }, { clock });
  const { api, server } = env;
  const answered = api.request("GET", "/api/v1/namespaces/default");
  assert.equal(await backoffOf(clock), 1, "the Retry-After of 1 s, not the backoff of 0.01 s");
  server.setFaults({ rate429: null });
  await clock.advance(0.99);
  assert.equal(server.faultCounts.error429, 1);
  assert.equal(clock.pending, 1, "not retried before 1 s");
  await clock.advance(0.01);
  await answered;
  assert.equal(server.faultCounts.error429, 1);
});

Deno.test("503s escalate when the backoffs run out; the attempts are one more than the backoffs", async () => {
  await using env = await setup({ faults: { rate503: 1, retryAfterSeconds: 0 } }, {
    settings: { networking: { errorBackoffs: [0.01, 0.01] } },
  });
  const error = await env.api.request("GET", "/api/v1/namespaces").catch((e) => e);
  assert.ok(error instanceof ServerError, String(error));
  assert.equal(error.code, 503);
  assert.equal(error.reason, "ServiceUnavailable");
  assert.equal(env.server.faultCounts.error503, 3);
  assert.equal(env.server.countRequests({ verb: "list", resource: "namespaces", code: 503 }), 3);
});

Deno.test("errorBackoffs: a number is one retry; [] disables retrying; 4xx never retries", async () => {
  await using env = await setup({ faults: { rate500: 1 } });
  const one = new ApiClient({
    vault: env.vault,
    settings: { networking: { errorBackoffs: 0.01 } },
  });
  await assert.rejects(one.request("GET", "/api/v1/namespaces"), ServerError);
  assert.equal(env.server.faultCounts.error500, 2);
  const none = new ApiClient({ vault: env.vault, settings: { networking: { errorBackoffs: [] } } });
  await assert.rejects(none.request("GET", "/api/v1/namespaces"), ServerError);
  assert.equal(env.server.faultCounts.error500, 3);
  env.server.setFaults({ rate500: null });
  const before = env.server.countRequests({ code: 404 });
  await assert.rejects(env.api.request("GET", "/api/v1/namespaces/absent"), NotFoundError);
  assert.equal(env.server.countRequests({ code: 404 }) - before, 1);
});

Deno.test("enforceRetryAfter uses the server's delay instead of a longer backoff", async () => {
  const clock = new FakeClock();
  await using env = await setup({ faults: { rate429: 1, retryAfterSeconds: 0.2 } }, {
    settings: { networking: { errorBackoffs: [5], enforceRetryAfter: true } },
    clock,
  });
  const failed = assert.rejects(env.api.request("GET", "/api/v1/namespaces"), TooManyRequestsError);
  assert.equal(await backoffOf(clock), 0.2, "the Retry-After, not the backoff of 5 s");
  await clock.advance(0.2);
  await failed;
  assert.equal(env.server.faultCounts.error429, 2);
});

Deno.test("requestTimeout cuts a slow request (and retries it)", async () => {
  await using env = await setup({ faults: { latencyMs: 1500 } }, {
    settings: { networking: { requestTimeout: 0.2, errorBackoffs: [0.01] } },
  });
  const started = performance.now();
  const error = await env.api.request("GET", "/api/v1/namespaces").catch((e) => e);
  const elapsed = (performance.now() - started) / 1000;
  assert.ok(error instanceof ApiConnectionError, String(error));
  assert.equal(error.timedOut, true);
  assert.match(error.message, /timed out after 0\.2s/);
  // Real time: the timeouts are real timers racing a real socket. Two attempts cut at 0.2 s;
  // uncut, they would take 3 s (1.5 s of latency each) — the upper bound has a loaded machine's
  // margin below that.
  assert.ok(elapsed >= 0.4 && elapsed < 2.9, `elapsed ${elapsed}`);
  // A per-request timeout overrides the setting.
  env.server.setFaults({ latencyMs: 300 });
  await env.api.request("GET", "/api/v1/namespaces", { timeout: 5 });
});

Deno.test("401 invalidates the credentials; the re-login's new token makes the request succeed", async () => {
  await using server = await startApiServer({ token: "good" });
  using vault = new Vault({ login: new ConnectionInfo({ server: server.url, token: "stale" }) });
  const api = new ApiClient({ vault });
  const logins: string[] = [];
  const stop = new AbortController();
  const authenticator = runAuthenticator(vault, () => {
    logins.push("login");
    return { login: new ConnectionInfo({ server: server.url, token: "good" }) };
  }, { signal: stop.signal });
  try {
    // Several concurrent requests fail with the stale token, but cause one re-login.
    const results = await Promise.all(
      [1, 2, 3].map(() =>
        api.request<{ metadata: { name: string } }>("GET", "/api/v1/namespaces/default")
      ),
    );
    assert.deepEqual(results.map((r) => r.metadata.name), ["default", "default", "default"]);
    assert.deepEqual(logins, ["login"]);
    assert.equal(server.countRequests({ code: 401 }), 3);
    assert.equal((await vault.select()).info.token, "good");
  } finally {
    stop.abort();
    await authenticator;
  }
});

Deno.test("401 with a re-login that gives the same rejected token ends in a LoginError", async () => {
  await using server = await startApiServer({ token: "good" });
  const bad = () => new ConnectionInfo({ server: server.url, token: "bad" });
  using vault = new Vault({ login: bad() });
  const api = new ApiClient({ vault });
  const stop = new AbortController();
  const authenticator = runAuthenticator(vault, () => ({ login: bad() }), { signal: stop.signal });
  try {
    const error = await api.request("GET", "/api/v1/namespaces").catch((e) => e);
    assert.ok(error instanceof LoginError, String(error));
    assert.match(error.message, /^Ran out of valid credentials: /);
    assert.equal((error.cause as ApiError).code, 401);
  } finally {
    stop.abort();
    await authenticator;
  }
});

Deno.test("a failing login handler surfaces as the LoginError's cause", async () => {
  using vault = new Vault();
  const api = new ApiClient({ vault });
  const stop = new AbortController();
  const authenticator = runAuthenticator(vault, () => {
    throw new Error("token service down");
  }, { signal: stop.signal });
  try {
    const error = await api.request("GET", "/version").catch((e) => e);
    assert.ok(error instanceof LoginError);
    assert.equal((error.cause as Error).message, "token service down");
  } finally {
    stop.abort();
    await authenticator;
  }
});

Deno.test("an abort stops waiting for credentials, retries and slow answers at once", async () => {
  using empty = new Vault();
  const waiting = new ApiClient({ vault: empty });
  const stop1 = new AbortController();
  setTimeout(() => stop1.abort(new Error("stop1")), 50);
  await assert.rejects(waiting.request("GET", "/version", { signal: stop1.signal }), /stop1/);

  await using env = await setup({ faults: { rate503: 1, retryAfterSeconds: 30 } });
  const stop2 = new AbortController();
  setTimeout(() => stop2.abort(new Error("stop2")), 100);
  const started = performance.now();
  await assert.rejects(
    env.api.request("GET", "/api/v1/namespaces", { signal: stop2.signal }),
    /stop2/,
  );
  env.server.setFaults({ rate503: null, latencyMs: 1000 });
  const stop3 = new AbortController();
  setTimeout(() => stop3.abort(new Error("stop3")), 100);
  await assert.rejects(
    env.api.request("GET", "/api/v1/namespaces", { signal: stop3.signal }),
    /stop3/,
  );
  assert.ok(performance.now() - started < 900);
  env.server.setFaults({ latencyMs: null });
});

Deno.test("onRequest reports verb, resource, subresource and code per attempt", async () => {
  const records: RequestRecord[] = [];
  await using env = await setup({}, { onRequest: (r) => records.push(r) });
  await env.api.request("POST", CONFIGMAPS.getUrl({ namespace: "default" }), {
    body: { metadata: { name: "x" } },
  });
  await env.api.request("GET", "/api/v1/configmaps", { query: { limit: 1 } });
  await env.api.request("GET", "/apis").catch(() => {});
  await env.api.request("DELETE", CONFIGMAPS.getUrl({ namespace: "default", name: "nope" })).catch(
    () => {},
  );
  assert.deepEqual(records.map((r) => [r.verb, r.resource, r.code]), [
    ["create", "configmaps", 201],
    ["list", "configmaps", 200],
    ["list", "", 200],
    ["delete", "configmaps", 404],
  ]);
  assert.ok(records.every((r) => r.durationMs >= 0 && r.attempt === 1));
  assert.deepEqual(describeRequest("GET", "/apis/kopf.dev/v1/kopfexamples", true), {
    verb: "watch",
    resource: "kopfexamples.kopf.dev",
    subresource: undefined,
  });
  assert.deepEqual(describeRequest("GET", "/api/v1/namespaces/ns1"), {
    verb: "get",
    resource: "namespaces",
    subresource: undefined,
  });
});

Deno.test("describeRequest() names verbs, resources and subresources of every shape of path", () => {
  const cases: [string, string, boolean, string, string, string | undefined][] = [
    [
      "PATCH",
      "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex1/status",
      false,
      "patch",
      "kopfexamples.kopf.dev",
      "status",
    ],
    [
      "patch",
      "//apis//kopf.dev/v1/namespaces/ns/kopfexamples/kex1?x=/a/b",
      false,
      "patch",
      "kopfexamples.kopf.dev",
      undefined,
    ],
    ["GET", "/api/v1/namespaces/ns/pods?watch=true", true, "watch", "pods", undefined],
    ["get", "/api/v1/pods", true, "watch", "pods", undefined],
    ["GET", "/api/v1/namespaces/ns/pods/p1/log", false, "get", "pods", "log"],
    ["DELETE", "/api/v1/namespaces/ns/pods", false, "deletecollection", "pods", undefined],
    [
      "POST",
      "/apis/apps/v1/namespaces/ns/deployments",
      false,
      "create",
      "deployments.apps",
      undefined,
    ],
    ["PUT", "/apis/apps/v1/deployments/d", false, "update", "deployments.apps", undefined],
    ["GET", "/apis/apps/v1", false, "list", "", undefined],
    ["GET", "/api", false, "list", "", undefined],
    ["GET", "/", false, "list", "", undefined],
    ["GET", "", false, "list", "", undefined],
    ["GET", "/version", false, "list", "", undefined],
    ["OPTIONS", "/api/v1/pods", false, "options", "pods", undefined],
    ["GET", "/apix/g/v1/x", false, "list", "", undefined],
    ["GET", "/apis/g/v1/namespaces", false, "list", "namespaces.g", undefined],
    ["GET", "/apis/g/v1/namespaces/ns", false, "get", "namespaces.g", undefined],
    ["GET", "/apis/g/v1/namespaces/ns/x/y/z/extra", false, "get", "x.g", "z"],
  ];
  // Each shape three times, in both orders and between look-alikes (same lengths, other names,
  // other objects): the recent descriptions it reuses must never answer for another shape.
  const lookalikes: typeof cases = [
    [
      "GET",
      "/apis/kopf.dev/v1/namespaces/n2/kopfexamples/kex3",
      false,
      "get",
      "kopfexamples.kopf.dev",
      undefined,
    ],
    [
      "PATCH",
      "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex9",
      false,
      "patch",
      "kopfexamples.kopf.dev",
      undefined,
    ],
    ["GET", "/api/v1/namespaces/ns/pods/p1/lag", false, "get", "pods", "lag"],
    ["GET", "/api/v1/namespaces/ns/podz/p2/logs", false, "get", "podz", "logs"],
    [
      "GET",
      "/apis/kopf.dez/v1/namespaces/n2/kopfexamples/kex2",
      false,
      "get",
      "kopfexamples.kopf.dez",
      undefined,
    ],
    [
      "PATCH",
      "/apis/kopf.dev/v1/namespaces/ns/kopfexamplez/kex1/statuz",
      false,
      "patch",
      "kopfexamplez.kopf.dev",
      "statuz",
    ],
    ["GET", "/api/v1/namespaces/ns/pods?watch=true", false, "list", "pods", undefined],
  ];
  const all = [...cases, ...lookalikes];
  for (const round of [all, [...all].reverse(), all]) {
    for (const [method, path, watch, verb, resource, subresource] of round) {
      assert.deepEqual(describeRequest(method, path, watch), { verb, resource, subresource }, path);
    }
  }
});

Deno.test("expired credentials are dropped and a re-login brings new ones", async () => {
  await using server = await startApiServer({ token: "t2" });
  let now = Date.now();
  using vault = new Vault({
    login: new ConnectionInfo({
      server: server.url,
      token: "t1",
      expiration: new Date(now + 1000),
    }),
  }, { now: () => now });
  const api = new ApiClient({ vault });
  const stop = new AbortController();
  let logins = 0;
  const authenticator = runAuthenticator(vault, () => {
    logins++;
    return { login: new ConnectionInfo({ server: server.url, token: "t2" }) };
  }, { signal: stop.signal });
  try {
    now += 2000;
    await api.request("GET", "/api/v1/namespaces");
    assert.equal(logins, 1);
    assert.equal(server.countRequests({ code: 401 }), 0, "expired credentials were not even tried");
  } finally {
    stop.abort();
    await authenticator;
  }
});

Deno.test("a retry, then a 401 and a re-login: the attempts count from 1 again, for requests and streams alike", async () => {
  for (const stream of [false, true]) {
    const answers = [503, 401, 200];
    const seen: string[] = [];
    const fetch = (_url: string, init: RequestInit) => {
      seen.push(new Headers(init.headers).get("authorization") ?? "");
      const status = answers.shift() ?? 500;
      return Promise.resolve(new Response(status === 200 ? "{}" : "", { status }));
    };
    using vault = new Vault({ login: new ConnectionInfo({ server: "http://k8s", token: "old" }) });
    const records: RequestRecord[] = [];
    const logs: string[] = [];
    const log = (line: string) => logs.push(line);
    const api = new ApiClient({
      vault,
      fetch,
      onRequest: (r) => records.push(r),
      logger: { debug: log, warn: log, error: log },
      settings: { networking: { errorBackoffs: [0, 0] } },
    });
    const stop = new AbortController();
    const authenticator = runAuthenticator(vault, () => ({
      login: new ConnectionInfo({ server: "http://k8s", token: "new" }),
    }), { signal: stop.signal });
    try {
      if (stream) (await api.stream("/api/v1/pods", { query: { watch: true } })).cancel();
      else assert.deepEqual(await api.request("GET", "/api/v1/pods"), {});
    } finally {
      stop.abort();
      await authenticator;
    }
    assert.deepEqual(records.map((r) => [r.attempt, r.code]), [[1, 503], [2, 401], [1, 200]]);
    assert.deepEqual(seen, ["Bearer old", "Bearer old", "Bearer new"]);
    const path = stream ? "/api/v1/pods?watch=true" : "/api/v1/pods";
    assert.deepEqual(logs, [
      `Request attempt #1/3 failed; will retry in 0s: GET ${path} -> ${logs[0]!.split(" -> ")[1]}`,
      `GET /api/v1/pods: 401 Unauthorized; re-authenticating`,
    ]);
    assert.match(logs[0]!, /503|ServiceUnavailable/);
  }
});

Deno.test("onRequest: a path's resource is kept, the verb is of each request (methods, watch, collections)", async () => {
  const records: RequestRecord[] = [];
  await using env = await setup({}, { onRequest: (r) => records.push(r) });
  const list = CONFIGMAPS.getUrl({ namespace: "default" });
  const item = CONFIGMAPS.getUrl({ namespace: "default", name: "x" });
  await env.api.request("POST", list, { body: { metadata: { name: "x" } } });
  await env.api.request("GET", list);
  (await env.api.stream(list, { query: { watch: true } })).cancel();
  await env.api.request("GET", item);
  await env.api.request("PATCH", item, { body: {}, contentType: "application/merge-patch+json" });
  await env.api.request("GET", `${item}/status`).catch(() => {});
  await env.api.request("DELETE", item);
  const described = records.map((r) => [r.verb, r.resource, r.subresource]);
  assert.deepEqual(described, [
    ["create", "configmaps", undefined],
    ["list", "configmaps", undefined],
    ["watch", "configmaps", undefined],
    ["get", "configmaps", undefined],
    ["patch", "configmaps", undefined],
    ["get", "configmaps", "status"],
    ["delete", "configmaps", undefined],
  ]);
  const again = records.map((r) => {
    const { verb, resource, subresource } = describeRequest(r.method, r.path, r.verb === "watch");
    return [verb, resource, subresource];
  });
  assert.deepEqual(again, described);
});
