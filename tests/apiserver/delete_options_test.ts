/**
 * Delete options in the embedded API server, over real HTTP: preconditions by resourceVersion
 * and uid (a stale one is kube's 409 Conflict, with kube-apiserver's message and details, and
 * the object stays), and `gracePeriodSeconds` (checked as kube checks it; objects without a
 * graceful-deletion strategy are deleted, or marked with `deletionGracePeriodSeconds: 0`, at once
 * whatever grace was asked for).
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call, cluster } from "../reactor/_setup.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const MERGE = { contentType: "application/merge-patch+json" };

Deno.test("delete: a stale resourceVersion precondition is kube's 409 Conflict; the object stays; the current one deletes", async () => {
  await using api = await startApiServer();
  const created = (await call(api, "POST", CM, { metadata: { name: "cm1" } })).body;
  const stale = created.metadata.resourceVersion as string;
  const changed = (await call(api, "PATCH", `${CM}/cm1`, { data: { a: "1" } }, MERGE)).body;
  const current = changed.metadata.resourceVersion as string;
  assert.notEqual(stale, current);

  const refused = await call(api, "DELETE", `${CM}/cm1`, {
    kind: "DeleteOptions",
    apiVersion: "v1",
    preconditions: { resourceVersion: stale },
  }, { ok: [409] });
  assert.equal(refused.status, 409);
  assert.deepEqual(refused.body, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `Operation cannot be fulfilled on ConfigMap "cm1": the ResourceVersion in the ` +
      `precondition (${stale}) does not match the ResourceVersion in record (${current}). ` +
      `The object might have been modified`,
    reason: "Conflict",
    details: { name: "cm1", kind: "ConfigMap" },
    code: 409,
  });
  const kept = await call(api, "GET", `${CM}/cm1`);
  assert.equal(kept.body.metadata.resourceVersion, current, "not deleted, not changed");

  // An empty resourceVersion is a precondition too (kube compares it as given).
  const empty = await call(api, "DELETE", `${CM}/cm1`, { preconditions: { resourceVersion: "" } }, {
    ok: [409],
  });
  assert.equal(empty.status, 409);

  const deleted = await call(api, "DELETE", `${CM}/cm1`, {
    preconditions: { resourceVersion: current, uid: created.metadata.uid },
  });
  assert.equal(deleted.status, 200);
  assert.equal((await call(api, "GET", `${CM}/cm1`, undefined, { ok: [404] })).status, 404);
});

Deno.test("delete: a uid precondition of another object is kube's 409 Conflict naming Kind.group", async () => {
  await using c = await cluster();
  const kex = (await c.createKex("default", "k1")).body;
  const refused = await c.call("DELETE", `${KEX}/k1`, { preconditions: { uid: "other-uid" } }, [
    409,
  ]);
  assert.equal(refused.status, 409);
  assert.equal(
    refused.body.message,
    `Operation cannot be fulfilled on KopfExample.kopf.dev "k1": the UID in the precondition ` +
      `(other-uid) does not match the UID in record (${kex.metadata.uid}). ` +
      `The object might have been deleted and then recreated`,
  );
  assert.deepEqual(refused.body.details, { name: "k1", group: "kopf.dev", kind: "KopfExample" });
  assert.ok(await c.getKex("default", "k1"), "still there");
  // A stale resourceVersion on an object held by a finalizer: not even marked.
  await call(c.api, "PATCH", `${KEX}/k1`, { metadata: { finalizers: ["x/y"] } }, MERGE);
  const r = await c.call("DELETE", `${KEX}/k1`, {
    preconditions: { resourceVersion: kex.metadata.resourceVersion },
  }, [409]);
  assert.equal(r.status, 409);
  assert.equal((await c.getKex("default", "k1")).metadata.deletionTimestamp, undefined);
});

Deno.test("delete: gracePeriodSeconds is checked (body and query); a finalizer-held object is marked with grace 0", async () => {
  await using c = await cluster();
  await c.createKex("default", "k1", { metadata: { name: "k1", finalizers: ["x/y"] } });
  const inBody = await c.call("DELETE", `${KEX}/k1`, { gracePeriodSeconds: 1.5 }, [400]);
  assert.equal(inBody.status, 400);
  assert.equal(
    inBody.body.message,
    "gracePeriodSeconds must be an integer number of seconds, not 1.5",
  );
  const inQuery = await c.call("DELETE", `${KEX}/k1?gracePeriodSeconds=soon`, undefined, [400]);
  assert.equal(inQuery.status, 400);
  assert.equal(inQuery.body.message, 'strconv.ParseInt: parsing "soon": invalid syntax');
  assert.equal((await c.getKex("default", "k1")).metadata.deletionTimestamp, undefined);

  const marked = await c.call("DELETE", `${KEX}/k1`, { gracePeriodSeconds: 30 });
  assert.equal(marked.status, 200);
  assert.ok(marked.body.metadata.deletionTimestamp);
  assert.equal(marked.body.metadata.deletionGracePeriodSeconds, 0, "no graceful strategy: 0");
  await call(c.api, "PATCH", `${KEX}/k1`, { metadata: { finalizers: null } }, MERGE);
  assert.equal(await c.getKex("default", "k1"), undefined);

  // Without finalizers, a grace period does not hold the object: deleted at once.
  await c.createKex("default", "k2");
  await c.call("DELETE", `${KEX}/k2?gracePeriodSeconds=60`);
  assert.equal(await c.getKex("default", "k2"), undefined);
});
