import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call, readEvents } from "./_http.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

function crd(extra: Record<string, unknown> = {}, schema?: Record<string, unknown>) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: {
        plural: "kopfexamples",
        singular: "kopfexample",
        kind: "KopfExample",
        shortNames: ["kex"],
      },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: schema ?? {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      }],
      ...extra,
    },
  };
}

Deno.test("discovery lists built-ins with verbs, short names and status subresources", async () => {
  await using api = await startApiServer();
  const core = await call(api.url, "GET", "/api/v1");
  const pods = core.body.resources.find((r: { name: string }) => r.name === "pods");
  assert.deepEqual(pods.shortNames, ["po"]);
  assert.equal(pods.namespaced, true);
  assert.ok(pods.verbs.includes("watch"));
  assert.ok(core.body.resources.some((r: { name: string }) => r.name === "pods/status"));
  const groups = await call(api.url, "GET", "/apis");
  const names = groups.body.groups.map((g: { name: string }) => g.name);
  for (
    const g of [
      "apps",
      "batch",
      "coordination.k8s.io",
      "rbac.authorization.k8s.io",
      "apiextensions.k8s.io",
      "admissionregistration.k8s.io",
      "events.k8s.io",
    ]
  ) {
    assert.ok(names.includes(g), g);
  }
  const ns = await call(api.url, "GET", "/api/v1/namespaces");
  assert.deepEqual(
    ns.body.items.map((n: { metadata: { name: string } }) => n.metadata.name).sort(),
    ["default", "kube-node-lease", "kube-public", "kube-system"],
  );
  assert.equal((await call(api.url, "GET", "/version")).body.major, "1");
});

Deno.test("a CRD is in discovery before its ADDED event reaches a watcher, with Established", async () => {
  await using api = await startApiServer();
  const watch = await fetch(`${api.url}${CRD_PATH}?watch=true`);
  const created = await call(api.url, "POST", CRD_PATH, crd());
  assert.equal(created.status, 201);
  const [event] = await readEvents(watch, 1);
  assert.equal(event.type, "ADDED");
  const conds = event.object.status.conditions.map((c: { type: string; status: string }) =>
    `${c.type}=${c.status}`
  );
  assert.ok(conds.includes("Established=True") && conds.includes("NamesAccepted=True"));
  const group = await call(api.url, "GET", "/apis/kopf.dev/v1");
  assert.deepEqual(group.body.resources.map((r: { name: string }) => r.name), [
    "kopfexamples",
    "kopfexamples/status",
  ]);
  assert.equal((await call(api.url, "GET", KEX)).status, 200);
});

Deno.test("objects get uid, creationTimestamp, generateName and one cluster-wide resourceVersion", async () => {
  await using api = await startApiServer();
  const a = await call(api.url, "POST", CM, {
    metadata: { generateName: "cm-" },
    data: { a: "1" },
  });
  const b = await call(api.url, "POST", "/api/v1/namespaces/kube-system/configmaps", {
    metadata: { name: "b" },
  });
  assert.equal(a.status, 201);
  assert.match(a.body.metadata.name, /^cm-[a-z0-9]{5}$/);
  // A random (version 4) UUID, as kube-apiserver gives one; each object its own.
  const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  assert.match(a.body.metadata.uid, V4);
  assert.match(b.body.metadata.uid, V4);
  assert.notEqual(a.body.metadata.uid, b.body.metadata.uid);
  assert.match(a.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(
    Number(b.body.metadata.resourceVersion),
    Number(a.body.metadata.resourceVersion) + 1,
  );
  const dup = await call(api.url, "POST", "/api/v1/namespaces/kube-system/configmaps", {
    metadata: { name: "b" },
  });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.reason, "AlreadyExists");
  assert.equal(dup.body.kind, "Status");
});

