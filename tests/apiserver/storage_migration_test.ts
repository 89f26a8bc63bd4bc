/**
 * Migrating stored objects to a new storage version of a CRD, as on kube-apiserver: after the
 * storage version changes, an unchanged write (GET and PUT back) still writes — at the new
 * storage version — because the real server compares the encoded bytes; a second one is a
 * no-op. `status.storedVersions` records every storage version since, can be trimmed through
 * the status subresource once the objects are migrated, and guards the versions still stored
 * from removal.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type RunningApiServer, startApiServer } from "../../testing.ts";
import { ReviewServer } from "./_review_server.ts";
import { call as http } from "./_http.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kopfexamples.kopf.dev";
const V1 = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const V2 = "/apis/kopf.dev/v2/namespaces/default/kopfexamples";
const MERGE = "application/merge-patch+json";

/** A conversion webhook renaming `spec.field` (v1) to `spec.renamed` (v2); it can be "down". */
class Converter extends ReviewServer {
  down = false;
  constructor(tls: Awaited<ReturnType<typeof ReviewServer.certificates>>) {
    super(tls, (review) => {
      const { uid, desiredAPIVersion, objects } = review.request;
      if (this.down) {
        return {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "ConversionReview",
          response: { uid, result: { status: "Failure", message: "down" } },
        };
      }
      const convertedObjects = objects.map((o: Json) => {
        const { field, renamed, ...spec } = o.spec ?? {};
        const moved = desiredAPIVersion === "kopf.dev/v2"
          ? { ...spec, renamed: renamed ?? field }
          : { ...spec, field: field ?? renamed };
        return { ...o, apiVersion: desiredAPIVersion, spec: moved };
      });
      return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        response: { uid, result: { status: "Success" }, convertedObjects },
      };
    });
  }
}

function crd(storage: "v1" | "v2", caBundle: string, url: string, versions = ["v1", "v2"]): Json {
  const schema = {
    openAPIV3Schema: {
      type: "object",
      properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
      versions: versions.map((name) => ({ name, served: true, storage: name === storage, schema })),
      conversion: {
        strategy: "Webhook",
        webhook: { conversionReviewVersions: ["v1"], clientConfig: { url, caBundle } },
      },
    },
  };
}

function call(api: RunningApiServer, method: string, path: string, body?: unknown, type?: string) {
  return http(api.url, method, path, body, type);
}

Deno.test("storage migration: an unchanged PUT re-stores an object at the new storage version; storedVersions guard and record it", async () => {
  await using api = await startApiServer();
  await using converter = new Converter(await ReviewServer.certificates());
  const url = `${converter.origin}/convert`;
  let r = await call(api, "POST", CRD.replace(/\/[^/]+$/, ""), crd("v1", converter.caBundle, url));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  r = await call(api, "POST", V1, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "old" },
    spec: { field: "value" },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));

  // The storage version becomes v2: recorded in storedVersions; the object is still at v1.
  const current = (await call(api, "GET", CRD)).body;
  r = await call(api, "PUT", CRD, {
    ...crd("v2", converter.caBundle, url),
    metadata: { name: current.metadata.name, resourceVersion: current.metadata.resourceVersion },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.status.storedVersions, ["v1", "v2"]);

  // Reads at v2 need the webhook while the object is stored at v1.
  converter.down = true;
  assert.equal((await call(api, "GET", `${V2}/old`)).status, 500);
  converter.down = false;

  // The migration: GET at v2 and PUT back unchanged — written (a new resourceVersion).
  const before = (await call(api, "GET", `${V2}/old`)).body;
  assert.equal(before.spec.renamed, "value");
  r = await call(api, "PUT", `${V2}/old`, before);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.notEqual(r.body.metadata.resourceVersion, before.metadata.resourceVersion, "re-stored");
  const migrated = r.body;

  // Now stored at v2: served at v2 without the webhook; v1 still needs it.
  converter.down = true;
  const atV2 = await call(api, "GET", `${V2}/old`);
  assert.equal(atV2.status, 200, JSON.stringify(atV2.body));
  assert.deepEqual(atV2.body.spec, { renamed: "value" });
  assert.equal((await call(api, "GET", `${V1}/old`)).status, 500);
  converter.down = false;

  // A second unchanged PUT is a no-op, as for any object at the storage version.
  r = await call(api, "PUT", `${V2}/old`, migrated);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.metadata.resourceVersion, migrated.metadata.resourceVersion, "no-op");

  // v1 cannot leave spec.versions while it is in storedVersions.
  const crdNow = (await call(api, "GET", CRD)).body;
  r = await call(api, "PUT", CRD, {
    ...crd("v2", converter.caBundle, url, ["v2"]),
    metadata: { name: crdNow.metadata.name, resourceVersion: crdNow.metadata.resourceVersion },
  });
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(
    r.body.message,
    'CustomResourceDefinition.apiextensions.k8s.io "kopfexamples.kopf.dev" is invalid: ' +
      'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions',
  );

  // storedVersions trimmed through the status subresource; the storage version must stay.
  r = await call(api, "PATCH", `${CRD}/status`, { status: { storedVersions: ["v1"] } }, MERGE);
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.match(
    r.body.message,
    /status\.storedVersions: Invalid value: \["v1"\]: must have the storage version v2/,
  );
  r = await call(api, "PATCH", `${CRD}/status`, { status: { storedVersions: ["v2"] } }, MERGE);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.status.storedVersions, ["v2"]);

  // Then v1 can go.
  const trimmed = (await call(api, "GET", CRD)).body;
  r = await call(api, "PUT", CRD, {
    ...crd("v2", converter.caBundle, url, ["v2"]),
    metadata: { name: trimmed.metadata.name, resourceVersion: trimmed.metadata.resourceVersion },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.status.storedVersions, ["v2"]);
  assert.equal((await call(api, "GET", `${V1}/old`)).status, 404);
});
