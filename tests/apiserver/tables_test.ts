/**
 * Server-side printing as kube-apiserver renders it: a Table per kind over
 * real HTTP (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), with
 * kube's column names and priorities (priority 1 is what `-o wide` adds) and
 * its cell formats, read from kube's `pkg/printers/internalversion` and the
 * apiextensions table convertor. Also a CRD's printer columns with kube's
 * JSONPath, and real kubectl `get` (with `-o wide`) on the answers.
 *
 * @module
 */

import { call as request } from "./_http.ts";
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";

/** The shared raw-HTTP call (`_http.ts`), with this file's argument order: body, then accept. */
const call = (url: string, method: string, path: string, body?: unknown, accept?: string) =>
  request(url, method, path, body, undefined, accept ? { accept } : {});

/**
 * A timestamp `seconds` before the moment it is sent: the cases are built when the module loads,
 * and a test that runs minutes later (a loaded machine, `--shuffle`) must still see "5m" for
 * `ago(300)` — so the time is read when the body is serialised (`toJSON`), not here.
 */
const ago = (seconds: number, micro = false) => ({
  toJSON: () => {
    const at = new Date(Date.now() - seconds * 1000).toISOString();
    return micro ? at.replace("Z", "000Z") : at; // a MicroTime: six fractional digits
  },
});

interface Case {
  name: string;
  /** The collection URL. */
  path: string;
  /** The objects to create there (in order). */
  create: Json[];
  /** A status for the last object, written through its `/status` (kube drops one sent on create). */
  status?: Json;
  /** [name, priority] of every column. */
  columns: Array<[string, number]>;
  /** The cells of the first row; `AGE` stands for any fresh age ("0s"…"9s"). */
  cells: unknown[];
  /** Row conditions, if any. */
  conditions?: unknown;
}

const AGE = Symbol("age");