Deno.test("generation bumps on spec changes only; the status subresource ignores the rest", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CRD_PATH, crd());
  const made = await call(api.url, "POST", KEX, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "x" },
    spec: { a: 1 },
    status: { s: 1 },
  });
  assert.equal(made.body.metadata.generation, 1);
  assert.equal(made.body.status, undefined, "the main endpoint ignores status on create");
  const merge = "application/merge-patch+json";
  const labelled = await call(
    api.url,
    "PATCH",
    `${KEX}/x`,
    { metadata: { labels: { l: "v" } } },
    merge,
  );
  assert.equal(labelled.body.metadata.generation, 1);
  const spec = await call(api.url, "PATCH", `${KEX}/x`, {
    spec: { a: 2 },
    status: { ignored: true },
  }, merge);
  assert.equal(spec.body.metadata.generation, 2);
  assert.equal(spec.body.status, undefined);
  const status = await call(api.url, "PATCH", `${KEX}/x/status`, {
    status: { phase: "Done" },
    spec: { a: 99 },
  }, merge);
  assert.deepEqual(status.body.status, { phase: "Done" });
  assert.equal(status.body.spec.a, 2, "the status endpoint ignores spec");
  assert.equal(status.body.metadata.generation, 2);
  const noop = await call(api.url, "PATCH", `${KEX}/x`, { spec: { a: 2 } }, merge);
  assert.equal(
    noop.body.metadata.resourceVersion,
    status.body.metadata.resourceVersion,
    "a no-op keeps the RV",
  );
});

Deno.test("PUT with a stale resourceVersion is a 409 Conflict", async () => {
  await using api = await startApiServer();
  const made = await call(api.url, "POST", CM, { metadata: { name: "x" }, data: { a: "1" } });
  const ok = await call(api.url, "PUT", `${CM}/x`, { ...made.body, data: { a: "2" } });
  assert.equal(ok.status, 200);
  const stale = await call(api.url, "PUT", `${CM}/x`, { ...made.body, data: { a: "3" } });
  assert.equal(stale.status, 409);
  assert.equal(stale.body.reason, "Conflict");
  assert.match(stale.body.message, /the object has been modified/);
});

Deno.test("JSON patch with a failed test answers 422 and changes nothing", async () => {
  await using api = await startApiServer();
  const made = await call(api.url, "POST", CM, { metadata: { name: "x" } });
  const rv = made.body.metadata.resourceVersion;
  const jp = "application/json-patch+json";
  const ok = await call(api.url, "PATCH", `${CM}/x`, [
    { op: "test", path: "/metadata/resourceVersion", value: rv },
    { op: "add", path: "/metadata/finalizers", value: ["kopf.zalando.org/KopfFinalizerMarker"] },
  ], jp);
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body.metadata.finalizers, ["kopf.zalando.org/KopfFinalizerMarker"]);
  const bad = await call(api.url, "PATCH", `${CM}/x`, [
    { op: "test", path: "/metadata/resourceVersion", value: rv },
    { op: "remove", path: "/metadata/finalizers/0" },
  ], jp);
  assert.equal(bad.status, 422);
  assert.equal((await call(api.url, "GET", `${CM}/x`)).body.metadata.finalizers.length, 1);
});

Deno.test("strategic merge works for built-ins and is 415 for custom resources", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CRD_PATH, crd());
  const pod = await call(api.url, "POST", "/api/v1/namespaces/default/pods", {
    metadata: { name: "p" },
    spec: { containers: [{ name: "a", image: "a:1" }, { name: "b", image: "b:1" }] },
  });
  assert.equal(pod.status, 201);
  const smp = "application/strategic-merge-patch+json";
  const patched = await call(api.url, "PATCH", "/api/v1/namespaces/default/pods/p", {
    spec: { containers: [{ name: "b", image: "b:2" }] },
  }, smp);
  assert.deepEqual(
    patched.body.spec.containers.map((c: { name: string; image: string }) => [c.name, c.image]),
    [["a", "a:1"], ["b", "b:2"]],
  );
  await call(api.url, "POST", KEX, { metadata: { name: "x" }, spec: {} });
  const refused = await call(api.url, "PATCH", `${KEX}/x`, { spec: { a: 1 } }, smp);
  assert.equal(refused.status, 415);
  assert.equal(refused.body.reason, "UnsupportedMediaType");
});

