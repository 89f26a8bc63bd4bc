/**
 * "Scopes": `-n` with globs and negations serves only the matching
 * namespaces, follows namespaces created and deleted while running; `-A`
 * serves all; cluster-scoped resources are served in either mode.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { cluster, delay, until } from "./_setup.ts";

function handlers(): { registry: kopf.OperatorRegistry; seen: string[]; namespaces: string[] } {
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  const namespaces: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ namespace, name }) {
    seen.push(`${namespace}/${name}`);
  });
  kopf.on.create("kopfclusterexamples", { registry }, function createCluster({ name }) {
    seen.push(`cluster/${name}`);
  });
  kopf.on.event("v1", "namespaces", { registry }, function nsEvent({ name, type }) {
    namespaces.push(`${type}:${name}`);
  });
  return { registry, seen, namespaces };
}

Deno.test("scopes: -n with globs and negations serves only matching namespaces, follows new and deleted ones", async () => {
  await using c = await cluster({ clusterCrd: true, requestLog: true });
  const all = ["ns1", "ns2", "team-a", "team-x", "other"];
  const myapp = ["myapp-live", "myapp-pr-456", "myapp-pr-123", "otherapp-pr-123"];
  for (const ns of [...all, ...myapp]) await c.createNamespace(ns);
  for (const ns of [...all, ...myapp]) await c.createKex(ns, `kex-${ns}`);
  const { registry, seen, namespaces } = handlers();
  // Several -n options are alternatives (any of them matches); within one
  // pattern, the first glob is decisive and the rightmost matching glob wins.
  const runner = await KopfRunner.start(
    [
      "run",
      "--standalone",
      "-v",
      "-n",
      "ns1",
      "-n",
      "team-*,!team-x*",
      "--namespace=myapp-*,!*-pr-*,*-pr-123",
    ],
    { registry, kubeconfig: c.api.kubeconfig.path },
  );
  try {
    const initial = ["ns1", "team-a", "myapp-live", "myapp-pr-123"].map((ns) => `${ns}/kex-${ns}`);
    await until(() => initial.every((s) => seen.includes(s)), "the served namespaces");
    // Cluster-scoped resources are served although namespaces are restricted.
    await c.call("POST", "/apis/kopf.dev/v1/kopfclusterexamples", {
      apiVersion: "kopf.dev/v1",
      kind: "KopfClusterExample",
      metadata: { name: "kcx1" },
    });
    await until(() => seen.includes("cluster/kcx1"), "the cluster-scoped object");
    await until(() => namespaces.includes("null:team-x"), "namespaces themselves are served");

    // A namespace that appears while running is served.
    await c.createNamespace("team-b");
    await c.createKex("team-b", "kex-team-b");
    await until(() => seen.includes("team-b/kex-team-b"), "the new namespace");
    // Created, but not matching: never served.
    await c.createNamespace("team-x2");
    await c.createKex("team-x2", "kex-team-x2");

    // A deleted namespace stops being served.
    await c.call("DELETE", "/api/v1/namespaces/team-b");
    await runner.waitFor(/Stopping the watch-stream for kopfexamples\.v1\.kopf\.dev in team-b\./);
    await until(() => namespaces.includes("DELETED:team-b"), "the namespace deletion event");
    // Re-created: served again.
    await c.createNamespace("team-b");
    await c.createKex("team-b", "kex-team-b2");
    await until(() => seen.includes("team-b/kex-team-b2"), "the re-created namespace");

    await delay(300); // give a (wrong) watcher of the other namespaces time to act
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.deepEqual(
    seen.filter((s) => !s.startsWith("cluster/")).sort(),
    [
      "myapp-live/kex-myapp-live",
      "myapp-pr-123/kex-myapp-pr-123",
      "ns1/kex-ns1",
      "team-a/kex-team-a",
      "team-b/kex-team-b",
      "team-b/kex-team-b2",
    ],
  );
  // Non-matching namespaces were never even listed or watched.
  const touched = c.requests.filter((l) =>
    /^GET .*\/namespaces\/(ns2|team-x|team-x2|other|myapp-pr-456|otherapp-pr-123)\/kopfexamples/
      .test(l)
  );
  assert.deepEqual(touched, []);
  // The served ones were watched per namespace, never cluster-wide.
  assert.ok(c.requests.some((l) => l.includes("/namespaces/ns1/kopfexamples?")));
  assert.ok(!c.requests.some((l) => /^GET \/apis\/kopf\.dev\/v1\/kopfexamples/.test(l)));
  // Objects in non-served namespaces are untouched by the operator.
  for (const ns of ["ns2", "team-x", "team-x2", "other", "myapp-pr-456", "otherapp-pr-123"]) {
    const obj = await c.getKex(ns, `kex-${ns}`);
    assert.equal(obj.metadata.annotations, undefined, `${ns} must be untouched`);
  }
  assert.ok((await c.getKex("ns1", "kex-ns1")).metadata.annotations);
});

Deno.test("scopes: a negation as its own -n serves all namespaces but the excluded ones", async () => {
  await using c = await cluster({ clusterCrd: true, requestLog: true });
  for (const ns of ["ns1", "kube-a", "kube-b"]) await c.createNamespace(ns);
  for (const ns of ["ns1", "kube-a", "kube-b", "default"]) await c.createKex(ns, `kex-${ns}`);
  const { registry, seen } = handlers();
  const runner = await KopfRunner.start(
    ["run", "--standalone", "-n", "!kube-*", "-n", "kube-b"],
    { registry, kubeconfig: c.api.kubeconfig.path },
  );
  try {
    await until(() => seen.length === 3, "three namespaces");
    await delay(200);
  } finally {
    await runner.stop();
  }
  assert.deepEqual(seen.sort(), ["default/kex-default", "kube-b/kex-kube-b", "ns1/kex-ns1"]);
  assert.ok(!c.requests.some((l) => l.startsWith("GET /apis/kopf.dev/v1/namespaces/kube-a/")));
});

Deno.test("scopes: -A serves all namespaces (cluster-wide watches) and cluster-scoped resources", async () => {
  await using c = await cluster({ clusterCrd: true, requestLog: true });
  for (const ns of ["ns1", "other"]) await c.createNamespace(ns);
  await c.createKex("ns1", "kex-ns1");
  const { registry, seen, namespaces } = handlers();
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createNamespace("late");
    await c.createKex("late", "kex-late");
    await c.createKex("other", "kex-other");
    await c.createKex("default", "kex-default");
    await c.call("POST", "/apis/kopf.dev/v1/kopfclusterexamples", {
      apiVersion: "kopf.dev/v1",
      kind: "KopfClusterExample",
      metadata: { name: "kcx1" },
    });
    await until(() => seen.length === 5, "all objects");
    await until(() => namespaces.includes("ADDED:late"), "namespace events");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.deepEqual(seen.sort(), [
    "cluster/kcx1",
    "default/kex-default",
    "late/kex-late",
    "ns1/kex-ns1",
    "other/kex-other",
  ]);
  assert.ok(
    c.requests.some((l) => /^GET \/apis\/kopf\.dev\/v1\/kopfexamples\?.*watch=true/.test(l)),
  );
  assert.ok(!c.requests.some((l) => l.includes("/namespaces/ns1/kopfexamples?")));
});

Deno.test("scopes: neither -n nor -A serves cluster-wide with a warning", async () => {
  await using c = await cluster({ clusterCrd: true });
  const { registry, seen } = handlers();
  const runner = await KopfRunner.start(["run", "--standalone"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "kex1");
    await until(() => seen.includes("default/kex1"), "handled");
  } finally {
    await runner.stop();
  }
  assert.match(runner.output, /Neither --namespace nor --all-namespaces is given/);
});