const CASES: Case[] = [
  {
    name: "pods: READY STATUS RESTARTS AGE; wide IP NODE NOMINATED NODE READINESS GATES",
    path: "/api/v1/namespaces/default/pods",
    create: [{
      metadata: { name: "p" },
      spec: {
        containers: [{ name: "a", image: "busybox" }, { name: "b", image: "nginx" }],
        readinessGates: [{ conditionType: "example.com/gate" }],
      },
    }],
    columns: [
      ["Name", 0],
      ["Ready", 0],
      ["Status", 0],
      ["Restarts", 0],
      ["Age", 0],
      ["IP", 1],
      ["Node", 1],
      ["Nominated Node", 1],
      ["Readiness Gates", 1],
    ],
    cells: ["p", "0/2", AGE, "0", AGE, "<none>", "<none>", "<none>", "0/1"],
  },
  {
    name: "services: TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE; wide SELECTOR",
    path: "/api/v1/namespaces/default/services",
    create: [{
      metadata: { name: "s" },
      spec: {
        type: "NodePort",
        clusterIP: "10.96.0.7",
        externalIPs: ["1.2.3.4"],
        selector: { b: "2", a: "1" },
        ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }, {
          port: 53,
          nodePort: 30053,
          protocol: "UDP",
        }],
      },
    }],
    columns: [
      ["Name", 0],
      ["Type", 0],
      ["Cluster-IP", 0],
      ["External-IP", 0],
      ["Port(s)", 0],
      ["Age", 0],
      ["Selector", 1],
    ],
    cells: ["s", "NodePort", "10.96.0.7", "1.2.3.4", "80:30080/TCP,53:30053/UDP", AGE, "a=1,b=2"],
  },
  {
    name: "services: a LoadBalancer without an address is <pending>",
    path: "/api/v1/namespaces/default/services",
    create: [{
      metadata: { name: "lb" },
      spec: {
        type: "LoadBalancer",
        clusterIP: "10.96.0.8",
        ports: [{ port: 443, nodePort: 30443 }],
      },
    }],
    columns: [
      ["Name", 0],
      ["Type", 0],
      ["Cluster-IP", 0],
      ["External-IP", 0],
      ["Port(s)", 0],
      ["Age", 0],
      ["Selector", 1],
    ],
    cells: ["lb", "LoadBalancer", "10.96.0.8", "<pending>", "443:30443/TCP", AGE, "<none>"],
  },
  {
    name: "deployments: READY UP-TO-DATE AVAILABLE AGE; wide CONTAINERS IMAGES SELECTOR",
    path: "/apis/apps/v1/namespaces/default/deployments",
    create: [{
      metadata: { name: "d" },
      spec: {
        replicas: 3,
        selector: {
          matchLabels: { app: "d" },
          matchExpressions: [{ key: "tier", operator: "In", values: ["web", "api"] }],
        },
        template: {
          metadata: { labels: { app: "d", tier: "web" } },
          spec: { containers: [{ name: "a", image: "img:1" }, { name: "b", image: "img:2" }] },
        },
      },
    }],
    columns: [
      ["Name", 0],
      ["Ready", 0],
      ["Up-to-date", 0],
      ["Available", 0],
      ["Age", 0],
      ["Containers", 1],
      ["Images", 1],
      ["Selector", 1],
    ],
    cells: ["d", "0/3", 0, 0, AGE, "a,b", "img:1,img:2", "app=d,tier in (api,web)"],
  },
  {
    name: "jobs: STATUS COMPLETIONS DURATION AGE (kube 1.30+); wide CONTAINERS IMAGES SELECTOR",
    path: "/apis/batch/v1/namespaces/default/jobs",
    create: [{
      metadata: { name: "j" },
      spec: {
        completions: 2,
        selector: { matchLabels: { job: "j" } },
        template: {
          metadata: { labels: { job: "j" } },
          spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] },
        },
      },
    }],
    columns: [
      ["Name", 0],
      ["Status", 0],
      ["Completions", 0],
      ["Duration", 0],
      ["Age", 0],
      ["Containers", 1],
      ["Images", 1],
      ["Selector", 1],
    ],
    cells: ["j", "Running", "0/2", "", AGE, "c", "busybox", "job=j"],
  },
  {
    name: "cronjobs: SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE",
    path: "/apis/batch/v1/namespaces/default/cronjobs",
    create: [{
      metadata: { name: "cj" },
      spec: {
        schedule: "*/5 * * * *",
        suspend: false,
        jobTemplate: {
          spec: {
            template: {
              spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] },
            },
          },
        },
      },
    }],
    columns: [
      ["Name", 0],
      ["Schedule", 0],
      ["Timezone", 0],
      ["Suspend", 0],
      ["Active", 0],
      ["Last Schedule", 0],
      ["Age", 0],
      ["Containers", 1],
      ["Images", 1],
      ["Selector", 1],
    ],
    cells: ["cj", "*/5 * * * *", "<none>", "False", 0, "<none>", AGE, "c", "busybox", "<none>"],
  },
  {
    name: "serviceaccounts: SECRETS AGE",
    path: "/api/v1/namespaces/default/serviceaccounts",
    create: [{ metadata: { name: "sa" }, secrets: [{ name: "x" }] }],
    columns: [["Name", 0], ["Secrets", 0], ["Age", 0]],
    cells: ["sa", 1, AGE],
  },
  {
    name: "configmaps: DATA AGE (data and binaryData)",
    path: "/api/v1/namespaces/default/configmaps",
    create: [{ metadata: { name: "cm" }, data: { a: "1", b: "2" }, binaryData: { c: "AA==" } }],
    columns: [["Name", 0], ["Data", 0], ["Age", 0]],
    cells: ["cm", 3, AGE],
  },
  {
    name: "secrets: TYPE DATA AGE",
    path: "/api/v1/namespaces/default/secrets",
    create: [{ metadata: { name: "sec" }, type: "Opaque", data: { a: "MQ==" } }],
    columns: [["Name", 0], ["Type", 0], ["Data", 0], ["Age", 0]],
    cells: ["sec", "Opaque", 1, AGE],
  },
  {
    name: "roles: NAME CREATED AT (kube's default table)",
    path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
    create: [{ metadata: { name: "r" }, rules: [] }],
    columns: [["Name", 0], ["Created At", 0]],
    cells: ["r", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/],
  },
  {
    name: "clusterroles: NAME CREATED AT",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    create: [{ metadata: { name: "aaa-cr" }, rules: [] }],
    columns: [["Name", 0], ["Created At", 0]],
    cells: ["aaa-cr", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/],
  },
  {
    name: "rolebindings: ROLE AGE; wide USERS GROUPS SERVICEACCOUNTS",
    path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
    create: [{
      metadata: { name: "rb" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "r" },
      subjects: [
        { kind: "User", name: "alice", apiGroup: "rbac.authorization.k8s.io" },
        { kind: "User", name: "bob", apiGroup: "rbac.authorization.k8s.io" },
        { kind: "ServiceAccount", name: "sa", namespace: "default" },
      ],
    }],
    columns: [
      ["Name", 0],
      ["Role", 0],
      ["Age", 0],
      ["Users", 1],
      ["Groups", 1],
      ["ServiceAccounts", 1],
    ],
    cells: ["rb", "Role/r", AGE, "alice, bob", "", "default/sa"],
  },
  {
    name:
      "events: LAST SEEN TYPE REASON OBJECT MESSAGE; wide SUBOBJECT SOURCE FIRST SEEN COUNT NAME",
    path: "/api/v1/namespaces/default/events",
    create: [{
      metadata: { name: "ev" },
      involvedObject: {
        kind: "Pod",
        name: "p",
        namespace: "default",
        fieldPath: "spec.containers{a}",
      },
      type: "Warning",
      reason: "BackOff",
      message: "  restarting  ",
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: ago(3600),
      lastTimestamp: ago(300),
      count: 7,
    }],
    columns: [
      ["Last Seen", 0],
      ["Type", 0],
      ["Reason", 0],
      ["Object", 0],
      ["Subobject", 1],
      ["Source", 1],
      ["Message", 0],
      ["First Seen", 1],
      ["Count", 1],
      ["Name", 1],
    ],
    cells: [
      // The seconds between the create and the list (a loaded machine) may show: 5m or 5m1s.
      /^5m(\ds)?$/,
      "Warning",
      "BackOff",
      "pod/p",
      "spec.containers{a}",
      "kubelet, node-1",
      "restarting",
      "60m",
      7,
      "ev",
    ],
  },
  {
    name: "events.k8s.io events: the same columns from regarding/note/series",
    path: "/apis/events.k8s.io/v1/namespaces/default/events",
    create: [{
      metadata: { name: "ev2" },
      eventTime: ago(600, true),
      regarding: { kind: "Deployment", name: "d", namespace: "default" },
      type: "Normal",
      reason: "Scaled",
      note: "scaled up",
      action: "Scale",
      reportingController: "deployment-controller",
      reportingInstance: "cm-1",
      series: { count: 4, lastObservedTime: ago(90) },
    }],
    columns: [
      ["Last Seen", 0],
      ["Type", 0],
      ["Reason", 0],
      ["Object", 0],
      ["Subobject", 1],
      ["Source", 1],
      ["Message", 0],
      ["First Seen", 1],
      ["Count", 1],
      ["Name", 1],
    ],
    cells: [
      /^9\ds$/, // 90 s, and the seconds between the create and the list on a loaded machine
      "Normal",
      "Scaled",
      "deployment/d",
      "",
      "deployment-controller, cm-1",
      "scaled up",
      "10m",
      4,
      "ev2",
    ],
  },
  {
    name: "namespaces: STATUS AGE",
    path: "/api/v1/namespaces",
    create: [{ metadata: { name: "aaa-ns" } }],
    columns: [["Name", 0], ["Status", 0], ["Age", 0]],
    cells: ["aaa-ns", "Active", AGE],
  },
  {
    name:
      "nodes: STATUS ROLES AGE VERSION; wide INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME",
    path: "/api/v1/nodes",
    create: [{
      metadata: {
        name: "n1",
        labels: { "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge" },
      },
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        addresses: [{ type: "InternalIP", address: "10.1.1.1" }],
        nodeInfo: { kubeletVersion: "v1.33.0", osImage: "Debian" },
      },
    }],
    columns: [
      ["Name", 0],
      ["Status", 0],
      ["Roles", 0],
      ["Age", 0],
      ["Version", 0],
      ["Internal-IP", 1],
      ["External-IP", 1],
      ["OS-Image", 1],
      ["Kernel-Version", 1],
      ["Container-Runtime", 1],
    ],
    cells: [
      "n1",
      AGE,
      "control-plane,edge",
      AGE,
      AGE,
      "10.1.1.1",
      "<none>",
      "Debian",
      "<unknown>",
      "<unknown>",
    ],
  },
  {
    name: "storageclasses: the default class named so, kube's defaults for unset fields",
    path: "/apis/storage.k8s.io/v1/storageclasses",
    create: [{
      metadata: {
        name: "fast",
        annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
      },
      provisioner: "example.com/disk",
    }],
    columns: [
      ["Name", 0],
      ["Provisioner", 0],
      ["ReclaimPolicy", 0],
      ["VolumeBindingMode", 0],
      ["AllowVolumeExpansion", 0],
      ["Age", 0],
    ],
    cells: ["fast (default)", "example.com/disk", "Delete", "Immediate", false, AGE],
  },
  {
    name: "poddisruptionbudgets: MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE",
    path: "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    create: [{
      metadata: { name: "pdb" },
      spec: { minAvailable: "50%", selector: { matchLabels: { app: "a" } } },
    }],
    columns: [
      ["Name", 0],
      ["Min Available", 0],
      ["Max Unavailable", 0],
      ["Allowed Disruptions", 0],
      ["Age", 0],
    ],
    cells: ["pdb", "50%", "N/A", 0, AGE],
  },
  {
    name: "networkpolicies: POD-SELECTOR AGE",
    path: "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
    create: [{ metadata: { name: "np" }, spec: { podSelector: {} } }],
    columns: [["Name", 0], ["Pod-Selector", 0], ["Age", 0]],
    cells: ["np", "<none>", AGE],
  },
  {
    name:
      "persistentvolumes: CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS …; wide VOLUMEMODE",
    path: "/api/v1/persistentvolumes",
    create: [{
      metadata: { name: "pv1", annotations: { "volume.beta.kubernetes.io/storage-class": "old" } },
      spec: {
        capacity: { storage: "5Gi" },
        accessModes: ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        claimRef: { namespace: "default", name: "data" },
        storageClassName: "fast",
        volumeMode: "Filesystem",
        hostPath: { path: "/tmp" },
      },
    }],
    columns: [
      ["Name", 0],
      ["Capacity", 0],
      ["Access Modes", 0],
      ["Reclaim Policy", 0],
      ["Status", 0],
      ["Claim", 0],
      ["StorageClass", 0],
      ["VolumeAttributesClass", 0],
      ["Reason", 0],
      ["Age", 0],
      ["VolumeMode", 1],
    ],
    cells: [
      "pv1",
      "5Gi",
      "RWO,RWX",
      "Retain",
      AGE,
      "default/data",
      "old",
      "<unset>",
      "",
      AGE,
      "Filesystem",
    ],
  },
  {
    name:
      "persistentvolumeclaims: STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS …; wide VOLUMEMODE",
    path: "/api/v1/namespaces/default/persistentvolumeclaims",
    create: [{
      metadata: { name: "data" },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "1Gi" } },
        storageClassName: "fast",
      },
    }],
    columns: [
      ["Name", 0],
      ["Status", 0],
      ["Volume", 0],
      ["Capacity", 0],
      ["Access Modes", 0],
      ["StorageClass", 0],
      ["VolumeAttributesClass", 0],
      ["Age", 0],
      ["VolumeMode", 1],
    ],
    // Not bound: no volume, so no capacity or access modes (the request is not shown); Pending,
    // its volumeMode defaulted as kube defaults it.
    cells: ["data", "Pending", "", "", "", "fast", "<unset>", AGE, "Filesystem"],
  },
  {
    name: "endpoints: ENDPOINTS (three at most, then + N more...) AGE",
    path: "/api/v1/namespaces/default/endpoints",
    create: [{
      metadata: { name: "web" },
      subsets: [
        {
          addresses: [{ ip: "10.0.0.1" }, { ip: "fd00::2" }],
          ports: [{ name: "http", port: 80 }, { name: "https", port: 443 }],
        },
        { addresses: [{ ip: "10.0.0.3" }] },
      ],
    }],
    columns: [["Name", 0], ["Endpoints", 0], ["Age", 0]],
    cells: ["web", "10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 2 more...", AGE],
  },
  {
    name: "resourcequotas: AGE REQUEST LIMIT from the status",
    path: "/api/v1/namespaces/default/resourcequotas",
    create: [{
      metadata: { name: "q" },
      spec: { hard: { pods: "10", "limits.cpu": "2", "requests.memory": "1Gi" } },
    }],
    status: {
      hard: { pods: "10", "limits.cpu": "2", "requests.memory": "1Gi" },
      used: { pods: "3", "limits.cpu": "500m" },
    },
    columns: [["Name", 0], ["Age", 0], ["Request", 0], ["Limit", 0]],
    cells: ["q", AGE, "pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2"],
  },
  {
    name: "horizontalpodautoscalers: REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE",
    path: "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
    create: [{
      metadata: { name: "web" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        maxReplicas: 5,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
          },
          {
            type: "Pods",
            pods: { metric: { name: "qps" }, target: { type: "AverageValue", averageValue: "1k" } },
          },
          {
            type: "Resource",
            resource: { name: "memory", target: { type: "AverageValue", averageValue: "1Gi" } },
          },
        ],
      },
    }],
    status: {
      currentReplicas: 2,
      desiredReplicas: 2,
      currentMetrics: [{
        type: "Resource",
        resource: { name: "cpu", current: { averageUtilization: 45 } },
      }],
    },
    columns: [
      ["Name", 0],
      ["Reference", 0],
      ["Targets", 0],
      ["MinPods", 0],
      ["MaxPods", 0],
      ["Replicas", 0],
      ["Age", 0],
    ],
    cells: [
      "web",
      "Deployment/web",
      "cpu: 45%/80%, <unknown>/1k + 1 more...",
      "1", // minReplicas, defaulted (a string cell, as kube prints it)
      5,
      2,
      AGE,
    ],
  },
  {
    name: "ingresses: CLASS HOSTS ADDRESS PORTS AGE",
    path: "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
    create: [{
      metadata: { name: "web" },
      spec: {
        ingressClassName: "nginx",
        tls: [{ hosts: ["a.example.com"] }],
        rules: [
          { host: "a.example.com" },
          {},
          { host: "b.example.com" },
          { host: "c.example.com" },
          {
            host: "d.example.com",
          },
        ],
      },
    }],
    columns: [["Name", 0], ["Class", 0], ["Hosts", 0], ["Address", 0], ["Ports", 0], ["Age", 0]],
    cells: [
      "web",
      "nginx",
      "a.example.com,b.example.com,c.example.com + 2 more...",
      "",
      "80, 443",
      AGE,
    ],
  },
  {
    name: "ingressclasses: CONTROLLER PARAMETERS AGE",
    path: "/apis/networking.k8s.io/v1/ingressclasses",
    create: [{
      metadata: { name: "nginx" },
      spec: {
        controller: "k8s.io/ingress-nginx",
        parameters: { apiGroup: "k8s.example.com", kind: "IngressParameters", name: "external-lb" },
      },
    }],
    columns: [["Name", 0], ["Controller", 0], ["Parameters", 0], ["Age", 0]],
    cells: ["nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", AGE],
  },
  {
    name: "priorityclasses: VALUE GLOBAL-DEFAULT PREEMPTION-POLICY AGE",
    path: "/apis/scheduling.k8s.io/v1/priorityclasses",
    create: [{ metadata: { name: "high" }, value: 1000000, preemptionPolicy: "Never" }],
    columns: [["Name", 0], ["Value", 0], ["Global-Default", 0], ["Preemption-Policy", 0], [
      "Age",
      0,
    ]],
    cells: ["high", 1000000, false, "Never", AGE],
  },
  {
    name: "customresourcedefinitions: NAME CREATED AT (no AGE)",
    path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    create: [{
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { kind: "Widget", plural: "widgets" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
        }],
      },
    }],
    columns: [["Name", 0], ["Created At", 0]],
    cells: ["widgets.example.com", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/],
  },
];