Deno.test("schema: defaults, pruning, Strict unknown fields (400) and violations (422 with causes)", async () => {
  await using api = await startApiServer();
  await call(
    api.url,
    "POST",
    CRD_PATH,
    crd({}, {
      type: "object",
      properties: {
        spec: {
          type: "object",
          required: ["size"],
          properties: {
            size: { type: "integer", minimum: 1, maximum: 10 },
            mode: { type: "string", enum: ["fast", "slow"], default: "fast" },
          },
        },
      },
    }),
  );
  const ok = await call(api.url, "POST", KEX, {
    metadata: { name: "a" },
    spec: { size: 3, junk: 1 },
  });
  assert.equal(ok.status, 201);
  assert.deepEqual(ok.body.spec, { size: 3, mode: "fast" });
  assert.match(ok.headers.get("warning") ?? "", /unknown field \\"spec.junk\\"/);
  const strict = await call(api.url, "POST", `${KEX}?fieldValidation=Strict`, {
    metadata: { name: "b" },
    spec: { size: 3, junk: 1 },
  });
  assert.equal(strict.status, 400);
  assert.match(strict.body.message, /strict decoding error: unknown field "spec.junk"/);
  const invalid = await call(api.url, "POST", KEX, {
    metadata: { name: "c" },
    spec: { size: 11, mode: "warp" },
  });
  assert.equal(invalid.status, 422);
  assert.equal(invalid.body.reason, "Invalid");
  const fields = invalid.body.details.causes.map((c: { field: string }) => c.field).sort();
  assert.deepEqual(fields, ["spec.mode", "spec.size"]);
});

Deno.test("labels and annotations are validated, including the 256 KiB annotation limit", async () => {
  await using api = await startApiServer();
  const badLabel = await call(api.url, "POST", CM, {
    metadata: { name: "x", labels: { "bad key!": "v" } },
  });
  assert.equal(badLabel.status, 422);
  const big = await call(api.url, "POST", CM, {
    metadata: { name: "y", annotations: { a: "x".repeat(256 * 1024) } },
  });
  assert.equal(big.status, 422);
  assert.match(big.body.message, /Too long: must have at most 262144 bytes/);
  const fits = await call(api.url, "POST", CM, {
    metadata: { name: "z", annotations: { a: "x".repeat(256 * 1024 - 1) } },
  });
  assert.equal(fits.status, 201);
});

Deno.test("finalizers hold a deletion: deletionTimestamp, no new finalizers, gone with the last one", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CM, { metadata: { name: "x", finalizers: ["example.com/a"] } });
  const watch = await fetch(
    `${api.url}${CM}?watch=true&fieldSelector=metadata.name%3Dx&resourceVersion=0`,
  );
  const del = await call(api.url, "DELETE", `${CM}/x`, { propagationPolicy: "Background" });
  assert.equal(del.status, 200);
  assert.ok(del.body.metadata.deletionTimestamp);
  const more = await call(api.url, "PATCH", `${CM}/x`, {
    metadata: { finalizers: ["example.com/a", "example.com/b"] },
  }, "application/merge-patch+json");
  assert.equal(more.status, 422);
  assert.match(more.body.message, /no new finalizers can be added/);
  const last = await call(
    api.url,
    "PATCH",
    `${CM}/x`,
    { metadata: { finalizers: null } },
    "application/merge-patch+json",
  );
  assert.equal(last.status, 200);
  assert.equal((await call(api.url, "GET", `${CM}/x`)).status, 404);
  const events = await readEvents(watch, 3);
  assert.deepEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"]);
  assert.ok(events[1].object.metadata.deletionTimestamp);
});

Deno.test("delete: preconditions, dryRun=All, deletecollection by label", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CM, { metadata: { name: "a", labels: { app: "x" } } });
  await call(api.url, "POST", CM, { metadata: { name: "b", labels: { app: "x" } } });
  await call(api.url, "POST", CM, { metadata: { name: "c", labels: { app: "y" } } });
  const pre = await call(api.url, "DELETE", `${CM}/a`, { preconditions: { uid: "nope" } });
  assert.equal(pre.status, 409);
  const dry = await call(api.url, "DELETE", `${CM}/a?dryRun=All`);
  assert.equal(dry.status, 200);
  assert.equal((await call(api.url, "GET", `${CM}/a`)).status, 200);
  const coll = await call(api.url, "DELETE", `${CM}?labelSelector=app%3Dx`);
  assert.equal(coll.status, 200);
  const left = await call(api.url, "GET", CM);
  assert.deepEqual(left.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), [
    "c",
  ]);
});

