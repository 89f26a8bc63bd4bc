import assert from "node:assert/strict";
import {
  AnnotationsDiffBaseStorage,
  MultiDiffBaseStorage,
  StatusDiffBaseStorage,
} from "../../src/cogs/configs/diffbase.ts";
import type { Body } from "../../src/cogs/structs/bodies.ts";
import { Patch } from "../../src/cogs/structs/patches.ts";

/** The value in the reference doc (and what Python Kopf writes for this body). */
const REFERENCE_VALUE =
  '{"spec":{"duration":"1m","field":"value3"},"metadata":{"labels":{"somelabel":"somevalue"}}}\n';

/** An object as the API returns it after `kubectl apply` and a Kopf cycle in progress. */
function realisticBody(): Body {
  return {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: {
      name: "kopf-example-1",
      namespace: "default",
      uid: "6b1a7e4c-0b8e-4d1e-9a55-0f5f6c8e1d2a",
      resourceVersion: "12345",
      generation: 3,
      creationTimestamp: "2026-11-22T04:19:00Z",
      finalizers: ["kopf.zalando.org/KopfFinalizerMarker"],
      managedFields: [{ manager: "kubectl-client-side-apply", operation: "Update" }],
      labels: { somelabel: "somevalue" },
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration":
          '{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"annotations":{},' +
          '"labels":{"somelabel":"somevalue"},"name":"kopf-example-1","namespace":"default"},' +
          '"spec":{"duration":"1m","field":"value3"}}\n',
        "kopf.zalando.org/last-handled-configuration":
          '{"spec":{"duration":"1m","field":"value2"},"metadata":{"labels":{"somelabel":"somevalue"}}}\n',
        "kopf.zalando.org/update_fn":
          '{"started":"2026-11-22T04:19:01.345317+00:00","delayed":"2026-11-22T04:20:01.345317+00:00",' +
          '"purpose":"update","retries":1,"success":false,"failure":false,"message":"not yet"}',
        "kopf.zalando.org/touch-dummy": "2026-11-22T04:20:01.345317+00:00",
      },
    },
    spec: { duration: "1m", field: "value3" },
    status: { create_fn: { message: "hello" }, kopf: { progress: {} } },
  };
}

Deno.test("build() makes Kopf's essence and store() writes the reference doc's value exactly", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const body = realisticBody();
  const before = structuredClone(body);
  const essence = storage.build(body);
  assert.deepEqual(essence, {
    spec: { duration: "1m", field: "value3" },
    metadata: { labels: { somelabel: "somevalue" } },
  });
  assert.deepEqual(body, before); // the body is not changed
  const patch = new Patch();
  storage.store(body, patch, essence);
  assert.deepEqual(patch.toJSON(), {
    metadata: { annotations: { "kopf.zalando.org/last-handled-configuration": REFERENCE_VALUE } },
  });
});

Deno.test("fetch() reads back what Python Kopf stored", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const body = realisticBody();
  assert.deepEqual(storage.fetch(body), {
    spec: { duration: "1m", field: "value2" },
    metadata: { labels: { somelabel: "somevalue" } },
  });
  assert.equal(storage.fetch({ metadata: {} }), null);
  assert.throws(
    () =>
      storage.fetch({
        metadata: { annotations: { "kopf.zalando.org/last-handled-configuration": "{" } },
      }),
    SyntaxError,
  );
});

Deno.test("build() keeps users' annotations and other payload, drops other Kopf operators' keys", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const essence = storage.build({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "cm",
      annotations: {
        "example.com/owner": "team-a",
        "my-op.example.com/kopf-managed": "yes",
        "my-op.example.com/last-handled-configuration": "{}\n",
        "team.kopf.zalando.org/fn": "{}",
      },
      labels: {},
    },
    data: { key: "value" },
    immutable: false,
  });
  assert.deepEqual(essence, {
    data: { key: "value" },
    immutable: false,
    metadata: { annotations: { "example.com/owner": "team-a" } },
  });
});

Deno.test("build() keeps empty spec but drops empty metadata parts and status", () => {
  const storage = new AnnotationsDiffBaseStorage();
  assert.deepEqual(
    storage.build({ metadata: { labels: {}, annotations: {} }, spec: {}, status: {} }),
    { spec: {} },
  );
  assert.deepEqual(storage.build({ kind: "X" }), {});
});

Deno.test("build() restores extra fields and removes ignored fields", () => {
  const storage = new AnnotationsDiffBaseStorage({
    ignoredFields: ["spec.replicas", "nothing.here"],
  });
  const essence = storage.build(
    {
      metadata: { name: "x" },
      spec: { replicas: 3, image: "nginx" },
      status: { phase: "Running", conditions: [] },
    },
    ["status.phase", "metadata.name"],
  );
  assert.deepEqual(essence, {
    spec: { image: "nginx" },
    status: { phase: "Running" },
    metadata: { name: "x" },
  });
});

