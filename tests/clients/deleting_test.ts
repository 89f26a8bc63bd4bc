/**
 * The client's delete options travel to the server, over real HTTP to the embedded API server:
 * a resourceVersion precondition (a stale one is a ConflictError and the object stays — the
 * guarantee sharding's removal of expired member Leases stands on), a uid precondition, and
 * `gracePeriodSeconds` (a value the server refuses comes back refused, so it was sent).
 */

import assert from "node:assert/strict";
import { ApiError, ConflictError, KubeClient } from "../../mod.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { deleteObject } from "../../src/cogs/clients/deleting.ts";
import { patchObject } from "../../src/cogs/clients/patching.ts";
import { CONFIGMAPS, setup } from "./_setup.ts";

Deno.test("deleteObject(): a stale resourceVersion precondition is sent — a ConflictError, the object stays", async () => {
  await using env = await setup();
  const created = await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "cm1" },
  });
  const stale = created.metadata!.resourceVersion!;
  const changed = await patchObject(env.api, CONFIGMAPS, "default", "cm1", { data: { a: "1" } });
  const current = changed!.metadata!.resourceVersion!;
  const error = await deleteObject(env.api, CONFIGMAPS, "default", "cm1", {
    preconditions: { resourceVersion: stale },
  }).then(() => undefined, (e) => e);
  assert.ok(error instanceof ConflictError, `a conflict, not ${error}`);
  assert.equal(error.code, 409);
  assert.match(
    error.message,
    new RegExp(`the ResourceVersion in the precondition \\(${stale}\\) does not match`),
  );
  assert.ok(await env.api.request("GET", CONFIGMAPS.getUrl({ namespace: "default", name: "cm1" })));

  // The uid too; and the current ones delete it.
  const uid = await deleteObject(env.api, CONFIGMAPS, "default", "cm1", {
    preconditions: { uid: "not-its-uid" },
  }).then(() => undefined, (e) => e);
  assert.ok(uid instanceof ConflictError);
  assert.ok(
    await deleteObject(env.api, CONFIGMAPS, "default", "cm1", {
      preconditions: { resourceVersion: current, uid: created.metadata!.uid! },
    }),
  );
  assert.equal(await deleteObject(env.api, CONFIGMAPS, "default", "cm1"), undefined, "gone");
});

Deno.test("KubeClient.delete(): preconditions and gracePeriodSeconds are sent", async () => {
  await using env = await setup();
  const kube = new KubeClient(env.api);
  const cm = await kube.create("configmaps", { metadata: { name: "cm2" } }, {
    namespace: "default",
  });
  await kube.patch("configmaps", "cm2", { data: { b: "2" } }, { namespace: "default" });
  await assert.rejects(
    kube.delete("configmaps", "cm2", {
      namespace: "default",
      preconditions: { resourceVersion: cm.metadata.resourceVersion! },
    }),
    ConflictError,
  );
  // A grace period that is not a whole number of seconds: the server refuses what it was sent.
  const refused = await kube.delete("configmaps", "cm2", {
    namespace: "default",
    gracePeriodSeconds: 2.5,
  }).then(() => undefined, (e) => e);
  assert.ok(refused instanceof ApiError && refused.code === 400, `400, not ${refused}`);
  assert.match(
    refused.message,
    /gracePeriodSeconds must be an integer number of seconds, not 2\.5/,
  );
  assert.ok(await kube.get("configmaps", "cm2", { namespace: "default" }), "still there");
  await kube.delete("configmaps", "cm2", { namespace: "default", gracePeriodSeconds: 0 });
  assert.equal(await deleteObject(env.api, CONFIGMAPS, "default", "cm2"), undefined, "gone");
});