for (const c of CASES) {
  Deno.test(`Table: ${c.name}`, async () => {
    await using api = await startApiServer();
    let name = "";
    for (const body of c.create) {
      const made = await call(api.url, "POST", c.path, body);
      assert.equal(made.status, 201, JSON.stringify(made.body));
      name = made.body.metadata.name;
      if (c.status) {
        const put = await call(api.url, "PUT", `${c.path}/${name}/status`, {
          ...made.body,
          status: c.status,
        });
        assert.equal(put.status, 200, JSON.stringify(put.body));
      }
    }
    const list = await call(api.url, "GET", c.path, undefined, `${TABLE},application/json`);
    assert.equal(list.status, 200);
    assert.equal(list.body.kind, "Table");
    const columns = list.body.columnDefinitions.map((d: Json) => [d.name, d.priority ?? 0]);
    assert.deepEqual(columns, c.columns);
    const row = list.body.rows.find((r: Json) => r.object.metadata.name === name);
    assert.ok(row, `a row for ${name}`);
    assert.equal(row.cells.length, c.columns.length);
    c.cells.forEach((want, i) => {
      const got = row.cells[i];
      if (want === AGE) return; // set by the server or the node: not asserted here
      if (want instanceof RegExp) assert.match(String(got), want, `cell ${c.columns[i]![0]}`);
      else assert.deepEqual(got, want, `cell ${c.columns[i]![0]}`);
    });
    const one = await call(api.url, "GET", `${c.path}/${name}`, undefined, TABLE);
    assert.equal(one.body.kind, "Table");
    assert.equal(one.body.rows.length, 1);
  });
}

