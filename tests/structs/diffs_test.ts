import assert from "node:assert/strict";
import {
  diff,
  diffItem,
  EMPTY_DIFF,
  fieldOf,
  isEmpty,
  newOf,
  oldOf,
  opOf,
  reduceDiff,
} from "../../src/cogs/structs/diffs.ts";

Deno.test("diff() of equal values and of absent values is empty", () => {
  assert.deepEqual(diff({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), []);
  assert.deepEqual(diff(null, undefined), []);
  assert.deepEqual(diff({ a: null }, {}), []);
  assert.equal(isEmpty(diff(1, 1)), true);
  assert.equal(isEmpty(EMPTY_DIFF), true);
});

Deno.test("diff() adds, changes and removes nested fields", () => {
  const old = {
    metadata: { labels: { label2: "old-value", label3: "old-value" } },
    spec: { size: "1G", nested: { keep: 1, drop: { deep: true } } },
  };
  const now = {
    metadata: { labels: { label1: "new-value", label2: "new-value" } },
    spec: { size: "2G", nested: { keep: 1, added: { deep: true } } },
  };
  assert.deepEqual(diff(old, now), [
    ["add", ["metadata", "labels", "label1"], null, "new-value"],
    ["remove", ["metadata", "labels", "label3"], "old-value", null],
    ["change", ["metadata", "labels", "label2"], "old-value", "new-value"],
    ["change", ["spec", "size"], "1G", "2G"],
    ["add", ["spec", "nested", "added"], null, { deep: true }],
    ["remove", ["spec", "nested", "drop"], { deep: true }, null],
  ]);
});

Deno.test("diff() compares arrays and type changes whole", () => {
  assert.deepEqual(diff({ a: [1, 2] }, { a: [1, 2, 3] }), [["change", ["a"], [1, 2], [1, 2, 3]]]);
  assert.deepEqual(diff({ a: { b: 1 } }, { a: "x" }), [["change", ["a"], { b: 1 }, "x"]]);
  assert.deepEqual(diff({ a: [] }, { a: {} }), [["change", ["a"], [], {}]]);
  assert.deepEqual(diff(null, { a: 1 }), [["add", [], null, { a: 1 }]]);
  assert.deepEqual(diff({ a: 1 }, undefined), [["remove", [], { a: 1 }, null]]);
  assert.deepEqual(diff({ a: undefined }, { a: 0 }), [["add", ["a"], null, 0]]);
});

Deno.test("diff() honours a path prefix and a scope", () => {
  assert.deepEqual(diff(1, 2, { path: "spec.x" }), [["change", ["spec", "x"], 1, 2]]);
  const a = { x: 1, gone: 1 };
  const b = { x: 2, new: 1 };
  assert.deepEqual(diff(a, b, { scope: "left" }), [
    ["remove", ["gone"], 1, null],
    ["change", ["x"], 1, 2],
  ]);
  assert.deepEqual(diff(a, b, { scope: "right" }), [
    ["add", ["new"], null, 1],
    ["change", ["x"], 1, 2],
  ]);
});

Deno.test("diff items are frozen JSON tuples with accessors", () => {
  const [item] = diff({ a: 1 }, { a: 2 });
  assert.ok(item);
  assert.equal(opOf(item), "change");
  assert.deepEqual(fieldOf(item), ["a"]);
  assert.equal(oldOf(item), 1);
  assert.equal(newOf(item), 2);
  assert.ok(Object.isFrozen(item) && Object.isFrozen(fieldOf(item)));
  assert.equal(JSON.stringify(diffItem("remove", ["x"], 1, undefined)), '["remove",["x"],1,null]');
  const [op, field, old, now] = item;
  assert.deepEqual([op, field, old, now], ["change", ["a"], 1, 2]);
});

Deno.test("reduceDiff() scopes to a field with relative paths (Kopf's docs example)", () => {
  const d = diff(
    { metadata: { labels: { label2: "old-value", label3: "old-value" } }, spec: { size: "1G" } },
    { metadata: { labels: { label1: "new-value", label2: "new-value" } }, spec: { size: "2G" } },
  );
  assert.deepEqual(reduceDiff(d, "metadata.labels"), [
    ["add", ["label1"], null, "new-value"],
    ["remove", ["label3"], "old-value", null],
    ["change", ["label2"], "old-value", "new-value"],
  ]);
  assert.deepEqual(reduceDiff(d, ["spec", "size"]), [["change", [], "1G", "2G"]]);
  assert.deepEqual(reduceDiff(d, "status"), []);
  assert.deepEqual(reduceDiff(d, null), d);
});

Deno.test("reduceDiff() re-diffs when a parent of the field was added, removed or replaced", () => {
  const added = diff({}, { spec: { struct: { field: 1, other: 2 } } });
  assert.deepEqual(reduceDiff(added, "spec.struct"), [
    ["add", [], null, { field: 1, other: 2 }],
  ]);
  assert.deepEqual(reduceDiff(added, "spec.struct.field"), [["add", [], null, 1]]);
  assert.deepEqual(reduceDiff(added, "spec.struct.missing"), []);

  const removed = diff({ spec: { struct: { field: 1 } } }, {});
  assert.deepEqual(reduceDiff(removed, "spec.struct.field"), [["remove", [], 1, null]]);

  const replaced = diff({ spec: { struct: "text" } }, { spec: { struct: { field: 1 } } });
  assert.deepEqual(reduceDiff(replaced, "spec.struct.field"), [["add", [], null, 1]]);
  assert.deepEqual(reduceDiff(replaced, "spec.struct"), [
    ["change", [], "text", { field: 1 }],
  ]);
});