Deno.test("garbage collection: background, foreground and orphan propagation", async () => {
  await using api = await startApiServer();
  const mk = async (name: string, owner?: { metadata: { name: string; uid: string } }) =>
    (await call(api.url, "POST", CM, {
      metadata: {
        name,
        ...(owner
          ? {
            ownerReferences: [{
              apiVersion: "v1",
              kind: "ConfigMap",
              name: owner.metadata.name,
              uid: owner.metadata.uid,
              blockOwnerDeletion: true,
            }],
          }
          : {}),
      },
    })).body;
  const names = async () =>
    (await call(api.url, "GET", CM)).body.items.map((i: { metadata: { name: string } }) =>
      i.metadata.name
    ).sort();

  const bg = await mk("bg");
  await mk("bg-child", bg);
  await call(api.url, "DELETE", `${CM}/bg`, { propagationPolicy: "Background" });
  await api.settled();
  assert.deepEqual(await names(), []);

  const fg = await mk("fg");
  const child = await mk("fg-child", fg);
  await call(
    api.url,
    "PATCH",
    `${CM}/fg-child`,
    { metadata: { finalizers: ["example.com/hold"] } },
    "application/merge-patch+json",
  );
  const fgDel = await call(api.url, "DELETE", `${CM}/fg`, { propagationPolicy: "Foreground" });
  assert.ok(fgDel.body.metadata.finalizers.includes("foregroundDeletion"));
  await api.settled();
  assert.deepEqual(await names(), ["fg", "fg-child"], "the owner waits for its held child");
  await call(
    api.url,
    "PATCH",
    `${CM}/fg-child`,
    { metadata: { finalizers: null } },
    "application/merge-patch+json",
  );
  await api.settled();
  assert.deepEqual(await names(), []);
  void child;

  const or = await mk("or");
  await mk("or-child", or);
  await call(api.url, "DELETE", `${CM}/or`, { propagationPolicy: "Orphan" });
  await api.settled();
  assert.deepEqual(await names(), ["or-child"]);
  assert.equal(
    (await call(api.url, "GET", `${CM}/or-child`)).body.metadata.ownerReferences,
    undefined,
  );
});

Deno.test("namespace deletion: Terminating, refuses new content, deletes contents, then goes", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", "/api/v1/namespaces", { metadata: { name: "tmp" } });
  await call(api.url, "POST", "/api/v1/namespaces/tmp/configmaps", {
    metadata: { name: "held", finalizers: ["example.com/x"] },
  });
  await call(api.url, "POST", "/api/v1/namespaces/tmp/secrets", { metadata: { name: "s" } });
  const del = await call(api.url, "DELETE", "/api/v1/namespaces/tmp");
  assert.equal(del.body.status.phase, "Terminating");
  await api.settled();
  const refused = await call(api.url, "POST", "/api/v1/namespaces/tmp/configmaps", {
    metadata: { name: "new" },
  });
  assert.equal(refused.status, 403);
  assert.equal((await call(api.url, "GET", "/api/v1/namespaces/tmp/secrets/s")).status, 404);
  assert.equal(
    (await call(api.url, "GET", "/api/v1/namespaces/tmp")).status,
    200,
    "held by the finalized object",
  );
  await call(api.url, "PATCH", "/api/v1/namespaces/tmp/configmaps/held", {
    metadata: { finalizers: null },
  }, "application/merge-patch+json");
  await api.settled();
  assert.equal((await call(api.url, "GET", "/api/v1/namespaces/tmp")).status, 404);
  const missing = await call(api.url, "POST", "/api/v1/namespaces/tmp/configmaps", {
    metadata: { name: "x" },
  });
  assert.equal(missing.status, 404);
  assert.match(missing.body.message, /namespaces "tmp" not found/);
});

Deno.test("deleting a CRD deletes its objects and stops serving it", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CRD_PATH, crd());
  await call(api.url, "POST", KEX, { metadata: { name: "x" }, spec: {} });
  const watch = await fetch(`${api.url}${KEX}?watch=true&resourceVersion=0`);
  await call(api.url, "DELETE", `${CRD_PATH}/kopfexamples.kopf.dev`);
  await api.settled();
  const events = await readEvents(watch, 2);
  assert.deepEqual(events.map((e) => e.type), ["ADDED", "DELETED"]);
  assert.equal((await call(api.url, "GET", KEX)).status, 404);
  assert.equal((await call(api.url, "GET", "/apis/kopf.dev/v1")).status, 404);
  assert.equal((await call(api.url, "GET", `${CRD_PATH}/kopfexamples.kopf.dev`)).status, 404);
});

