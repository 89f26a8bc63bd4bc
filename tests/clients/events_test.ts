import assert from "node:assert/strict";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { cutMessage, postEvent } from "../../src/cogs/clients/events.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { listObjects } from "../../src/cogs/clients/fetching.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { CONFIGMAPS, EVENTS, setup } from "./_setup.ts";

Deno.test("postEvent() creates an Event with Kopf's fields, visible through the API", async () => {
  await using env = await setup();
  const cm = await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "cm" } });
  const ref = {
    apiVersion: "v1",
    kind: "ConfigMap",
    name: "cm",
    uid: cm.metadata!.uid!,
    namespace: "default",
  };
  const before = Date.now();
  await postEvent(env.api, {
    ref,
    type: "Normal",
    reason: "Logging",
    message: "Handler 'create_fn' succeeded.",
  });
  const { items } = await listObjects(env.api, EVENTS, "default");
  assert.equal(items.length, 1);
  const event = items[0]!;
  assert.match(event.metadata!.name!, /^kopf-event-/);
  assert.equal(event.type, "Normal");
  assert.equal(event.reason, "Logging");
  assert.equal(event.message, "Handler 'create_fn' succeeded.");
  assert.equal(event.reportingComponent, "kopf");
  assert.equal(event.reportingInstance, "dev");
  assert.equal(event.action, "Action?");
  assert.deepEqual(event.source, { component: "kopf" });
  assert.deepEqual(event.involvedObject, ref);
  for (const field of ["firstTimestamp", "lastTimestamp", "eventTime"]) {
    const at = Date.parse(String(event[field]));
    assert.ok(at >= before - 1000 && at <= Date.now() + 1000, field);
  }
});

Deno.test("postEvent(): cluster-scoped objects post to the default namespace; long messages are cut", async () => {
  await using env = await setup();
  const long = "a".repeat(700) + "b".repeat(700);
  const posted = await postEvent(env.api, {
    ref: { apiVersion: "v1", kind: "Namespace", name: "default", uid: "u" },
    type: "Warning",
    reason: "Error",
    message: long,
  });
  assert.equal(posted?.metadata?.namespace, "default");
  assert.equal((posted?.involvedObject as Record<string, unknown>).namespace, "default");
  assert.equal(posted?.message, cutMessage(long));
  assert.equal(String(posted?.message).length, 1024);
  assert.ok(String(posted?.message).startsWith("a".repeat(511) + "..."));
  assert.ok(String(posted?.message).endsWith("b".repeat(510)));
});

Deno.test("postEvent() ignores failures (gone namespace, server errors) and events about events", async () => {
  const warnings: string[] = [];
  await using env = await setup({}, {
    logger: { debug() {}, error() {}, warn: (m) => warnings.push(m) },
    settings: { networking: { errorBackoffs: [] } },
  });
  const missing = await postEvent(env.api, {
    ref: { apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: "no-such-namespace" },
    type: "Normal",
    reason: "Logging",
    message: "lost",
  });
  assert.equal(missing, undefined);
  assert.match(
    warnings[0]!,
    /^Failed to post an event\. Ignoring and continuing\. POST .* 404 NotFound/,
  );

  env.server.setFaults({ rate500: 1 });
  const failing = await postEvent(env.api, {
    ref: { apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: "default" },
    type: "Normal",
    reason: "Logging",
  });
  assert.equal(failing, undefined);
  env.server.setFaults({ rate500: null });

  const loop = await postEvent(env.api, {
    ref: { apiVersion: "v1", kind: "Event", name: "e", namespace: "default" },
    type: "Normal",
    reason: "Logging",
  });
  assert.equal(loop, undefined);
  assert.equal(env.server.countRequests({ verb: "create", resource: "events", code: 201 }), 0);

  // Unreachable server: also ignored.
  using vault = new Vault({ x: new ConnectionInfo({ server: "http://127.0.0.1:9" }) });
  const offline = new ApiClient({ vault, settings: { networking: { errorBackoffs: [] } } });
  assert.equal(
    await postEvent(offline, {
      ref: { name: "x", namespace: "default" },
      type: "Normal",
      reason: "R",
    }),
    undefined,
  );
});

Deno.test("postEvent(): the kept second of the time strings and the kept URL are used only for the same second and namespace", async () => {
  const sent: Array<{ url: string; body: Record<string, unknown> }> = [];
  const api = {
    request: (_method: string, url: string, options: { body: Record<string, unknown> }) => {
      sent.push({ url, body: options.body });
      return Promise.resolve({ metadata: {} });
    },
  } as unknown as ApiClient;
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: "cm", namespace: "ns1", uid: "u" };
  const t1 = new Date("2026-01-02T03:04:05.678Z");
  const t2 = new Date("2026-01-02T03:04:05.679Z");
  const spec = { ref, type: "Normal", reason: "Logging", message: "Hi." };
  await postEvent(api, { ...spec, firstTimestamp: t1, lastTimestamp: t1 });
  await postEvent(api, { ...spec, firstTimestamp: t1, lastTimestamp: t2 });
  await postEvent(api, { ...spec, ref: { ...ref, namespace: "ns2" }, firstTimestamp: t2 });
  await postEvent(api, { ...spec, firstTimestamp: new Date(t1.getTime()) });
  for (
    const at of [
      "2026-01-02T03:04:06.000Z",
      "2026-01-02T03:04:06.007Z",
      "2026-01-02T03:04:06.042Z",
      "2026-01-02T03:04:05.999Z",
      "1969-12-31T23:59:59.500Z",
      "+010000-01-01T00:00:00.001Z",
    ]
  ) {
    await postEvent(api, { ...spec, firstTimestamp: new Date(at) });
    assert.equal(sent.at(-1)!.body.firstTimestamp, at);
    assert.equal(sent.at(-1)!.body.eventTime, at.replace("Z", "000Z"));
  }
  await assert.rejects(postEvent(api, { ...spec, firstTimestamp: new Date(NaN) }), RangeError);
  sent.splice(4);
  const times = sent.map((s) => [s.body.firstTimestamp, s.body.lastTimestamp, s.body.eventTime]);
  assert.deepEqual(times, [
    ["2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.678000Z"],
    ["2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.679Z", "2026-01-02T03:04:05.678000Z"],
    ["2026-01-02T03:04:05.679Z", "2026-01-02T03:04:05.679Z", "2026-01-02T03:04:05.679000Z"],
    ["2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.678000Z"],
  ]);
  assert.deepEqual(sent.map((s) => s.url), [
    "/api/v1/namespaces/ns1/events",
    "/api/v1/namespaces/ns1/events",
    "/api/v1/namespaces/ns2/events",
    "/api/v1/namespaces/ns1/events",
  ]);
});
