/**
 * kube-apiserver's validation of built-in kinds that users hit first, with
 * kube's 422 messages: a Deployment's selector (required, matching the
 * template's labels), replicas ≥ 0, containers with a name and an image; and
 * immutable fields (a Deployment's selector, a Job's template, a Secret's
 * type, an immutable ConfigMap's data) — over real HTTP and with kubectl.
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

const deployment = (spec: Record<string, unknown>) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web" },
  spec,
});
const template = (labels: Record<string, string> | undefined, containers: unknown[]) => ({
  metadata: labels ? { labels } : {},
  spec: { containers },
});
const NGINX = [{ name: "web", image: "nginx" }];

async function refused(api: RunningApiServer, path: string, body: unknown, method = "POST") {
  const type = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const r = await call(api.url, method, path, body, type);
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(r.body.reason, "Invalid");
  return r.body;
}

Deno.test("a Deployment without a selector is 422 with kube's two causes", async () => {
  await using api = await startApiServer();
  const body = await refused(
    api,
    `${APPS}/deployments`,
    deployment({ template: template({ app: "web" }, NGINX) }),
  );
  assert.equal(
    body.message,
    'Deployment.apps "web" is invalid: [spec.selector: Required value, ' +
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`]',
  );
  assert.deepEqual(body.details.causes, [
    { reason: "FieldValueRequired", message: "Required value", field: "spec.selector" },
    {
      reason: "FieldValueInvalid",
      message: 'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
      field: "spec.template.metadata.labels",
    },
  ]);
  assert.equal((await call(api.url, "GET", `${APPS}/deployments/web`)).status, 404);
});

Deno.test("a selector that does not match the template's labels, an empty selector, negative replicas", async () => {
  await using api = await startApiServer();
  const mismatch = await refused(
    api,
    `${APPS}/deployments`,
    deployment({
      selector: { matchLabels: { app: "web" } },
      template: template({ app: "other" }, NGINX),
    }),
  );
  assert.equal(
    mismatch.message,
    'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`',
  );
  const expressions = await refused(
    api,
    `${APPS}/replicasets`,
    {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "rs" },
      spec: {
        selector: { matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] },
        template: template({ tier: "c" }, NGINX),
      },
    },
  );
  assert.match(
    expressions.message,
    /spec\.template\.metadata\.labels: Invalid value: \{"tier":"c"\}/,
  );
  const empty = await refused(
    api,
    `${APPS}/statefulsets`,
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "db" },
      spec: { selector: {}, template: template({ app: "db" }, NGINX) },
    },
  );
  assert.equal(
    empty.message,
    'StatefulSet.apps "db" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for statefulset',
  );
  const negative = await refused(
    api,
    `${APPS}/deployments`,
    deployment({
      replicas: -1,
      selector: { matchLabels: { app: "web" } },
      template: template({ app: "web" }, NGINX),
    }),
  );
  assert.equal(
    negative.message,
    'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
  );
  const ok = await call(
    api.url,
    "POST",
    `${APPS}/deployments`,
    deployment({
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      template: template({ app: "web", extra: "x" }, NGINX),
    }),
  );
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  const scaled = await refused(api, `${APPS}/deployments/web`, { spec: { replicas: -3 } }, "PATCH");
  assert.match(
    scaled.message,
    /spec\.replicas: Invalid value: -3: must be greater than or equal to 0$/,
  );
});

Deno.test("pods and pod templates need containers, each with a name (a DNS label, unique) and an image", async () => {
  await using api = await startApiServer();
  const none = await refused(api, `${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: {},
  });
  assert.equal(none.message, 'Pod "p" is invalid: spec.containers: Required value');
  const unnamed = await refused(api, `${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: { containers: [{ image: "nginx" }, { name: "a" }, { name: "B", image: "x" }] },
  });
  assert.deepEqual(unnamed.details.causes.map((c: { field: string }) => c.field), [
    "spec.containers[0].name",
    "spec.containers[1].image",
    "spec.containers[2].name",
  ]);
  assert.equal(unnamed.details.causes[0].message, "Required value");
  assert.match(
    unnamed.details.causes[2].message,
    /^Invalid value: "B": a lowercase RFC 1123 label/,
  );
  const duplicate = await refused(api, `${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: { containers: [{ name: "a", image: "x" }, { name: "a", image: "y" }] },
  });
  assert.equal(
    duplicate.message,
    'Pod "p" is invalid: spec.containers[1].name: Duplicate value: "a"',
  );
  const inTemplate = await refused(
    api,
    `${APPS}/deployments`,
    deployment({
      selector: { matchLabels: { app: "web" } },
      template: template({ app: "web" }, []),
    }),
  );
  assert.equal(
    inTemplate.message,
    'Deployment.apps "web" is invalid: spec.template.spec.containers: Required value',
  );
});

Deno.test("immutable fields: a Deployment's selector, a Job's template, a Secret's type, an immutable ConfigMap's data", async () => {
  await using api = await startApiServer();
  const created = await call(
    api.url,
    "POST",
    `${APPS}/deployments`,
    deployment({
      selector: { matchLabels: { app: "web" } },
      template: template({ app: "web", v: "1" }, NGINX),
    }),
  );
  assert.equal(created.status, 201);
  const selector = await refused(
    api,
    `${APPS}/deployments/web`,
    {
      spec: {
        selector: { matchLabels: { app: "web", v: "1" } },
      },
    },
    "PATCH",
  );
  assert.equal(
    selector.message,
    'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web","v":"1"}}: field is immutable',
  );

  const job = await call(api.url, "POST", `${BATCH}/jobs`, {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "j" },
    spec: { template: { spec: { restartPolicy: "Never", containers: NGINX } } },
  });
  assert.equal(job.status, 201, JSON.stringify(job.body));
  const jobPatch = await refused(
    api,
    `${BATCH}/jobs/j`,
    { spec: { template: { spec: { containers: [{ name: "web", image: "nginx:2" }] } } } },
    "PATCH",
  );
  assert.match(
    jobPatch.message,
    /^Job\.batch "j" is invalid: spec\.template: Invalid value: .*: field is immutable$/,
  );

  const secret = await call(api.url, "POST", `${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s" },
    stringData: { a: "b" },
  });
  assert.equal(secret.status, 201);
  const type = await refused(api, `${NS}/secrets/s`, { type: "kubernetes.io/basic-auth" }, "PATCH");
  assert.equal(
    type.message,
    'Secret "s" is invalid: type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
  );

  const cm = await call(api.url, "POST", `${NS}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c" },
    data: { a: "1" },
    immutable: true,
  });
  assert.equal(cm.status, 201);
  const data = await refused(api, `${NS}/configmaps/c`, { data: { a: "2" } }, "PATCH");
  assert.equal(
    data.message,
    'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set',
  );
  const flag = await refused(api, `${NS}/configmaps/c`, { immutable: false }, "PATCH");
  assert.equal(
    flag.message,
    'ConfigMap "c" is invalid: immutable: Forbidden: field is immutable when `immutable` is set',
  );
  const labelled = await call(
    api.url,
    "PATCH",
    `${NS}/configmaps/c`,
    { metadata: { labels: { x: "y" } } },
    "application/merge-patch+json",
  );
  assert.equal(labelled.status, 200, "metadata stays mutable");
});

testEachKubectl(
  ["1.27", "1.33"],
  `create deployment --replicas=-1 and apply of a Deployment without selector are refused as kube refuses them`,
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const negative = await k.fails([
      "create",
      "deployment",
      "web",
      "--image=nginx",
      "--replicas=-1",
    ]);
    assert.match(
      negative.stderr,
      /error: failed to create deployment: Deployment\.apps "web" is invalid: spec\.replicas: Invalid value: -1: must be greater than or equal to 0/,
    );
    const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: nosel}
spec:
  template:
    metadata: {labels: {app: nosel}}
    spec: {containers: [{name: c, image: nginx}]}
`;
    const noSelector = await k.fails(["apply", "-f", "-"], { stdin: manifest });
    assert.match(
      noSelector.stderr,
      /The Deployment "nosel" is invalid: \n\* spec\.selector: Required value\n\* spec\.template\.metadata\.labels: Invalid value: \{"app":"nosel"\}: `selector` does not match template `labels`/,
    );
  },
);

Deno.test("a Service's cluster IP may not change once set; leaving it out keeps it", async () => {
  await using api = await startApiServer();
  const created = await call(api.url, "POST", `${NS}/services`, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web" },
    spec: { ports: [{ port: 80 }] },
  });
  assert.equal(created.status, 201);
  const ip = created.body.spec.clusterIP as string;
  const other = ip === "10.96.0.99" ? "10.96.0.98" : "10.96.0.99";
  const changed = await refused(
    api,
    `${NS}/services/web`,
    { spec: { clusterIP: other, clusterIPs: [other] } },
    "PATCH",
  );
  assert.equal(
    changed.message,
    `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["${other}"]: may not change once set`,
  );
  const kept = await call(
    api.url,
    "PUT",
    `${NS}/services/web`,
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", resourceVersion: created.body.metadata.resourceVersion },
      spec: { ports: [{ port: 81 }] },
    },
  );
  assert.equal(kept.status, 200, JSON.stringify(kept.body));
  assert.equal(kept.body.spec.clusterIP, ip);
});

Deno.test("defaults: a Deployment's strategy, revisionHistoryLimit, progressDeadlineSeconds; a Job's counts, selector and labels", async () => {
  await using api = await startApiServer();
  const d = await call(
    api.url,
    "POST",
    `${APPS}/deployments`,
    deployment({
      selector: { matchLabels: { app: "web" } },
      template: template({ app: "web" }, NGINX),
    }),
  );
  assert.equal(d.status, 201, JSON.stringify(d.body));
  const { replicas, strategy, revisionHistoryLimit, progressDeadlineSeconds } = d.body.spec;
  assert.deepEqual({ replicas, strategy, revisionHistoryLimit, progressDeadlineSeconds }, {
    replicas: 1,
    strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
  });
  const recreate = await call(
    api.url,
    "PATCH",
    `${APPS}/deployments/web`,
    { spec: { strategy: { type: "Recreate", rollingUpdate: null } } },
    "application/merge-patch+json",
  );
  assert.equal(recreate.status, 200, JSON.stringify(recreate.body));
  assert.deepEqual(recreate.body.spec.strategy, { type: "Recreate" });

  const j = await call(api.url, "POST", `${BATCH}/jobs`, {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "pi" },
    spec: { template: { spec: { restartPolicy: "Never", containers: NGINX } } },
  });
  assert.equal(j.status, 201, JSON.stringify(j.body));
  const uid = j.body.metadata.uid;
  const spec = j.body.spec;
  assert.deepEqual(
    [
      spec.parallelism,
      spec.completions,
      spec.backoffLimit,
      spec.completionMode,
      spec.suspend,
      spec.podReplacementPolicy,
    ],
    [1, 1, 6, "NonIndexed", false, "TerminatingOrFailed"],
  );
  assert.deepEqual(spec.selector, { matchLabels: { "batch.kubernetes.io/controller-uid": uid } });
  assert.deepEqual(spec.template.metadata.labels, {
    "batch.kubernetes.io/controller-uid": uid,
    "batch.kubernetes.io/job-name": "pi",
    "controller-uid": uid,
    "job-name": "pi",
  });
  assert.equal(spec.manualSelector, undefined);
});
