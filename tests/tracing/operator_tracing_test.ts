/**
 * Traces of a real operator process with `OTEL_DENO=true`, exported over OTLP/HTTP to a
 * receiver in the test (no mocked tracer): a create (the cycle → the handler → the PATCH, one
 * trace, its `traceparent` seen by the API server) and a daemon's API request under its
 * iteration's span, on both transports; a temporary failure and its retry, a permanent failure,
 * a daemon's iterations and a timer's runs; `--log-format json` lines that carry the trace and
 * span ids of the span they were written in; and the transitions of the operator as a whole
 * (leadership, shard membership, peering's pause and resume between two operators).
 */
import assert from "node:assert/strict";
import { cluster, until } from "../reactor/_setup.ts";
import { applyPeering } from "../reactor/_peering.ts";
import {
  type ExportedSpan,
  kubeconfigFor,
  otlpReceiver,
  recordingProxy,
  runOperator,
} from "./_otlp.ts";

const HANDLERS = `
import * as kopf from "KOPF";
kopf.on.startup(function warmUp({ logger }) { logger.info("warming up"); });
kopf.on.create("kopfexamples", { labels: { scenario: "create" } }, function createFn({ logger, patch }) {
  logger.info("creating in a span");
  patch.status.touched = true;
  return { done: 1 };
});
kopf.on.create("kopfexamples", { labels: { scenario: "retry" } }, function flaky({ retry }) {
  if (retry === 0) throw new kopf.TemporaryError("not yet", { delay: 0.5 });
  return "ok";
});
kopf.on.create("kopfexamples", { labels: { scenario: "fail" } }, function doomed() {
  throw new kopf.PermanentError("never");
});
kopf.daemon("kopfexamples", { labels: { scenario: "daemon" } }, async function ticker({ signal, logger }) {
  for (let i = 0; !signal.aborted; i++) {
    logger.info("tick " + i);
    await kopf.sleep(0.2, signal);
  }
});
kopf.timer("kopfexamples", { labels: { scenario: "daemon" }, interval: 0.3 }, function tock() {});
kopf.daemon("kopfexamples", { labels: { scenario: "daemon-api" } }, async function reader({ api, name, namespace, signal }) {
  while (!signal.aborted) {
    await api.get("kopfexamples", name, { namespace, signal });
    await kopf.sleep(0.3, signal);
  }
});
`;

const INTERNAL = 0, SERVER = 1, CLIENT = 2; // OTLP's kinds are 1 more than the API's enum
void SERVER;

/** A PATCH of the warm-up object (its handling done). */
function isWarmPatch(r: { method: string; target: string }): boolean {
  return r.method === "PATCH" && r.target.includes("/kopfexamples/kex-warm");
}

function kex(name: string, scenario: string) {
  return { metadata: { name, labels: { scenario } } };
}