Deno.test("list: label and field selectors, limit and continue, Table with printer columns", async () => {
  await using api = await startApiServer();
  for (let i = 0; i < 5; i++) {
    await call(api.url, "POST", CM, {
      metadata: { name: `cm-${i}`, labels: { n: String(i % 2) } },
    });
  }
  const odd = await call(api.url, "GET", `${CM}?labelSelector=n%3D1`);
  assert.deepEqual(odd.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), [
    "cm-1",
    "cm-3",
  ]);
  const byName = await call(
    api.url,
    "GET",
    `/api/v1/configmaps?fieldSelector=metadata.name%3Dcm-2,metadata.namespace%3Ddefault`,
  );
  assert.equal(byName.body.items.length, 1);
  const bad = await call(api.url, "GET", `${CM}?fieldSelector=spec.foo%3Dx`);
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /field label not supported: spec.foo/);
  const page1 = await call(api.url, "GET", `${CM}?limit=2`);
  assert.equal(page1.body.items.length, 2);
  assert.equal(page1.body.metadata.remainingItemCount, 3);
  const page2 = await call(
    api.url,
    "GET",
    `${CM}?limit=2&continue=${encodeURIComponent(page1.body.metadata.continue)}`,
  );
  assert.deepEqual(page2.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), [
    "cm-2",
    "cm-3",
  ]);
  const table = await call(api.url, "GET", CM, undefined, undefined, {
    accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
  });
  assert.equal(table.body.kind, "Table");
  assert.deepEqual(table.body.columnDefinitions.map((c: { name: string }) => c.name), [
    "Name",
    "Data",
    "Age",
  ]);
  assert.equal(table.body.rows.length, 5);
});

Deno.test("watch: from a resourceVersion replays history; too old is an in-stream 410 Expired", async () => {
  await using api = await startApiServer({ historySize: 5 });
  const first = await call(api.url, "POST", CM, { metadata: { name: "a" } });
  const rv = first.body.metadata.resourceVersion;
  await call(api.url, "PATCH", `${CM}/a`, { data: { x: "1" } }, "application/merge-patch+json");
  await call(api.url, "POST", CM, { metadata: { name: "b" } });
  const replay = await readEvents(
    await fetch(`${api.url}${CM}?watch=true&resourceVersion=${rv}`),
    2,
  );
  assert.deepEqual(replay.map((e) => `${e.type} ${e.object.metadata.name}`), [
    "MODIFIED a",
    "ADDED b",
  ]);
  for (let i = 0; i < 10; i++) await call(api.url, "POST", CM, { metadata: { name: `f-${i}` } });
  const gone = await readEvents(await fetch(`${api.url}${CM}?watch=true&resourceVersion=${rv}`), 1);
  assert.equal(gone[0].type, "ERROR");
  assert.equal(gone[0].object.code, 410);
  assert.equal(gone[0].object.reason, "Expired");
});

Deno.test("watch: live events carry each object exactly as answered, ASCII text or not", async () => {
  await using api = await startApiServer();
  const watch = await fetch(`${api.url}${CM}?watch=true`);
  const made = [];
  for (const [name, x] of [["plain", "abc"], ["accents", "héllo €"], ["html", "<&>"]]) {
    made.push((await call(api.url, "POST", CM, { metadata: { name }, data: { x } })).body);
  }
  made.push(
    (await call(
      api.url,
      "PATCH",
      `${CM}/accents`,
      { data: { y: "ü" } },
      "application/merge-patch+json",
    ))
      .body,
  );
  const events = await readEvents(watch, 4);
  assert.deepEqual(events.map((e) => e.type), ["ADDED", "ADDED", "ADDED", "MODIFIED"]);
  assert.deepEqual(events.map((e) => e.object), made);
});

