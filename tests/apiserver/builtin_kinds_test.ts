/**
 * The built-in kinds clients assume a cluster serves (ReplicationController,
 * PodTemplate, EndpointSlice, ControllerRevision, APIService) and the
 * defaults a user sees first (a created Pod pending and unscheduled with its
 * QoS class; a created Service with its cluster IP and defaults;
 * `metadata.generation` only where kube keeps one) — over real HTTP and with
 * real kubectl binaries (1.27 and 1.33: their default prune lists name
 * ReplicationController among others).
 *
 * @module
 */

import assert from "node:assert/strict";
import { type RunningApiServer, startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const NS = "/api/v1/namespaces/default";

async function ok(api: RunningApiServer, method: string, path: string, body?: unknown) {
  const type = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const r = await call(api.url, method, path, body, type);
  assert.ok(
    r.status >= 200 && r.status < 300,
    `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`,
  );
  return r.body;
}

Deno.test("discovery serves ReplicationController, PodTemplate, EndpointSlice, ControllerRevision, APIService as kube does", async () => {
  await using api = await startApiServer();
  const find = async (path: string, name: string) => {
    const list = await ok(api, "GET", path);
    return (list.resources as Array<Record<string, unknown>>).filter((r) =>
      r.name === name || r.name === `${name}/status`
    ).map((r) => ({ ...r, verbs: [...(r.verbs as string[])].sort() }));
  };
  const all = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
  const status = ["get", "patch", "update"];
  assert.deepEqual(await find("/api/v1", "replicationcontrollers"), [
    {
      name: "replicationcontrollers",
      singularName: "replicationcontroller",
      namespaced: true,
      kind: "ReplicationController",
      verbs: all,
      shortNames: ["rc"],
      categories: ["all"],
    },
    {
      name: "replicationcontrollers/status",
      singularName: "",
      namespaced: true,
      kind: "ReplicationController",
      verbs: status,
    },
  ]);
  assert.deepEqual(await find("/api/v1", "podtemplates"), [
    {
      name: "podtemplates",
      singularName: "podtemplate",
      namespaced: true,
      kind: "PodTemplate",
      verbs: all,
    },
  ]);
  assert.deepEqual(await find("/apis/discovery.k8s.io/v1", "endpointslices"), [
    {
      name: "endpointslices",
      singularName: "endpointslice",
      namespaced: true,
      kind: "EndpointSlice",
      verbs: all,
    },
  ]);
  assert.deepEqual(await find("/apis/apps/v1", "controllerrevisions"), [
    {
      name: "controllerrevisions",
      singularName: "controllerrevision",
      namespaced: true,
      kind: "ControllerRevision",
      verbs: all,
    },
  ]);
  assert.deepEqual(await find("/apis/apiregistration.k8s.io/v1", "apiservices"), [
    {
      name: "apiservices",
      singularName: "apiservice",
      namespaced: false,
      kind: "APIService",
      verbs: all,
      categories: ["api-extensions"],
    },
    {
      name: "apiservices/status",
      singularName: "",
      namespaced: false,
      kind: "APIService",
      verbs: status,
    },
  ]);
  const groups = (await ok(api, "GET", "/apis")).groups.map((g: { name: string }) => g.name);
  assert.ok(groups.includes("discovery.k8s.io") && groups.includes("apiregistration.k8s.io"));
});

Deno.test("the new kinds are stored, listed, patched and deleted like the other built-ins, with nothing behind them", async () => {
  await using api = await startApiServer();
  const template = {
    metadata: { labels: { app: "a" } },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  };
  const cases: Array<[string, Record<string, unknown>]> = [
    [`${NS}/replicationcontrollers`, {
      apiVersion: "v1",
      kind: "ReplicationController",
      metadata: { name: "rc" },
      spec: { replicas: 2, selector: { app: "a" }, template },
    }],
    [`${NS}/podtemplates`, {
      apiVersion: "v1",
      kind: "PodTemplate",
      metadata: { name: "pt" },
      template,
    }],
    ["/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "es", labels: { "kubernetes.io/service-name": "s" } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.1.2.3"] }],
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
    }],
    ["/apis/apps/v1/namespaces/default/controllerrevisions", {
      apiVersion: "apps/v1",
      kind: "ControllerRevision",
      metadata: { name: "cr" },
      data: { spec: {} },
      revision: 1,
    }],
    ["/apis/apiregistration.k8s.io/v1/apiservices", {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io" },
      spec: {
        group: "metrics.k8s.io",
        version: "v1beta1",
        groupPriorityMinimum: 100,
        versionPriority: 100,
        service: { name: "metrics-server", namespace: "kube-system" },
      },
    }],
  ];
  for (const [path, body] of cases) {
    const name = (body.metadata as { name: string }).name;
    const made = await call(api.url, "POST", path, body);
    assert.equal(made.status, 201, `${path}: ${JSON.stringify(made.body)}`);
    assert.equal(made.body.kind, body.kind);
    const list = await ok(api, "GET", path);
    assert.deepEqual(list.items.map((o: { metadata: { name: string } }) => o.metadata.name), [
      name,
    ]);
    const patched = await call(api.url, "PATCH", `${path}/${name}`, {
      metadata: { labels: { x: "y" } },
    }, "application/strategic-merge-patch+json");
    assert.equal(patched.status, 200, `${path}: ${JSON.stringify(patched.body)}`);
    assert.equal(patched.body.metadata.labels.x, "y");
    // No controller: a ReplicationController makes no pods.
    assert.deepEqual((await ok(api, "GET", `${NS}/pods`)).items, []);
    const bad = await call(api.url, "POST", path, { ...body, metadata: { name: "Not_A_Name" } });
    assert.equal(bad.status, 422, `${path}: names are validated as for the other kinds`);
    assert.equal((await call(api.url, "DELETE", `${path}/${name}`)).status, 200);
    assert.equal((await call(api.url, "GET", `${path}/${name}`)).status, 404);
  }
});

