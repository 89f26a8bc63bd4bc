import assert from "node:assert/strict";
import { stubBody, trimBody } from "../../src/cogs/structs/trimming.ts";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

Deno.test("trimBody() drops managedFields and the last-applied annotation, in a copy", () => {
  const body = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "x",
      managedFields: [{ manager: "kubectl" }],
      annotations: { a: "1", [LAST_APPLIED]: "{}", b: "2" },
      labels: { l: "v" },
    },
    data: { k: "v" },
  };
  const trimmed = trimBody(body);
  assert.deepEqual(trimmed, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x", annotations: { a: "1", b: "2" }, labels: { l: "v" } },
    data: { k: "v" },
  });
  assert.deepEqual(Object.keys(trimmed.metadata), ["name", "annotations", "labels"]);
  assert.equal(trimmed.data, body.data); // the rest is shared, not copied
  assert.equal(body.metadata.managedFields.length, 1); // the body itself is unchanged
  assert.equal(body.metadata.annotations[LAST_APPLIED], "{}");
});

Deno.test("trimBody() returns the body itself when there is nothing to drop", () => {
  const plain = { metadata: { name: "y", annotations: { a: "1" } } };
  assert.equal(trimBody(plain), plain);
  const bare = { spec: {} };
  assert.equal(trimBody(bare), bare);
  const onlyFields = { metadata: { name: "z", managedFields: [] } };
  assert.deepEqual(trimBody(onlyFields), { metadata: { name: "z" } });
});

Deno.test("trimBody() keeps a __proto__ key of metadata as an own member", () => {
  const body = JSON.parse('{"metadata":{"__proto__":{"x":1},"managedFields":[]}}');
  const trimmed = trimBody(body);
  assert.deepEqual(Object.keys(trimmed.metadata), ["__proto__"]);
  assert.equal(Object.getPrototypeOf(trimmed.metadata), Object.prototype);
});

Deno.test("stubBody() keeps apiVersion, kind and the trimmed metadata, nothing else; shares the rest", () => {
  const labels = { app: "x" };
  const body = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "p",
      uid: "1",
      labels,
      managedFields: [{ manager: "kubelet" }],
      annotations: { a: "1", [LAST_APPLIED]: "{}" },
      finalizers: ["f"],
    },
    spec: { containers: [] },
    status: { phase: "Running" },
  };
  const stub = stubBody(body);
  assert.deepEqual(stub, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", uid: "1", labels, annotations: { a: "1" }, finalizers: ["f"] },
  });
  assert.equal(stub.metadata.labels, labels, "shared, not copied");
  assert.equal(body.metadata.managedFields.length, 1, "the body is untouched");
  const plain = { metadata: { name: "y" }, data: { k: "v" } };
  assert.equal(
    stubBody(plain).metadata,
    plain.metadata,
    "nothing to trim: the body's own metadata",
  );
  assert.deepEqual(stubBody({ spec: {} }), {});
});