Deno.test("watch: label selector transitions give ADDED and DELETED; bookmarks only when asked", async () => {
  await using api = await startApiServer({ bookmarkSeconds: 0.2 });
  const plain = await fetch(`${api.url}${CM}?watch=true&labelSelector=app%3Dx`);
  const marked = await fetch(
    `${api.url}${CM}?watch=true&labelSelector=app%3Dx&allowWatchBookmarks=true`,
  );
  await call(api.url, "POST", CM, { metadata: { name: "a" } });
  const merge = "application/merge-patch+json";
  await call(api.url, "PATCH", `${CM}/a`, { metadata: { labels: { app: "x" } } }, merge);
  await call(api.url, "PATCH", `${CM}/a`, { data: { k: "v" } }, merge);
  await call(api.url, "PATCH", `${CM}/a`, { metadata: { labels: { app: "y" } } }, merge);
  await new Promise((r) => setTimeout(r, 500));
  // The API server's timers and watches are real (it has no injectable clock), so every wait
  // for what must arrive is generous (it ends as soon as it has arrived): 10 s on a loaded
  // 2-core machine; a wait that must stay empty keeps its short window (load only helps it).
  const events = await readEvents(plain, 3, 10_000);
  assert.deepEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"]);
  // Bookmarks come every 0.2 s, so on a loaded machine one may come before the first change too:
  // the changes in order, and a bookmark after them at the last one's resourceVersion or later.
  const withMarks = await readEvents(marked, 6, 10_000);
  const changes = withMarks.filter((e) => e.type !== "BOOKMARK");
  assert.deepEqual(changes.slice(0, 3).map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"]);
  const mark = withMarks.slice(withMarks.indexOf(changes[2])).find((e) => e.type === "BOOKMARK");
  assert.ok(mark, JSON.stringify(withMarks.map((e) => e.type)));
  assert.ok(
    Number(mark.object.metadata.resourceVersion) >=
      Number(changes[2].object.metadata.resourceVersion),
  );
});

Deno.test("watch: timeoutSeconds ends the stream", async () => {
  await using api = await startApiServer();
  const started = Date.now();
  const res = await fetch(`${api.url}${CM}?watch=true&timeoutSeconds=1`);
  await res.body!.pipeTo(new WritableStream());
  const took = Date.now() - started;
  // The server's timer is real (it has no injectable clock): not before the second is the
  // guarantee, and load cannot break it; the upper bound only tells "ends" from "never ends",
  // with room for a loaded 2-core machine.
  assert.ok(took >= 900 && took < 15_000, `took ${took} ms`);
});

Deno.test("faults: 429 and 503 with Retry-After, 500, counted; switchable over /admin/faults", async () => {
  await using api = await startApiServer({ faults: { rate429: 1, retryAfterSeconds: 3 } });
  const r = await call(api.url, "GET", CM);
  assert.equal(r.status, 429);
  assert.equal(r.headers.get("retry-after"), "3");
  assert.equal(r.body.details.retryAfterSeconds, 3);
  api.setFaults({ rate429: null, rate503: 1 });
  assert.equal((await call(api.url, "GET", CM)).status, 503);
  const admin = await call(api.url, "PUT", "/admin/faults", { rate500: 1 });
  assert.equal(admin.status, 200);
  assert.equal((await call(api.url, "GET", CM)).status, 500);
  const counts = (await call(api.url, "GET", "/admin/faults")).body.counts;
  assert.deepEqual([counts.error429, counts.error503, counts.error500], [1, 1, 1]);
  const badSwitch = await call(api.url, "PATCH", "/admin/faults", { rate500: 2 });
  assert.equal(badSwitch.status, 400);
  assert.match(badSwitch.body.message, /between 0 and 1/);
  api.setFaults({ rate500: null });
  assert.equal((await call(api.url, "GET", CM)).status, 200);
  assert.equal(api.countRequests({ verb: "list", resource: "configmaps", code: 200 }), 1);
});

Deno.test("faults: closing, stalling and expiring watches", async () => {
  await using api = await startApiServer({ faults: { closeWatchesEvery: 0.3 } });
  const res = await fetch(`${api.url}${CM}?watch=true`);
  await res.body!.pipeTo(new WritableStream());
  assert.equal(api.faultCounts.watchClosed, 1);
  api.setFaults({ closeWatchesEvery: null, stallWatches: true });
  const stalled = await fetch(`${api.url}${CM}?watch=true`);
  await call(api.url, "POST", CM, { metadata: { name: "a" } });
  assert.deepEqual(await readEvents(stalled, 1, 500), []);
  assert.equal(api.faultCounts.watchStalled, 1);
  api.setFaults({ stallWatches: null });
  const rv = (await call(api.url, "GET", CM)).body.metadata.resourceVersion;
  await call(api.url, "POST", CM, { metadata: { name: "b" } });
  const live = await fetch(`${api.url}${CM}?watch=true&resourceVersion=${rv}`);
  api.expireResourceVersions();
  const ended = await readEvents(live, 5, 10_000);
  assert.deepEqual(
    ended.map((e) => e.type),
    ["ADDED"],
    "the open watch is closed after its events",
  );
  const again = await readEvents(
    await fetch(`${api.url}${CM}?watch=true&resourceVersion=${rv}`),
    1,
  );
  assert.equal(again[0].object.code, 410);
  assert.equal(api.faultCounts.expiredWatches, 1);
});

Deno.test("faults: closeWatchesRandomly closes each watch at a random moment within its bound", async () => {
  await using api = await startApiServer({ faults: { closeWatchesRandomly: 0.4 } });
  const took: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const res = await fetch(`${api.url}${CM}?watch=true`);
    await res.body!.pipeTo(new WritableStream());
    took.push(Date.now() - started);
  }
  // Real timers (the server has no injectable clock): the bound is 0.4 s; 3.5 s leaves room for
  // a loaded 2-core machine and still fails a bound taken as much longer (e.g. unscaled).
  assert.ok(took.every((ms) => ms < 3500), `closed within the bound (+ slack): ${took}`);
  assert.equal(api.faultCounts.watchClosed, 3);
});

