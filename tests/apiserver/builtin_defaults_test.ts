/**
 * The defaults kube-apiserver gives built-in kinds, over real HTTP and with
 * kubectl: every pod spec (a Pod's and each workload's template), a Pod's
 * admission defaults (priority, the not-ready/unreachable tolerations), the
 * workloads' spec defaults, requests and limits in canonical form, and the
 * empty status a created workload starts with (a plain update keeps the
 * stored status).
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const NS = "/api/v1/namespaces/default";
const APPS = "/apis/apps/v1/namespaces/default";
const BATCH = "/apis/batch/v1/namespaces/default";

/** What kube's SetDefaults_PodSpec adds to every pod spec. */
const POD_SPEC_DEFAULTS = {
  dnsPolicy: "ClusterFirst",
  restartPolicy: "Always",
  schedulerName: "default-scheduler",
  securityContext: {},
  terminationGracePeriodSeconds: 30,
};
const CONTAINER_DEFAULTS = {
  terminationMessagePath: "/dev/termination-log",
  terminationMessagePolicy: "File",
};
const TOLERATIONS = [
  {
    key: "node.kubernetes.io/not-ready",
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: 300,
  },
  {
    key: "node.kubernetes.io/unreachable",
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: 300,
  },
];

const labels = { app: "web" };
const podTemplate = (spec: Record<string, unknown> = {}) => ({
  metadata: { labels },
  spec: { containers: [{ name: "web", image: "nginx:1.27" }], ...spec },
});
const templateSpec = {
  ...POD_SPEC_DEFAULTS,
  containers: [{
    name: "web",
    image: "nginx:1.27",
    imagePullPolicy: "IfNotPresent",
    ...CONTAINER_DEFAULTS,
  }],
};

