import assert from "node:assert/strict";
import {
  annotationsOf,
  type Body,
  buildObjectReference,
  buildOwnerReference,
  metaOf,
} from "../../src/cogs/structs/bodies.ts";

const body: Body = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: { name: "kopf-example-1", namespace: "default", uid: "uid-1", labels: { a: "b" } },
  spec: { field: "value" },
};

Deno.test("buildObjectReference() keeps only present identifying fields", () => {
  assert.deepEqual(buildObjectReference(body), {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kopf-example-1",
    uid: "uid-1",
    namespace: "default",
  });
  const node = { kind: "Node", metadata: { name: "n1", uid: "u", namespace: "" } };
  assert.deepEqual(buildObjectReference(node), { kind: "Node", name: "n1", uid: "u" });
});

Deno.test("buildOwnerReference() is controller and blocking by default, in Kopf's key order", () => {
  const ref = buildOwnerReference(body);
  assert.deepEqual(Object.keys(ref), [
    "controller",
    "blockOwnerDeletion",
    "apiVersion",
    "kind",
    "name",
    "uid",
  ]);
  assert.equal(ref.controller, true);
  assert.equal(ref.blockOwnerDeletion, true);
  assert.deepEqual(buildOwnerReference(body, { controller: false, blockOwnerDeletion: null }), {
    controller: false,
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kopf-example-1",
    uid: "uid-1",
  });
});

Deno.test("metaOf() and annotationsOf() tolerate absent parts", () => {
  assert.deepEqual(metaOf({}), {});
  assert.deepEqual(annotationsOf({ metadata: {} }), {});
  assert.equal(metaOf(body), body.metadata);
});