Deno.test("latency fault delays requests", async () => {
  await using api = await startApiServer({ faults: { latencyMs: 150 } });
  const t = Date.now();
  await call(api.url, "GET", CM);
  // A lower bound on a real timer (the server has no injectable clock): load cannot break it.
  assert.ok(Date.now() - t >= 140);
  assert.equal(api.faultCounts.delayed, 1);
});

Deno.test("bearer token: 401 without it, 200 with it; /version stays open", async () => {
  await using api = await startApiServer({ token: "s3cret" });
  const no = await call(api.url, "GET", CM);
  assert.equal(no.status, 401);
  assert.equal(no.body.reason, "Unauthorized");
  const yes = await call(api.url, "GET", CM, undefined, undefined, {
    authorization: "Bearer s3cret",
  });
  assert.equal(yes.status, 200);
  assert.equal((await call(api.url, "GET", "/version")).status, 200);
  assert.equal(api.kubeconfig.object.users[0]!.user.token, "s3cret");
});

Deno.test("TLS: https with a generated CA; client certificate authenticates; no cert and no token is 401", async () => {
  await using api = await startApiServer({ tls: true, token: "t" });
  assert.ok(api.url.startsWith("https://127.0.0.1:"));
  const client = Deno.createHttpClient({
    caCerts: [api.tls!.caCert],
    cert: api.tls!.clientCert,
    key: api.tls!.clientKey,
  });
  const anon = Deno.createHttpClient({ caCerts: [api.tls!.caCert] });
  try {
    const ok = await fetch(`${api.url}${CM}`, { client });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const denied = await fetch(`${api.url}${CM}`, { client: anon });
    assert.equal(denied.status, 401);
    await denied.body?.cancel();
  } finally {
    client.close();
    anon.close();
  }
});

