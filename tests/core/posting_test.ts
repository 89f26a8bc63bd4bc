/**
 * Log lines as Kubernetes Events: by default (the seed docs' `posting.loggers`
 * true) every log line of an object at `posting.level` and above is posted too;
 * with `settings.posting.loggers = false` (current Kopf's default) only the
 * explicit `kopf.event/info/warn/exception` calls are. Counted on the embedded
 * API server.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { type Obj, setup, sleep } from "./_handling.ts";

async function postedEvents(loggers: boolean | undefined): Promise<string[][]> {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn({ body, logger }) {
    logger.info("An info line.");
    logger.warning("A warning line.");
    kopf.info(body, { reason: "Explicit", message: "From kopf.info." });
    kopf.exception(body, { reason: "Explicit", message: "From kopf.exception:", error: "boom" });
  });
  kopf.daemon("kopfexamples", { registry }, async function watcher({ body, logger, signal }) {
    logger.info("A daemon line.");
    kopf.warn(body, { reason: "Explicit", message: "From the daemon." });
    await kopf.sleep(60, signal);
  });
  const settings = new kopf.OperatorSettings();
  if (loggers !== undefined) settings.posting.loggers = loggers;
  const runner = await env.operator(registry, settings);
  await env.create("kex");
  const read = async (): Promise<Obj[]> => {
    const res = await fetch(`${env.api.url}/api/v1/namespaces/default/events`);
    return (await res.json()).items;
  };
  for (let i = 0; i < 200; i++) {
    const items = await read();
    if (items.filter((e) => e.reason === "Explicit").length === 3) break;
    await sleep(0.05);
  }
  await sleep(0.5); // anything else queued by now is posted too
  await runner.stop();
  return (await read())
    .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
    .map((e) => [e.type, e.reason, e.message]);
}

Deno.test("posting: by default, log lines at info and above are posted as events besides kopf.event calls", async () => {
  const events = await postedEvents(undefined);
  const explicit = events.filter(([, reason]) => reason === "Explicit");
  assert.equal(explicit.length, 3);
  const logged = events.filter(([, reason]) => reason === "Logging").map(([t, , m]) => [t, m]);
  for (
    const line of [
      ["Normal", "An info line."],
      ["Warning", "A warning line."],
      ["Normal", "A daemon line."],
      ["Normal", "Handler 'create_fn' succeeded."],
    ]
  ) {
    assert.ok(logged.some((l) => l[0] === line[0] && l[1] === line[1]), JSON.stringify(line));
  }
});

Deno.test("posting: settings.posting.loggers = false posts only the explicit kopf.event/info/warn/exception calls", async () => {
  const events = await postedEvents(false);
  assert.deepEqual(events.map((e) => e.join(" | ")).sort(), [
    "Error | Explicit | From kopf.exception: boom",
    "Normal | Explicit | From kopf.info.",
    "Warning | Explicit | From the daemon.",
  ]);
});

Deno.test("loggers: a record below the sink's stated level is not made, unless it is to be posted", () => {
  const seen: string[] = [];
  const posted: string[] = [];
  const sink = Object.assign((r: kopf.LogRecord) => void seen.push(`${r.level} ${r.message}`), {
    level: "warning" as const,
  });
  const body = {
    metadata: { name: "x", namespace: "ns", uid: "u" },
    apiVersion: "v1",
    kind: "Pod",
  };
  const quiet = new kopf.ObjectLogger(sink, body);
  quiet.debug("dropped");
  quiet.warning("kept");
  assert.deepEqual(seen, ["warning kept"]);
  const posting = new kopf.ObjectLogger(sink, body, {
    post: (_ref, type, _reason, message) => void posted.push(`${type} ${message}`),
    level: () => "info",
  });
  posting.info("posted");
  posting.debug("neither");
  assert.deepEqual(seen, ["warning kept", "info posted"], "the sink is given what is posted");
  assert.deepEqual(posted, ["Normal posted"]);
});