Deno.test("Table: a pod's STATUS, READY and RESTARTS from its container statuses", async () => {
  await using api = await startApiServer();
  const pods = "/api/v1/namespaces/default/pods";
  const pod = (name: string, status: Json) => ({
    metadata: { name },
    spec: { containers: [{ name: "a", image: "x" }, { name: "b", image: "y" }] },
    status,
  });
  const running = { state: { running: { startedAt: ago(600) } }, ready: true };
  const rows: Array<[string, Json, string[]]> = [
    ["run", {
      phase: "Running",
      podIPs: [{ ip: "10.2.0.5" }],
      containerStatuses: [{ name: "a", restartCount: 0, ...running }, {
        name: "b",
        restartCount: 2,
        ...running,
        lastState: { terminated: { exitCode: 1, finishedAt: ago(300) } },
      }],
    }, ["2/2", "Running", "2 (5m ago)"]],
    ["crash", {
      phase: "Running",
      containerStatuses: [{ name: "a", restartCount: 0, ...running }, {
        name: "b",
        restartCount: 0,
        ready: false,
        state: { waiting: { reason: "CrashLoopBackOff" } },
      }],
    }, ["1/2", "CrashLoopBackOff", "0"]],
    ["done", {
      phase: "Succeeded",
      containerStatuses: [
        { name: "a", state: { terminated: { exitCode: 0, reason: "Completed" } } },
        { name: "b", state: { terminated: { exitCode: 0, reason: "Completed" } } },
      ],
    }, ["0/2", "Completed", "0"]],
    ["killed", {
      phase: "Failed",
      containerStatuses: [{ name: "a", state: { terminated: { exitCode: 137, signal: 9 } } }],
    }, ["0/2", "Signal:9", "0"]],
  ];
  for (const [name, status] of rows) {
    const made = await call(api.url, "POST", pods, pod(name, {}));
    assert.equal(made.status, 201);
    const st = await call(api.url, "PUT", `${pods}/${name}/status`, { ...made.body, status });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  }
  const table = await call(api.url, "GET", pods, undefined, TABLE);
  for (const [name, , want] of rows) {
    const row = table.body.rows.find((r: Json) => r.cells[0] === name);
    assert.deepEqual(row.cells.slice(1, 4), want, name);
  }
  const ip = table.body.rows.find((r: Json) => r.cells[0] === "run").cells[5];
  assert.equal(ip, "10.2.0.5");
  const done = table.body.rows.find((r: Json) => r.cells[0] === "done");
  assert.deepEqual(done.conditions, [{
    type: "Completed",
    status: "True",
    reason: "Succeeded",
    message: "The pod has completed successfully.",
  }]);
});

