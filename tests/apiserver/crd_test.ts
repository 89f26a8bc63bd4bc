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
      {
        name: "v2alpha1",
        served: false,
        storage: false,
        schema: { openAPIV3Schema: { type: "object" } },
      },
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

Deno.test("a CRD whose schema is not structural is refused as kube-apiserver refuses it", async () => {
  await using api = await startApiServer();
  const crd = (openAPIV3Schema: unknown) => ({
    ...multi,
    spec: {
      ...multi.spec,
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  });
  const refused = await call(
    api.url,
    "POST",
    CRDS,
    crd({
      type: "object",
      properties: { spec: { type: "objekt" } },
    }),
  );
  assert.equal(refused.status, 422);
  assert.equal(refused.body.kind, "Status");
  assert.equal(refused.body.reason, "Invalid");
  assert.equal(
    refused.body.message,
    'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: ' +
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Unsupported value: "objekt": ' +
      'supported values: "array", "boolean", "integer", "number", "object", "string"',
  );
  assert.deepEqual(refused.body.details.causes, [{
    reason: "FieldValueNotSupported",
    message:
      'Unsupported value: "objekt": supported values: "array", "boolean", "integer", "number", "object", "string"',
    field: "spec.versions[0].schema.openAPIV3Schema.properties[spec].type",
  }]);
  assert.equal(
    (await call(api.url, "GET", `${CRDS}/widgets.example.com`)).status,
    404,
    "not stored",
  );

  // The structural rules, each with kube-apiserver's field path and wording (sorted as it sorts).
  const causes = async (schema: unknown) => {
    const r = await call(api.url, "POST", CRDS, crd(schema));
    assert.equal(r.status, 422, JSON.stringify(schema));
    return r.body.details.causes.map((c: { field: string; message: string }) =>
      `${c.field.replace("spec.versions[0].schema.openAPIV3Schema", "S")}: ${c.message}`
    );
  };
  assert.deepEqual(await causes(undefined), [
    "S: Required value: schemas are required",
  ]);
  assert.deepEqual(await causes({ properties: { spec: {} } }), [
    "S.properties[spec].type: Required value: must not be empty for specified object fields",
    "S.type: Required value: must not be empty at the root",
  ]);
  assert.deepEqual(await causes({ type: "string" }), [
    'S.type: Invalid value: "string": must be object at the root',
  ]);
  assert.deepEqual(
    await causes({
      type: "object",
      properties: { list: { type: "array" }, tags: { type: "array", items: {} } },
    }),
    [
      "S.properties[list].items: Required value: must be specified",
      "S.properties[tags].items.type: Required value: must not be empty for specified array items",
    ],
  );
  assert.deepEqual(
    await causes({
      type: "object",
      additionalProperties: { type: "string" },
      properties: {
        m: {
          type: "object",
          properties: { a: { type: "string" } },
          additionalProperties: { type: "string" },
        },
      },
    }),
    [
      "S.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
      "S.additionalProperties: Forbidden: must not be used at the root",
      "S.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
    ],
  );
  assert.deepEqual(
    await causes({
      type: "object",
      properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } },
    }),
    [
      "S.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    ],
  );
  assert.deepEqual(
    await causes({
      type: "object",
      properties: { spec: { type: "object", anyOf: [{ type: "object", description: "x" }] } },
    }),
    [
      "S.properties[spec].anyOf[0].description: Forbidden: must be empty to be structural",
      "S.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural",
    ],
  );

  // What is structural passes: int-or-string, preserved unknown fields, metadata.name, value-only junctors.
  const ok = await call(
    api.url,
    "POST",
    CRDS,
    crd({
      type: "object",
      properties: {
        metadata: { type: "object", properties: { name: { type: "string", maxLength: 20 } } },
        spec: {
          type: "object",
          properties: {
            port: {
              "x-kubernetes-int-or-string": true,
              anyOf: [{ type: "integer" }, { type: "string" }],
            },
            free: { "x-kubernetes-preserve-unknown-fields": true },
            size: { type: "integer", oneOf: [{ minimum: 1 }, { maximum: -1 }] },
          },
        },
      },
    }),
  );
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
});