/** The json log lines of the operator. */
// deno-lint-ignore no-explicit-any
function jsonLines(stderr: string): any[] {
  return stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

for (const transport of ["http1", "fetch"] as const) {
  Deno.test(`tracing (${transport}): a create is one trace — cycle, handler, PATCH with traceparent; json logs carry the ids; a daemon's GET is under its iteration`, async () => {
    await using c = await cluster();
    await using receiver = otlpReceiver();
    await using proxy = recordingProxy(c.api.url);
    const dir = await Deno.makeTempDir({ prefix: "kopf-trace-kc-" });
    const kubeconfig = `${dir}/config`;
    await Deno.writeTextFile(kubeconfig, kubeconfigFor(proxy.url));
    try {
      await using op = await runOperator(
        HANDLERS,
        { ...receiver.env("kopf-test"), KUBECONFIG: kubeconfig, KOPF_HTTP_CLIENT: transport },
        ["--log-format", "json", "-v"],
      );
      // The object must come after the watch's state was read, as ADDED, not in it (LISTED).
      // The log line "Starting the watch-stream" comes before the request; an object handled
      // (its PATCH seen) proves that the server has taken the state.
      await c.createKex("default", "kex-warm", kex("kex-warm", "fail"));
      await op.waitFor(/Starting the watch-stream for kopfexamples/);
      await until(() => proxy.requests.some(isWarmPatch), "kex-warm handled", 20).catch(() =>
        assert.fail(`kex-warm was not handled: ${op.stderr}`)
      );
      await c.createKex("default", "kex-create", kex("kex-create", "create"));
      await op.waitFor(/All handlers succeeded for creation/);

      const cycle = await receiver.waitFor(
        "the cycle",
        (s) =>
          s.name === "kopf.cycle kopfexamples" &&
          s.attributes["kopf.object.name"] === "kex-create" &&
          s.attributes["kopf.cause"] === "create",
      );
      assert.equal(cycle.kind, INTERNAL + 1);
      assert.equal(cycle.parentSpanId, "", "a cycle starts its own trace");
      assert.equal(cycle.service, "kopf-test");
      assert.equal(cycle.attributes["kopf.resource"], "kopfexamples.kopf.dev/v1");
      assert.equal(cycle.attributes["k8s.namespace.name"], "default");
      assert.match(String(cycle.attributes["kopf.object.uid"]), /^[0-9a-f-]{36}$/);
      assert.match(String(cycle.attributes["kopf.object.resource_version"]), /^\d+$/);
      assert.equal(cycle.attributes["kopf.event.type"], "ADDED");

      const handler = await receiver.waitFor(
        "the handler",
        (s) => s.name === "kopf.handler createFn" && s.traceId === cycle.traceId,
      );
      assert.equal(handler.parentSpanId, cycle.spanId);
      assert.deepEqual(
        [
          handler.attributes["kopf.handler.id"],
          handler.attributes["kopf.handler.kind"],
          handler.attributes["kopf.handler.retry"],
          handler.attributes["kopf.handler.outcome"],
        ],
        ["createFn", "changing", 0, "success"],
      );

      const patch = await receiver.waitFor(
        "the PATCH",
        (s) => s.name === "PATCH" && s.traceId === cycle.traceId,
      );
      assert.equal(patch.kind, CLIENT + 1);
      assert.equal(patch.parentSpanId, cycle.spanId);
      assert.equal(patch.attributes["http.request.method"], "PATCH");
      assert.match(
        String(patch.attributes["url.full"]),
        /\/namespaces\/default\/kopfexamples\/kex-create/,
      );
      assert.equal(Number(patch.attributes["http.response.status_code"]), 200);
      // The API server saw the PATCH's own span as the parent of its work.
      const seen = proxy.requests.find((r) =>
        r.method === "PATCH" && r.target.includes("/kopfexamples/kex-create")
      );
      assert.ok(seen, JSON.stringify(proxy.requests));
      assert.equal(seen.traceparent, `00-${cycle.traceId}-${patch.spanId}-01`);

      // The handler's log line carries the handler span's ids; the cycle's summary the cycle's.
      const lines = jsonLines(op.stderr);
      const inHandler = lines.find((l) => l.message === "creating in a span");
      assert.ok(inHandler, op.stderr);
      assert.deepEqual([inHandler.trace_id, inHandler.span_id, inHandler.trace_flags], [
        cycle.traceId,
        handler.spanId,
        "01",
      ]);
      const summary = lines.find((l) =>
        l.message === "All handlers succeeded for creation." && l.object?.name === "kex-create"
      );
      assert.deepEqual([summary?.trace_id, summary?.span_id], [cycle.traceId, cycle.spanId]);
      // Lines outside of any span have no ids.
      const outside = lines.find((l) => /Initial authentication has finished/.test(l.message));
      assert.ok(outside && !("trace_id" in outside), JSON.stringify(outside));

      // A daemon's API requests are children of its iteration's span — on both transports (with
      // fetch, the runtime's own span finds the iteration active in the daemon's context).
      await c.createKex("default", "kex-daemon-api", kex("kex-daemon-api", "daemon-api"));
      const isGet = (s: ExportedSpan) =>
        s.kind === CLIENT + 1 && s.attributes["http.request.method"] === "GET" &&
        /\/namespaces\/default\/kopfexamples\/kex-daemon-api$/.test(
          String(s.attributes["url.full"]),
        );
      const iteration = await receiver.waitFor(
        "a daemon iteration with a GET under it",
        (s) =>
          s.name === "kopf.daemon reader" &&
          receiver.spans.some((g) => isGet(g) && g.parentSpanId === s.spanId),
      );
      const get = receiver.spans.find((g) => isGet(g) && g.parentSpanId === iteration.spanId)!;
      assert.equal(get.traceId, iteration.traceId);
      assert.equal(Number(get.attributes["http.response.status_code"]), 200);
      const gets = receiver.spans.filter(isGet);
      assert.ok(
        gets.every((g) => g.parentSpanId !== ""),
        `no GET of the daemon is a trace of its own: ${names(gets)}`,
      );
      const sent = proxy.requests.find((r) =>
        r.method === "GET" && r.target.endsWith("/kopfexamples/kex-daemon-api") &&
        r.traceparent?.includes(get.spanId)
      );
      assert.equal(sent?.traceparent, `00-${iteration.traceId}-${get.spanId}-01`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("tracing: a temporary failure and its retry, a permanent failure, a daemon's iterations, a timer's runs, a startup activity", async () => {
  await using c = await cluster();
  await using receiver = otlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "kopf-trace-kc-" });
  try {
    await using op = await runOperator(
      HANDLERS,
      { ...receiver.env("kopf-test"), KUBECONFIG: c.api.kubeconfig.path },
      ["--log-format", "json", "-v"],
    );
    await op.waitFor(/Starting the watch-stream for kopfexamples/);
    await c.createKex("default", "kex-retry", kex("kex-retry", "retry"));
    await c.createKex("default", "kex-fail", kex("kex-fail", "fail"));
    await c.createKex("default", "kex-daemon", kex("kex-daemon", "daemon"));

    // The temporary failure: recorded, not an ERROR, with its delay; the retry succeeds.
    const first = await receiver.waitFor(
      "the first attempt",
      (s) => s.name === "kopf.handler flaky" && s.attributes["kopf.handler.retry"] === 0,
    );
    assert.equal(first.attributes["kopf.handler.outcome"], "temporary");
    assert.equal(first.attributes["kopf.handler.delay"], 0.5);
    assert.notEqual(first.status.code, 2);
    const exception = first.events.find((e) => e.name === "exception");
    assert.equal(exception?.attributes["exception.message"], "not yet");
    const retry = await receiver.waitFor(
      "the retry",
      (s) => s.name === "kopf.handler flaky" && s.attributes["kopf.handler.retry"] === 1,
    );
    assert.equal(retry.attributes["kopf.handler.outcome"], "success");
    assert.notEqual(retry.traceId, first.traceId, "the retry is another cycle");
    // The cycle of the first attempt wrote the progress; the cycle of that write's echo links
    // to it.
    const firstCycle = receiver.spans.find((s) => s.spanId === first.parentSpanId)!;
    assert.ok(firstCycle, "the first attempt's cycle");
    const echo = await receiver.waitFor(
      "the echo's cycle",
      (s) => s.links.some((l) => l.spanId === firstCycle.spanId),
    );
    assert.equal(echo.links[0]!.attributes["kopf.link.reason"], "own-write");

    // The permanent failure: status ERROR with the message.
    const doomed = await receiver.waitFor(
      "the permanent failure",
      (s) => s.name === "kopf.handler doomed",
    );
    assert.equal(doomed.attributes["kopf.handler.outcome"], "permanent");
    assert.deepEqual(doomed.status, { code: 2, message: "never" });

    // The daemon: an iteration per kopf.sleep(), each a trace of its own.
    const second = await receiver.waitFor(
      "the daemon's second iteration",
      (s) => s.name === "kopf.daemon ticker" && s.attributes["kopf.daemon.iteration"] === 2,
    );
    const one = receiver.spans.find((s) =>
      s.name === "kopf.daemon ticker" && s.attributes["kopf.daemon.iteration"] === 1
    )!;
    assert.ok(one);
    assert.notEqual(one.traceId, second.traceId);
    assert.deepEqual([one.parentSpanId, second.parentSpanId], ["", ""]);
    assert.equal(second.attributes["kopf.handler.kind"], "daemon");
    assert.deepEqual(
      [second.attributes["kopf.object.name"], second.attributes["k8s.namespace.name"]],
      ["kex-daemon", "default"],
    );
    const tick = jsonLines(op.stderr).find((l) => l.message === "tick 1");
    assert.deepEqual([tick?.trace_id, tick?.span_id], [second.traceId, second.spanId]);

    // The startup activity: a trace of its own; its log line carries its ids.
    const startup = await receiver.waitFor(
      "the startup activity",
      (s) => s.name === "kopf.activity warmUp",
    );
    assert.equal(startup.parentSpanId, "");
    assert.deepEqual(
      [startup.attributes["kopf.handler.kind"], startup.attributes["kopf.handler.outcome"]],
      ["activity", "success"],
    );
    const warming = jsonLines(op.stderr).find((l) => l.message === "warming up");
    assert.deepEqual([warming?.trace_id, warming?.span_id], [startup.traceId, startup.spanId]);

    // The timer: a span per run, each a trace of its own.
    const run = await receiver.waitFor("a timer run", (s) => s.name === "kopf.timer tock");
    assert.equal(run.parentSpanId, "");
    assert.equal(run.attributes["kopf.handler.outcome"], "success");
    assert.equal(run.attributes["kopf.object.name"], "kex-daemon");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** For a failing assertion: the spans by name. */
export function names(spans: ExportedSpan[]): string[] {
  return spans.map((s) =>
    `${s.name}@${s.traceId.slice(0, 6)}/${s.spanId.slice(0, 6)}<-${s.parentSpanId.slice(0, 6)}`
  );
}

Deno.test("tracing: leadership and shard membership transitions are spans of their own (acquired, holder, released; joined, members, left)", async () => {
  await using c = await cluster();
  await using receiver = otlpReceiver();
  const env = { ...receiver.env("kopf-test"), KUBECONFIG: c.api.kubeconfig.path };
  {
    await using op = await runOperator(HANDLERS, env, ["--leader-election", "trace-leader", "-v"]);
    await op.waitFor(/successfully acquired lease/);
    const acquired = await receiver.waitFor(
      "the leadership acquired",
      (s) => s.name === "kopf.leadership acquired",
    );
    assert.match(String(acquired.attributes["kopf.lease"]), /trace-leader/);
    assert.equal(acquired.parentSpanId, "");
    await receiver.waitFor(
      "the holder seen",
      (s) =>
        s.name === "kopf.leadership holder" &&
        typeof s.attributes["kopf.leadership.holder"] === "string",
    );
  }
  // Stopped: the release is exported at the exit.
  await receiver.waitFor("the leadership released", (s) => s.name === "kopf.leadership released");
  {
    await using op = await runOperator(HANDLERS, env, ["--shards", "-v"]);
    await op.waitFor(/Joined the /);
    await receiver.waitFor("the shard joined", (s) => s.name === "kopf.sharding joined");
    const members = await receiver.waitFor(
      "the shard members",
      (s) => s.name === "kopf.sharding members",
    );
    assert.equal(members.attributes["kopf.sharding.members"], 1);
  }
  await receiver.waitFor("the shard left", (s) => s.name === "kopf.sharding left");
});

Deno.test("tracing: peering's pause and resume are spans of their own (two operators of the same priority, then a higher one)", async () => {
  await using c = await cluster();
  await applyPeering(c);
  await using receiver = otlpReceiver();
  const env = (id: string) => ({
    ...receiver.env(id),
    KUBECONFIG: c.api.kubeconfig.path,
    POD_ID: id,
  });
  const peered = { peered: true };
  const spans = (name: string, service: string) =>
    receiver.spans.filter((s) => s.name === name && s.service === service);
  await using a = await runOperator(HANDLERS, env("peer-a"), ["-v"], peered);
  await a.waitFor(/Keep-alive in 'default' cluster-wide: ok/);
  {
    // The same priority: both pause, and say why.
    await using b = await runOperator(HANDLERS, env("peer-b"), ["-v"], peered);
    for (const service of ["peer-a", "peer-b"]) {
      const pause = await receiver.waitFor(
        `the pause of ${service}`,
        (s) => s.name === "kopf.peering pause" && s.service === service,
      );
      assert.equal(pause.attributes["kopf.peering.reason"], "same");
      assert.equal(pause.parentSpanId, "", "a trace of its own");
    }
    assert.deepEqual(spans("kopf.peering resume", "peer-a"), [], "no resume while B runs");
    void b;
  }
  // B gone: A resumes.
  await receiver.waitFor(
    "the resume of peer-a",
    (s) => s.name === "kopf.peering resume" && s.service === "peer-a",
  );
  {
    // A higher priority: A pauses in its favour; B runs.
    await using b = await runOperator(HANDLERS, env("peer-b"), ["-v", "--priority", "100"], peered);
    const pause = await receiver.waitFor(
      "the pause of peer-a for a higher priority",
      (s) =>
        s.name === "kopf.peering pause" && s.service === "peer-a" &&
        s.attributes["kopf.peering.reason"] === "higher",
    );
    assert.equal(pause.parentSpanId, "");
    await b.waitFor(/Keep-alive in 'default' cluster-wide: ok/);
  }
  await receiver.waitFor(
    "the second resume of peer-a",
    () => spans("kopf.peering resume", "peer-a").length === 2,
  );
  assert.equal(spans("kopf.peering pause", "peer-a").length, 2);
});
