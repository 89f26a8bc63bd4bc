/**
 * "Resource specification" through discovery: every notation resolves to the
 * served resource; EVERYTHING with a label filter; CRDs created while running
 * are picked up by category and EVERYTHING selectors; unknown and ambiguous
 * names are one-line fatal errors with a non-zero exit.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { cluster, crd, until } from "./_setup.ts";

Deno.test("resources: every notation of the resource specification resolves through discovery", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const seen = new Set<string>();
  const forms: [string, kopf.on.ResourceArg[]][] = [
    ["plural", ["kopfexamples"]],
    ["singular", ["kopfexample"]],
    ["kind", ["KopfExample"]],
    ["short", ["kex"]],
    ["kubectl", ["kopfexamples.kopf.dev"]],
    ["groupName", ["kopf.dev", "kopfexamples"]],
    ["groupVersionName", ["kopf.dev", "v1", "kopfexamples"]],
    ["apiVersionName", ["kopf.dev/v1", "kopfexamples"]],
    ["object", [{ group: "kopf.dev", plural: "kopfexamples" }]],
    ["objectKind", [{ kind: "KopfExample" }]],
    ["category", [{ category: "kopf-tests" }]],
    ["corePods", ["v1", "pods"]],
    ["corePods3", ["", "v1", "pods"]],
    ["podByName", ["pod"]],
  ];
  for (const [id, spec] of forms) {
    // deno-lint-ignore no-explicit-any
    (kopf.on.event as any)(...spec, { registry, id }, ({ body }: { body: kopf.AnyObject }) => {
      seen.add(`${id}:${body.kind}/${body.metadata.name}`);
    });
  }
  kopf.on.event(
    kopf.EVERYTHING,
    { registry, id: "everything", labels: { "kopf-test": "yes" } },
    ({ body }) => void seen.add(`everything:${body.kind}/${body.metadata.name}`),
  );

  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "kex1", {
      metadata: { name: "kex1", labels: { "kopf-test": "yes" } },
    });
    await c.call("POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "pod1" },
      spec: { containers: [{ name: "c", image: "x" }] },
    });
    await c.call("POST", "/api/v1/namespaces/default/configmaps", {
      metadata: { name: "cm-labelled", labels: { "kopf-test": "yes" } },
    });
    await c.call("POST", "/api/v1/namespaces/default/configmaps", {
      metadata: { name: "cm-plain" },
    });
    const expected = [
      ...forms.filter(([id]) => !id.includes("od")).map(([id]) => `${id}:KopfExample/kex1`),
      "corePods:Pod/pod1",
      "corePods3:Pod/pod1",
      "podByName:Pod/pod1",
      "everything:KopfExample/kex1",
      "everything:ConfigMap/cm-labelled",
    ];
    await until(() => expected.every((e) => seen.has(e)), `all of ${expected.join(", ")}`);
    // A marker created last: by the time it is seen, cm-plain was seen (if it would be).
    await c.call("POST", "/api/v1/namespaces/default/configmaps", {
      metadata: { name: "cm-marker", labels: { "kopf-test": "yes" } },
    });
    await until(() => seen.has("everything:ConfigMap/cm-marker"), "the marker");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(!seen.has("everything:ConfigMap/cm-plain"), "the label filter applies to EVERYTHING");
  assert.ok(![...seen].some((s) => s.startsWith("everything:Event/")), "events are never served");
  for (const s of seen) {
    if (!s.startsWith("everything:")) assert.doesNotMatch(s, /ConfigMap/);
  }
  assert.ok(!seen.has("corePods:KopfExample/kex1"));
});

Deno.test("resources: a CRD created while running is picked up by category and EVERYTHING selectors", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const seen = new Set<string>();
  kopf.on.event({ category: "kopf-tests" }, { registry, id: "byCategory" }, ({ body }) => {
    seen.add(`category:${body.kind}/${body.metadata.name}`);
  });
  kopf.on.event(kopf.EVERYTHING, { registry, id: "all", labels: { late: "yes" } }, ({ body }) => {
    seen.add(`everything:${body.kind}/${body.metadata.name}`);
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createCrd(crd({
      group: "late.example.com",
      plural: "latecomers",
      kind: "Latecomer",
      scope: "Namespaced",
      categories: ["kopf-tests"],
    }));
    await c.createCrd(crd({
      group: "late.example.com",
      plural: "clusterlatecomers",
      kind: "ClusterLatecomer",
      scope: "Cluster",
    }));
    // Keep creating until the watchers exist: the operator rescans after a debounce.
    await until(
      async () => {
        await c.call("POST", "/apis/late.example.com/v1/namespaces/default/latecomers", {
          apiVersion: "late.example.com/v1",
          kind: "Latecomer",
          metadata: { generateName: "late-", labels: { late: "yes" } },
        });
        await c.call("POST", "/apis/late.example.com/v1/clusterlatecomers", {
          apiVersion: "late.example.com/v1",
          kind: "ClusterLatecomer",
          metadata: { generateName: "cl-", labels: { late: "yes" } },
        });
        const all = [...seen];
        return all.some((s) => s.startsWith("category:Latecomer/")) &&
          all.some((s) => s.startsWith("everything:Latecomer/")) &&
          all.some((s) => s.startsWith("everything:ClusterLatecomer/"));
      },
      "objects of the new CRDs",
      10,
    );
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(![...seen].some((s) => s.startsWith("category:ClusterLatecomer/")));
});

async function fatalRun(
  registry: kopf.OperatorRegistry,
  kubeconfig: string,
): Promise<{ message: string; code: number | undefined; output: string }> {
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig,
    reraise: false,
  });
  await runner.stop();
  assert.ok(runner.exception instanceof kopf.OperatorError, String(runner.exception));
  return {
    message: (runner.exception as Error).message,
    code: runner.exitCode,
    output: runner.output,
  };
}

Deno.test("resources: an unknown resource is one fatal line and a non-zero exit", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function fine() {});
  kopf.on.create("nonexistents", { registry }, function missing() {});
  const { message, code, output } = await fatalRun(registry, c.api.kubeconfig.path);
  assert.notEqual(code, 0);
  assert.doesNotMatch(message, /\n/);
  assert.match(message, /"nonexistents" is not served by the cluster/);
  assert.match(message, /create its CRD first/);
  assert.doesNotMatch(output, /Watching|watch-stream/);
});

Deno.test("resources: an ambiguous name (two groups serve it) is one fatal line naming both", async () => {
  await using c = await cluster();
  for (const group of ["a.example.com", "b.example.com"]) {
    await c.createCrd(crd({ group, plural: "widgets", kind: "Widget", scope: "Namespaced" }));
  }
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("widgets", { registry }, function ambiguous() {});
  const { message, code } = await fatalRun(registry, c.api.kubeconfig.path);
  assert.notEqual(code, 0);
  assert.doesNotMatch(message, /\n/);
  assert.match(message, /"widgets" is ambiguous/);
  assert.match(message, /widgets\.v1\.a\.example\.com, widgets\.v1\.b\.example\.com/);
  assert.match(message, /specify the API group/);

  // With the group, it is fine.
  const ok = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.event("widgets.b.example.com", { registry: ok }, ({ name }) => void seen.push(name!));
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry: ok,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.call("POST", "/apis/b.example.com/v1/namespaces/default/widgets", {
      apiVersion: "b.example.com/v1",
      kind: "Widget",
      metadata: { name: "w1" },
    });
    await until(() => seen.includes("w1"), "the widget");
  } finally {
    await runner.stop();
  }
});
