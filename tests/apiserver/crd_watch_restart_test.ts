/**
 * A CRD whose spec changes ends the open watches of its resource, as kube-apiserver does when
 * it rebuilds the resource's storage (new versions, schemas or conversion): watchers come back
 * and get the new behaviour — e.g. conversion through a webhook set after they started. A
 * change of the CRD's status alone, or of another CRD, leaves them open.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const MERGE = "application/merge-patch+json";

function crd(plural: string, versions: string[]): unknown {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.kopf.dev` },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: { plural, kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        schema: {
          openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      })),
    },
  };
}

/** Opens a watch; resolves `ended` when the server ends the stream. */
async function watch(url: string, path: string): Promise<{ ended: () => boolean; stop(): void }> {
  const abort = new AbortController();
  const res = await fetch(`${url}${path}?watch=true`, { signal: abort.signal });
  assert.equal(res.status, 200);
  let done = false;
  void (async () => {
    try {
      for await (const _ of res.body!) { /* events */ }
    } catch { /* aborted */ }
    done = true;
  })();
  return { ended: () => done, stop: () => abort.abort() };
}

async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 200));
}

Deno.test("a CRD's spec change ends its resource's watches (all versions); status changes and other CRDs do not", async () => {
  await using api = await startApiServer();
  for (const body of [crd("kopfexamples", ["v1"]), crd("others", ["v1"])]) {
    assert.equal((await call(api.url, "POST", CRDS, body)).status, 201);
  }
  const ours = await watch(api.url, "/apis/kopf.dev/v1/kopfexamples");
  const theirs = await watch(api.url, "/apis/kopf.dev/v1/others");
  try {
    // The status alone: nothing ends.
    const status = await call(
      api.url,
      "PATCH",
      `${CRDS}/kopfexamples.kopf.dev/status`,
      { status: { storedVersions: ["v1"] } },
      MERGE,
    );
    assert.equal(status.status, 200, JSON.stringify(status.body));
    // A metadata-only change (a label) does not rebuild anything either.
    const labelled = await call(
      api.url,
      "PATCH",
      `${CRDS}/kopfexamples.kopf.dev`,
      { metadata: { labels: { a: "b" } } },
      MERGE,
    );
    assert.equal(labelled.status, 200, JSON.stringify(labelled.body));
    await settle();
    assert.equal(ours.ended(), false);

    // A new version in the spec: the resource's watches end, the other CRD's stay.
    const current = (await call(api.url, "GET", `${CRDS}/kopfexamples.kopf.dev`)).body;
    const updated = await call(api.url, "PUT", `${CRDS}/kopfexamples.kopf.dev`, {
      ...(crd("kopfexamples", ["v1", "v2"]) as object),
      metadata: {
        name: "kopfexamples.kopf.dev",
        resourceVersion: current.metadata.resourceVersion,
      },
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    await settle();
    assert.equal(ours.ended(), true, "the watch of the changed CRD's resource ended");
    assert.equal(theirs.ended(), false, "another CRD's watch stays");
  } finally {
    ours.stop();
    theirs.stop();
  }
});
