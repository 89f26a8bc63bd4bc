/**
 * In-memory indexing (`kopf.index`), end to end against the embedded API
 * server: the documented structure (keys → stores), multiple keys per object,
 * removal on deletion and on filter mismatch, errors in indexing, several
 * resources, the readiness rule (also for watchers started later, and with
 * the gate on its own), and consistency with the server's objects after watch
 * reconnects and after a 410 relist with deletions missed.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock, KopfRunner } from "../../testing.ts";
import { OperatorIndexers } from "../../src/core/engines/indexing.ts";
import { type Cluster, cluster, delay, until } from "../reactor/_setup.ts";

function quickSettings(): kopf.OperatorSettings {
  const settings = new kopf.OperatorSettings();
  settings.networking.errorBackoffs = Array(30).fill(0.05);
  settings.watching.reconnectBackoff = 0.05;
  return settings;
}

/** A plain, sorted view of an index: `{ key: [values…] }` (keys as JSON for non-strings). */
function view(index: kopf.Index | undefined): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const [key, store] of index?.entries() ?? []) {
    assert.ok(store.size > 0, "stores are never empty");
    const values = [...store].sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1);
    out[typeof key === "string" ? key : JSON.stringify(key)] = values;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a < b ? -1 : 1));
}

/** Registers a startup handler that captures the operator's indices. */
function captureIndices(registry: kopf.OperatorRegistry): () => Record<string, kopf.Index> {
  let captured: Record<string, kopf.Index> | undefined;
  kopf.on.startup({ registry }, function capture({ indices }) {
    captured = indices as Record<string, kopf.Index>;
  });
  return () => {
    assert.ok(captured, "the operator has started");
    return captured;
  };
}

async function start(c: Cluster, registry: kopf.OperatorRegistry): Promise<KopfRunner> {
  return await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    settings: quickSettings(),
    kubeconfig: c.api.kubeconfig.path,
  });
}

