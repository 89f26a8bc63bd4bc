/**
 * Kopf's public spellings that are ports of its keyword forms: `kopf.on.subhandler` and
 * `kopf.on.register`, `kopf.execute({ fns | handlers | registry, lifecycle, cause })`,
 * `kopf.configure()`, the default lifecycle, `kopf.LocalObjectLogger`.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { executeHandlers } from "../../src/core/actions/execution.ts";
import { lineSink, type LogRecord } from "../../src/core/actions/loggers.ts";
import { State } from "../../src/core/actions/progression.ts";
import { setup } from "./_handling.ts";

Deno.test("kopf.on.subhandler and kopf.on.register are kopf.subhandler and kopf.register", () => {
  assert.equal(kopf.on.subhandler, kopf.subhandler);
  assert.equal(kopf.on.register, kopf.register);
});

Deno.test("kopf.execute: fns, handlers, a registry (for the running cause), and the registered so far", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const other = new kopf.OperatorRegistry();
  const ran: string[] = [];
  kopf.on.create("kopfexamples", { registry: other }, function fromRegistry() {
    ran.push("fromRegistry");
  });
  kopf.on.update("kopfexamples", { registry: other }, function notForCreation() {
    ran.push("notForCreation");
  });
  const handler = {
    id: "prebuilt",
    fn: () => void ran.push("prebuilt"),
    param: undefined,
    errors: undefined,
    timeout: undefined,
    retries: undefined,
    backoff: undefined,
  };
  // The handler keeps what it saw and the test asserts it afterwards: an assertion failing inside a
  // handler is only a handler error to the operator (retried later), never the test's failure.
  let refusal: unknown = "kopf.execute() with both fns and a registry was not refused";
  kopf.on.create("kopfexamples", { registry }, async function create_fn() {
    await kopf.execute({ fns: { one: () => void ran.push("one") } });
    await kopf.execute({ handlers: [handler] });
    await kopf.execute({ registry: other });
    kopf.subhandler({ id: "early" }, () => void ran.push("early"));
    await kopf.execute(); // runs "early" now, not after the parent
    ran.push("parent-end");
    await kopf.execute({ fns: [() => {}], registry: other }).then(
      () => {},
      (error) => refusal = error,
    );
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] Handler 'create_fn' succeeded.");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  await runner.stop();
  assert.match(
    String(refusal),
    /^RegistrationError: kopf\.execute\(\): give one of fns, handlers or registry, not several\.$/,
  );
  assert.deepEqual(ran, ["one", "prebuilt", "fromRegistry", "early", "parent-end"]);
  for (const id of ["create_fn/one", "create_fn/prebuilt", "create_fn/fromRegistry"]) {
    assert.match(runner.output, new RegExp(`Handler '${id}' succeeded\\.`));
  }
});

Deno.test("kopf.execute outside of a handler is one line", async () => {
  await assert.rejects(
    kopf.execute({ fns: [() => {}] }),
    /^RegistrationError: kopf\.execute\(\) works only inside a running resource-changing handler$/,
  );
});

Deno.test("getDefaultLifecycle/setDefaultLifecycle: the lifecycle of executions given none", async () => {
  assert.equal(kopf.getDefaultLifecycle(), kopf.allAtOnce);
  const ran: string[] = [];
  const h = (id: string) => ({
    id,
    fn: () => void ran.push(id),
    param: undefined,
    errors: undefined,
    timeout: undefined,
    retries: undefined,
    backoff: undefined,
  });
  const ex = {
    state: new State("create"),
    context: () => ({}),
    logger: new kopf.OperatorLogger(() => {}),
    kind: "changing",
    defaultErrors: "temporary" as const,
  };
  kopf.setDefaultLifecycle(kopf.oneByOne);
  try {
    assert.equal(kopf.getDefaultLifecycle(), kopf.oneByOne);
    await executeHandlers([h("a"), h("b")], ex);
    assert.deepEqual(ran, ["a"]);
  } finally {
    kopf.setDefaultLifecycle(null);
  }
  assert.equal(kopf.getDefaultLifecycle(), kopf.allAtOnce);
  assert.throws(
    () => kopf.setDefaultLifecycle("asap" as never),
    /^TypeError: setDefaultLifecycle\(\): the lifecycle must be a function such as kopf\.asap, not string\.$/,
  );
});

Deno.test("kopf.configure: levels and formats of the sinks made afterwards; options of a sink win", () => {
  const lines: string[] = [];
  const write = (l: string) => lines.push(l);
  const record = (level: LogRecord["level"]): LogRecord => ({
    level,
    message: `${level}.`,
    time: new Date(0),
    logger: "kopf",
  });
  try {
    kopf.configure({ verbose: true, logFormat: "plain" });
    lineSink({ write })(record("debug"));
    kopf.configure({ quiet: true, logFormat: "json", logRefkey: "k8s" });
    const quiet = lineSink({ write });
    quiet(record("info"));
    quiet({ ...record("warning"), object: { name: "x" } });
    lineSink({ write, level: "debug", format: "plain" })(record("debug"));
  } finally {
    kopf.configure({});
  }
  assert.deepEqual(lines, [
    "debug.",
    '{"message":"warning.","k8s":{"name":"x"},"severity":"warning","timestamp":"1970-01-01T00:00:00.000"}',
    "debug.",
  ]);
  assert.throws(
    () => kopf.configure({ log_format: "plain" } as never),
    /^TypeError: kopf\.configure\(\): unknown option "log_format"; the options are: debug, verbose, quiet, logFormat, logPrefix, logRefkey\.$/,
  );
  assert.throws(
    () => kopf.configure({ logFormat: "xml" } as never),
    /^TypeError: kopf\.configure\(\): logFormat must be "plain", "full" or "json", not "xml"\.$/,
  );
});

Deno.test("kopf.LocalObjectLogger logs with the object's prefix and posts nothing", () => {
  const seen: string[] = [];
  const body = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: "ns", name: "p", uid: "u" },
  };
  const logger = new kopf.LocalObjectLogger({
    body,
    settings: new kopf.OperatorSettings(),
    sink: (r) => seen.push(`${r.prefix}${r.message}`),
  });
  logger.warning("Careful.");
  assert.deepEqual(seen, ["[ns/p] Careful."]);
  assert.ok(logger instanceof kopf.ObjectLogger);
  assert.deepEqual(logger.ref, {
    apiVersion: "v1",
    kind: "Pod",
    name: "p",
    uid: "u",
    namespace: "ns",
  });
});

Deno.test("setDefaultLifecycle: an operator given no lifecycle uses the default", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const offered: string[][] = [];
  kopf.on.create("kopfexamples", { registry }, function first() {});
  kopf.on.create("kopfexamples", { registry }, function second() {});
  kopf.setDefaultLifecycle((handlers, state) => {
    offered.push(handlers.map((h) => h.id));
    return kopf.oneByOne(handlers, state);
  });
  try {
    const runner = await env.operator(registry);
    await env.create("kex");
    await runner.waitFor("All handlers succeeded for creation.");
    await runner.stop();
  } finally {
    kopf.setDefaultLifecycle(null);
  }
  assert.deepEqual(offered.slice(0, 2), [["first", "second"], ["second"]], "one by one");
});
