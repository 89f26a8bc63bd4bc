/**
 * Lists and streamed lists as kube-apiserver serves them: pages of one
 * snapshot with Kubernetes' continue tokens, 410 for an expired token with
 * the token to continue inconsistently, `resourceVersionMatch` and its
 * refusals, and watches with `sendInitialEvents` (KEP-3157): the state as
 * ADDED, the `k8s.io/initial-events-end` bookmark, then the changes.
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import type { ApiError } from "../../src/apiserver/shared/errors.ts";
import { ListSnapshots } from "../../src/apiserver/storage/listing.ts";
import { Store } from "../../src/apiserver/storage/store.ts";
import { call, readEvents } from "./_http.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const ALL_CM = "/api/v1/configmaps";

// deno-lint-ignore no-explicit-any
const names = (list: any): string[] => list.items.map((i: any) => i.metadata.name);

function decodeToken(token: string): unknown {
  return JSON.parse(atob(token.replace(/-/g, "+").replace(/_/g, "/")));
}

async function seed(url: string, n: number, namespace = "default", prefix = "cm") {
  for (let i = 0; i < n; i++) {
    const r = await call(url, "POST", `/api/v1/namespaces/${namespace}/configmaps`, {
      metadata: { name: `${prefix}-${i}`, labels: { odd: String(i % 2 === 1) } },
    });
    assert.equal(r.status, 201);
  }
}

Deno.test("list pages: one snapshot across pages, Kubernetes' continue token, remainingItemCount", async () => {
  await using api = await startApiServer();
  await seed(api.url, 7);
  const p1 = await call(api.url, "GET", `${CM}?limit=3`);
  assert.deepEqual(names(p1.body), ["cm-0", "cm-1", "cm-2"]);
  const rv = p1.body.metadata.resourceVersion;
  assert.equal(p1.body.metadata.remainingItemCount, 4);
  assert.match(p1.body.metadata.continue, /^[A-Za-z0-9_-]+$/, "unpadded URL-safe base64");
  assert.deepEqual(decodeToken(p1.body.metadata.continue), {
    v: "meta.k8s.io/v1",
    rv: Number(rv),
    start: "cm-2\u0000",
  });
  // Changes between the pages do not show: the pages are of the first page's snapshot.
  await call(api.url, "DELETE", `${CM}/cm-4`);
  await call(api.url, "POST", CM, { metadata: { name: "cm-3a" } });
  await call(api.url, "PATCH", `${CM}/cm-5`, { data: { x: "1" } }, "application/merge-patch+json");
  const p2 = await call(api.url, "GET", `${CM}?limit=3&continue=${p1.body.metadata.continue}`);
  assert.deepEqual(names(p2.body), ["cm-3", "cm-4", "cm-5"]);
  assert.equal(p2.body.metadata.resourceVersion, rv);
  assert.equal(p2.body.items[2].data, undefined, "cm-5 as it was at the snapshot");
  assert.equal(p2.body.metadata.remainingItemCount, 1);
  const p3 = await call(api.url, "GET", `${CM}?limit=3&continue=${p2.body.metadata.continue}`);
  assert.deepEqual(names(p3.body), ["cm-6"]);
  assert.equal(p3.body.metadata.continue, undefined);
  assert.equal(p3.body.metadata.remainingItemCount, undefined);
  // A fresh list sees the changes.
  const now = await call(api.url, "GET", CM);
  assert.deepEqual(names(now.body), ["cm-0", "cm-1", "cm-2", "cm-3", "cm-3a", "cm-5", "cm-6"]);
  assert.ok(Number(now.body.metadata.resourceVersion) > Number(rv));

  // Cluster-wide, keys are namespace/name; with a selector there is no remainingItemCount.
  await call(api.url, "POST", "/api/v1/namespaces", { metadata: { name: "a" } });
  await seed(api.url, 2, "a", "x");
  const all = await call(api.url, "GET", `${ALL_CM}?limit=2`);
  assert.deepEqual(names(all.body), ["x-0", "x-1"]);
  assert.equal((decodeToken(all.body.metadata.continue) as { start: string }).start, "a/x-1\u0000");
  const odd = await call(api.url, "GET", `${CM}?limit=2&labelSelector=odd%3Dtrue`);
  assert.deepEqual(names(odd.body), ["cm-1", "cm-3"]);
  assert.equal(odd.body.metadata.remainingItemCount, undefined);
  const odd2 = await call(
    api.url,
    "GET",
    `${CM}?limit=2&labelSelector=odd%3Dtrue&continue=${odd.body.metadata.continue}`,
  );
  assert.deepEqual(names(odd2.body), ["cm-5"]);
});

Deno.test("list pages: a compacted continue token is 410 Expired with a token to go on inconsistently", async () => {
  await using api = await startApiServer();
  await seed(api.url, 5);
  const p1 = await call(api.url, "GET", `${CM}?limit=2`);
  await call(api.url, "POST", CM, { metadata: { name: "cm-9" } });
  api.expireResourceVersions(false);
  const gone = await call(api.url, "GET", `${CM}?limit=2&continue=${p1.body.metadata.continue}`);
  assert.equal(gone.status, 410);
  assert.equal(gone.body.reason, "Expired");
  assert.equal(
    gone.body.message,
    "The provided continue parameter is too old to display a consistent list result. " +
      "You can start a new list without the continue parameter, or use the continue token in " +
      "this response to retrieve the remainder of the results. Continuing with the provided " +
      "token results in an inconsistent list - objects that were created, modified, or deleted " +
      "between the time the first chunk was returned and now may show up in the list.",
  );
  assert.deepEqual(decodeToken(gone.body.metadata.continue), {
    v: "meta.k8s.io/v1",
    rv: -1,
    start: "cm-1\u0000",
  });
  const rest = await call(api.url, "GET", `${CM}?limit=10&continue=${gone.body.metadata.continue}`);
  assert.equal(rest.status, 200);
  assert.deepEqual(names(rest.body), ["cm-2", "cm-3", "cm-4", "cm-9"], "the latest state");

  // A token whose snapshot is not cached (another server core, or evicted) is rebuilt from
  // the store's history of changes, while it reaches back.
  const store = new Store({ historySize: 3 });
  for (const name of ["a", "b", "c", "d"]) {
    store.commit("ADDED", "configmaps", { metadata: { name, namespace: "default" } });
  }
  const options = (continueToken?: string) => ({
    resourceVersion: undefined,
    resourceVersionMatch: undefined,
    continueToken,
    limit: 2,
    sendInitialEvents: undefined,
  });
  const q1 = await new ListSnapshots(store).page(
    "configmaps",
    "default",
    true,
    options(),
    () => true,
    false,
  );
  store.commit("DELETED", "configmaps", store.get("configmaps", "default", "c")!);
  store.commit("ADDED", "configmaps", { metadata: { name: "bb", namespace: "default" } });
  const q2 = await new ListSnapshots(store).page(
    "configmaps",
    "default",
    true,
    options(q1.continueToken),
    () => true,
    false,
  );
  assert.deepEqual(q2.items.map((o) => o.metadata.name), ["c", "d"], "c as it was; no bb");
  assert.equal(q2.resourceVersion, q1.resourceVersion);
  store.commit("ADDED", "configmaps", { metadata: { name: "e", namespace: "default" } });
  store.commit("ADDED", "configmaps", { metadata: { name: "f", namespace: "default" } });
  await assert.rejects(
    new ListSnapshots(store).page(
      "configmaps",
      "default",
      true,
      options(q1.continueToken),
      () => true,
      false,
    ),
    (e: ApiError) => e.code === 410 && e.listMeta?.continue !== undefined,
    "history no longer reaches back",
  );
});

Deno.test("list: bad continue tokens, resourceVersion with continue, resourceVersionMatch refusals", async () => {
  await using api = await startApiServer();
  await seed(api.url, 3);
  const p1 = await call(api.url, "GET", `${CM}?limit=1`);
  const token = p1.body.metadata.continue;
  const bad = await call(api.url, "GET", `${CM}?limit=1&continue=notatoken!`);
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /^invalid continue token: continue key is not valid/);
  const climbing = btoa(JSON.stringify({ v: "meta.k8s.io/v1", rv: 5, start: "../x" })).replace(
    /=+$/,
    "",
  );
  const up = await call(api.url, "GET", `${CM}?limit=1&continue=${climbing}`);
  assert.equal(up.status, 400);
  assert.equal(up.body.message, "invalid continue token: continue key is not valid: ../x");
  const zero = btoa(JSON.stringify({ v: "meta.k8s.io/v1", rv: 0, start: "a" })).replace(/=+$/, "");
  assert.equal(
    (await call(api.url, "GET", `${CM}?continue=${zero}`)).body.message,
    "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
  );
  const withRv = await call(api.url, "GET", `${CM}?limit=1&resourceVersion=1&continue=${token}`);
  assert.equal(withRv.status, 400);
  assert.equal(
    withRv.body.message,
    "specifying resource version is not allowed when using continue",
  );
  assert.equal(
    (await call(api.url, "GET", `${CM}?limit=1&resourceVersion=0&continue=${token}`)).status,
    200,
  );

  const noRv = await call(api.url, "GET", `${CM}?resourceVersionMatch=NotOlderThan`);
  assert.equal(noRv.status, 422);
  assert.equal(noRv.body.reason, "Invalid");
  assert.equal(
    noRv.body.message,
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
  );
  assert.deepEqual(noRv.body.details.causes, [{
    reason: "FieldValueForbidden",
    message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
    field: "resourceVersionMatch",
  }]);
  const two = await call(
    api.url,
    "GET",
    `${CM}?resourceVersion=0&resourceVersionMatch=Exact&continue=${token}`,
  );
  assert.equal(
    two.body.message,
    'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, ' +
      'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"]',
  );
  const odd = await call(api.url, "GET", `${CM}?resourceVersion=1&resourceVersionMatch=Newest`);
  assert.equal(
    odd.body.message,
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
  );
  const forList = await call(api.url, "GET", `${CM}?sendInitialEvents=true`);
  assert.equal(
    forList.body.message,
    'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
  );
});

Deno.test("list: resourceVersion Exact serves an older state, NotOlderThan the latest; too old is 410, ahead is 504", async () => {
  await using api = await startApiServer({ historySize: 4 });
  await seed(api.url, 2);
  const before = (await call(api.url, "GET", CM)).body.metadata.resourceVersion;
  await call(api.url, "POST", CM, { metadata: { name: "late" } });
  const exact = await call(
    api.url,
    "GET",
    `${CM}?resourceVersion=${before}&resourceVersionMatch=Exact`,
  );
  assert.deepEqual(names(exact.body), ["cm-0", "cm-1"]);
  assert.equal(exact.body.metadata.resourceVersion, before);
  // Legacy: a resourceVersion with a limit and no match is exact too.
  const legacy = await call(api.url, "GET", `${CM}?resourceVersion=${before}&limit=10`);
  assert.deepEqual(names(legacy.body), ["cm-0", "cm-1"]);
  const notOlder = await call(
    api.url,
    "GET",
    `${CM}?resourceVersion=${before}&resourceVersionMatch=NotOlderThan`,
  );
  assert.deepEqual(names(notOlder.body), ["cm-0", "cm-1", "late"]);
  assert.deepEqual(names((await call(api.url, "GET", `${CM}?resourceVersion=${before}`)).body), [
    "cm-0",
    "cm-1",
    "late",
  ]);
  api.expireResourceVersions(false);
  const old = await call(
    api.url,
    "GET",
    `${CM}?resourceVersion=${before}&resourceVersionMatch=Exact`,
  );
  assert.equal(old.status, 410);
  assert.equal(old.body.reason, "Expired");
  assert.equal(old.body.message, "The resourceVersion for the provided list is too old.");
  const ahead = Number(api.server.store.resourceVersion) + 5;
  const t0 = performance.now();
  const future = await call(
    api.url,
    "GET",
    `${CM}?resourceVersion=${ahead}&resourceVersionMatch=NotOlderThan`,
  );
  assert.ok(performance.now() - t0 >= 2900, "waits 3 s for the version first");
  assert.equal(future.status, 504);
  assert.equal(future.body.reason, "Timeout");
  assert.equal(
    future.body.message,
    `Timeout: Too large resource version: ${ahead}, current: ${ahead - 5}`,
  );
  assert.deepEqual(future.body.details, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1,
  });
  assert.equal(future.headers.get("retry-after"), "1");
});

Deno.test("watch-list: sendInitialEvents streams the state, the initial-events-end bookmark, then changes", async () => {
  await using api = await startApiServer();
  await seed(api.url, 3);
  const rv = (await call(api.url, "GET", CM)).body.metadata.resourceVersion;
  const res = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
  );
  assert.equal(res.status, 200);
  await call(api.url, "POST", CM, { metadata: { name: "after" } });
  const events = await readEvents(res, 5);
  assert.deepEqual(events.slice(0, 3).map((e) => [e.type, e.object.metadata.name]), [
    ["ADDED", "cm-0"],
    ["ADDED", "cm-1"],
    ["ADDED", "cm-2"],
  ]);
  assert.deepEqual(events[3], {
    type: "BOOKMARK",
    object: {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: { resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } },
    },
  });
  assert.equal(events[4].type, "ADDED");
  assert.equal(events[4].object.metadata.name, "after");
  assert.ok(Number(events[4].object.metadata.resourceVersion) > Number(rv));

  // Without allowWatchBookmarks: the state, but no bookmark (as kube-apiserver: valid, never marked).
  const plain = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
  );
  await call(api.url, "POST", CM, { metadata: { name: "later" } });
  const plainEvents = await readEvents(plain, 5);
  assert.deepEqual(plainEvents.map((e) => e.type), Array(5).fill("ADDED"));
  assert.equal(plainEvents[4].object.metadata.name, "later");

  // An old resourceVersion is no 410 here: the state is current.
  const old = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=1`,
  );
  api.expireResourceVersions(false);
  const oldEvents = await readEvents(old, 6);
  assert.equal(oldEvents.length, 6);
  assert.equal(oldEvents[5].type, "BOOKMARK");

  // sendInitialEvents=false with no resourceVersion: from now on, no state.
  const none = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan`,
  );
  await call(api.url, "POST", CM, { metadata: { name: "newest" } });
  const noneEvents = await readEvents(none, 1);
  assert.deepEqual(noneEvents.map((e) => [e.type, e.object.metadata.name]), [["ADDED", "newest"]]);
});

Deno.test("watch-list: thousands of objects in batches, selectors, changes kept in order behind the state", async () => {
  await using api = await startApiServer();
  const store = api.server.store;
  for (let i = 0; i < 5000; i++) {
    store.commit("ADDED", "configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `c-${i}`, namespace: "default", labels: { odd: String(i % 2 === 1) } },
    });
  }
  const rv = String(store.resourceVersion);
  const res = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=odd%3Dtrue`,
  );
  // Changes before the client reads anything: after the bookmark, in order.
  await call(api.url, "PATCH", `${CM}/c-1`, { data: { a: "1" } }, "application/merge-patch+json");
  await call(api.url, "DELETE", `${CM}/c-3`);
  const events = await readEvents(res, 2503, 20_000);
  assert.equal(events.length, 2503);
  assert.ok(
    events.slice(0, 2500).every((e) =>
      e.type === "ADDED" && e.object.metadata.labels.odd === "true"
    ),
  );
  assert.equal(new Set(events.slice(0, 2500).map((e) => e.object.metadata.name)).size, 2500);
  assert.equal(events[2500].type, "BOOKMARK");
  assert.equal(events[2500].object.metadata.resourceVersion, rv);
  assert.deepEqual(events.slice(2501).map((e) => [e.type, e.object.metadata.name]), [
    ["MODIFIED", "c-1"],
    ["DELETED", "c-3"],
  ]);
});

Deno.test("watch-list: kube-apiserver's refusals; a server without the WatchList gate refuses it; ahead is an in-stream 504", async () => {
  await using api = await startApiServer();
  const noMatch = await call(
    api.url,
    "GET",
    `${CM}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`,
  );
  assert.equal(noMatch.status, 422);
  assert.equal(
    noMatch.body.message,
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  );
  assert.equal(noMatch.body.details.group, "meta.k8s.io");
  assert.equal(noMatch.body.details.kind, "ListOptions");
  const exact = await call(
    api.url,
    "GET",
    `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact`,
  );
  assert.equal(
    exact.body.message,
    'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, ' +
      'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
  );
  const matchOnly = await call(
    api.url,
    "GET",
    `${CM}?watch=true&resourceVersionMatch=NotOlderThan`,
  );
  assert.equal(
    matchOnly.body.message,
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
  );

  await using old = await startApiServer({ watchList: false });
  const refused = await call(
    old.url,
    "GET",
    `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
  );
  assert.equal(refused.status, 422);
  assert.equal(
    refused.body.message,
    'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
  );

  const ahead = api.server.store.resourceVersion + 3;
  const res = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${ahead}`,
  );
  assert.equal(res.status, 200);
  const [error] = await readEvents(res, 1, 6000);
  assert.equal(error.type, "ERROR");
  assert.equal(error.object.code, 504);
  assert.equal(error.object.reason, "Timeout");
  assert.equal(
    error.object.message,
    `Timeout: Too large resource version: ${ahead}, current: ${ahead - 3}`,
  );
  // Reached in time: served.
  const soon = await fetch(
    `${api.url}${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${
      api.server.store.resourceVersion + 1
    }`,
  );
  await call(api.url, "POST", CM, { metadata: { name: "x" } });
  const served = await readEvents(soon, 2);
  assert.deepEqual(served.map((e) => e.type), ["ADDED", "BOOKMARK"]);
});