async function pod(c: Cluster, name: string, labels: Record<string, string>, ns = "default") {
  await c.call("POST", `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name, labels },
    spec: { containers: [{ name: "main", image: "x" }] },
  }, [409]);
}

async function relabel(c: Cluster, name: string, labels: Record<string, string | null>) {
  const r = await fetch(`${c.api.url}/api/v1/namespaces/default/pods/${name}`, {
    method: "PATCH",
    headers: { "content-type": "application/merge-patch+json" },
    body: JSON.stringify({ metadata: { labels } }),
  });
  await r.body?.cancel();
  assert.equal(r.status, 200);
}

async function remove(c: Cluster, path: string): Promise<void> {
  await c.call("DELETE", path, undefined, [404]);
}

/** Indexers of a registry on their own (no operator): default settings, logs go nowhere. */
function newIndexers(
  registry: kopf.OperatorRegistry,
  options: { signal?: AbortSignal; clock?: FakeClock } = {},
): OperatorIndexers {
  return new OperatorIndexers({
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    sink: () => {},
    ...options,
  });
}

async function eventually(check: () => void, what: string, timeout = 10): Promise<void> {
  let last: unknown;
  await until(
    () => {
      try {
        check();
        return true;
      } catch (e) {
        last = e;
        return false;
      }
    },
    what,
    timeout,
  ).catch((e) => {
    throw last ?? e;
  });
}

Deno.test("kopf.index: keys → stores, several keys per object, non-dict results, nothing to skip", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const indices = captureIndices(registry);
  kopf.index("pods", { registry }, function byLabel({ labels, name }) {
    return Object.fromEntries(Object.entries(labels).map(([k, v]) => [`${k}=${v}`, name]));
  });
  kopf.index("pods", { registry }, function byIdentity({ namespace, name }) {
    return new Map([[[namespace, name], null]]);
  });
  kopf.index("pods", { registry }, function podNames({ name }) {
    return name;
  });
  kopf.index("pods", { registry }, function nothing() {});
  await pod(c, "pod1", { app: "web", tier: "front" });
  await pod(c, "pod2", { app: "web" });
  const runner = await start(c, registry);
  try {
    await pod(c, "pod3", { app: "db", tier: "front" });
    await eventually(() => {
      assert.deepEqual(view(indices().byLabel), {
        "app=db": ["pod3"],
        "app=web": ["pod1", "pod2"],
        "tier=front": ["pod1", "pod3"],
      });
      // The indexes of one event are updated one handler after another: wait for the last one.
      assert.deepEqual(view(indices().podNames), { null: ["pod1", "pod2", "pod3"] });
    }, "byLabel and podNames");
    const byIdentity = indices().byIdentity!;
    assert.deepEqual([...byIdentity.get(["default", "pod2"]) ?? []], [null]);
    assert.ok(byIdentity.has(["default", "pod3"]));
    assert.deepEqual([...indices().podNames!.keys()], [null]);
    assert.equal(indices().nothing!.size, 0);

    // Changed keys: the old ones leave (and their emptied stores with them).
    await relabel(c, "pod3", { app: "web", tier: null });
    await eventually(() => {
      assert.deepEqual(view(indices().byLabel), {
        "app=web": ["pod1", "pod2", "pod3"],
        "tier=front": ["pod1"],
      });
    }, "relabelled");

    // Deletion removes all the object's values.
    await remove(c, "/api/v1/namespaces/default/pods/pod1");
    await eventually(() => {
      assert.deepEqual(view(indices().byLabel), { "app=web": ["pod2", "pod3"] });
      assert.deepEqual(view(indices().podNames), { null: ["pod2", "pod3"] });
      assert.ok(!indices().byIdentity!.has(["default", "pod1"]));
    }, "deleted");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});

Deno.test("kopf.index: filters — an object that stops matching leaves the index; matching again returns", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const indices = captureIndices(registry);
  kopf.index("pods", { registry, labels: { indexed: "yes" } }, function selected({ name }) {
    return { all: name };
  });
  kopf.index(
    "pods",
    { registry, when: ({ labels }) => labels.app === "web" },
    function web({ name }) {
      return { web: name };
    },
  );
  await pod(c, "a", { indexed: "yes", app: "web" });
  await pod(c, "b", { indexed: "no", app: "db" });
  const runner = await start(c, registry);
  try {
    await eventually(() => {
      assert.deepEqual(view(indices().selected), { all: ["a"] });
      assert.deepEqual(view(indices().web), { web: ["a"] });
    }, "initial");
    await relabel(c, "a", { indexed: "no", app: "db" });
    await relabel(c, "b", { indexed: "yes" });
    await eventually(() => {
      assert.deepEqual(view(indices().selected), { all: ["b"] });
      assert.deepEqual(view(indices().web), {});
    }, "after the relabelling");
  } finally {
    await runner.stop();
  }
});

Deno.test("kopf.index: errors — ignored keeps stale values, permanent excludes, temporary excludes for the delay", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const indices = captureIndices(registry);
  const calls = { permanent: 0, temporary: 0 };
  kopf.index("pods", { registry }, function ignored({ labels, name }) {
    if (labels.fail) throw new Error("keep the stale values");
    return { [labels.v ?? ""]: name };
  });
  kopf.index("pods", { registry }, function permanent({ labels, name }) {
    calls.permanent++;
    if (labels.fail) throw new kopf.PermanentError("excluded forever");
    return { [labels.v ?? ""]: name };
  });
  kopf.index("pods", { registry }, function temporary({ labels, name, retry }) {
    calls.temporary++;
    if (labels.fail && retry < 1) {
      throw new kopf.TemporaryError("excluded for 0.5s", { delay: 0.5 });
    }
    return { [labels.v ?? ""]: name };
  });
  await pod(c, "p", { v: "1" });
  const runner = await start(c, registry);
  try {
    await eventually(() => {
      for (const id of ["ignored", "permanent", "temporary"]) {
        assert.deepEqual(view(indices()[id]), { "1": ["p"] }, id);
      }
    }, "initial");
    await relabel(c, "p", { v: "2", fail: "yes" });
    await eventually(() => {
      assert.deepEqual(view(indices().ignored), { "1": ["p"] }); // stale
      assert.deepEqual(view(indices().permanent), {});
    }, "after the failures");
    // The temporary exclusion ends by itself: re-indexed from the latest state (retry=1).
    await eventually(() => {
      assert.deepEqual(view(indices().temporary), { "2": ["p"] });
    }, "re-indexed after the delay");
    const permanentCalls = calls.permanent;
    await relabel(c, "p", { v: "3", fail: null });
    await eventually(() => assert.deepEqual(view(indices().ignored), { "3": ["p"] }), "ignored");
    assert.deepEqual(view(indices().permanent), {});
    assert.equal(calls.permanent, permanentCalls, "an excluded object is not even indexed");
    await runner.waitFor(/Indexing handler 'ignored' failed with an exception. Will ignore/);
    await runner.waitFor(/Indexing handler 'permanent' failed permanently/);
    await runner.waitFor(/Indexing handler 'temporary' failed temporarily: excluded for 0.5s/);
    await runner.waitFor(/Indexing handler 'temporary' is excluded from the index for 0.5s\./);
  } finally {
    await runner.stop();
  }
});

Deno.test("kopf.index: several resources feed one index; several indices side by side", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const indices = captureIndices(registry);
  const byKind = ({ body, name }: kopf.IndexingContext) => ({ [body.kind as string]: name });
  kopf.index("pods", { registry, id: "byKind" }, byKind);
  kopf.index("configmaps", { registry, id: "byKind" }, byKind);
  kopf.index("kopfexamples", { registry }, function kexes({ name }) {
    return name;
  });
  await pod(c, "p1", {});
  await c.call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "cm1" } });
  const runner = await start(c, registry);
  try {
    await c.createKex("default", "kex1");
    await eventually(() => {
      const byKindView = view(indices().byKind);
      assert.deepEqual(byKindView.Pod, ["p1"]);
      assert.ok(byKindView.ConfigMap?.includes("cm1"), JSON.stringify(byKindView));
      assert.deepEqual(view(indices().kexes), { null: ["kex1"] });
    }, "both resources");
    await remove(c, "/api/v1/namespaces/default/configmaps/cm1");
    await eventually(() => assert.ok(!view(indices().byKind).ConfigMap?.includes("cm1")), "gone");
    assert.deepEqual(view(indices().byKind).Pod, ["p1"]);
  } finally {
    await runner.stop();
  }
});

Deno.test("kopf.index: readiness — handlers start only when every index holds all pre-existing objects", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.index("pods", { registry }, function pods({ name }) {
    return name;
  });
  kopf.index("configmaps", { registry }, function maps({ name }) {
    return name;
  });
  const seen = new Map<string, [number, number]>();
  kopf.on.resume("kopfexamples", { registry }, function look({ name, indices }) {
    seen.set(name, [indices.pods.get(null)?.size ?? 0, indices.maps.get(null)?.size ?? 0]);
  });
  kopf.on.event("kopfexamples", { registry }, function peek({ name, indices }) {
    if (!seen.has(`event:${name}`)) {
      seen.set(`event:${name}`, [indices.pods.get(null)?.size ?? 0, 0]);
    }
  });
  const pods = 40;
  await Promise.all(Array.from({ length: pods }, (_, i) => pod(c, `pre-${i}`, {})));
  const before = (await c.call("GET", "/api/v1/configmaps")).body.items.length;
  for (let i = 0; i < 5; i++) {
    await c.call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: `m${i}` } });
  }
  await c.createKex("default", "k1");
  const runner = await start(c, registry);
  try {
    await until(() => seen.has("k1") && seen.has("event:k1"), "the handlers");
    assert.deepEqual(seen.get("k1"), [pods, before + 5]);
    assert.deepEqual(seen.get("event:k1"), [pods, 0]);
  } finally {
    await runner.stop();
  }
});

/** Waits until the index of pod names equals the server's pods. */
async function assertMirrors(
  c: Cluster,
  index: () => kopf.Index | undefined,
  timeout = 15,
): Promise<void> {
  let server: string[] = [];
  await until(
    async () => {
      const r = await c.call("GET", "/api/v1/namespaces/default/pods", undefined, [429, 500, 503]);
      if (r.status !== 200) return false;
      server = r.body.items.map((p: { metadata: { name: string } }) => p.metadata.name).sort();
      return JSON.stringify(view(index()).null ?? []) === JSON.stringify(server);
    },
    "the index mirrors the server",
    timeout,
  ).catch((e) => {
    throw new Error(
      `${e.message}: index ${JSON.stringify(view(index()).null)} vs server ${
        JSON.stringify(server)
      }`,
    );
  });
}

Deno.test("kopf.index: consistent while the API server closes watch streams every 0.3 s", async () => {
  await using c = await cluster({ faults: { closeWatchesEvery: 0.3 } });
  const registry = new kopf.OperatorRegistry();
  const indices = captureIndices(registry);
  kopf.index("pods", { registry }, function names({ name }) {
    return name;
  });
  for (let i = 0; i < 5; i++) await pod(c, `old-${i}`, {});
  const runner = await start(c, registry);
  try {
    await assertMirrors(c, () => indices().names);
    for (let i = 0; i < 12; i++) {
      await pod(c, `new-${i}`, {});
      if (i % 2) await remove(c, `/api/v1/namespaces/default/pods/old-${i % 5}`);
      if (i % 3 === 0) await remove(c, `/api/v1/namespaces/default/pods/new-${i}`);
      await delay(100);
    }
    await assertMirrors(c, () => indices().names);
    assert.ok(c.api.faultCounts.watchClosed >= 3, JSON.stringify(c.api.faultCounts));
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});

Deno.test("kopf.index: consistent after a 410 relist — objects deleted during the outage leave the index", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const indices = captureIndices(registry);
  kopf.index("pods", { registry }, function names({ name }) {
    return name;
  });
  for (let i = 0; i < 8; i++) await pod(c, `p${i}`, {});
  const runner = await start(c, registry);
  try {
    await assertMirrors(c, () => indices().names);
    // The outage: watch streams deliver nothing while objects are deleted and created.
    c.api.setFaults({ stallWatches: true });
    for (const i of [1, 3, 5]) await remove(c, `/api/v1/namespaces/default/pods/p${i}`);
    await pod(c, "during", {});
    assert.ok(view(indices().names).null!.includes("p1"), "the deletion is not seen yet");
    // Resuming from the old resourceVersion gets 410 Gone: the watcher relists.
    c.api.expireResourceVersions();
    c.api.setFaults({ stallWatches: null });
    await assertMirrors(c, () => indices().names);
    assert.ok(c.api.faultCounts.expired >= 1, JSON.stringify(c.api.faultCounts));
    assert.ok(c.api.countRequests({ verb: "list", resource: "pods" }) >= 2);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});

/**
 * Makes changes the operator does not see as they happen: the watch streams stall meanwhile,
 * then they are closed with their resourceVersions expired, so the watchers relist (410 Gone)
 * and find the changes complete — e.g. a new namespace together with its objects, which new
 * watchers then find in their initial listings.
 */
async function unseen(c: Cluster, changes: () => Promise<void>): Promise<void> {
  c.api.setFaults({ stallWatches: true });
  try {
    await changes();
  } finally {
    c.api.setFaults({ stallWatches: null });
    c.api.expireResourceVersions(true);
  }
}

async function startIn(
  c: Cluster,
  registry: kopf.OperatorRegistry,
  namespaces: string,
): Promise<KopfRunner> {
  return await KopfRunner.start(["run", "--standalone", "-n", namespaces, "-v"], {
    registry,
    settings: quickSettings(),
    kubeconfig: c.api.kubeconfig.path,
  });
}

Deno.test("kopf.index: readiness — a namespace served later holds the handlers until its indices are listed", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.index("pods", { registry }, async function byNamespace({ namespace, name }) {
    // Slow in the new namespace: without the gate, its objects' handlers would see a partial index.
    if (namespace === "team-b") await delay(20);
    return { [namespace ?? ""]: name };
  });
  const seen = new Map<string, number>();
  const look = (what: string) =>
  (
    { name, namespace, indices }: Pick<kopf.IndexingContext, "name" | "namespace" | "indices">,
  ) => {
    const index = indices.byNamespace as kopf.Index<string, string>;
    if (!seen.has(`${what}:${name}`)) {
      seen.set(`${what}:${name}`, index.get(namespace!)?.size ?? 0);
    }
  };
  kopf.on.event("kopfexamples", { registry, id: "peek" }, look("event"));
  kopf.on.create("kopfexamples", { registry, id: "look" }, look("create"));
  await c.createNamespace("team-a");
  await pod(c, "a1", {}, "team-a");
  await c.createKex("team-a", "k0");
  const runner = await startIn(c, registry, "team-*");
  try {
    await until(() => seen.has("event:k0") && seen.has("create:k0"), "the handlers of team-a");
    assert.equal(seen.get("event:k0"), 1);
    // The new namespace comes with its objects: the new watchers list them all at once.
    const pods = 30;
    await unseen(c, async () => {
      await c.createNamespace("team-b");
      await Promise.all(Array.from({ length: pods }, (_, i) => pod(c, `b${i}`, {}, "team-b")));
      await c.createKex("team-b", "k1");
    });
    await until(() => seen.has("event:k1") && seen.has("create:k1"), "the handlers of team-b", 20);
    assert.equal(seen.get("event:k1"), pods, "the raw event handler saw the full index");
    assert.equal(seen.get("create:k1"), pods, "the creation handler saw the full index");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});

Deno.test("kopf.index: readiness — a watcher stopped before its listing does not keep the gate closed", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  let unblock!: () => void;
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  let blocking = false;
  kopf.index("pods", { registry }, async function byNamespace({ namespace, name }) {
    if (name === "blocker") {
      blocking = true;
      await blocked; // the listing of team-c never finishes (until the test's end)
    }
    return { [namespace ?? ""]: name };
  });
  const handled: string[] = [];
  kopf.on.event("kopfexamples", { registry }, function record({ name }) {
    if (!handled.includes(name)) handled.push(name);
  });
  await c.createNamespace("team-a");
  const runner = await startIn(c, registry, "team-*");
  try {
    await c.createKex("team-a", "before");
    await until(() => handled.includes("before"), "the handlers before");
    await unseen(c, async () => {
      await c.createNamespace("team-c");
      await pod(c, "blocker", {}, "team-c");
    });
    await until(() => blocking, "the listing of team-c");
    await c.createKex("team-a", "probe");
    await delay(500);
    assert.deepEqual(handled, ["before"], "the gate is closed while team-c lists");
    // The namespace goes: its watchers stop before their listing is indexed. Meanwhile, the
    // relist of the pods in team-a (after the 410) waits behind the blocked indexing: a relist
    // of a watcher that has listed once does not close the gate.
    await remove(c, "/api/v1/namespaces/team-c");
    await until(() => handled.includes("probe"), "the gate opens again");
  } finally {
    unblock();
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});

Deno.test("OperatorIndexers: the gate closes for watchers of indexed resources until they list or stop", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.index("pods", { registry }, function names({ name }) {
    return name;
  });
  const stop = new AbortController();
  const indexers = newIndexers(registry, { signal: stop.signal });
  const pods = new kopf.Resource({ group: "", version: "v1", plural: "pods", kind: "Pod" });
  const maps = new kopf.Resource({ group: "", version: "v1", plural: "configmaps" });
  const settled = async (p: Promise<void>) =>
    await Promise.race([p.then(() => true), delay(20).then(() => false)]);

  // Closed at start-up, until markReady(), whatever the watchers do.
  assert.equal(indexers.isReady, false);
  const first = indexers.whenReady();
  indexers.hold(pods)();
  assert.equal(await settled(first), false);
  indexers.markReady();
  assert.equal(await settled(first), true);
  assert.equal(indexers.isReady, true);

  // A watcher of a resource without indexing handlers never closes it.
  const ignored = indexers.hold(maps);
  assert.equal(indexers.isReady, true);
  ignored();

  // Two new watchers: open only when both have listed (or stopped); releases count once.
  const listing = indexers.hold(pods);
  const stopping = indexers.hold(pods);
  const waiting = indexers.whenReady();
  listing();
  listing(); // a relist's LISTED, then the stop: no effect
  assert.equal(indexers.isReady, false);
  assert.equal(await settled(waiting), false);
  stopping(); // stopped before its listing
  assert.equal(await settled(waiting), true);
  assert.equal(await settled(indexers.whenReady()), true);

  // Re-closable again; the operator's stop opens it for good.
  indexers.hold(pods);
  const last = indexers.whenReady();
  assert.equal(await settled(last), false);
  stop.abort();
  assert.equal(await settled(last), true);
  indexers.hold(pods);
  assert.equal(indexers.isReady, true);
});

Deno.test("OperatorIndexers: forgetting a stopped watcher keeps the objects its successor indexed", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.index("pods", { registry }, function names({ name }) {
    return name;
  });
  const indexers = newIndexers(registry);
  const pods = new kopf.Resource({ group: "", version: "v1", plural: "pods", kind: "Pod" });
  const obj = (name: string) => ({ metadata: { namespace: "ns", name, uid: name } });
  await indexers.index(pods, "pods@ns#1", { type: null, object: obj("kept") });
  await indexers.index(pods, "pods@ns#1", { type: null, object: obj("gone") });
  // The namespace is re-created: the next watcher indexes "kept" before the old one is forgotten.
  await indexers.index(pods, "pods@ns#2", { type: null, object: obj("kept") });
  await indexers.forgetStream("pods@ns#1");
  assert.deepEqual(view(indexers.indices.names), { null: ["kept"] });
  await indexers.forgetStream("pods@ns#2");
  assert.deepEqual(view(indexers.indices.names), {});
});

Deno.test("OperatorIndexers: a temporarily excluded object is re-indexed at the end of its delay from its latest body", async () => {
  const clock = new FakeClock();
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.index("pods", { registry }, function byV({ labels, retry }) {
    seen.push(`${labels.v}@${retry}`);
    if (labels.v === "bad" && retry < 1) throw new kopf.TemporaryError("later", { delay: 2 });
    return { [labels.v ?? ""]: true };
  });
  const stop = new AbortController();
  const indexers = newIndexers(registry, { signal: stop.signal, clock });
  const pods = new kopf.Resource({ group: "", version: "v1", plural: "pods", kind: "Pod" });
  const obj = (v: string) => ({
    metadata: { namespace: "ns", name: "p", uid: "u", labels: { v } },
  });
  await indexers.index(pods, "s", { type: "ADDED", object: obj("bad") });
  assert.deepEqual(view(indexers.indices.byV), {}, "excluded");
  // While excluded, a newer body arrives: not indexed now, but remembered for the re-indexing.
  await clock.advance(1);
  await indexers.index(pods, "s", { type: "MODIFIED", object: obj("newer") });
  assert.deepEqual(seen, ["bad@0"], "an excluded object is not indexed during its delay");
  await clock.advance(0.999);
  assert.deepEqual(seen, ["bad@0"]);
  await clock.advance(0.001);
  await until(() => seen.length === 2, "re-indexed");
  assert.deepEqual(seen, ["bad@0", "newer@1"], "at exactly the delay, from the latest body");
  assert.deepEqual(view(indexers.indices.byV), { newer: [true] });
  stop.abort();
});