Deno.test("persistence: state survives a restart with --data-dir, resourceVersions continue", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let lastRv: number;
    {
      await using api = await startApiServer({ dataDir: dir });
      await call(api.url, "POST", CRD_PATH, crd());
      await call(api.url, "POST", KEX, { metadata: { name: "x" }, spec: { a: 1 } });
      const cm = await call(api.url, "POST", CM, { metadata: { name: "kept" }, data: { a: "1" } });
      lastRv = Number(cm.body.metadata.resourceVersion);
      await call(api.url, "POST", CM, { metadata: { name: "gone" } });
      await call(api.url, "DELETE", `${CM}/gone`);
    }
    {
      await using api = await startApiServer({ dataDir: dir });
      const kept = await call(api.url, "GET", `${CM}/kept`);
      assert.deepEqual(kept.body.data, { a: "1" });
      assert.equal((await call(api.url, "GET", `${CM}/gone`)).status, 404);
      assert.equal(
        (await call(api.url, "GET", `${KEX}/x`)).body.spec.a,
        1,
        "the CRD is served again",
      );
      const next = await call(api.url, "POST", CM, { metadata: { name: "new" } });
      assert.ok(Number(next.body.metadata.resourceVersion) > lastRv + 1);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("persistence: the change log alone restores acknowledged writes (no clean stop)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { DataDir } = await import("../../src/apiserver/storage/persistence.ts");
    const data = new DataDir(dir);
    const store = data.load();
    data.attach(store);
    store.commit("ADDED", "configmaps", { metadata: { name: "a", namespace: "default" } });
    store.commit("MODIFIED", "configmaps", {
      metadata: { name: "a", namespace: "default", labels: { x: "y" } },
    });
    // No close(): as if the process died after acknowledging.
    const again = new DataDir(dir).load();
    assert.deepEqual(again.get("configmaps", "default", "a")?.metadata.labels, { x: "y" });
    assert.equal(again.resourceVersion, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("server-side apply creates, merges, removes dropped fields, and conflicts between managers", async () => {
  await using api = await startApiServer();
  const apply = "application/apply-patch+yaml";
  const first = await call(api.url, "PATCH", `${CM}/x?fieldManager=alice`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x" },
    data: { a: "1", b: "2" },
  }, apply);
  assert.equal(first.status, 201);
  assert.equal(first.body.metadata.managedFields[0].manager, "alice");
  assert.equal(first.body.metadata.managedFields[0].operation, "Apply");
  const second = await call(api.url, "PATCH", `${CM}/x?fieldManager=alice`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x" },
    data: { a: "1" },
  }, apply);
  assert.deepEqual(
    second.body.data,
    { a: "1" },
    "b was applied before by alice and is dropped now",
  );
  const conflict = await call(api.url, "PATCH", `${CM}/x?fieldManager=bob`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x" },
    data: { a: "other" },
  }, apply);
  assert.equal(conflict.status, 409);
  const forced = await call(api.url, "PATCH", `${CM}/x?fieldManager=bob&force=true`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x" },
    data: { a: "other" },
  }, apply);
  assert.equal(forced.status, 200);
  assert.equal(forced.body.data.a, "other");
});

Deno.test("TLS without a token: a client certificate is required", async () => {
  await using api = await startApiServer({ tls: true });
  const anon = Deno.createHttpClient({ caCerts: [api.tls!.caCert] });
  try {
    const denied = await fetch(`${api.url}${CM}`, { client: anon });
    assert.equal(denied.status, 401);
    await denied.body?.cancel();
    const version = await fetch(`${api.url}/version`, { client: anon });
    assert.equal(version.status, 200);
    await version.body?.cancel();
  } finally {
    anon.close();
  }
});

Deno.test("errors are Status objects: 404 for unknown resources, 405 for a bad verb, 400 for bad JSON", async () => {
  await using api = await startApiServer();
  const unknown = await call(api.url, "GET", "/apis/apps/v1/things");
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.kind, "Status");
  const post = await call(api.url, "POST", `${CM}/x`, {});
  assert.equal(post.status, 405);
  const badJson = await call(api.url, "POST", CM, "{nope");
  assert.equal(badJson.status, 400);
  assert.match(
    badJson.body.message,
    /json parse error: invalid character 'n' looking for beginning/,
  );
});

Deno.test("faults: a lagging watch (watchDelayMs) delivers late, in order, only for the resources named", async () => {
  await using api = await startApiServer();
  api.setFaults({ watchDelayMs: 400, watchDelayResources: ["configmaps"] });
  const SECRETS = "/api/v1/namespaces/default/secrets";
  const lagging = await fetch(`${api.url}${CM}?watch=true&resourceVersion=0`);
  const onTime = await fetch(`${api.url}${SECRETS}?watch=true&resourceVersion=0`);
  const started = performance.now();
  for (const name of ["a", "b", "c"]) await call(api.url, "POST", CM, { metadata: { name } });
  await call(api.url, "POST", SECRETS, { metadata: { name: "s" } });
  const secret = await readEvents(onTime, 1, 10_000);
  assert.deepEqual(secret.map((e) => e.object.metadata.name), ["s"], "other resources on time");
  const events = await readEvents(lagging, 3, 10_000);
  const took = performance.now() - started;
  assert.deepEqual(events.map((e) => e.object.metadata.name), ["a", "b", "c"], "in order");
  assert.ok(took >= 400, `not before the delay: ${took} ms`);
  assert.equal(api.faultCounts.watchDelayed, 3);
  assert.throws(
    () => api.setFaults({ watchDelayResources: "configmaps" as unknown as string[] }),
    /must be a list of plurals/,
  );
});
