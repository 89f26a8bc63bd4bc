import assert from "node:assert/strict";
import { Patch } from "../../src/cogs/structs/patches.ts";

Deno.test("Patch: reading a branch creates it, but untouched branches are pruned", () => {
  const patch = new Patch();
  assert.equal(patch.status.phase, undefined);
  assert.equal(patch.spec.replicas, undefined);
  assert.equal(patch.metadata.labels.app, undefined);
  assert.equal(patch.metadata.annotations.x, undefined);
  assert.equal(patch.isEmpty(), true);
  assert.deepEqual(patch.toJSON(), {});
  assert.equal(JSON.stringify(patch), "{}");
});

Deno.test("Patch: writes through branches land in the merge patch; nulls are kept", () => {
  const patch = new Patch();
  patch.status.phase = "X";
  patch.metadata.labels.x = "y";
  patch.metadata.annotations.k = null;
  patch.spec.replicas = 3;
  assert.equal(patch.isEmpty(), false);
  assert.deepEqual(patch.toJSON(), {
    status: { phase: "X" },
    metadata: { labels: { x: "y" }, annotations: { k: null } },
    spec: { replicas: 3 },
  });
  assert.equal(patch.meta, patch.metadata);
});

Deno.test("Patch: assigning branches works like a plain object", () => {
  const patch = new Patch();
  patch.status = { a: 1 };
  patch.status.b = 2;
  patch.metadata = { name: "ignored-by-api" };
  patch.metadata.labels.l = "v";
  patch.spec = null;
  assert.deepEqual(patch.toJSON(), {
    status: { a: 1, b: 2 },
    metadata: { name: "ignored-by-api", labels: { l: "v" } },
    spec: null,
  });
  assert.throws(() => patch.spec.x, TypeError);
});

Deno.test("Patch: set/get/has/remove reach arbitrary keys, including dotted ones", () => {
  const patch = new Patch();
  patch.set("data.key", "value");
  patch.set(["metadata", "annotations", "kopf.zalando.org/fn"], "{}");
  assert.equal(patch.get("data.key"), "value");
  assert.equal(patch.get(["metadata", "annotations", "kopf.zalando.org/fn"]), "{}");
  assert.equal(patch.get("nothing.here", "fallback"), "fallback");
  assert.equal(patch.has("metadata.labels"), false); // get/has never create branches
  assert.equal(patch.metadata.annotations["kopf.zalando.org/fn"], "{}");
  patch.remove(["metadata", "annotations", "kopf.zalando.org/fn"]);
  assert.deepEqual(patch.toJSON(), { data: { key: "value" } });
  assert.deepEqual(patch.get(null), { data: { key: "value" } });
});

Deno.test("Patch: merge() deep-merges patches and objects, clear() empties", () => {
  const patch = new Patch({ status: { a: 1, nested: { x: 1 } } });
  const other = new Patch();
  other.status.nested = { y: 2 };
  other.metadata.annotations.k = null;
  patch.merge(other).merge({ status: { a: null }, spec: { s: [1] } });
  assert.deepEqual(patch.toJSON(), {
    status: { a: null, nested: { x: 1, y: 2 } },
    metadata: { annotations: { k: null } },
    spec: { s: [1] },
  });
  const copy = new Patch(patch);
  patch.clear();
  assert.equal(patch.isEmpty(), true);
  assert.equal(copy.isEmpty(), false);
});

Deno.test("Patch: toJSON() is a copy, not a live view", () => {
  const patch = new Patch();
  patch.status.list = [1];
  const json = patch.toJSON();
  (json.status as { list: number[] }).list.push(2);
  assert.deepEqual(patch.status.list, [1]);
});

Deno.test("Patch: toJsonPatch() turns nulls into removes and absent paths into adds", () => {
  const patch = new Patch();
  patch.metadata.labels["a/b"] = "x";
  patch.metadata.annotations.gone = null;
  patch.spec.replicas = 3;
  patch.status.phase = "Ok";
  const body = { metadata: { labels: { other: "1" }, annotations: { gone: "1" } }, spec: {} };
  assert.deepEqual(patch.toJsonPatch(body), [
    { op: "add", path: "/metadata/labels/a~1b", value: "x" },
    { op: "remove", path: "/metadata/annotations/gone" },
    { op: "add", path: "/spec/replicas", value: 3 },
    { op: "add", path: "/status", value: { phase: "Ok" } },
  ]);
  assert.deepEqual(patch.toJsonPatch(), [
    { op: "replace", path: "/metadata/labels/a~1b", value: "x" },
    { op: "remove", path: "/metadata/annotations/gone" },
    { op: "replace", path: "/spec/replicas", value: 3 },
    { op: "replace", path: "/status/phase", value: "Ok" },
  ]);
  assert.deepEqual(new Patch().toJsonPatch(body), []);
});

Deno.test("Patch.toJSON() leaves out empty branches only (as copied): other empty objects stay", () => {
  const patch = new Patch();
  void patch.metadata.labels;
  void patch.spec;
  patch.metadata.annotations["a"] = "1";
  patch.status.inner = {};
  patch.set("data", {});
  patch.set(["metadata", "other"], {});
  const json = patch.toJSON();
  assert.deepEqual(json, {
    metadata: { annotations: { a: "1" }, other: {} },
    status: { inner: {} },
    data: {},
  });
  assert.deepEqual(Object.keys(json), ["metadata", "status", "data"], "in insertion order");
  const empty = new Patch();
  void empty.metadata.annotations;
  void empty.status;
  assert.deepEqual(empty.toJSON(), {});
  assert.equal(empty.isEmpty(), true);
});

Deno.test("Patch.isEmpty(): agrees with toJSON() for untouched, emptied and filled patches", () => {
  const cases: Array<(p: Patch) => void> = [
    () => {},
    (p) => void p.spec,
    (p) => void p.metadata.labels,
    (p) => (p.spec.x = undefined),
    (p) => (p.status = { a: { b: undefined } }),
    (p) => (p.metadata = { labels: {}, annotations: {} }),
    (p) => (p.metadata = { name: undefined }),
    (p) => (p.spec = null),
    (p) => p.set("data.key", "v"),
    (p) => p.set("data", undefined),
    (p) => (p.metadata.annotations.a = null),
    (p) => (p.status.phase = "X"),
  ];
  for (const [i, edit] of cases.entries()) {
    const patch = new Patch();
    edit(patch);
    assert.equal(patch.isEmpty(), Object.keys(patch.toJSON()).length === 0, `case ${i}`);
  }
});