const READY_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { kind: "Gadget", plural: "gadgets", singular: "gadget" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
        },
      },
      additionalPrinterColumns: [
        {
          name: "Ready",
          type: "string",
          jsonPath: '.status.conditions[?(@.type=="Ready")].status',
        },
        { name: "Reason", type: "string", jsonPath: ".status.conditions[-1].reason" },
        { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
        { name: "Ratio", type: "number", jsonPath: ".spec.ratio" },
        { name: "On", type: "boolean", jsonPath: ".spec.on" },
        { name: "Images", type: "string", jsonPath: ".spec.images[*]", priority: 1 },
        { name: "Notes", type: "string", jsonPath: ".metadata.annotations" },
        { name: "Since", type: "date", jsonPath: ".status.conditions[0].lastTransitionTime" },
        { name: "Bad Date", type: "date", jsonPath: ".spec.when" },
        { name: "Wrong Type", type: "integer", jsonPath: ".spec.name" },
        { name: "Missing", type: "string", jsonPath: ".spec.nothing" },
        { name: "Broken", type: "string", jsonPath: ".spec.items[" },
        { name: "After Broken", type: "string", jsonPath: ".spec.name" },
      ],
    }],
  },
};

const GADGET = {
  apiVersion: "example.com/v1",
  kind: "Gadget",
  metadata: { name: "g1", annotations: { b: "2", a: "<1>" } },
  spec: {
    replicas: 3,
    ratio: 0.25,
    on: true,
    images: ["img:1", "img:2"],
    when: "yesterday",
    name: "x",
  },
};

