/**
 * "Patching failed with inconsistencies": a CRD whose status schema prunes
 * unknown fields makes the server drop a handler's result (status.<id>) and
 * the progress kept in status.kopf. The operator warns, once per object and
 * set of fields, naming them and the fix; the handler's outcome is still kept
 * where it can be (the annotations), so nothing runs again. With
 * `x-kubernetes-preserve-unknown-fields` on the status, nothing is warned.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { call, cluster, crd, until } from "../reactor/_setup.ts";

/** A CRD of the group kopf.dev whose status declares `phase` only (no preserve-unknown-fields). */
function prunedCrd(plural: string, kind: string): Record<string, unknown> {
  const manifest = crd({ group: "kopf.dev", plural, kind, scope: "Namespaced" });
  // deno-lint-ignore no-explicit-any
  const version = (manifest.spec as any).versions[0];
  version.schema.openAPIV3Schema.properties.status = {
    type: "object",
    properties: { phase: { type: "string" } },
  };
  return manifest;
}

function lines(output: string, text: string): string[] {
  return output.split("\n").filter((l) => l.includes(text));
}

Deno.test("inconsistencies: a result pruned by the status schema is one warning naming status.<id> and the fix; the outcome is kept", async () => {
  await using c = await cluster();
  await c.createCrd(prunedCrd("prunedexamples", "PrunedExample"));
  const registry = new kopf.OperatorRegistry();
  const calls: string[] = [];
  kopf.on.create("prunedexamples", { registry }, function create_fn({ name, patch }) {
    calls.push(name);
    patch.status.phase = "Created"; // declared: stored, not an inconsistency
    return { message: "hello" };
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.call("POST", "/apis/kopf.dev/v1/namespaces/default/prunedexamples", {
      apiVersion: "kopf.dev/v1",
      kind: "PrunedExample",
      metadata: { name: "p1" },
      spec: { size: 1 },
    });
    await runner.waitFor("[default/p1] All handlers succeeded for creation.");
    await runner.waitFor("Patching failed with inconsistencies");
    // A change of the spec: the update has no handlers; nothing runs again.
    await call(
      c.api,
      "PATCH",
      "/apis/kopf.dev/v1/namespaces/default/prunedexamples/p1",
      { spec: { size: 2 } },
      { contentType: "application/merge-patch+json" },
    );
    await until(async () => {
      const o = (await c.call("GET", "/apis/kopf.dev/v1/namespaces/default/prunedexamples/p1"))
        .body;
      const last = o.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      return typeof last === "string" && JSON.parse(last).spec.size === 2;
    }, "the update is handled (the diff-base stored)");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.deepEqual(calls, ["p1"], "the handler ran once");
  const warnings = lines(runner.output, "Patching failed with inconsistencies");
  assert.equal(warnings.length, 1, runner.output);
  const warning = warnings[0]!;
  assert.match(warning, /WARNING.*\[default\/p1\] Patching failed with inconsistencies: /);
  assert.match(warning, /the API did not store status\.create_fn\./);
  assert.doesNotMatch(warning, /status\.phase/);
  assert.match(warning, /"x-kubernetes-preserve-unknown-fields: true" on \.status/);
  assert.match(warning, /AnnotationsProgressStorage, AnnotationsDiffBaseStorage/);
  const o = (await c.call("GET", "/apis/kopf.dev/v1/namespaces/default/prunedexamples/p1")).body;
  assert.deepEqual(o.status, { phase: "Created" }, "the server pruned the result, kept the phase");
});

Deno.test("inconsistencies: a retrying handler's pruned progress is warned about once, not on every retry", async () => {
  await using c = await cluster();
  await c.createCrd(prunedCrd("prunedexamples", "PrunedExample"));
  const registry = new kopf.OperatorRegistry();
  let calls = 0;
  kopf.on.create("prunedexamples", { registry }, function flaky_fn({ retry }) {
    calls++;
    if (retry < 3) throw new kopf.TemporaryError("not yet", { delay: 0.05 });
    return { done: true };
  });
  // Progress in both the annotations and status.kopf (as older Kopf's "smart" storage wrote it).
  const settings = new kopf.OperatorSettings();
  settings.persistence.progressStorage = new kopf.MultiProgressStorage([
    new kopf.AnnotationsProgressStorage(),
    new kopf.StatusProgressStorage(),
  ]);
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "--verbose"], {
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.call("POST", "/apis/kopf.dev/v1/namespaces/default/prunedexamples", {
      apiVersion: "kopf.dev/v1",
      kind: "PrunedExample",
      metadata: { name: "p2" },
      spec: {},
    });
    await runner.waitFor("[default/p2] All handlers succeeded for creation.");
    await runner.waitFor("did not store status.flaky_fn");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.equal(calls, 4, "the progress kept in the annotations: 3 retries, then success");
  const warnings = lines(runner.output, "Patching failed with inconsistencies")
    .filter((l) => l.includes("WARNING"));
  // The progress (status.kopf) lost on the 3 retrying cycles: one warning, the rest at debug.
  assert.equal(
    warnings.filter((l) => l.includes("did not store status.kopf.")).length,
    1,
    runner.output,
  );
  assert.equal(
    lines(runner.output, "(as in the previous patch)").filter((l) => l.includes("DEBUG")).length,
    2,
    runner.output,
  );
  assert.equal(warnings.filter((l) => l.includes("did not store status.flaky_fn")).length, 1);
  assert.equal(warnings.length, 2, runner.output);
});

Deno.test("inconsistencies: with x-kubernetes-preserve-unknown-fields on the status, nothing is warned", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn({ patch }) {
    patch.metadata.labels.handled = "yes";
    patch.metadata.annotations["example.com/gone"] = null; // a deletion of what is not there
    patch.status.phase = "Created";
    return { message: "hello" };
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "--verbose"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "k1");
    await runner.waitFor("[default/k1] All handlers succeeded for creation.");
    await until(async () => (await c.getKex("default", "k1"))?.status?.create_fn, "the result");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.doesNotMatch(runner.output, /inconsistencies/);
  const o = await c.getKex("default", "k1");
  assert.deepEqual(o.status.create_fn, { message: "hello" });
  assert.equal(o.metadata.labels.handled, "yes");
});

Deno.test("inconsistencies: a timer whose result is pruned on every run is one warning", async () => {
  await using c = await cluster();
  await c.createCrd(prunedCrd("prunedexamples", "PrunedExample"));
  const registry = new kopf.OperatorRegistry();
  let runs = 0;
  kopf.timer("prunedexamples", { registry, interval: 0.05 }, function tick_fn() {
    runs++;
    return { runs: 1 }; // the same result every time: the same lost field
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "--verbose"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.call("POST", "/apis/kopf.dev/v1/namespaces/default/prunedexamples", {
      apiVersion: "kopf.dev/v1",
      kind: "PrunedExample",
      metadata: { name: "t1" },
      spec: {},
    });
    await until(() => runs >= 5, "five runs of the timer");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  const warnings = lines(runner.output, "Patching failed with inconsistencies")
    .filter((l) => l.includes("WARNING"));
  assert.equal(warnings.length, 1, runner.output);
  assert.match(warnings[0]!, /\[default\/t1\] .*the API did not store status\.tick_fn\./);
});