// --- Pods -------------------------------------------------------------------

Deno.test("a created Pod is Pending and unscheduled, with its QoS class computed as kube computes it", async () => {
  await using api = await startApiServer();
  const pod = async (name: string, containers: unknown[], extra: Record<string, unknown> = {}) =>
    await ok(api, "POST", `${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { containers, ...extra },
      status: { phase: "Running", podIP: "1.2.3.4" }, // a client's status is not kept
    });
  const best = await pod("best", [{ name: "c", image: "nginx" }]);
  assert.equal(best.status.phase, "Pending");
  assert.equal(best.status.qosClass, "BestEffort");
  assert.equal(best.status.podIP, undefined);
  assert.equal(best.metadata.generation, 1, "pods keep a generation (kube 1.33)");
  const [cond] = best.status.conditions;
  assert.deepEqual(
    {
      type: cond.type,
      status: cond.status,
      reason: cond.reason,
      lastProbeTime: cond.lastProbeTime,
    },
    { type: "PodScheduled", status: "False", reason: "Unschedulable", lastProbeTime: null },
  );
  assert.match(cond.message, /no scheduler/);
  assert.equal(typeof cond.lastTransitionTime, "string");

  const burst = await pod("burst", [
    { name: "a", image: "x", resources: { requests: { cpu: "100m" } } },
  ]);
  assert.equal(burst.status.qosClass, "Burstable");
  // Limits alone: requests default to them, so both containers are Guaranteed.
  const guaranteed = await pod("guaranteed", [
    { name: "a", image: "x", resources: { limits: { cpu: "1", memory: "1Gi" } } },
    {
      name: "b",
      image: "x",
      resources: {
        requests: { cpu: "500m", memory: "128Mi" },
        limits: { cpu: "0.5", memory: "134217728" },
      },
    },
  ]);
  assert.equal(guaranteed.status.qosClass, "Guaranteed");
  assert.deepEqual(guaranteed.spec.containers[0].resources.requests, { cpu: "1", memory: "1Gi" });
  const unequal = await pod("unequal", [
    {
      name: "a",
      image: "x",
      resources: { requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "2", memory: "1Gi" } },
    },
  ]);
  assert.equal(unequal.status.qosClass, "Burstable");
  const partial = await pod("partial", [
    { name: "a", image: "x", resources: { limits: { cpu: "1", memory: "1Gi" } } },
    { name: "b", image: "x" },
  ]);
  assert.equal(partial.status.qosClass, "Burstable");
  const bound = await pod("bound", [{ name: "c", image: "x" }], { nodeName: "n1" });
  assert.equal(bound.status.conditions, undefined, "a pod bound at creation is not unschedulable");
  const gated = await pod("gated", [{ name: "c", image: "x" }], {
    schedulingGates: [{ name: "example.com/wait" }],
  });
  assert.equal(gated.status.conditions[0].reason, "SchedulingGated");

  // Listed by phase; the status survives a spec patch, which bumps the generation.
  const pending = await ok(api, "GET", `${NS}/pods?fieldSelector=status.phase%3DPending`);
  assert.equal(pending.items.length, 7);
  const patched = await call(api.url, "PATCH", `${NS}/pods/best`, {
    spec: { activeDeadlineSeconds: 30 },
  }, "application/merge-patch+json");
  assert.equal(patched.body.status.phase, "Pending");
  assert.equal(patched.body.metadata.generation, 2);
  // The QoS class is fixed at creation: a status write that leaves it out keeps it.
  const status = await call(api.url, "PATCH", `${NS}/pods/burst/status`, [
    { op: "replace", path: "/status", value: { phase: "Running" } },
  ], "application/json-patch+json");
  assert.deepEqual([status.body.status.phase, status.body.status.qosClass], [
    "Running",
    "Burstable",
  ]);
});

// --- Services ---------------------------------------------------------------

Deno.test("a created Service gets kube's defaults, a unique cluster IP from 10.96.0.0/12 and status.loadBalancer", async () => {
  await using api = await startApiServer();
  const svc = (name: string, spec: Record<string, unknown>) =>
    call(api.url, "POST", `${NS}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name },
      spec,
    });
  const a = (await svc("a", { selector: { app: "a" }, ports: [{ port: 80 }] })).body;
  const inRange = (ip: string) => {
    const [p0, p1] = ip.split(".").map(Number);
    return p0 === 10 && p1! >= 96 && p1! <= 111;
  };
  assert.ok(inRange(a.spec.clusterIP), a.spec.clusterIP);
  assert.deepEqual(a.spec, {
    selector: { app: "a" },
    ports: [{ port: 80, protocol: "TCP", targetPort: 80 }],
    type: "ClusterIP",
    sessionAffinity: "None",
    internalTrafficPolicy: "Cluster",
    clusterIP: a.spec.clusterIP,
    clusterIPs: [a.spec.clusterIP],
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
  });
  assert.deepEqual(a.status, { loadBalancer: {} });
  assert.equal(a.metadata.generation, undefined, "Services keep no generation");

  const ips = new Set([a.spec.clusterIP]);
  for (let i = 0; i < 20; i++) {
    const b = (await svc(`b${i}`, { ports: [{ port: 80 }] })).body;
    assert.ok(!ips.has(b.spec.clusterIP), "cluster IPs are unique");
    ips.add(b.spec.clusterIP);
  }
  const taken = await svc("taken", { clusterIP: a.spec.clusterIP, ports: [{ port: 80 }] });
  assert.equal(taken.status, 422);
  assert.match(taken.body.message, /provided IP is already allocated/);
  const outside = await svc("outside", { clusterIP: "192.168.0.1", ports: [{ port: 80 }] });
  assert.equal(outside.status, 422);
  assert.match(
    outside.body.message,
    /not in the valid range\. The range of valid IPs is 10\.96\.0\.0\/12/,
  );
  const headless = (await svc("headless", { clusterIP: "None", ports: [{ port: 80 }] })).body;
  assert.deepEqual(headless.spec.clusterIPs, ["None"]);
  const ext = (await svc("ext", { type: "ExternalName", externalName: "example.com" })).body;
  assert.equal(ext.spec.clusterIP, undefined);
  const np = (await svc("np", { type: "NodePort", ports: [{ port: 80 }] })).body;
  assert.ok(np.spec.ports[0].nodePort >= 30000 && np.spec.ports[0].nodePort <= 32767);
  assert.equal(np.spec.externalTrafficPolicy, "Cluster");

  // A replace that leaves the allocated values out keeps them; patches bump no generation.
  const put = await call(api.url, "PUT", `${NS}/services/a`, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "a", resourceVersion: a.metadata.resourceVersion },
    spec: { selector: { app: "b" }, ports: [{ port: 80 }] },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.spec.clusterIP, a.spec.clusterIP);
  assert.deepEqual(put.body.status, { loadBalancer: {} });
  const patched = await call(api.url, "PATCH", `${NS}/services/a`, {
    spec: { selector: { app: "c" } },
  }, "application/strategic-merge-patch+json");
  assert.equal(patched.body.spec.selector.app, "c");
  assert.equal(patched.body.metadata.generation, undefined);
});

