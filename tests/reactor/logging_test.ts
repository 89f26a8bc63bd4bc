/**
 * "Logging" and "Events" end to end: `--log-format plain|full|json` (with
 * `--log-refkey` and `--log-prefix`), `-v` and `-q`; per-object log records
 * at or above `settings.posting.level` become Kubernetes Events (reason
 * `Logging`), none when `settings.posting.enabled = false`; and
 * `kopf.event/info/warn/exception` post events about handled objects.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { type Cluster, cluster } from "./_setup.ts";

/** Handlers that log at every level (and may change the settings at startup). */
function loud(configure?: (settings: kopf.OperatorSettings) => void): kopf.OperatorRegistry {
  const registry = new kopf.OperatorRegistry();
  if (configure) {
    kopf.on.startup({ registry }, function configureFn({ settings }) {
      configure(settings);
    });
  }
  kopf.on.create("kopfexamples", { registry }, function createFn({ logger, name }) {
    logger.debug(`debug about ${name}`);
    logger.info(`info about ${name}`);
    logger.warning(`warning about ${name}`);
    logger.error(`error about ${name}`);
    logger.critical(`critical about ${name}`);
  });
  return registry;
}

/** Runs an operator with these flags until one object is handled; returns its output. */
async function runOnce(
  c: Cluster,
  flags: string[],
  name: string,
  registry = loud(),
): Promise<{ output: string; uid: string }> {
  const runner = await KopfRunner.start(["run", "--standalone", "-A", ...flags], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  let uid: string;
  try {
    uid = (await c.createKex("default", name)).body.metadata.uid;
    await runner.waitFor(/All handlers succeeded for creation/);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  return { output: runner.output, uid };
}

Deno.test("logging: --log-format plain, full and json (with --log-refkey and --log-prefix)", async (t) => {
  await using c = await cluster();

  await t.step("plain: the message only, with the [ns/name] prefix", async () => {
    const { output } = await runOnce(c, ["--log-format", "plain"], "kex-plain");
    const lines = output.trimEnd().split("\n");
    assert.ok(lines.includes("[default/kex-plain] info about kex-plain"), output);
    assert.ok(lines.includes("[default/kex-plain] Handler 'createFn' succeeded."), output);
    assert.ok(lines.includes("Initial authentication has finished."), output);
  });

  await t.step("full (the default): time, logger, level, prefix, message", async () => {
    const { output } = await runOnce(c, [], "kex-full");
    assert.match(
      output,
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] kopf\.objects {9}\[WARNING \] \[default\/kex-full\] warning about kex-full$/m,
    );
    assert.match(
      output,
      /^\[[^\]]+\] kopf\.activities {6}\[INFO {4}\] Initial authentication has finished\.$/m,
    );
  });

  await t.step(
    "json: one object per line; per-object lines carry the object reference",
    async () => {
      const { output, uid } = await runOnce(c, ["--log-format", "json"], "kex-json");
      const records = output.trimEnd().split("\n").map((l) => JSON.parse(l));
      for (const r of records) {
        assert.equal(typeof r.message, "string");
        assert.match(r.severity, /^(debug|info|warning|error|critical)$/);
        assert.ok(!Number.isNaN(Date.parse(r.timestamp + "Z")), r.timestamp);
      }
      const info = records.find((r) => r.message === "info about kex-json");
      assert.ok(info, output);
      assert.equal(info.severity, "info");
      assert.deepEqual(info.object, {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        name: "kex-json",
        uid,
        namespace: "default",
      });
      assert.equal(records.find((r) => r.message === "error about kex-json")?.severity, "error");
      // Operator-level records have no object.
      const auth = records.find((r) => r.message === "Initial authentication has finished.");
      assert.ok(auth && !("object" in auth));
    },
  );

  await t.step("json with --log-refkey k8s-obj and --log-prefix", async () => {
    const { output, uid } = await runOnce(
      c,
      ["--log-format", "json", "--log-refkey", "k8s-obj", "--log-prefix"],
      "kex-refkey",
    );
    const records = output.trimEnd().split("\n").map((l) => JSON.parse(l));
    const info = records.find((r) => r.message === "[default/kex-refkey] info about kex-refkey");
    assert.ok(info, output);
    assert.equal(info["k8s-obj"].uid, uid);
    assert.equal(info["k8s-obj"].name, "kex-refkey");
    assert.ok(!("object" in info));
  });

  await t.step("plain with --no-log-prefix: no [ns/name] prefix", async () => {
    const { output } = await runOnce(c, ["--log-format", "plain", "--no-log-prefix"], "kex-np");
    const lines = output.trimEnd().split("\n");
    assert.ok(lines.includes("info about kex-np"), output);
    assert.ok(!output.includes("[default/kex-np]"), output);
  });
});