Deno.test("a custom prefix marks the object and ignores its own key", () => {
  const storage = new AnnotationsDiffBaseStorage({ prefix: "my-op.example.com", key: "diff-base" });
  const body: Body = {
    metadata: { annotations: { "my-op.example.com/diff-base": '{"spec":{}}\n' } },
    spec: { a: 1 },
  };
  assert.deepEqual(storage.build(body), { spec: { a: 1 } });
  const patch = new Patch();
  storage.store(body, patch, { spec: { a: 1 } });
  assert.deepEqual(patch.toJSON(), {
    metadata: {
      annotations: {
        "my-op.example.com/diff-base": '{"spec":{"a":1}}\n',
        "my-op.example.com/kopf-managed": "yes",
      },
    },
  });
});

Deno.test("ReplicaSets owned by Deployments use the -ofDRS key", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const rs: Body = {
    kind: "ReplicaSet",
    metadata: { ownerReferences: [{ kind: "Deployment", name: "d" }] },
    spec: {},
  };
  const patch = new Patch();
  storage.store(rs, patch, { spec: {} });
  assert.deepEqual(Object.keys(patch.metadata.annotations), [
    "kopf.zalando.org/last-handled-configuration-ofDRS",
  ]);
});

Deno.test("StatusDiffBaseStorage stores compact JSON without a newline and hides its own field", () => {
  const storage = new StatusDiffBaseStorage();
  assert.deepEqual(storage.field, ["status", "kopf", "last-handled-configuration"]);
  const body: Body = {
    spec: { a: "é" },
    status: { kopf: { "last-handled-configuration": '{"spec":{"a":"x"}}' }, phase: "Ok" },
  };
  assert.deepEqual(storage.fetch(body), { spec: { a: "x" } });
  assert.deepEqual(storage.build(body, ["status"]), { spec: { a: "é" }, status: { phase: "Ok" } });
  const patch = new Patch();
  storage.store(body, patch, { spec: { a: "é" } });
  assert.deepEqual(patch.toJSON(), {
    status: { kopf: { "last-handled-configuration": '{"spec":{"a":"\\u00e9"}}' } },
  });
  assert.equal(storage.fetch({}), null);
});

Deno.test("MultiDiffBaseStorage stores into all, reads the first found, cleans with each", async () => {
  const status = new StatusDiffBaseStorage({ field: "status.diff-base" });
  const annotations = new AnnotationsDiffBaseStorage();
  const storage = new MultiDiffBaseStorage([status, annotations]);
  const body = realisticBody();
  assert.deepEqual(await storage.fetch(body), {
    spec: { duration: "1m", field: "value2" },
    metadata: { labels: { somelabel: "somevalue" } },
  });
  const withStatus: Body = { ...body, status: { "diff-base": '{"spec":{}}' } };
  assert.deepEqual(await storage.fetch(withStatus), { spec: {} });
  assert.deepEqual(storage.build(withStatus, ["status"]), {
    spec: { duration: "1m", field: "value3" },
    metadata: { labels: { somelabel: "somevalue" } },
  });
  const patch = new Patch();
  await storage.store(body, patch, storage.build(body));
  assert.deepEqual(patch.toJSON(), {
    status: { "diff-base": REFERENCE_VALUE.trimEnd() },
    metadata: { annotations: { "kopf.zalando.org/last-handled-configuration": REFERENCE_VALUE } },
  });
});

Deno.test("unchanged(): true only for the exact text store() writes; another spelling, a change, none stored or a custom fetch leave it to fetch()", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const body = realisticBody();
  const essence = storage.build(body);
  const patch = new Patch();
  storage.store(body, patch, essence);
  const annotations = body.metadata!.annotations as Record<string, string>;
  Object.assign(annotations, patch.metadata.annotations);
  const key = "kopf.zalando.org/last-handled-configuration";
  assert.equal(annotations[key], REFERENCE_VALUE);
  assert.equal(storage.unchanged(body, storage.build(body)), true);
  // A change of the essence: false (and fetch + diff decide).
  assert.equal(storage.unchanged(body, storage.build({ ...body, spec: { field: "x" } })), false);
  // The same data spelt otherwise (key order, spaces, no newline): false, though fetch() reads it equal.
  for (
    const other of [JSON.stringify(JSON.parse(REFERENCE_VALUE), null, 1), REFERENCE_VALUE.trim()]
  ) {
    const respelt = structuredClone(body);
    (respelt.metadata!.annotations as Record<string, string>)[key] = other;
    assert.equal(storage.unchanged(respelt, storage.build(respelt)), false);
    assert.deepEqual(storage.fetch(respelt), storage.build(respelt));
  }
  // Not stored at all: false.
  const none = structuredClone(body);
  delete (none.metadata!.annotations as Record<string, string>)[key];
  assert.equal(storage.unchanged(none, storage.build(none)), false);
  // A subclass that reads its own way is always read.
  class Custom extends AnnotationsDiffBaseStorage {
    override fetch(b: Body) {
      return super.fetch(b);
    }
  }
  assert.equal(new Custom().unchanged(body, storage.build(body)), false);
  // The other storages cannot tell without reading: false.
  assert.equal(new StatusDiffBaseStorage().unchanged(body, essence), false);
});
