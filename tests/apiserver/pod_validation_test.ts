/**
 * kube-apiserver's validation of pod specs and of the updates kube forbids,
 * over real HTTP and with kubectl: a Job's restart policy, ports, requests
 * above limits, probes, volumes and mounts, a Pod's immutable spec, a
 * StatefulSet's forbidden spec updates — each with kube's 422 causes.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type RunningApiServer, startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const NS = "/api/v1/namespaces/default";
const APPS = "/apis/apps/v1/namespaces/default";
const BATCH = "/apis/batch/v1/namespaces/default";

type Cause = { reason: string; message: string; field: string };

async function refused(api: RunningApiServer, path: string, body: unknown, method = "POST") {
  const type = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const r = await call(api.url, method, path, body, type);
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(r.body.reason, "Invalid");
  return r.body as { message: string; details: { causes: Cause[] } };
}

const pod = (spec: Record<string, unknown>) => ({ metadata: { name: "p" }, spec });

Deno.test("a Job's pods must restart OnFailure or Never; a Deployment's Always", async () => {
  await using api = await startApiServer();
  const job = await refused(api, `${BATCH}/jobs`, {
    metadata: { name: "j" },
    spec: { template: { spec: { containers: [{ name: "c", image: "x" }] } } },
  });
  assert.equal(
    job.message,
    'Job.batch "j" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
  );
  assert.equal(job.details.causes[0]?.reason, "FieldValueNotSupported");
  const cron = await refused(api, `${BATCH}/cronjobs`, {
    metadata: { name: "c" },
    spec: {
      schedule: "* * * * *",
      jobTemplate: { spec: { template: { spec: { containers: [{ name: "c", image: "x" }] } } } },
    },
  });
  assert.equal(cron.details.causes[0]?.field, "spec.jobTemplate.spec.template.spec.restartPolicy");
  const deploy = await refused(api, `${APPS}/deployments`, {
    metadata: { name: "d" },
    spec: {
      selector: { matchLabels: { a: "b" } },
      template: {
        metadata: { labels: { a: "b" } },
        spec: { restartPolicy: "Never", containers: [{ name: "c", image: "x" }] },
      },
    },
  });
  assert.equal(
    deploy.message,
    'Deployment.apps "d" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
  );
});

Deno.test("ports: in 1–65535, named as kube names ports, names unique, protocol known", async () => {
  await using api = await startApiServer();
  const body = await refused(
    api,
    `${NS}/pods`,
    pod({
      containers: [{
        name: "c",
        image: "x",
        ports: [
          { containerPort: 0 },
          { containerPort: 70000, name: "http" },
          { containerPort: 80, name: "http" },
          { containerPort: 81, name: "Web_1" },
          { containerPort: 82, hostPort: 65536, protocol: "ICMP" },
        ],
      }],
    }),
  );
  assert.deepEqual(body.details.causes, [
    {
      reason: "FieldValueRequired",
      message: "Required value",
      field: "spec.containers[0].ports[0].containerPort",
    },
    {
      reason: "FieldValueInvalid",
      message: "Invalid value: 70000: must be between 1 and 65535, inclusive",
      field: "spec.containers[0].ports[1].containerPort",
    },
    {
      reason: "FieldValueDuplicate",
      message: 'Duplicate value: "http"',
      field: "spec.containers[0].ports[2].name",
    },
    {
      reason: "FieldValueInvalid",
      message:
        'Invalid value: "Web_1": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      field: "spec.containers[0].ports[3].name",
    },
    {
      reason: "FieldValueInvalid",
      message: "Invalid value: 65536: must be between 1 and 65535, inclusive",
      field: "spec.containers[0].ports[4].hostPort",
    },
    {
      reason: "FieldValueNotSupported",
      message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      field: "spec.containers[0].ports[4].protocol",
    },
  ]);
});

Deno.test("resources: requests may not exceed limits (compared exactly), nor be negative", async () => {
  await using api = await startApiServer();
  const body = await refused(
    api,
    `${NS}/pods`,
    pod({
      containers: [{
        name: "c",
        image: "x",
        resources: {
          limits: { cpu: "500m", memory: "1Gi", "example.com/gpu": 1 },
          requests: { cpu: "0.6", memory: "1073741824", "example.com/gpu": 0, storage: "-1" },
        },
      }],
    }),
  );
  assert.deepEqual(body.details.causes, [
    {
      reason: "FieldValueInvalid",
      message: 'Invalid value: "-1": must be greater than or equal to 0',
      field: "spec.containers[0].resources.requests[storage]",
    },
    {
      reason: "FieldValueInvalid",
      message: 'Invalid value: "600m": must be less than or equal to cpu limit of 500m',
      field: "spec.containers[0].resources.requests",
    },
    {
      reason: "FieldValueInvalid",
      message: 'Invalid value: "0": must be equal to example.com/gpu limit of 1',
      field: "spec.containers[0].resources.requests",
    },
  ]);
  const equal = await call(
    api.url,
    "POST",
    `${NS}/pods`,
    pod({
      containers: [{
        name: "c",
        image: "x",
        resources: { limits: { memory: "1Gi" }, requests: { memory: "1073741824" } },
      }],
    }),
  );
  assert.equal(equal.status, 201, "1Gi and 1073741824 are the same quantity");
});

Deno.test("probes and hooks need exactly one handler; volumes a name, unique, and one source; mounts a volume", async () => {
  await using api = await startApiServer();
  const body = await refused(
    api,
    `${NS}/pods`,
    pod({
      volumes: [
        { name: "a", emptyDir: {} },
        { name: "a", secret: { secretName: "s" } },
        { name: "Bad", emptyDir: {} },
        { name: "two", emptyDir: {}, configMap: { name: "c" } },
      ],
      containers: [{
        name: "c",
        image: "x",
        volumeMounts: [{ name: "missing", mountPath: "/m" }],
        livenessProbe: { exec: { command: ["true"] }, tcpSocket: { port: 1 } },
        readinessProbe: { periodSeconds: 5 },
        lifecycle: { preStop: {} },
      }],
    }),
  );
  assert.deepEqual(body.details.causes.map((c) => `${c.field}: ${c.message}`), [
    'spec.volumes[1].name: Duplicate value: "a"',
    "spec.volumes[2].name: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    "spec.volumes[3].configMap: Forbidden: may not specify more than 1 volume type",
    'spec.containers[0].volumeMounts[0].name: Not found: "missing"',
    "spec.containers[0].lifecycle.preStop: Required value: must specify a handler type",
    "spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
    "spec.containers[0].readinessProbe: Required value: must specify a handler type",
  ]);
});

Deno.test("a Pod's spec may change only where kube allows: images, activeDeadlineSeconds, added tolerations", async () => {
  await using api = await startApiServer();
  const created = await call(
    api.url,
    "POST",
    `${NS}/pods`,
    pod({ containers: [{ name: "c", image: "nginx:1.26" }] }),
  );
  assert.equal(created.status, 201);
  const merge = "application/merge-patch+json";
  const path = `${NS}/pods/p`;
  const strategic = "application/strategic-merge-patch+json";
  const image = await call(api.url, "PATCH", path, {
    spec: {
      containers: [{ name: "c", image: "nginx:1.27" }],
      activeDeadlineSeconds: 600,
      tolerations: [
        ...created.body.spec.tolerations,
        { key: "k", operator: "Exists", effect: "NoSchedule" },
      ],
    },
  }, strategic);
  assert.equal(image.status, 200, JSON.stringify(image.body));
  assert.equal(image.body.spec.containers[0].image, "nginx:1.27");

  const dns = await refused(api, path, { spec: { dnsPolicy: "Default" } }, "PATCH");
  assert.equal(dns.details.causes.length, 1);
  const cause = dns.details.causes[0]!;
  assert.equal(cause.field, "spec");
  assert.equal(cause.reason, "FieldValueForbidden");
  assert.equal(
    cause.message.split("\n")[0],
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
  );
  assert.match(cause.message, /dnsPolicy/);

  const longer = await refused(api, path, { spec: { activeDeadlineSeconds: 601 } }, "PATCH");
  assert.equal(
    longer.message,
    'Pod "p" is invalid: spec.activeDeadlineSeconds: Invalid value: 601: must be less than or equal to previous value',
  );
  const removed = await refused(api, path, { spec: { tolerations: [] } }, "PATCH");
  assert.equal(
    removed.message,
    'Pod "p" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
  );
  const added = await call(api.url, "GET", path);
  const more = await refused(api, path, {
    spec: { containers: [...added.body.spec.containers, { name: "d", image: "x" }] },
  }, "PATCH");
  assert.equal(
    more.message,
    'Pod "p" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers',
  );
  const labelled = await call(api.url, "PATCH", path, { metadata: { labels: { a: "b" } } }, merge);
  assert.equal(labelled.status, 200, "metadata stays mutable");
});

Deno.test("a StatefulSet's spec may change only in replicas, template, updateStrategy and a few more", async () => {
  await using api = await startApiServer();
  const sts = {
    metadata: { name: "db" },
    spec: {
      selector: { matchLabels: { a: "b" } },
      serviceName: "db",
      template: {
        metadata: { labels: { a: "b" } },
        spec: { containers: [{ name: "c", image: "x" }] },
      },
    },
  };
  assert.equal((await call(api.url, "POST", `${APPS}/statefulsets`, sts)).status, 201);
  const path = `${APPS}/statefulsets/db`;
  const merge = "application/merge-patch+json";
  const scaled = await call(api.url, "PATCH", path, {
    spec: { replicas: 3, minReadySeconds: 5, revisionHistoryLimit: 2 },
  }, merge);
  assert.equal(scaled.status, 200, JSON.stringify(scaled.body));
  const renamed = await refused(api, path, { spec: { serviceName: "other" } }, "PATCH");
  assert.equal(
    renamed.message,
    "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
  );
  const claims = await refused(api, path, {
    spec: { volumeClaimTemplates: [{ metadata: { name: "data" }, spec: {} }] },
  }, "PATCH");
  assert.equal(claims.details.causes[0]?.field, "spec");
});

testEachKubectl(
  ["1.27", "1.33"],
  "apply of a Job without restartPolicy and an edit of a pod's spec are refused as kube refuses them",
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const job = `apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    spec: {containers: [{name: pi, image: perl}]}
`;
    const refusedJob = await k.fails(["apply", "-f", "-"], { stdin: job });
    assert.match(
      refusedJob.stderr,
      /The Job "pi" is invalid: spec\.template\.spec\.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"/,
    );
    await k.ok(["run", "web", "--image=nginx", "--port=80"]);
    const edit = await k.fails([
      "patch",
      "pod",
      "web",
      "-p",
      '{"spec":{"containers":[{"name":"web","ports":[{"containerPort":81}]}]}}',
    ]);
    assert.match(
      edit.stderr,
      /The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`/,
    );
    await k.ok(["set", "image", "pod/web", "web=nginx:1.27"]);
    assert.equal(
      await k.ok(["get", "pod", "web", "-o", "jsonpath={.spec.containers[0].image}"]),
      "nginx:1.27",
    );
  },
);
