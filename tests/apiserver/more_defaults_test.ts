/**
 * The defaults kube-apiserver gives the stored built-in kinds that are not
 * workloads or pods, over real HTTP and with kubectl: claims and volumes,
 * endpoints, limit ranges, autoscalers, network policies, ingresses, budgets,
 * quotas, storage and priority classes, bindings, webhook configurations and
 * CRDs — the spec defaults and the status a created object starts with.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { type Answer, call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const CORE = "/api/v1";
const NS = "/api/v1/namespaces/default";

function created(answer: Answer, what: string) {
  assert.equal(answer.status, 201, `${what}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

Deno.test("claims and volumes get their volume mode, reclaim policy and a Pending status", async () => {
  await using api = await startApiServer();
  const pvc = created(
    await call(api.url, "POST", `${NS}/persistentvolumeclaims`, {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      status: { phase: "Bound" },
    }),
    "pvc",
  );
  assert.equal(pvc.spec.volumeMode, "Filesystem");
  assert.deepEqual(pvc.status, { phase: "Pending" });

  const pv = created(
    await call(api.url, "POST", `${CORE}/persistentvolumes`, {
      metadata: { name: "vol" },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        hostPath: { path: "/data" },
      },
    }),
    "pv",
  );
  assert.deepEqual(
    [pv.spec.persistentVolumeReclaimPolicy, pv.spec.volumeMode, pv.spec.hostPath],
    ["Retain", "Filesystem", { path: "/data", type: "" }],
  );
  assert.deepEqual(pv.status, {
    phase: "Pending",
    lastPhaseTransitionTime: pv.metadata.creationTimestamp,
  });

  // A value sent is kept; a plain update keeps the stored status.
  const kept = await call(api.url, "PUT", `${CORE}/persistentvolumes/vol`, {
    ...pv,
    spec: { ...pv.spec, persistentVolumeReclaimPolicy: "Delete", volumeMode: "Block" },
    status: { phase: "Available" },
  });
  assert.equal(kept.status, 200, JSON.stringify(kept.body));
  assert.deepEqual(
    [kept.body.spec.persistentVolumeReclaimPolicy, kept.body.spec.volumeMode, kept.body.status],
    ["Delete", "Block", pv.status],
  );
});

Deno.test("endpoints and endpoint slices get their ports' protocol", async () => {
  await using api = await startApiServer();
  const ep = created(
    await call(api.url, "POST", `${NS}/endpoints`, {
      metadata: { name: "web" },
      subsets: [{
        addresses: [{ ip: "10.0.0.1" }],
        ports: [{ port: 80 }, { port: 53, protocol: "UDP" }],
      }],
    }),
    "endpoints",
  );
  assert.deepEqual(ep.subsets[0].ports, [{ port: 80, protocol: "TCP" }, {
    port: 53,
    protocol: "UDP",
  }]);
  const slice = created(
    await call(api.url, "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
      metadata: { name: "web-1" },
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.0.0.1"] }],
      ports: [{ port: 80 }],
    }),
    "endpointslice",
  );
  assert.deepEqual(slice.ports, [{ name: "", port: 80, protocol: "TCP" }]);
});

Deno.test("a limit range's container defaults come from its max, default and min", async () => {
  await using api = await startApiServer();
  const lr = created(
    await call(api.url, "POST", `${NS}/limitranges`, {
      metadata: { name: "limits" },
      spec: {
        limits: [
          { type: "Container", max: { cpu: "2" }, min: { memory: "64Mi" } },
          { type: "Pod", max: { cpu: "4" } },
        ],
      },
    }),
    "limitrange",
  );
  assert.deepEqual(lr.spec.limits, [
    {
      type: "Container",
      max: { cpu: "2" },
      min: { memory: "64Mi" },
      default: { cpu: "2" },
      defaultRequest: { cpu: "2", memory: "64Mi" },
    },
    { type: "Pod", max: { cpu: "4" } },
  ]);
});

Deno.test("an HPA gets minReplicas, the CPU 80% metric, its behavior's rules and an empty status", async () => {
  await using api = await startApiServer();
  const path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
  const target = { apiVersion: "apps/v1", kind: "Deployment", name: "web" };
  const plain = created(
    await call(api.url, "POST", path, {
      metadata: { name: "plain" },
      spec: { scaleTargetRef: target, maxReplicas: 5 },
    }),
    "hpa",
  );
  assert.deepEqual(plain.spec, {
    scaleTargetRef: target,
    maxReplicas: 5,
    minReplicas: 1,
    metrics: [{
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
    }],
  });
  assert.deepEqual(plain.status, { currentMetrics: null, desiredReplicas: 0 });

  const tuned = created(
    await call(api.url, "POST", path, {
      metadata: { name: "tuned" },
      spec: {
        scaleTargetRef: target,
        minReplicas: 2,
        maxReplicas: 5,
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    }),
    "hpa",
  );
  assert.deepEqual(tuned.spec.behavior, {
    scaleUp: {
      stabilizationWindowSeconds: 0,
      selectPolicy: "Max",
      policies: [
        { type: "Pods", value: 4, periodSeconds: 15 },
        { type: "Percent", value: 100, periodSeconds: 15 },
      ],
    },
    scaleDown: {
      stabilizationWindowSeconds: 60,
      selectPolicy: "Max",
      policies: [{ type: "Percent", value: 100, periodSeconds: 15 }],
    },
  });
  assert.equal(tuned.spec.minReplicas, 2);
});

Deno.test("network policies, ingresses, ingress classes and budgets get kube's defaults", async () => {
  await using api = await startApiServer();
  const net = "/apis/networking.k8s.io/v1";
  const ingressOnly = created(
    await call(api.url, "POST", `${net}/namespaces/default/networkpolicies`, {
      metadata: { name: "in" },
      spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] },
    }),
    "netpol",
  );
  assert.deepEqual(ingressOnly.spec.policyTypes, ["Ingress"]);
  assert.deepEqual(ingressOnly.spec.ingress, [{ ports: [{ port: 80, protocol: "TCP" }] }]);
  const both = created(
    await call(api.url, "POST", `${net}/namespaces/default/networkpolicies`, {
      metadata: { name: "out" },
      spec: { podSelector: {}, egress: [{}] },
    }),
    "netpol",
  );
  assert.deepEqual(both.spec.policyTypes, ["Ingress", "Egress"]);

  const ing = created(
    await call(api.url, "POST", `${net}/namespaces/default/ingresses`, {
      metadata: { name: "web" },
      spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } },
      status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
    }),
    "ingress",
  );
  assert.deepEqual(ing.status, { loadBalancer: {} });
  const cls = created(
    await call(api.url, "POST", `${net}/ingressclasses`, {
      metadata: { name: "nginx" },
      spec: { controller: "example.com/ingress", parameters: { kind: "Params", name: "p" } },
    }),
    "ingressclass",
  );
  assert.equal(cls.spec.parameters.scope, "Cluster");

  const pdb = created(
    await call(api.url, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", {
      metadata: { name: "web" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "web" } } },
    }),
    "pdb",
  );
  assert.deepEqual(pdb.status, {
    disruptionsAllowed: 0,
    currentHealthy: 0,
    desiredHealthy: 0,
    expectedPods: 0,
  });
  const quota = created(
    await call(api.url, "POST", `${NS}/resourcequotas`, {
      metadata: { name: "q" },
      spec: { hard: { pods: "10" } },
      status: { hard: { pods: "1" } },
    }),
    "quota",
  );
  assert.deepEqual(quota.status, {});
});

Deno.test("storage and priority classes, secrets and bindings get kube's defaults", async () => {
  await using api = await startApiServer();
  const sc = created(
    await call(api.url, "POST", "/apis/storage.k8s.io/v1/storageclasses", {
      metadata: { name: "fast" },
      provisioner: "example.com/disk",
    }),
    "storageclass",
  );
  assert.deepEqual([sc.reclaimPolicy, sc.volumeBindingMode], ["Delete", "Immediate"]);
  const pc = created(
    await call(api.url, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
      metadata: { name: "high" },
      value: 1000,
    }),
    "priorityclass",
  );
  assert.equal(pc.preemptionPolicy, "PreemptLowerPriority");

  const secret = created(
    await call(api.url, "POST", `${NS}/secrets`, { metadata: { name: "s" } }),
    "secret",
  );
  const updated = await call(api.url, "PUT", `${NS}/secrets/s`, {
    metadata: { name: "s", resourceVersion: secret.metadata.resourceVersion },
    data: { a: "YQ==" },
  });
  assert.equal(updated.status, 200, JSON.stringify(updated.body));
  assert.equal(updated.body.type, "Opaque");

  const rb = created(
    await call(
      api.url,
      "POST",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
      {
        metadata: { name: "rb" },
        roleRef: { kind: "Role", name: "r" },
        subjects: [
          { kind: "User", name: "alice" },
          { kind: "Group", name: "devs" },
          { kind: "ServiceAccount", name: "default", namespace: "default" },
        ],
      },
    ),
    "rolebinding",
  );
  assert.deepEqual(rb.roleRef, { kind: "Role", name: "r", apiGroup: "rbac.authorization.k8s.io" });
  assert.deepEqual(rb.subjects.map((s: { apiGroup?: string }) => s.apiGroup), [
    "rbac.authorization.k8s.io",
    "rbac.authorization.k8s.io",
    undefined,
  ]);
});

Deno.test("webhook configurations get each webhook's policies, selectors, timeout and rules' scope", async () => {
  await using api = await startApiServer();
  const reg = "/apis/admissionregistration.k8s.io/v1";
  const hook = {
    name: "a.example.com",
    clientConfig: { service: { namespace: "default", name: "hooks" } },
    rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  };
  const expected = {
    ...hook,
    clientConfig: { service: { namespace: "default", name: "hooks", port: 443 } },
    rules: [{ ...hook.rules[0], scope: "*" }],
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
    namespaceSelector: {},
    objectSelector: {},
    timeoutSeconds: 10,
  };
  const v = created(
    await call(api.url, "POST", `${reg}/validatingwebhookconfigurations`, {
      metadata: { name: "v" },
      webhooks: [hook],
    }),
    "validating",
  );
  assert.deepEqual(v.webhooks, [expected]);
  const m = created(
    await call(api.url, "POST", `${reg}/mutatingwebhookconfigurations`, {
      metadata: { name: "m" },
      webhooks: [{ ...hook, failurePolicy: "Ignore", timeoutSeconds: 3 }],
    }),
    "mutating",
  );
  assert.deepEqual(m.webhooks, [{
    ...expected,
    failurePolicy: "Ignore",
    timeoutSeconds: 3,
    reinvocationPolicy: "Never",
  }]);
});

Deno.test("a CRD gets its singular name, list kind and conversion strategy None", async () => {
  await using api = await startApiServer();
  const crd = created(
    await call(api.url, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      metadata: { name: "things.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "things", kind: "Thing" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object" } },
        }],
      },
    }),
    "crd",
  );
  assert.deepEqual(crd.spec.names, {
    plural: "things",
    kind: "Thing",
    singular: "thing",
    listKind: "ThingList",
  });
  assert.deepEqual(crd.spec.conversion, { strategy: "None" });
});

testEachKubectl(
  ["1.33"],
  "kubectl create namespace and a claim show kube's defaults in -o yaml",
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const ns = await k.ok(["create", "namespace", "x", "-o", "yaml"]);
    assert.match(ns, /^ {2}finalizers:\n {2}- kubernetes$/m);
    assert.match(ns, /^ {2}phase: Active$/m);
    const claim = JSON.stringify({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data", namespace: "x" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    await k.ok(["create", "-f", "-"], { stdin: claim });
    const yaml = await k.ok(["get", "pvc", "data", "-n", "x", "-o", "yaml"]);
    assert.match(yaml, /^ {2}volumeMode: Filesystem$/m);
    assert.match(yaml, /^status:\n {2}phase: Pending$/m);
    const table = await k.ok(["get", "pvc", "-n", "x"]);
    assert.match(table, /^data +Pending /m);
  },
);

Deno.test("a pod's priorityClassName resolves against the stored classes; unknown is kube's 403", async () => {
  await using api = await startApiServer();
  const pcs = "/apis/scheduling.k8s.io/v1/priorityclasses";
  const pod = (name: string, spec: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: { containers: [{ name: "c", image: "nginx:1.27" }], ...spec },
  });
  created(
    await call(api.url, "POST", pcs, {
      metadata: { name: "high" },
      value: 1000,
      preemptionPolicy: "Never",
    }),
    "priorityclass",
  );
  const high = created(
    await call(api.url, "POST", `${NS}/pods`, pod("high", { priorityClassName: "high" })),
    "pod",
  );
  assert.deepEqual([high.spec.priority, high.spec.preemptionPolicy], [1000, "Never"]);
  const critical = created(
    await call(
      api.url,
      "POST",
      `${NS}/pods`,
      pod("critical", { priorityClassName: "system-cluster-critical" }),
    ),
    "pod",
  );
  assert.equal(critical.spec.priority, 2000000000);

  const unknown = await call(
    api.url,
    "POST",
    `${NS}/pods`,
    pod("lost", { priorityClassName: "nope" }),
  );
  assert.equal(unknown.status, 403);
  assert.deepEqual(
    [unknown.body.reason, unknown.body.message, unknown.body.details],
    [
      "Forbidden",
      'pods "lost" is forbidden: no PriorityClass with name nope was found',
      { name: "lost", kind: "pods" },
    ],
  );
  const mismatch = await call(
    api.url,
    "POST",
    `${NS}/pods`,
    pod("odd", { priorityClassName: "high", priority: 5 }),
  );
  assert.equal(mismatch.status, 403);
  assert.equal(
    mismatch.body.message,
    'pods "odd" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
  );

  // Before any global default class, a pod that names none gets priority 0.
  const early = created(await call(api.url, "POST", `${NS}/pods`, pod("early")), "pod");
  assert.deepEqual([early.spec.priorityClassName, early.spec.priority], [undefined, 0]);
  // A global default class applies to a pod that names none. (Only one can be made: a second is
  // the plugin's 403, kind_validation_test.ts; of several — a race — the lowest, globalDefaultOf.)
  const defaultClass = (name: string, value: number) =>
    call(api.url, "POST", pcs, { metadata: { name }, value, globalDefault: true });
  created(await defaultClass("default-a", 10), "priorityclass");
  const plain = created(await call(api.url, "POST", `${NS}/pods`, pod("plain")), "pod");
  assert.deepEqual(
    [plain.spec.priorityClassName, plain.spec.priority, plain.spec.preemptionPolicy],
    ["default-a", 10, "PreemptLowerPriority"],
  );
  // An update keeps the priority set on create.
  const relabeled = await call(api.url, "PATCH", `${NS}/pods/plain`, {
    metadata: { labels: { a: "b" } },
  }, "application/merge-patch+json");
  assert.equal(relabeled.status, 200, JSON.stringify(relabeled.body));
  assert.equal(relabeled.body.spec.priority, 10);
  // The default follows the classes as they change: another once the first is gone.
  assert.equal((await call(api.url, "DELETE", `${pcs}/default-a`)).status, 200);
  created(await defaultClass("default-b", 20), "priorityclass");
  const later = created(await call(api.url, "POST", `${NS}/pods`, pod("later")), "pod");
  assert.deepEqual([later.spec.priorityClassName, later.spec.priority], ["default-b", 20]);
});
