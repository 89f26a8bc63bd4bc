/**
 * Field validation of built-in kinds as kube-apiserver does it
 * (`fieldValidation=Strict|Warn|Ignore`): unknown fields of a ConfigMap,
 * a Deployment's pod template or its metadata are refused with kube's
 * strict decoding error, dropped with a `Warning` header, or dropped
 * silently — over real HTTP and with real kubectl 1.27 and 1.33 (which send
 * `fieldValidation=Strict` by default).
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const NS = "/api/v1/namespaces/default";
const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";

const cm = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { a: "1" },
  foo: "bar",
});

Deno.test("a ConfigMap with an unknown field: Strict refuses it with kube's 400, Warn drops it with a warning, Ignore silently", async () => {
  await using api = await startApiServer();
  const strict = await call(api.url, "POST", `${NS}/configmaps?fieldValidation=Strict`, cm("s"));
  assert.equal(strict.status, 400);
  assert.equal(strict.body.reason, "BadRequest");
  assert.equal(
    strict.body.message,
    'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo"',
  );
  assert.equal((await call(api.url, "GET", `${NS}/configmaps/s`)).status, 404);

  for (const [name, query] of [["w", "?fieldValidation=Warn"], ["d", ""]]) {
    const warned = await call(api.url, "POST", `${NS}/configmaps${query}`, cm(name!));
    assert.equal(warned.status, 201);
    assert.equal(warned.headers.get("warning"), '299 - "unknown field \\"foo\\""');
    assert.equal("foo" in warned.body, false);
    const got = await call(api.url, "GET", `${NS}/configmaps/${name}`);
    assert.equal("foo" in got.body, false);
    assert.deepEqual(got.body.data, { a: "1" });
  }

  const ignored = await call(api.url, "POST", `${NS}/configmaps?fieldValidation=Ignore`, cm("i"));
  assert.equal(ignored.status, 201);
  assert.equal(ignored.headers.get("warning"), null);
  assert.equal("foo" in ignored.body, false);
});

Deno.test("a Deployment's unknown fields are named by their path (metadata, pod template, containers), all in one error", async () => {
  await using api = await startApiServer();
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", bogus: 1 },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            { name: "a", image: "nginx" },
            { name: "b", image: "nginx", imagee: "typo", ports: [{ containerPort: 80, x: 1 }] },
          ],
        },
      },
      extra: true,
    },
  };
  const strict = await call(api.url, "POST", `${DEPLOYMENTS}?fieldValidation=Strict`, deployment);
  assert.equal(strict.status, 400);
  assert.equal(
    strict.body.message,
    'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' +
      'unknown field "metadata.bogus", ' +
      'unknown field "spec.template.spec.containers[1].imagee", ' +
      'unknown field "spec.template.spec.containers[1].ports[0].x", ' +
      'unknown field "spec.extra"',
  );
  const warned = await call(api.url, "POST", `${DEPLOYMENTS}?fieldValidation=Warn`, deployment);
  assert.equal(warned.status, 201);
  const spec = warned.body.spec;
  assert.equal("extra" in spec, false);
  assert.equal("bogus" in warned.body.metadata, false);
  assert.deepEqual(spec.template.spec.containers[1].ports, [{
    containerPort: 80,
    protocol: "TCP",
  }]);
  assert.equal("imagee" in spec.template.spec.containers[1], false);
  const { name, image } = spec.template.spec.containers[0];
  assert.deepEqual({ name, image }, { name: "a", image: "nginx" });
});

Deno.test("a merge patch that adds an unknown field to a Secret is refused under Strict and the Secret keeps its data", async () => {
  await using api = await startApiServer();
  const created = await call(api.url, "POST", `${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s" },
    stringData: { k: "v" },
  });
  assert.equal(created.status, 201);
  const patched = await call(
    api.url,
    "PATCH",
    `${NS}/secrets/s?fieldValidation=Strict`,
    { typo: 1 },
    "application/merge-patch+json",
  );
  assert.equal(patched.status, 400);
  assert.match(patched.body.message, /strict decoding error: unknown field "typo"$/);
  const got = await call(api.url, "GET", `${NS}/secrets/s`);
  assert.deepEqual(got.body.data, { k: "dg==" });
  assert.equal("typo" in got.body, false);
});

const CM_YAML = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1"}
foo: bar
`;

testEachKubectl(
  ["1.27", "1.33"],
  `create and apply refuse a ConfigMap with an unknown field; --validate=warn prints kube's warning`,
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    for (const verb of ["create", "apply"]) {
      const refused = await k.fails([verb, "-f", "-"], { stdin: CM_YAML });
      assert.match(
        refused.stderr,
        /ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo"/,
      );
    }
    const warned = await k.run(["create", "--validate=warn", "-f", "-"], { stdin: CM_YAML });
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: unknown field "foo"/);
    assert.equal(warned.stdout.trim(), "configmap/settings created");
  },
);
