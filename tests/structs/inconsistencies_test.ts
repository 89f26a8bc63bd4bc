import assert from "node:assert/strict";
import { findInconsistencies, formatPath } from "../../src/cogs/structs/inconsistencies.ts";

/** The inconsistencies as `kind path` lines. */
function found(patch: Record<string, unknown>, answer: unknown): string[] {
  return findInconsistencies(patch, answer).map((i) => `${i.kind} ${formatPath(i.path)}`);
}

Deno.test("findInconsistencies(): a consistent answer has none; extra fields of the answer are fine", () => {
  const patch = {
    metadata: { labels: { a: "1" }, annotations: { "kopf.zalando.org/x": "{}" } },
    spec: { size: 2, items: [{ name: "a" }] },
    status: { create_fn: { message: "hi" } },
  };
  const answer = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: {
      name: "x",
      resourceVersion: "5",
      labels: { a: "1", b: "2" },
      annotations: { "kopf.zalando.org/x": "{}" },
    },
    spec: { size: 2, other: true, items: [{ name: "a", defaulted: "yes" }] },
    status: { create_fn: { message: "hi" }, phase: "Running" },
  };
  assert.deepEqual(found(patch, answer), []);
});

Deno.test("findInconsistencies(): a pruned field is lost, named at its highest absent field", () => {
  const patch = {
    status: {
      phase: "Created",
      create_fn: { message: "hi", nested: { deep: 1 } },
      kopf: { progress: { create_fn: { retries: 1 } } },
    },
  };
  assert.deepEqual(found(patch, { status: { phase: "Created" } }), [
    "lost status.create_fn",
    "lost status.kopf",
  ]);
  // The whole status absent: its fields are named, not "status".
  assert.deepEqual(found(patch, { metadata: {} }), [
    "lost status.phase",
    "lost status.create_fn",
    "lost status.kopf",
  ]);
  // A scalar result (a handler returning a string).
  assert.deepEqual(found({ status: { fn: "done" } }, { status: {} }), ["lost status.fn"]);
});

Deno.test("findInconsistencies(): merge-patch nulls are deletions — absent is right, present is kept", () => {
  const patch = {
    metadata: { annotations: { "kopf.zalando.org/fn": null, "example.com/x": null } },
    status: { kopf: { progress: { fn: null } }, gone: null },
  };
  assert.deepEqual(found(patch, { metadata: {}, status: {} }), []);
  assert.deepEqual(found(patch, {}), [], "only deletions: nothing is lost when nothing is there");
  assert.deepEqual(
    found(patch, { metadata: { annotations: { "example.com/x": "still" } }, status: {} }),
    ['kept metadata.annotations["example.com/x"]'],
  );
});

Deno.test("findInconsistencies(): empty objects and lists that the server drops are fine", () => {
  const patch = { metadata: { labels: {}, annotations: {}, finalizers: [] }, status: { kopf: {} } };
  assert.deepEqual(found(patch, { metadata: { name: "x" }, status: {} }), []);
});

Deno.test("findInconsistencies(): the server's own metadata and identity fields are not compared", () => {
  const patch = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: {
      resourceVersion: "1",
      generation: 1,
      managedFields: [],
      uid: "u",
      labels: { a: "b" },
    },
  };
  const answer = {
    apiVersion: "kopf.dev/v2",
    kind: "Other",
    metadata: {
      resourceVersion: "9",
      generation: 4,
      managedFields: [{ manager: "m" }],
      uid: "v",
      labels: { a: "b" },
    },
  };
  assert.deepEqual(found(patch, answer), []);
});

Deno.test("findInconsistencies(): changed values, with what was patched and what was stored", () => {
  const all = findInconsistencies(
    { spec: { size: "1G", flag: true, obj: { a: 1 } } },
    { spec: { size: "1Gi", flag: "true", obj: "text" } },
  );
  assert.deepEqual(all.map((i) => [i.kind, formatPath(i.path), i.patched, i.stored]), [
    ["changed", "spec.size", "1G", "1Gi"],
    ["changed", "spec.flag", true, "true"],
    ["changed", "spec.obj", { a: 1 }, "text"],
  ]);
});

Deno.test("findInconsistencies(): lists are replaced whole — compared item by item, items as patches", () => {
  const patch = { spec: { items: [{ name: "a", extra: "x" }, { name: "b" }], tags: ["x", "y"] } };
  // The second item's extra field pruned; the first has a default added.
  assert.deepEqual(
    found(patch, {
      spec: { items: [{ name: "a", extra: "x", d: 1 }, { name: "b" }], tags: ["x", "y"] },
    }),
    [],
  );
  assert.deepEqual(
    found(patch, { spec: { items: [{ name: "a" }, { name: "b" }], tags: ["x", "z"] } }),
    ["lost spec.items[0].extra", "changed spec.tags[1]"],
  );
  assert.deepEqual(found(patch, { spec: { items: [{ name: "a" }], tags: ["x", "y"] } }), [
    "changed spec.items",
  ]);
  assert.deepEqual(found(patch, { spec: {} }), ["lost spec.items", "lost spec.tags"]);
  assert.deepEqual(found({ spec: { items: [] } }, { spec: {} }), [], "an empty list dropped");
  assert.deepEqual(found({ spec: { items: [] } }, { spec: { items: [1] } }), [
    "changed spec.items",
  ]);
});

Deno.test("findInconsistencies(): no answer body at all (an empty answer) loses everything set", () => {
  assert.deepEqual(found({ status: { a: 1, b: null } }, {}), ["lost status.a"]);
  assert.deepEqual(found({ status: { a: 1 } }, undefined), ["lost status.a"]);
});

Deno.test("findInconsistencies(): garbage answers (wrong types at every level) lose or change what was set; each call starts afresh", () => {
  const patch = { metadata: { annotations: { a: "1" } }, status: { x: { y: 1 }, z: [1] } };
  for (const answer of ["text", 42, [1, 2], null, { status: "flat", metadata: [] }]) {
    const lines = found(patch, answer);
    assert.ok(lines.length > 0, JSON.stringify(answer));
    assert.ok(lines.every((l) => /^(lost|changed) /.test(l)), lines.join("; "));
  }
  // After all of them, a consistent answer has none, and a partial one names only its own.
  assert.deepEqual(found(patch, { ...patch }), []);
  assert.deepEqual(found(patch, { metadata: { annotations: { a: "1" } }, status: { z: [1] } }), [
    "lost status.x",
  ]);
});

Deno.test("formatPath(): dotted names, quoted keys with dots or slashes, list indices", () => {
  assert.equal(formatPath(["status", "create_fn"]), "status.create_fn");
  assert.equal(formatPath(["status", "create-fn"]), "status.create-fn");
  assert.equal(formatPath(["status", "update_fn/spec.field"]), 'status["update_fn/spec.field"]');
  assert.equal(
    formatPath(["metadata", "annotations", "kopf.zalando.org/fn"]),
    'metadata.annotations["kopf.zalando.org/fn"]',
  );
  assert.equal(formatPath(["spec", "items", 0, "name"]), "spec.items[0].name");
});