// --- generation ---------------------------------------------------------------

Deno.test("metadata.generation only where kube keeps one: not on ConfigMaps, Secrets, Namespaces, Services", async () => {
  await using api = await startApiServer();
  const none: Array<[string, Record<string, unknown>]> = [
    [`${NS}/configmaps`, { metadata: { name: "cm" }, data: { a: "1" } }],
    [`${NS}/secrets`, { metadata: { name: "s" }, stringData: { a: "1" } }],
    ["/api/v1/namespaces", { metadata: { name: "ns1" } }],
    [`${NS}/services`, { metadata: { name: "svc" }, spec: { ports: [{ port: 80 }] } }],
    [`${NS}/serviceaccounts`, { metadata: { name: "sa" } }],
  ];
  for (const [path, body] of none) {
    const made = await ok(api, "POST", path, {
      ...body,
      metadata: { ...body.metadata as object, generation: 5 },
    });
    assert.equal(made.metadata.generation, undefined, path);
    const name = (body.metadata as { name: string }).name;
    const patched = await ok(api, "PATCH", `${path}/${name}`, {
      metadata: { labels: { a: "b" }, finalizers: ["example.com/hold"] },
    });
    assert.equal(patched.metadata.generation, undefined, path);
    const deleting = await ok(api, "DELETE", `${path}/${name}`);
    assert.equal(deleting.metadata?.generation, undefined, `${path} while deleting`);
  }
  const deploy = await ok(api, "POST", "/apis/apps/v1/namespaces/default/deployments", {
    metadata: { name: "d" },
    spec: {
      selector: { matchLabels: { app: "d" } },
      template: {
        metadata: { labels: { app: "d" } },
        spec: { containers: [{ name: "c", image: "x" }] },
      },
    },
  });
  assert.equal(deploy.metadata.generation, 1);
  const scaled = await ok(api, "PATCH", "/apis/apps/v1/namespaces/default/deployments/d", {
    spec: { replicas: 3 },
  });
  assert.equal(scaled.metadata.generation, 2);
  const pt = await ok(api, "POST", `${NS}/podtemplates`, {
    metadata: { name: "pt" },
    template: { spec: { containers: [{ name: "c", image: "x" }] } },
  });
  assert.equal(pt.metadata.generation, 1);
  const ptPatched = await ok(api, "PATCH", `${NS}/podtemplates/pt`, {
    template: { metadata: { labels: { a: "b" } } },
  });
  assert.equal(ptPatched.metadata.generation, 2);
});

