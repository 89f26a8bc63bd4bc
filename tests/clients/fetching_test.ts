import assert from "node:assert/strict";
import { listObjects, readObject } from "../../src/cogs/clients/fetching.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { CONFIGMAPS, NAMESPACES, setup } from "./_setup.ts";

Deno.test("listObjects() follows `continue` across pages; selectors; kind and apiVersion filled in", async () => {
  await using env = await setup();
  for (let i = 0; i < 7; i++) {
    await createObject(env.api, CONFIGMAPS, "default", {
      metadata: { name: `cm${i}`, labels: { parity: i % 2 ? "odd" : "even" } },
    });
  }
  await createObject(env.api, NAMESPACES, null, { metadata: { name: "other" } });
  await createObject(env.api, CONFIGMAPS, "other", { metadata: { name: "elsewhere" } });
  const before = env.server.countRequests({ verb: "list", resource: "configmaps" });
  const { items, resourceVersion } = await listObjects(env.api, CONFIGMAPS, "default", {
    limit: 3,
  });
  assert.equal(env.server.countRequests({ verb: "list", resource: "configmaps" }) - before, 3);
  assert.deepEqual(items.map((i) => i.metadata?.name), [
    "cm0",
    "cm1",
    "cm2",
    "cm3",
    "cm4",
    "cm5",
    "cm6",
  ]);
  assert.ok(items.every((i) => i.kind === "ConfigMap" && i.apiVersion === "v1"));
  assert.match(resourceVersion, /^\d+$/);

  const everywhere = await listObjects(env.api, CONFIGMAPS, null, { limit: 2 });
  assert.ok(everywhere.items.some((i) => i.metadata?.namespace === "other"));
  const odd = await listObjects(env.api, CONFIGMAPS, "default", { labelSelector: "parity=odd" });
  assert.deepEqual(odd.items.map((i) => i.metadata?.name), ["cm1", "cm3", "cm5"]);
  const one = await listObjects(env.api, CONFIGMAPS, "default", {
    fieldSelector: "metadata.name=cm4",
  });
  assert.deepEqual(one.items.map((i) => i.metadata?.name), ["cm4"]);
});

Deno.test("readObject() returns the object, or undefined for a 404", async () => {
  await using env = await setup();
  await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "cm" },
    data: { k: "v" },
  });
  assert.deepEqual((await readObject(env.api, CONFIGMAPS, "default", "cm"))?.data, { k: "v" });
  assert.equal(await readObject(env.api, CONFIGMAPS, "default", "nope"), undefined);
});
