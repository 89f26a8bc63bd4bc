import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call, readEvents } from "./_http.ts";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

const multi = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Cluster",
    names: { plural: "widgets", singular: "widget", kind: "Widget", categories: ["all"] },
    versions: [
      {
        name: "v1beta1",
        served: true,
        storage: false,
        schema: {
          openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      },
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
        additionalPrinterColumns: [{ name: "Color", type: "string", jsonPath: ".spec.color" }],
      },
      { name: "v2alpha1", served: false, storage: false },
    ],
  },
};

Deno.test("a CRD with several versions serves each served one over the same objects", async () => {
  await using api = await startApiServer();
  assert.equal((await call(api.url, "POST", CRDS, multi)).status, 201);
  const group = await call(api.url, "GET", "/apis/example.com");
  assert.deepEqual(group.body.versions.map((v: { version: string }) => v.version), [
    "v1",
    "v1beta1",
  ]);
  assert.equal(group.body.preferredVersion.version, "v1");
  assert.equal((await call(api.url, "GET", "/apis/example.com/v2alpha1")).status, 404);
  const made = await call(api.url, "POST", "/apis/example.com/v1beta1/widgets", {
    apiVersion: "example.com/v1beta1",
    kind: "Widget",
    metadata: { name: "w" },
    spec: { color: "red" },
  });
  assert.equal(made.status, 201);
  assert.equal(made.body.metadata.namespace, undefined, "cluster-scoped");
  const asV1 = await call(api.url, "GET", "/apis/example.com/v1/widgets/w");
  assert.equal(asV1.body.apiVersion, "example.com/v1");
  assert.equal(asV1.body.spec.color, "red");
  const table = await call(api.url, "GET", "/apis/example.com/v1/widgets", undefined, undefined, {
    accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
  });
  assert.deepEqual(table.body.columnDefinitions.map((c: { name: string }) => c.name), [
    "Name",
    "Color",
  ]);
  assert.deepEqual(table.body.rows[0].cells, ["w", "red"]);
  const crd = await call(api.url, "GET", `${CRDS}/widgets.example.com`);
  assert.deepEqual(crd.body.status.storedVersions, ["v1"]);
  assert.equal(crd.body.status.acceptedNames.listKind, "WidgetList");
  const namespaced = await call(api.url, "GET", "/apis/example.com/v1/namespaces/default/widgets");
  assert.equal(namespaced.status, 404, "a cluster-scoped resource has no namespaced URL");
});

Deno.test("an invalid CRD is refused with field causes", async () => {
  await using api = await startApiServer();
  const bad = await call(api.url, "POST", CRDS, {
    ...multi,
    metadata: { name: "wrong.example.com" },
    spec: { ...multi.spec, scope: "Galaxy" },
  });
  assert.equal(bad.status, 422);
  const fields = bad.body.details.causes.map((c: { field: string }) => c.field).sort();
  assert.deepEqual(fields, ["metadata.name", "spec.scope"]);
});

Deno.test("watching with a Table sends the column definitions with the first event only", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CRDS, multi);
  const res = await fetch(`${api.url}/apis/example.com/v1/widgets?watch=true`, {
    headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
  });
  for (const name of ["a", "b"]) {
    await call(api.url, "POST", "/apis/example.com/v1/widgets", {
      metadata: { name },
      spec: { color: name },
    });
  }
  const events = await readEvents(res, 2);
  assert.equal(events[0].object.kind, "Table");
  assert.deepEqual(events[0].object.columnDefinitions.map((c: { name: string }) => c.name), [
    "Name",
    "Color",
  ]);
  assert.deepEqual(events[1].object.columnDefinitions, []);
  assert.deepEqual(events[1].object.rows[0].cells, ["b", "b"]);
});

Deno.test("changing a CRD's schema applies to later writes", async () => {
  await using api = await startApiServer();
  const made = await call(api.url, "POST", CRDS, multi);
  const strict = structuredClone(made.body);
  strict.spec.versions[1].schema.openAPIV3Schema = {
    type: "object",
    properties: {
      spec: { type: "object", properties: { color: { type: "string", enum: ["red", "blue"] } } },
    },
  };
  assert.equal((await call(api.url, "PUT", `${CRDS}/widgets.example.com`, strict)).status, 200);
  const bad = await call(api.url, "POST", "/apis/example.com/v1/widgets", {
    metadata: { name: "x" },
    spec: { color: "green" },
  });
  assert.equal(bad.status, 422);
  assert.match(bad.body.message, /spec\.color: Unsupported value: "green"/);
});
