/**
 * Metadata-only answers over real HTTP, as kube-apiserver gives them to a client
 * that asks with `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
 * (client-go's metadata client and informers; the Python client's dynamic client,
 * whose own end-to-end test `test_node_apis_partial_object_metadata` found the
 * server answering a full `NodeList`): lists, single objects, writes, watches
 * and the 406 for a kind that does not fit the answer.
 *
 * @module
 */

import { call as request } from "./_http.ts";
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
const ONE = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
/** What client-go's metadata client sends for a list: protobuf first, then JSON. */
const CLIENT_GO_LIST = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;" +
  "g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
  "application/json";

/** The shared raw-HTTP call (`_http.ts`), with this file's argument order: accept, then body. */
const call = (url: string, method: string, path: string, accept?: string, body?: unknown) =>
  request(url, method, path, body, undefined, accept ? { accept } : {});

const CM = "/api/v1/namespaces/default/configmaps";

Deno.test("as=PartialObjectMetadataList: a list answers kind, apiVersion and metadata of each item", async () => {
  await using api = await startApiServer();
  const made = await call(api.url, "POST", CM, undefined, {
    metadata: { name: "m1", labels: { a: "b" } },
    data: { secret: "not in the answer" },
  });
  assert.equal(made.status, 201);
  for (const accept of [LIST, CLIENT_GO_LIST, LIST.replace("v=v1", "v=v1beta1")]) {
    const list = await call(api.url, "GET", CM, accept);
    assert.equal(list.status, 200, accept);
    const version = accept.includes("v1beta1") ? "meta.k8s.io/v1beta1" : "meta.k8s.io/v1";
    assert.equal(list.body.kind, "PartialObjectMetadataList", accept);
    assert.equal(list.body.apiVersion, version);
    assert.ok(/^\d+$/.test(list.body.metadata.resourceVersion));
    assert.deepEqual(list.body.items, [{
      kind: "PartialObjectMetadata",
      apiVersion: version,
      metadata: made.body.metadata,
    }]);
  }
  // Paging keeps the continue token, as kube's asPartialObjectMetadataList does.
  await call(api.url, "POST", CM, undefined, { metadata: { name: "m2" } });
  const page = await call(api.url, "GET", `${CM}?limit=1`, LIST);
  assert.equal(page.body.items.length, 1);
  assert.equal(typeof page.body.metadata.continue, "string");
  // The Nodes list the Python client's dynamic client asks for.
  const nodes = await call(api.url, "GET", "/api/v1/nodes", LIST);
  assert.equal(nodes.body.kind, "PartialObjectMetadataList");
});

Deno.test("as=PartialObjectMetadata: a get, a create and a delete answer the object's metadata only", async () => {
  await using api = await startApiServer();
  const made = await call(api.url, "POST", CM, ONE, {
    metadata: { name: "m1" },
    data: { a: "1" },
  });
  assert.equal(made.status, 201);
  assert.deepEqual(Object.keys(made.body), ["kind", "apiVersion", "metadata"]);
  assert.equal(made.body.kind, "PartialObjectMetadata");
  const got = await call(api.url, "GET", `${CM}/m1`, ONE);
  assert.deepEqual(got.body, {
    kind: "PartialObjectMetadata",
    apiVersion: "meta.k8s.io/v1",
    metadata: made.body.metadata,
  });
  const gone = await call(api.url, "DELETE", `${CM}/m1`, ONE);
  assert.equal(gone.body.kind, "PartialObjectMetadata");
  assert.equal(gone.body.metadata.name, "m1");
});

Deno.test("PartialObjectMetadata of a list, or a list of one object: kube's 406 NotAcceptable", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CM, undefined, { metadata: { name: "m1" } });
  const list = await call(api.url, "GET", CM, ONE);
  assert.deepEqual([list.status, list.body.reason, list.body.message], [
    406,
    "NotAcceptable",
    "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)",
  ]);
  const one = await call(api.url, "GET", `${CM}/m1`, LIST);
  assert.deepEqual([one.status, one.body.reason, one.body.message], [
    406,
    "NotAcceptable",
    "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)",
  ]);
  // A missing object is still 404: the object is read before its answer is shaped.
  assert.equal((await call(api.url, "GET", `${CM}/nope`, LIST)).status, 404);
});

Deno.test("as=PartialObjectMetadata on a watch: every event and bookmark carries metadata only", async () => {
  await using api = await startApiServer();
  await call(api.url, "POST", CM, undefined, { metadata: { name: "before" }, data: { a: "1" } });
  const ctl = new AbortController();
  const res = await fetch(
    `${api.url}${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5`,
    { headers: { accept: ONE }, signal: ctl.signal },
  );
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const events: Json[] = [];
  const next = async (): Promise<Json> => {
    while (!buffer.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the watch ended after ${JSON.stringify(events)}`);
      buffer += value;
    }
    const i = buffer.indexOf("\n");
    const event = JSON.parse(buffer.slice(0, i));
    buffer = buffer.slice(i + 1);
    events.push(event);
    return event;
  };
  try {
    const added = await next();
    assert.equal(added.type, "ADDED");
    assert.deepEqual(Object.keys(added.object), ["kind", "apiVersion", "metadata"]);
    assert.equal(added.object.kind, "PartialObjectMetadata");
    assert.equal(added.object.metadata.name, "before");
    const bookmark = await next();
    assert.equal(bookmark.type, "BOOKMARK");
    assert.equal(bookmark.object.kind, "PartialObjectMetadata");
    assert.equal(bookmark.object.metadata.annotations["k8s.io/initial-events-end"], "true");
    await call(api.url, "POST", CM, undefined, { metadata: { name: "after" }, data: { b: "2" } });
    const live = await next();
    assert.deepEqual([live.type, live.object.kind, live.object.metadata.name], [
      "ADDED",
      "PartialObjectMetadata",
      "after",
    ]);
    assert.equal(live.object.data, undefined);
  } finally {
    ctl.abort();
    await reader.cancel().catch(() => {});
  }
});
