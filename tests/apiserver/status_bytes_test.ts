/**
 * Answers in the bytes kube-apiserver writes: a `Status` with `details` fields only where kube
 * sets them (no `group` for the core group; `{}` for a resource the server does not serve),
 * every JSON body ended by the newline of Go's `json.Encoder`, `/version` indented as Go's
 * `MarshalIndent` writes it (no newline), HTML-sensitive characters escaped as Go escapes them.
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

async function text(url: string, init?: RequestInit): Promise<[number, string]> {
  const res = await fetch(url, init);
  return [res.status, await res.text()];
}

Deno.test("a 404 on a core object is kube-apiserver's Status, byte for byte", async () => {
  await using api = await startApiServer();
  assert.deepEqual(await text(`${api.url}${CM}/absent`), [
    404,
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
    `"message":"configmaps \\"absent\\" not found","reason":"NotFound",` +
    `"details":{"name":"absent","kind":"configmaps"},"code":404}\n`,
  ]);
  // A resource the server does not serve: details set, all of it empty.
  assert.deepEqual(await text(`${api.url}/api/v1/namespaces/default/widgets`), [
    404,
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
    `"message":"the server could not find the requested resource","reason":"NotFound",` +
    `"details":{},"code":404}\n`,
  ]);
});

Deno.test("a 404 on a custom object names its group", async () => {
  await using api = await startApiServer();
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      }],
    },
  };
  const [created] = await text(`${api.url}${CRDS}`, {
    method: "POST",
    body: JSON.stringify(crd),
    headers: { "content-type": "application/json" },
  });
  assert.equal(created, 201);
  assert.deepEqual(
    await text(`${api.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/absent`),
    [
      404,
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
      `"message":"kopfexamples.kopf.dev \\"absent\\" not found","reason":"NotFound",` +
      `"details":{"name":"absent","group":"kopf.dev","kind":"kopfexamples"},"code":404}\n`,
    ],
  );
});

Deno.test("JSON bodies end with a newline; /version is indented with none", async () => {
  await using api = await startApiServer();
  const [created, body] = await text(`${api.url}${CM}`, {
    method: "POST",
    body: JSON.stringify({ metadata: { name: "a" }, data: { html: "<b>&</b>" } }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(created, 201);
  assert.ok(body.endsWith("}\n") && !body.endsWith("\n\n"), JSON.stringify(body.slice(-5)));
  // Go's encoder writes <, > and & as \u003c, \u003e, \u0026.
  assert.ok(body.includes(`"html":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e"`), body);
  for (const path of [`${CM}/a`, CM, "/api/v1", "/apis", "/api"]) {
    const [status, got] = await text(`${api.url}${path}`);
    assert.equal(status, 200, path);
    assert.ok(
      got.endsWith("}\n") && !got.endsWith("\n\n"),
      `${path}: ${JSON.stringify(got.slice(-5))}`,
    );
  }
  const [, version] = await text(`${api.url}/version`);
  assert.match(version, /^\{\n {2}"major": "1",\n[^]*\n\}$/);
});
