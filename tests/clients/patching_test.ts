import assert from "node:assert/strict";
import { patchObject } from "../../src/cogs/clients/patching.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { deleteObject } from "../../src/cogs/clients/deleting.ts";
import { readObject } from "../../src/cogs/clients/fetching.ts";
import { ConflictError, UnprocessableError } from "../../src/cogs/clients/errors.ts";
import { Resource } from "../../src/cogs/structs/references.ts";
import { CONFIGMAPS, createKopfExampleCrd, eventually, KOPFEXAMPLES, setup } from "./_setup.ts";

Deno.test("patchObject() merge-patches and returns the patched body; a 404 is undefined", async () => {
  await using env = await setup();
  await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "cm" },
    data: { a: "1", b: "2" },
  });
  const patched = await patchObject(env.api, CONFIGMAPS, "default", "cm", {
    data: { a: "x", b: null },
  });
  assert.deepEqual(patched?.data, { a: "x" });
  assert.equal(
    await patchObject(env.api, CONFIGMAPS, "default", "absent", { data: { a: "1" } }),
    undefined,
  );
  assert.equal(
    await patchObject(env.api, CONFIGMAPS, "gone-namespace", "cm", { data: {} }),
    undefined,
  );
});

Deno.test("patchObject() with a JSON patch: a failed `test` is a 422 UnprocessableError", async () => {
  await using env = await setup();
  const made = await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "cm", finalizers: ["a/b"] },
  });
  const rv = made.metadata!.resourceVersion!;
  const ok = await patchObject(env.api, CONFIGMAPS, "default", "cm", [
    { op: "test", path: "/metadata/resourceVersion", value: rv },
    { op: "remove", path: "/metadata/finalizers/0" },
  ], { contentType: "json" });
  assert.deepEqual(ok?.metadata?.finalizers, undefined);
  await assert.rejects(
    patchObject(env.api, CONFIGMAPS, "default", "cm", [
      { op: "test", path: "/metadata/resourceVersion", value: rv },
    ], { contentType: "json" }),
    UnprocessableError,
  );
});

Deno.test("a merge patch touching status goes to the main and the /status endpoints", async () => {
  const patches: Array<string | undefined> = [];
  await using env = await setup({}, {
    onRequest: (r) => r.verb === "patch" && patches.push(r.subresource ?? "main"),
  });
  await createKopfExampleCrd(env.api);
  await eventually(async () =>
    (await env.api.request<{ resources: unknown[] }>("GET", "/apis/kopf.dev/v1").catch(() =>
      null
    )) !== null
  );
  await createObject(env.api, KOPFEXAMPLES, "default", {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex" },
    spec: { size: 1 },
  });
  const count = () =>
    env.server.countRequests({ verb: "patch", resource: "kopfexamples.kopf.dev" });
  const patched = await patchObject(env.api, KOPFEXAMPLES, "default", "kex", {
    metadata: { annotations: { "kopf.zalando.org/x": "1" } },
    status: { create_fn: { message: "hello" } },
  });
  assert.equal(count(), 2, "two PATCH requests: main and /status");
  assert.deepEqual(patches, ["main", "status"]);
  assert.deepEqual(patched?.status, { create_fn: { message: "hello" } });
  assert.equal(
    (patched?.metadata?.annotations as Record<string, string>)["kopf.zalando.org/x"],
    "1",
  );
  const stored = await readObject(env.api, KOPFEXAMPLES, "default", "kex");
  assert.deepEqual(stored?.status, { create_fn: { message: "hello" } });
  assert.deepEqual(stored?.spec, { size: 1 });

  // Status only: one request to /status. Nothing to patch: no request at all.
  const onlyStatus = await patchObject(env.api, KOPFEXAMPLES, "default", "kex", {
    status: { phase: "Done" },
  });
  assert.equal(count(), 3);
  assert.deepEqual(patches.slice(2), ["status"]);
  assert.equal((onlyStatus?.status as Record<string, unknown>).phase, "Done");
  assert.deepEqual(await patchObject(env.api, KOPFEXAMPLES, "default", "kex", { status: {} }), {});
  assert.equal(count(), 3);

  // Without the status subresource (as known to the client), status goes to the main endpoint.
  const plain = new Resource({ ...KOPFEXAMPLES, subresources: [] });
  await patchObject(env.api, plain, "default", "kex", {
    spec: { size: 2 },
    status: { phase: "Ignored" },
  });
  assert.equal(count(), 4);
  const after = await readObject(env.api, KOPFEXAMPLES, "default", "kex");
  assert.equal((after?.spec as Record<string, unknown>).size, 2);
  assert.equal(
    (after?.status as Record<string, unknown>).phase,
    "Done",
    "the main endpoint ignores status",
  );

  assert.equal(
    await patchObject(env.api, KOPFEXAMPLES, "default", "absent", { status: { a: 1 } }),
    undefined,
  );
});

Deno.test("createObject() and deleteObject(): 409 for duplicates, undefined for a second delete", async () => {
  await using env = await setup();
  const made = await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "cm" } });
  assert.equal(made.metadata?.namespace, "default");
  await assert.rejects(
    createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "cm" } }),
    ConflictError,
  );
  const generated = await createObject(env.api, CONFIGMAPS, null, {
    metadata: { generateName: "gen-", namespace: "default" },
  });
  assert.match(generated.metadata!.name!, /^gen-/);

  const held = await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "held", finalizers: ["example.com/hold"] },
  });
  const marked = await deleteObject(env.api, CONFIGMAPS, "default", "held");
  assert.ok(marked?.metadata?.deletionTimestamp, "finalizers keep it, marked for deletion");
  assert.ok(held.metadata?.uid);
  assert.ok(await deleteObject(env.api, CONFIGMAPS, "default", "cm"));
  assert.equal(await deleteObject(env.api, CONFIGMAPS, "default", "cm"), undefined);
});

Deno.test("a split patch parses the main answer only when the /status answer is not the whole object", async () => {
  using vault = new Vault({ login: new ConnectionInfo({ server: "http://k8s.local" }) });
  let whole = true;
  const fetch = (input: Request | URL | string) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (!url.pathname.endsWith("/status")) {
      // Not JSON: a parse of it would throw. Unread when the /status answer has metadata.
      return Promise.resolve(new Response(whole ? "{not json" : '{"metadata":{"name":"kex"}}'));
    }
    const status = { create_fn: { message: "hello" } };
    return Promise.resolve(
      Response.json(whole ? { metadata: { name: "kex" }, status } : { status }),
    );
  };
  const api = new ApiClient({ vault, fetch });
  const patch = {
    metadata: { annotations: { a: "b" } },
    status: { create_fn: { message: "hello" } },
  };
  assert.deepEqual(await patchObject(api, KOPFEXAMPLES, "default", "kex", patch), {
    metadata: { name: "kex" },
    status: { create_fn: { message: "hello" } },
  });
  // A /status answer without metadata (not the whole object): the main answer's body with it.
  whole = false;
  assert.deepEqual(await patchObject(api, KOPFEXAMPLES, "default", "kex", patch), {
    metadata: { name: "kex" },
    status: { create_fn: { message: "hello" } },
  });
});