const CONDITIONS = [
  { type: "Synced", status: "True", reason: "Fine", lastTransitionTime: ago(4 * 3600) },
  { type: "Ready", status: "False", reason: "Waiting", lastTransitionTime: ago(30) },
];

Deno.test("Table: CRD printer columns with kube's JSONPath and per-type cells", async () => {
  await using api = await startApiServer();
  assert.equal(
    (await call(
      api.url,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      READY_CRD,
    ))
      .status,
    201,
  );
  const path = "/apis/example.com/v1/namespaces/default/gadgets";
  const made = await call(api.url, "POST", path, GADGET);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const st = await call(api.url, "PUT", `${path}/g1/status`, {
    ...made.body,
    status: { conditions: CONDITIONS },
  });
  assert.equal(st.status, 200, JSON.stringify(st.body));
  const table = await call(api.url, "GET", path, undefined, TABLE);
  assert.deepEqual(
    table.body.columnDefinitions.map((c: Json) => [c.name, c.type, c.priority]),
    [
      ["Name", "string", 0],
      ["Ready", "string", 0],
      ["Reason", "string", 0],
      ["Replicas", "integer", 0],
      ["Ratio", "number", 0],
      ["On", "boolean", 0],
      ["Images", "string", 1],
      ["Notes", "string", 0],
      ["Since", "date", 0],
      ["Bad Date", "date", 0],
      ["Wrong Type", "integer", 0],
      ["Missing", "string", 0],
    ],
    "a column whose path does not parse is dropped with every column after it",
  );
  assert.equal(
    table.body.columnDefinitions[1].description,
    'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status',
  );
  assert.deepEqual(table.body.rows[0].cells, [
    "g1",
    "False",
    "Waiting",
    3,
    0.25,
    true,
    "img:1",
    '{"a":"\\u003c1\\u003e","b":"2"}',
    "4h",
    "<invalid>",
    null,
    null,
  ]);
});