Deno.test("logging: -v shows debug lines, the default hides them, -q shows only warnings and errors", async (t) => {
  await using c = await cluster();
  await t.step("default: info and above", async () => {
    const { output } = await runOnce(c, [], "kex-default");
    assert.match(output, /\[INFO {4}\] \[default\/kex-default\] info about kex-default/);
    assert.doesNotMatch(output, /\[DEBUG/);
  });
  await t.step("-v: debug too", async () => {
    const { output } = await runOnce(c, ["-v"], "kex-verbose");
    assert.match(output, /\[DEBUG {3}\] \[default\/kex-verbose\] debug about kex-verbose/);
    assert.match(output, /\[DEBUG {3}\] Starting the watch-stream for kopfexamples\.v1\.kopf\.dev/);
  });
  await t.step("--debug: the same as -v", async () => {
    const { output } = await runOnce(c, ["--debug"], "kex-debug");
    assert.match(output, /\[DEBUG {3}\] \[default\/kex-debug\] debug about kex-debug/);
  });
  await t.step("-q: warnings and errors only", async () => {
    const runner = await KopfRunner.start(["run", "--standalone", "-A", "-q"], {
      registry: loud(),
      kubeconfig: c.api.kubeconfig.path,
    });
    try {
      await c.createKex("default", "kex-quiet");
      await runner.waitFor(/error about kex-quiet/);
    } finally {
      await runner.stop();
    }
    const lines = runner.output.trimEnd().split("\n");
    assert.deepEqual(
      lines.map((l) => l.replace(/^\[[^\]]+\] /, "")),
      [
        "kopf.objects         [WARNING ] [default/kex-quiet] warning about kex-quiet",
        "kopf.objects         [ERROR   ] [default/kex-quiet] error about kex-quiet",
        "kopf.objects         [CRITICAL] [default/kex-quiet] critical about kex-quiet",
      ],
    );
  });
});

interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  reportingComponent?: string;
  source?: { component?: string };
  involvedObject: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    namespace: string;
  };
}

async function eventsAbout(c: Cluster, uid: string): Promise<KubeEvent[]> {
  const r = await c.call("GET", "/api/v1/namespaces/default/events");
  return (r.body.items as KubeEvent[]).filter((e) => e.involvedObject?.uid === uid);
}

function logging(events: KubeEvent[]): string[] {
  return events.filter((e) => e.reason === "Logging").map((e) => `${e.type}: ${e.message}`);
}

Deno.test("events: per-object records at or above settings.posting.level become Kubernetes Events", async (t) => {
  await using c = await cluster();

  await t.step("default level (info): info, warnings, errors — not debug", async () => {
    // The runner stops after the handling: the poster is flushed at the exit.
    const { uid } = await runOnce(c, ["-v"], "kex-ev-info");
    const events = await eventsAbout(c, uid);
    const posted = logging(events);
    assert.ok(posted.includes("Normal: info about kex-ev-info"), posted.join("\n"));
    assert.ok(posted.includes("Warning: warning about kex-ev-info"), posted.join("\n"));
    assert.ok(posted.includes("Error: error about kex-ev-info"), posted.join("\n"));
    assert.ok(!posted.some((p) => p.includes("debug about")), posted.join("\n"));
    assert.ok(posted.includes("Normal: Handler 'createFn' succeeded."), posted.join("\n"));
    const one = events.find((e) => e.message === "info about kex-ev-info")!;
    assert.deepEqual(one.involvedObject, {
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      name: "kex-ev-info",
      uid,
      namespace: "default",
    });
    assert.equal(one.reportingComponent, "kopf");
    assert.equal(one.source?.component, "kopf");
  });

  await t.step("settings.posting.level = 'warning' (set in a startup handler)", async () => {
    const registry = loud((s) => (s.posting.level = "warning"));
    const { uid } = await runOnce(c, [], "kex-ev-warn", registry);
    const posted = logging(await eventsAbout(c, uid));
    assert.deepEqual(posted.sort(), [
      "Error: error about kex-ev-warn",
      "Fatal: critical about kex-ev-warn",
      "Warning: warning about kex-ev-warn",
    ]);
  });

  await t.step("settings.posting.level = 'debug': event types are Kopf's, by level", async () => {
    const registry = loud((s) => (s.posting.level = "debug"));
    const { uid } = await runOnce(c, ["-v"], "kex-ev-debug", registry);
    const posted = logging(await eventsAbout(c, uid));
    for (
      const line of [
        "Debug: debug about kex-ev-debug",
        "Normal: info about kex-ev-debug",
        "Warning: warning about kex-ev-debug",
        "Error: error about kex-ev-debug",
        "Fatal: critical about kex-ev-debug",
      ]
    ) assert.ok(posted.includes(line), `${line} in:\n${posted.join("\n")}`);
  });

  await t.step("settings.posting.enabled = false: nothing is posted", async () => {
    const registry = loud((s) => (s.posting.enabled = false));
    const { uid, output } = await runOnce(c, [], "kex-ev-off", registry);
    assert.match(output, /error about kex-ev-off/);
    assert.deepEqual(await eventsAbout(c, uid), []);
  });
});

Deno.test("events: kopf.event, kopf.info, kopf.warn, kopf.exception about handled objects", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ body }) {
    kopf.event(body, { type: "SomeType", reason: "SomeReason", message: "Some message" });
    kopf.info(body, { reason: "SomeReason", message: "Some info" });
    kopf.warn(body, { reason: "SomeReason", message: "Some warning" });
    try {
      throw new Error("Exception text.");
    } catch (error) {
      kopf.exception(body, { reason: "SomeReason", message: "Some exception:", error });
    }
  });
  const { uid } = await runOnce(c, [], "kex-explicit", registry);
  const events = (await eventsAbout(c, uid)).filter((e) => e.reason === "SomeReason");
  assert.deepEqual(events.map((e) => `${e.type}: ${e.message}`).sort(), [
    "Error: Some exception: Exception text.",
    "Normal: Some info",
    "SomeType: Some message",
    "Warning: Some warning",
  ]);
});