Deno.test("a Pod gets kube's spec defaults, its admission defaults and canonical quantities", async () => {
  await using api = await startApiServer();
  const created = await call(api.url, "POST", `${NS}/pods`, {
    metadata: { name: "p" },
    spec: {
      containers: [{
        name: "app",
        image: "registry.example:5000/team/app",
        ports: [{ containerPort: 8080, name: "http" }],
        resources: { limits: { cpu: "1000m", memory: "1024Mi" }, requests: { cpu: 0.5 } },
        livenessProbe: { httpGet: { port: 8080 } },
        env: [{ name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
        volumeMounts: [{ name: "scratch", mountPath: "/tmp" }],
      }, {
        name: "side",
        image: "busybox@sha256:" + "a".repeat(64),
      }],
      volumes: [{ name: "scratch" }, { name: "conf", configMap: { name: "c" } }],
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const spec = created.body.spec;
  assert.deepEqual(spec.containers[0], {
    name: "app",
    image: "registry.example:5000/team/app",
    ports: [{ containerPort: 8080, name: "http", protocol: "TCP" }],
    resources: {
      limits: { cpu: "1", memory: "1Gi" },
      requests: { cpu: "500m", memory: "1Gi" },
    },
    livenessProbe: {
      httpGet: { port: 8080, path: "/", scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    },
    env: [{
      name: "NODE",
      valueFrom: { fieldRef: { fieldPath: "spec.nodeName", apiVersion: "v1" } },
    }],
    volumeMounts: [{ name: "scratch", mountPath: "/tmp" }],
    imagePullPolicy: "Always",
    ...CONTAINER_DEFAULTS,
  });
  assert.equal(spec.containers[1].imagePullPolicy, "IfNotPresent", "a digest and no tag");
  assert.deepEqual(spec.volumes, [
    { name: "scratch", emptyDir: {} },
    { name: "conf", configMap: { name: "c", defaultMode: 420 } },
  ]);
  for (const [k, v] of Object.entries(POD_SPEC_DEFAULTS)) assert.deepEqual(spec[k], v, k);
  assert.equal(spec.enableServiceLinks, true);
  assert.equal(spec.priority, 0);
  assert.equal(spec.preemptionPolicy, "PreemptLowerPriority");
  assert.deepEqual(spec.tolerations, TOLERATIONS);
  assert.equal(created.body.status.qosClass, "Burstable");

  // A toleration of every NoExecute taint already tolerates both: none is added.
  const tolerant = await call(api.url, "POST", `${NS}/pods`, {
    metadata: { name: "tolerant" },
    spec: {
      containers: [{ name: "c", image: "x" }],
      tolerations: [{ operator: "Exists", effect: "NoExecute" }],
      restartPolicy: "Never",
      hostNetwork: true,
    },
  });
  assert.deepEqual(tolerant.body.spec.tolerations, [{ operator: "Exists", effect: "NoExecute" }]);
  assert.equal(tolerant.body.spec.restartPolicy, "Never");

  // A label patch and a PUT of the pod as read change nothing in the spec.
  const patched = await call(
    api.url,
    "PATCH",
    `${NS}/pods/p`,
    { metadata: { labels: { a: "b" } } },
    "application/merge-patch+json",
  );
  assert.equal(patched.status, 200);
  assert.deepEqual(patched.body.spec, spec);
});

Deno.test("a request or limit that is not a quantity is kube's 400 decoding error", async () => {
  await using api = await startApiServer();
  const r = await call(api.url, "POST", `${APPS}/deployments`, {
    metadata: { name: "web" },
    spec: {
      selector: { matchLabels: labels },
      template: podTemplate({
        containers: [{ name: "web", image: "nginx", resources: { limits: { cpu: "lots" } } }],
      }),
    },
  });
  assert.equal(r.status, 400);
  assert.equal(
    r.body.message,
    `Deployment in version "v1" cannot be handled as a Deployment: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
  );
});

Deno.test("workloads get their spec defaults and every pod template kube's pod spec defaults", async () => {
  await using api = await startApiServer();
  const create = async (path: string, body: Record<string, unknown>) => {
    const r = await call(api.url, "POST", path, body);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.spec;
  };
  const selector = { matchLabels: labels };

  const sts = await create(`${APPS}/statefulsets`, {
    metadata: { name: "db" },
    spec: {
      selector,
      serviceName: "db",
      template: podTemplate(),
      volumeClaimTemplates: [{
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      }],
    },
  });
  assert.deepEqual(
    [sts.replicas, sts.podManagementPolicy, sts.updateStrategy, sts.revisionHistoryLimit],
    [1, "OrderedReady", { type: "RollingUpdate", rollingUpdate: { partition: 0 } }, 10],
  );
  assert.deepEqual(sts.persistentVolumeClaimRetentionPolicy, {
    whenDeleted: "Retain",
    whenScaled: "Retain",
  });
  assert.equal(sts.volumeClaimTemplates[0].spec.volumeMode, "Filesystem");
  assert.deepEqual(sts.volumeClaimTemplates[0].status, { phase: "Pending" });
  assert.deepEqual(sts.template.spec, templateSpec);

  const ds = await create(`${APPS}/daemonsets`, {
    metadata: { name: "agent" },
    spec: { selector, template: podTemplate() },
  });
  assert.deepEqual(ds.updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
  });
  assert.equal(ds.revisionHistoryLimit, 10);
  assert.deepEqual(ds.template.spec, templateSpec);

  const rs = await create(`${APPS}/replicasets`, {
    metadata: { name: "rs" },
    spec: { selector, template: podTemplate() },
  });
  assert.equal(rs.replicas, 1);
  assert.deepEqual(rs.template.spec, templateSpec);

  const deploy = await create(`${APPS}/deployments`, {
    metadata: { name: "web" },
    spec: { selector, template: podTemplate() },
  });
  assert.deepEqual(deploy.template.spec, templateSpec);

  const cj = await create(`${BATCH}/cronjobs`, {
    metadata: { name: "nightly" },
    spec: {
      schedule: "0 3 * * *",
      jobTemplate: { spec: { template: podTemplate({ restartPolicy: "OnFailure" }) } },
    },
  });
  assert.deepEqual(
    [cj.concurrencyPolicy, cj.suspend, cj.successfulJobsHistoryLimit, cj.failedJobsHistoryLimit],
    ["Allow", false, 3, 1],
  );
  assert.deepEqual(cj.jobTemplate.spec.template.spec, {
    ...templateSpec,
    restartPolicy: "OnFailure",
  });
  assert.equal("backoffLimit" in cj.jobTemplate.spec, false, "a job template is not a Job");

  const rc = await call(api.url, "POST", `${NS}/replicationcontrollers`, {
    metadata: { name: "old" },
    spec: { template: podTemplate() },
  });
  assert.equal(rc.status, 201, JSON.stringify(rc.body));
  assert.deepEqual(
    [rc.body.spec.replicas, rc.body.spec.selector, rc.body.metadata.labels],
    [1, labels, labels],
  );
  assert.deepEqual(rc.body.spec.template.spec, templateSpec);

  const pt = await call(api.url, "POST", `${NS}/podtemplates`, {
    metadata: { name: "pt" },
    template: podTemplate(),
  });
  assert.equal(pt.status, 201, JSON.stringify(pt.body));
  assert.deepEqual(pt.body.template.spec, templateSpec);
});

Deno.test("a created workload drops the status sent with it; a plain update keeps the stored status", async () => {
  await using api = await startApiServer();
  const selector = { matchLabels: labels };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [`${APPS}/deployments`, { selector, template: podTemplate() }, {}],
    [`${APPS}/replicasets`, { selector, template: podTemplate() }, { replicas: 0 }],
    [
      `${APPS}/statefulsets`,
      { selector, template: podTemplate() },
      { replicas: 0, availableReplicas: 0 },
    ],
    [`${APPS}/daemonsets`, { selector, template: podTemplate() }, {
      currentNumberScheduled: 0,
      numberMisscheduled: 0,
      desiredNumberScheduled: 0,
      numberReady: 0,
    }],
    [`${BATCH}/jobs`, { template: podTemplate({ restartPolicy: "Never" }) }, {}],
    [`${BATCH}/cronjobs`, {
      schedule: "* * * * *",
      jobTemplate: { spec: { template: podTemplate({ restartPolicy: "Never" }) } },
    }, {}],
    [`${NS}/replicationcontrollers`, { selector: labels, template: podTemplate() }, {
      replicas: 0,
    }],
  ];
  for (const [path, spec, empty] of cases) {
    const created = await call(api.url, "POST", path, {
      metadata: { name: "w" },
      spec,
      status: { replicas: 7, readyReplicas: 7, active: 2, conditions: [{ type: "Fake" }] },
    });
    assert.equal(created.status, 201, `${path}: ${JSON.stringify(created.body)}`);
    assert.deepEqual(created.body.status, empty, path);
    const written = await call(api.url, "PUT", `${path}/w/status`, {
      ...created.body,
      status: { ...empty, observedGeneration: 1 },
    });
    assert.equal(written.status, 200, path);
    const updated = await call(api.url, "PUT", `${path}/w`, {
      ...written.body,
      metadata: { ...written.body.metadata, labels: { x: "y" } },
      status: { replicas: 99 },
    });
    assert.equal(updated.status, 200, `${path}: ${JSON.stringify(updated.body)}`);
    assert.deepEqual(updated.body.status, { ...empty, observedGeneration: 1 }, path);
  }
});

testEachKubectl(
  ["1.27", "1.33"],
  "kubectl run makes a Pod with kube's defaults; kubectl create job a Job whose template has them",
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    await k.ok(["run", "web", "--image=nginx"]);
    const pod = JSON.parse(await k.ok(["get", "pod", "web", "-o", "json"]));
    assert.deepEqual(pod.spec.containers, [{
      name: "web",
      image: "nginx",
      imagePullPolicy: "Always",
      resources: {},
      ...CONTAINER_DEFAULTS,
    }]);
    for (const [key, v] of Object.entries(POD_SPEC_DEFAULTS)) {
      assert.deepEqual(pod.spec[key], v, key);
    }
    assert.deepEqual(
      [pod.spec.enableServiceLinks, pod.spec.priority, pod.spec.preemptionPolicy],
      [true, 0, "PreemptLowerPriority"],
    );
    assert.deepEqual(pod.spec.tolerations, TOLERATIONS);
    const yaml = await k.ok(["get", "pod", "web", "-o", "yaml"]);
    assert.match(yaml, /^ {2}dnsPolicy: ClusterFirst$/m);
    assert.match(yaml, /^ {4}terminationMessagePath: \/dev\/termination-log$/m);

    await k.ok(["create", "job", "once", "--image=busybox:1.36"]);
    const job = JSON.parse(await k.ok(["get", "job", "once", "-o", "json"]));
    assert.deepEqual(job.spec.template.spec, {
      ...POD_SPEC_DEFAULTS,
      restartPolicy: "Never",
      containers: [{
        name: "once",
        image: "busybox:1.36",
        imagePullPolicy: "IfNotPresent",
        resources: {},
        ...CONTAINER_DEFAULTS,
      }],
    });
    assert.deepEqual(job.status, {});
  },
);
