/**
 * "Resource specification" through discovery: every notation resolves to the
 * served resource; EVERYTHING with a label filter; CRDs created while running
 * are picked up by category and EVERYTHING selectors; a name not served yet
 * is one warning and is served once its CRD appears; an ambiguous name is
 * one warning and neither resource is served.
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

Deno.test("resources: a name not served yet is one warning; its handlers run once its CRD is applied", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function fine({ name }) {
    seen.push(`kex:${name}`);
  });
  kopf.on.create("latewidgets", { registry }, function late({ namespace, name }) {
    seen.push(`late:${namespace}/${name}`);
  });
  // -n: no namespaced resource of the operator but this one, so namespaces are followed late.
  const runner = await KopfRunner.start(["run", "--standalone", "-n", "ns1"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createNamespace("ns1");
    await c.createKex("ns1", "kex1");
    await until(() => seen.includes("kex:kex1"), "the operator serves what is there");
    const warnings = runner.output.split("\n").filter((l) => l.includes("latewidgets"));
    assert.equal(warnings.length, 1, runner.output);
    assert.match(
      warnings[0]!,
      /WARNING.*Resource "latewidgets" is not served by the cluster: create its CRD first, or check the name with "kubectl api-resources"; it is served once its CRD appears\.$/,
    );
    assert.match(warnings[0]!, /WARNING/);
    await c.createCrd(crd({
      group: "late.example.com",
      plural: "latewidgets",
      kind: "LateWidget",
      scope: "Namespaced",
    }));
    for (const ns of ["ns1", "default"]) {
      await c.call("POST", `/apis/late.example.com/v1/namespaces/${ns}/latewidgets`, {
        apiVersion: "late.example.com/v1",
        kind: "LateWidget",
        metadata: { name: "w1" },
      });
    }
    await until(() => seen.includes("late:ns1/w1"), "the handler of the late CRD");
    assert.match(runner.output, /Serving new resources: latewidgets\.v1\.late\.example\.com\./);
    await c.createKex("ns1", "marker");
    await until(() => seen.includes("kex:marker"), "the marker");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(!seen.includes("late:default/w1"), "-n still applies to the late resource");
});

Deno.test("resources: an ambiguous name (two groups serve it) is one warning naming both; neither is served", async () => {
  await using c = await cluster();
  for (const group of ["a.example.com", "b.example.com"]) {
    await c.createCrd(crd({ group, plural: "widgets", kind: "Widget", scope: "Namespaced" }));
  }
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.event("widgets", { registry }, function ambiguous({ name }) {
    seen.push(`ambiguous:${name}`);
  });
  kopf.on.event("kopfexamples", { registry }, function marker({ name }) {
    seen.push(`kex:${name}`);
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    for (const group of ["a.example.com", "b.example.com"]) {
      await c.call("POST", `/apis/${group}/v1/namespaces/default/widgets`, {
        apiVersion: `${group}/v1`,
        kind: "Widget",
        metadata: { name: `w-${group[0]}` },
      });
    }
    // A marker created last: by the time it is seen, the widgets were seen (if they would be).
    await c.createKex("default", "marker");
    await until(() => seen.includes("kex:marker"), "the marker");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.deepEqual(seen, ["kex:marker"], "the ambiguous name serves neither");
  assert.doesNotMatch(runner.output, /watch-stream for widgets/);
  const warnings = runner.output.split("\n").filter((l) => l.includes("is ambiguous"));
  assert.equal(warnings.length, 1, runner.output);
  assert.match(
    warnings[0]!,
    /WARNING.*Resource "widgets" is ambiguous: it matches widgets\.v1\.a\.example\.com, widgets\.v1\.b\.example\.com; specify the API group, e\.g\. "widgets\.a\.example\.com"; neither is served\.$/,
  );
});

Deno.test("resources: a CRD that adds v2 to the group while running does not drop the group's v1-only resources", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function kex({ name }) {
    seen.push(`kex:${name}`);
  });
  kopf.on.create("kopfnewcomers", { registry }, function newcomer({ name }) {
    seen.push(`newcomer:${name}`);
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "before");
    await until(() => seen.includes("kex:before"), "the operator serves kopfexamples");
    // Another CRD of the same group, served at v2 only: v2 becomes the group's preferred version.
    await c.call(
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      crd({
        group: "kopf.dev",
        plural: "kopfnewcomers",
        kind: "KopfNewcomer",
        scope: "Namespaced",
        version: "v2",
      }),
    );
    const group = await c.call("GET", "/apis/kopf.dev");
    assert.equal(group.body.preferredVersion.version, "v2");
    await c.call("POST", "/apis/kopf.dev/v2/namespaces/default/kopfnewcomers", {
      apiVersion: "kopf.dev/v2",
      kind: "KopfNewcomer",
      metadata: { name: "n1" },
    });
    // The rescan after the CRD serves the newcomers: by then, kopfexamples were re-resolved.
    await until(() => seen.includes("newcomer:n1"), "the newcomer's handler (after the rescan)");
    await c.createKex("default", "after");
    await until(() => seen.includes("kex:after"), "the operator still serves kopfexamples");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.match(runner.output, /Serving new resources: kopfnewcomers\.v2\.kopf\.dev\./);
  assert.doesNotMatch(runner.output, /"kopfexamples" is not served/);
});