// --- kubectl ------------------------------------------------------------------

const MANIFESTS = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, labels: {app: demo}}
data: {a: "1"}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, labels: {app: demo}}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, labels: {app: demo}}
spec: {selector: {app: legacy}, ports: [{port: 80}]}
`;

// Claimed for kubectl 1.27 and 1.33 exactly (exact: no plain kubectl runs in their place).
testEachKubectl(
  ["1.27", "1.33"],
  `apply -f dir -l --prune with a ReplicationController in a multi-document file, then prunes it`,
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const dir = await Deno.makeTempDir({ prefix: "kopf-prune-" });
    try {
      await Deno.writeTextFile(`${dir}/all.yaml`, MANIFESTS);
      const first = await k.ok(["apply", "-f", dir, "-l", "app=demo", "--prune"]);
      assert.deepEqual(first.trim().split("\n").sort(), [
        "configmap/settings created",
        "replicationcontroller/legacy created",
        "service/web created",
      ]);
      const again = await k.ok(["apply", "-f", dir, "-l", "app=demo", "--prune"]);
      assert.deepEqual(again.trim().split("\n").sort(), [
        "configmap/settings unchanged",
        "replicationcontroller/legacy unchanged",
        "service/web unchanged",
      ]);
      await Deno.writeTextFile(`${dir}/all.yaml`, MANIFESTS.split("---\n")[0]!);
      const pruned = await k.ok(["apply", "-f", dir, "-l", "app=demo", "--prune"]);
      assert.deepEqual(pruned.trim().split("\n").sort(), [
        "configmap/settings unchanged",
        "replicationcontroller/legacy pruned",
        "service/web pruned",
      ]);
      assert.equal((await call(api.url, "GET", `${NS}/replicationcontrollers/legacy`)).status, 404);
      assert.equal((await call(api.url, "GET", `${NS}/configmaps/settings`)).status, 200);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
  { exact: true },
);

testEachKubectl(
  ["1.27", "1.33"],
  `run, then get pods --field-selector status.phase=Pending finds the pod`,
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    assert.equal((await k.ok(["run", "x", "--image=nginx"])).trim(), "pod/x created");
    const out = await k.ok([
      "get",
      "pods",
      "--field-selector",
      "status.phase=Pending",
      "-o",
      "jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.qosClass}{end}",
    ]);
    assert.equal(out, "x Pending BestEffort");
    const none = await k.ok([
      "get",
      "pods",
      "--field-selector",
      "status.phase=Running",
      "-o",
      "name",
    ]);
    assert.equal(none.trim(), "");
  },
  { exact: true },
);