const WANTED = ["1.27", "1.33"];
testEachKubectl(
  WANTED,
  `get shows kube's columns, -o wide the priority ones, and the Ready column`,
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const ns = "/api/v1/namespaces/default";
    await call(api.url, "POST", `${ns}/services`, {
      metadata: { name: "web" },
      spec: {
        clusterIP: "10.96.0.9",
        selector: { app: "web" },
        ports: [{ port: 80, protocol: "TCP" }],
      },
    });
    const svc = (await k.ok(["get", "svc", "web"])).trimEnd().split("\n");
    assert.match(svc[0]!, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/);
    assert.match(svc[1]!, /^web\s+ClusterIP\s+10\.96\.0\.9\s+<none>\s+80\/TCP\s+\d+s$/);
    const wide = (await k.ok(["get", "svc", "web", "-o", "wide"])).trimEnd().split("\n");
    assert.match(wide[0]!, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR$/);
    assert.match(wide[1]!, /\s+app=web$/);

    const pod = await call(api.url, "POST", `${ns}/pods`, {
      metadata: { name: "p1" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    });
    await call(api.url, "PUT", `${ns}/pods/p1/status`, {
      ...pod.body,
      status: { phase: "Pending", podIPs: [{ ip: "10.2.0.9" }] },
    });
    const pods = (await k.ok(["get", "pods", "-o", "wide"])).trimEnd().split("\n");
    assert.match(
      pods[0]!,
      /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/,
    );
    assert.match(
      pods[1]!,
      /^p1\s+0\/1\s+Pending\s+0\s+\d+s\s+10\.2\.0\.9\s+<none>\s+<none>\s+<none>$/,
    );

    await call(api.url, "POST", `${ns}/events`, {
      metadata: { name: "e1" },
      involvedObject: { kind: "Service", name: "web", namespace: "default" },
      type: "Normal",
      reason: "Synced",
      message: "all good",
      firstTimestamp: ago(7200),
      lastTimestamp: ago(120),
    });
    const events = (await k.ok(["get", "events"])).trimEnd().split("\n");
    assert.match(events[0]!, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.match(events[1]!, /^2m(\ds)?\s+Normal\s+Synced\s+service\/web\s+all good$/);

    await call(
      api.url,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      READY_CRD,
    );
    const crds = (await k.ok(["get", "crd"])).trimEnd().split("\n");
    assert.match(crds[0]!, /^NAME\s+CREATED AT$/);
    const path = "/apis/example.com/v1/namespaces/default/gadgets";
    const made = await call(api.url, "POST", path, GADGET);
    await call(api.url, "PUT", `${path}/g1/status`, {
      ...made.body,
      status: { conditions: CONDITIONS },
    });
    const gadgets = (await k.ok(["get", "gadgets"])).trimEnd().split("\n");
    assert.match(gadgets[0]!, /^NAME\s+READY\s+REASON\s+REPLICAS\s+RATIO\s+ON\s+NOTES\s+SINCE\s+/);
    assert.match(gadgets[1]!, /^g1\s+False\s+Waiting\s+3\s+0\.25\s+true\s+/);
    const gadgetsWide = (await k.ok(["get", "gadgets", "-o", "wide"])).trimEnd().split("\n");
    assert.match(gadgetsWide[0]!, /\s+IMAGES\s+/);
    assert.match(gadgetsWide[1]!, /\s+img:1\s+/);
  },
);

testEachKubectl(
  WANTED,
  "get prints kube's columns for volumes, claims, endpoints, HPAs, ingresses and priority classes",
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const made = (path: string, body: Json) =>
      call(api.url, "POST", path, body).then((r) =>
        assert.equal(r.status, 201, JSON.stringify(r.body))
      );
    await made("/api/v1/persistentvolumes", {
      metadata: { name: "pv1" },
      spec: {
        capacity: { storage: "5Gi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        storageClassName: "fast",
        volumeMode: "Block",
        hostPath: { path: "/tmp" },
      },
    });
    const pv = (await k.ok(["get", "pv", "-o", "wide"])).trimEnd().split("\n");
    assert.match(
      pv[0]!,
      /^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+REASON\s+AGE\s+VOLUMEMODE$/,
    );
    assert.match(pv[1]!, /^pv1\s+5Gi\s+RWO\s+Retain\s+Pending\s+fast\s+<unset>\s+\d+s\s+Block$/);
    await made("/api/v1/namespaces/default/endpoints", {
      metadata: { name: "web" },
      subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 8080 }] }],
    });
    const ep = (await k.ok(["get", "endpoints", "web"])).trimEnd().split("\n");
    assert.match(ep[0]!, /^NAME\s+ENDPOINTS\s+AGE$/);
    assert.match(ep[1]!, /^web\s+10\.0\.0\.1:8080\s+\d+s$/);
    await made("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", {
      metadata: { name: "web" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 2,
        maxReplicas: 5,
        metrics: [{
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
        }],
      },
    });
    const hpa = (await k.ok(["get", "hpa"])).trimEnd().split("\n");
    assert.match(hpa[0]!, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/);
    assert.match(hpa[1]!, /^web\s+Deployment\/web\s+cpu: <unknown>\/80%\s+2\s+5\s+0\s+\d+s$/);
    await made("/apis/networking.k8s.io/v1/namespaces/default/ingresses", {
      metadata: { name: "web" },
      spec: { rules: [{ host: "a.example.com" }] },
    });
    const ing = (await k.ok(["get", "ingress", "-o", "wide"])).trimEnd().split("\n");
    assert.match(ing[0]!, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/);
    assert.match(ing[1]!, /^web\s+<none>\s+a\.example\.com\s+80\s+\d+s$/);
    await made("/apis/scheduling.k8s.io/v1/priorityclasses", {
      metadata: { name: "high" },
      value: 1000,
      globalDefault: true,
      preemptionPolicy: "Never",
    });
    const pc = (await k.ok(["get", "priorityclass", "high"])).trimEnd().split("\n");
    assert.match(pc[0]!, /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+PREEMPTION-POLICY\s+AGE$/);
    assert.match(pc[1]!, /^high\s+1000\s+true\s+Never\s+\d+s$/);
  },
);
