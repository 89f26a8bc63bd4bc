/**
 * "Embedding": operators run inside an application — `kopf.operator()`,
 * `kopf.spawnTasks()` + `kopf.runTasks()`, `kopf.run()` — each with its own
 * registry, settings and log output, stopped through its own AbortSignal.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { cluster, delay, until } from "./_setup.ts";

Deno.test("embedding: two operators in one process, own registries, settings and output, stopped separately", async () => {
  await using c = await cluster();
  for (const ns of ["ns-a", "ns-b"]) await c.createNamespace(ns);

  const handledA: string[] = [];
  const handledB: string[] = [];
  const registryA = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry: registryA }, function createA({ name }) {
    handledA.push(name!);
    return "by A";
  });
  const registryB = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry: registryB }, function createB({ name }) {
    handledB.push(name!);
    return "by B";
  });
  kopf.on.delete("kopfexamples", { registry: registryB }, function deleteB({ name }) {
    handledB.push(`deleted ${name}`);
  });
  const settingsA = new kopf.OperatorSettings();
  const settingsB = new kopf.OperatorSettings();
  settingsB.persistence.finalizer = "b.example.com/finalizer";
  settingsB.persistence.progressStorage = new kopf.AnnotationsProgressStorage({
    prefix: "b.example.com",
  });
  settingsB.persistence.diffbaseStorage = new kopf.AnnotationsDiffBaseStorage({
    prefix: "b.example.com",
  });

  const linesA: string[] = [];
  const linesB: string[] = [];
  const stopA = new AbortController();
  const stopB = new AbortController();
  let readyA!: () => void, readyB!: () => void;
  const ready = Promise.all([
    new Promise<void>((r) => (readyA = r)),
    new Promise<void>((r) => (readyB = r)),
  ]);
  const common = { kubeconfig: c.api.kubeconfig.path, standalone: true };
  const operatorA = kopf.operator({
    ...common,
    registry: registryA,
    settings: settingsA,
    namespaces: ["ns-a"],
    signal: stopA.signal,
    onReady: readyA,
    logging: { format: "plain", level: "debug", write: (l) => linesA.push(l) },
  });
  const operatorB = kopf.operator({
    ...common,
    registry: registryB,
    settings: settingsB,
    namespaces: ["ns-b"],
    signal: stopB.signal,
    onReady: readyB,
    logging: { format: "plain", level: "debug", write: (l) => linesB.push(l) },
  });
  try {
    await ready;
    await c.createKex("ns-a", "kex-a1");
    await c.createKex("ns-b", "kex-b1");
    await until(() => handledA.includes("kex-a1") && handledB.includes("kex-b1"), "both handled");

    // Each operator stored its state with its own settings.
    await until(async () => !!(await c.getKex("ns-b", "kex-b1")).status?.createB, "B's result");
    const b1 = await c.getKex("ns-b", "kex-b1");
    assert.deepEqual(b1.metadata.finalizers, ["b.example.com/finalizer"]);
    assert.ok("b.example.com/last-handled-configuration" in b1.metadata.annotations);
    assert.ok(!("kopf.zalando.org/last-handled-configuration" in b1.metadata.annotations));
    await until(async () => !!(await c.getKex("ns-a", "kex-a1")).status?.createA, "A's result");
    const a1 = await c.getKex("ns-a", "kex-a1");
    assert.equal(a1.status.createA, "by A");
    assert.equal(a1.metadata.finalizers, undefined, "A has no delete handlers: no finalizer");
    assert.ok("kopf.zalando.org/last-handled-configuration" in a1.metadata.annotations);

    // Stop A only: B keeps handling; A's namespace is no longer served.
    stopA.abort();
    await operatorA;
    await c.createKex("ns-a", "kex-a2");
    await c.createKex("ns-b", "kex-b2");
    await until(() => handledB.includes("kex-b2"), "B still handles");
    await c.call("DELETE", "/apis/kopf.dev/v1/namespaces/ns-b/kopfexamples/kex-b1");
    await until(async () => (await c.getKex("ns-b", "kex-b1")) === undefined, "B's deletion");
    assert.ok(handledB.includes("deleted kex-b1"));
  } finally {
    stopA.abort();
    stopB.abort();
    await Promise.all([operatorA, operatorB]);
  }
  assert.deepEqual(handledA, ["kex-a1"]);
  assert.equal((await c.getKex("ns-a", "kex-a2")).metadata.annotations, undefined);
  // Each operator's output has its own objects only.
  assert.ok(linesA.some((l) => l.startsWith("[ns-a/kex-a1] Handler 'createA' succeeded.")));
  assert.ok(!linesA.some((l) => l.includes("ns-b/")), linesA.join("\n"));
  assert.ok(linesB.some((l) => l.startsWith("[ns-b/kex-b2] Handler 'createB' succeeded.")));
  assert.ok(!linesB.some((l) => l.includes("ns-a/")), linesB.join("\n"));
  assert.equal(linesA.filter((l) => l === "Stop-flag is raised. Operator is stopping.").length, 1);
  assert.equal(linesB.filter((l) => l === "Stop-flag is raised. Operator is stopping.").length, 1);
});

Deno.test("embedding: spawnTasks() starts the operator's tasks; runTasks() waits until the signal stops them", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const handled: string[] = [];
  let cleaned = false;
  kopf.on.create("kopfexamples", { registry }, ({ name }) => void handled.push(name!));
  kopf.on.cleanup({ registry }, () => void (cleaned = true));
  const stop = new AbortController();
  const lines: string[] = [];
  const tasks = await kopf.spawnTasks({
    registry,
    clusterwide: true,
    kubeconfig: c.api.kubeconfig.path,
    signal: stop.signal,
    logging: { format: "plain", write: (l) => lines.push(l) },
  });
  assert.ok(tasks.length >= 1);
  for (const task of tasks) {
    assert.equal(typeof task.name, "string");
    assert.ok(task.done instanceof Promise);
  }
  const running = kopf.runTasks(tasks, stop.signal);
  let finished = false;
  void running.then(() => (finished = true));
  await c.createKex("default", "kex1");
  await until(() => handled.includes("kex1"), "handled");
  await delay(50);
  assert.equal(finished, false, "runTasks() waits while the operator runs");
  stop.abort();
  await running;
  assert.ok(cleaned, "cleanup handlers ran");
  assert.ok(lines.includes("Stop-flag is raised. Operator is stopping."));
});

Deno.test("embedding: spawnTasks() with a resource not served yet warns, runs, and stops leaving nothing running", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("nonexistents", { registry }, () => {});
  const lines: string[] = [];
  const stop = new AbortController();
  const tasks = await kopf.spawnTasks({
    registry,
    clusterwide: true,
    kubeconfig: c.api.kubeconfig.path,
    logging: { write: (l) => lines.push(l), format: "plain" },
    signal: stop.signal,
  });
  assert.ok(
    lines.some((l) => /"nonexistents" is not served by the cluster: create its CRD first/.test(l)),
    lines.join("\n"),
  );
  stop.abort();
  await kopf.runTasks(tasks);
  // Nothing is left running: Deno's sanitizers fail this test otherwise.
});

Deno.test("embedding: an operator stopped during its start-up ends promptly", async () => {
  await using c = await cluster();
  for (const when of ["before", "startup", "login", "watching"] as const) {
    const registry = new kopf.OperatorRegistry();
    const stop = new AbortController();
    if (when === "before") stop.abort();
    kopf.on.create("kopfexamples", { registry }, () => {});
    kopf.on.startup({ registry }, () => {
      if (when === "startup") stop.abort();
    });
    if (when === "login") {
      kopf.on.login({ registry }, () => {
        stop.abort();
        return new kopf.ConnectionInfo({ server: c.api.url });
      });
    }
    const started = Date.now();
    await kopf.operator({
      registry,
      clusterwide: true,
      kubeconfig: c.api.kubeconfig.path,
      signal: stop.signal,
      logging: {
        level: "debug",
        format: "plain",
        // Stopped while the first listing is in flight (before the operator is ready).
        write: (line) => {
          if (when === "watching" && line.startsWith("Starting the watch-stream for kopfex")) {
            stop.abort();
          }
        },
      },
    }).catch((e) => {
      // Aborted during the login or discovery: a stop, not a failure — either is fine here.
      if (!(e instanceof Error)) throw e;
    });
    assert.ok(Date.now() - started < 5000, `${when}: ${Date.now() - started} ms`);
    assert.ok(stop.signal.aborted);
  }
});

Deno.test("embedding: kopf.run() honours a given AbortSignal", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const handled: string[] = [];
  kopf.on.create("kopfexamples", { registry }, ({ name }) => void handled.push(name!));
  const stop = new AbortController();
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const running = kopf.run({
    registry,
    clusterwide: true,
    kubeconfig: c.api.kubeconfig.path,
    signal: stop.signal,
    onReady: ready,
    logging: { write: () => {} },
  });
  await isReady;
  await c.createKex("default", "kex1");
  await until(() => handled.includes("kex1"), "handled");
  stop.abort();
  await running;
});
