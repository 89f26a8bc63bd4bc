/**
 * `kopf.logtapeSink()`: an operator's records reach LogTape's configured sinks
 * with Kopf's categories, levels, the object reference and the error.
 */

import assert from "node:assert/strict";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import * as kopf from "../../mod.ts";
import { setup } from "./_handling.ts";

Deno.test("logtapeSink(): operator records reach LogTape with categories, levels, object and error", async () => {
  await using env = await setup();
  const seen: LogRecord[] = [];
  await configure({
    sinks: { memory: (record) => seen.push(record) },
    loggers: [
      { category: ["my-app", "kopf"], sinks: ["memory"], lowestLevel: "debug" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
    reset: true,
  });
  try {
    const registry = new kopf.OperatorRegistry();
    kopf.on.create("kopfexamples", { registry }, function createFn({ retry }) {
      if (retry === 0) throw new kopf.TemporaryError("not yet", { delay: 0.05 });
      return { ok: true };
    });
    const settings = new kopf.OperatorSettings();
    settings.posting.enabled = false;
    const stop = new AbortController();
    const running = kopf.operator({
      registry,
      settings,
      kubeconfig: env.api.kubeconfig.path,
      signal: stop.signal,
      sink: kopf.logtapeSink({ category: ["my-app"] }),
    });
    await env.create("kex");
    await env.waitFor("kex", (o) => o.status?.createFn?.ok === true);
    stop.abort();
    await running;

    const texts = seen.map((r) => `${r.category.join(".")} ${r.level} ${r.message[0]}`);
    assert.ok(
      texts.includes("my-app.kopf.objects info [default/kex] Handler 'createFn' succeeded."),
      texts.join("\n"),
    );
    const failed = seen.find((r) => String(r.message[0]).includes("failed temporarily"));
    assert.ok(failed, texts.join("\n"));
    assert.equal(failed.level, "error");
    assert.deepEqual(failed.category, ["my-app", "kopf", "objects"]);
    const object = failed.properties.object as Record<string, string>;
    assert.equal(object.name, "kex");
    assert.equal(object.namespace, "default");
    assert.equal(object.kind, "KopfExample");
    assert.ok(seen.some((r) => r.category.join(".") === "my-app.kopf.activities"));
    // The sink's default lowest level is info: debug records are not even built.
    assert.ok(!seen.some((r) => r.level === "debug"), "no debug records by default");
    assert.ok(seen.every((r) => typeof r.timestamp === "number" && r.timestamp > 0));
  } finally {
    await reset();
  }
});

Deno.test("logtapeSink(): critical becomes fatal; errors go to properties; the prefix can be off", async () => {
  const seen: LogRecord[] = [];
  await configure({
    sinks: { memory: (record) => seen.push(record) },
    loggers: [
      { category: ["kopf"], sinks: ["memory"], lowestLevel: "debug" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
    reset: true,
  });
  try {
    const sink = kopf.logtapeSink({ prefix: false, level: "debug" });
    assert.equal(sink.level, "debug");
    const error = new Error("boom");
    sink({
      level: "critical",
      message: "Handler 'x' failed.",
      time: new Date(1_000),
      logger: "kopf.objects",
      object: { namespace: "ns", name: "n" },
      prefix: "[ns/n] ",
      error,
    });
    await sink.ready;
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.level, "fatal");
    assert.equal(seen[0]!.message[0], "Handler 'x' failed.");
    assert.equal(seen[0]!.timestamp, 1_000);
    assert.equal(seen[0]!.properties.error, error);
  } finally {
    await reset();
  }
});

Deno.test("logtapeSink(): records that come before LogTape is loaded are held, then handed over in order", async () => {
  const seen: LogRecord[] = [];
  await configure({
    sinks: { memory: (record) => seen.push(record) },
    loggers: [
      { category: ["kopf"], sinks: ["memory"], lowestLevel: "debug" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
    reset: true,
  });
  try {
    const sink = kopf.logtapeSink({ prefix: false });
    const record = (message: string) =>
      sink({ level: "info", message, time: new Date(), logger: "kopf.activities" });
    record("first");
    record("second");
    assert.deepEqual(seen.length, 0, "LogTape's module is imported when the sink is made");
    await sink.ready;
    record("third");
    assert.deepEqual(seen.map((r) => r.message[0]), ["first", "second", "third"]);
  } finally {
    await reset();
  }
});
