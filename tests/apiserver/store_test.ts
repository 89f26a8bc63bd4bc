import assert from "node:assert/strict";
import { Store } from "../../src/apiserver/storage/store.ts";
import { deepEqual } from "../../src/cogs/structs/deep_equal.ts";

const obj = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: "ns" },
  ...extra,
});

Deno.test("`Store.commit()` issues one monotonic resourceVersion across resources", () => {
  const store = new Store();
  const a = store.commit("ADDED", "configmaps", obj("a"));
  const b = store.commit("ADDED", "secrets", obj("b"));
  const c = store.commit("MODIFIED", "configmaps", obj("a", { data: { x: "1" } }));
  assert.deepEqual([a, b, c].map((o) => o.metadata.resourceVersion), ["1", "2", "3"]);
  assert.equal(store.get("configmaps", "ns", "a"), c);
  assert.equal(store.count("configmaps"), 1);
});

Deno.test("`Store.revisionOf()` changes with every commit and load of its resource, not others", () => {
  const store = new Store();
  assert.equal(store.revisionOf("configmaps"), 0);
  store.commit("ADDED", "configmaps", obj("a"));
  const first = store.revisionOf("configmaps");
  store.commit("ADDED", "secrets", obj("s"));
  assert.equal(store.revisionOf("configmaps"), first);
  for (
    const step of [
      () => store.commit("MODIFIED", "configmaps", obj("a", { data: {} })),
      () => store.commit("DELETED", "configmaps", obj("a")),
      () => store.load("configmaps", obj("b", { metadata: { name: "b", resourceVersion: "9" } })),
    ]
  ) {
    const before = store.revisionOf("configmaps");
    step();
    assert.notEqual(store.revisionOf("configmaps"), before);
  }
  // A refused commit (a guard throws) changes nothing.
  store.guard(() => {
    throw new Error("refused");
  });
  const before = store.revisionOf("configmaps");
  assert.throws(() => store.commit("ADDED", "configmaps", obj("c")), /refused/);
  assert.equal(store.revisionOf("configmaps"), before);
});

Deno.test("`Store.changesSince()` returns the changes of one resource after an RV, in order", () => {
  const store = new Store();
  store.commit("ADDED", "configmaps", obj("a"));
  store.commit("ADDED", "secrets", obj("s"));
  store.commit("MODIFIED", "configmaps", obj("a", { data: {} }));
  store.commit("DELETED", "configmaps", obj("a"));
  const changes = store.changesSince("configmaps", 1)!;
  assert.deepEqual(changes.map((c) => [c.type, c.rv]), [["MODIFIED", 3], ["DELETED", 4]]);
  assert.equal(changes[1]!.previous?.metadata.resourceVersion, "3");
  assert.equal(store.get("configmaps", "ns", "a"), undefined);
});

Deno.test("`Store.changesSince()` answers undefined (410) once history no longer reaches back", () => {
  const store = new Store({ historySize: 3 });
  for (let i = 0; i < 5; i++) store.commit("ADDED", "configmaps", obj(`o${i}`));
  assert.equal(store.compactedResourceVersion, 2);
  assert.equal(store.changesSince("configmaps", 1), undefined);
  assert.deepEqual(store.changesSince("configmaps", 2)!.map((c) => c.rv), [3, 4, 5]);
  store.compact();
  assert.equal(store.changesSince("configmaps", 4), undefined);
  assert.deepEqual(store.changesSince("configmaps", 5), []);
});

Deno.test("`Store` history stays bounded and correct over many changes", () => {
  const store = new Store({ historySize: 100 });
  for (let i = 0; i < 20_000; i++) {
    store.commit("MODIFIED", "configmaps", obj("a", { data: { i: String(i) } }));
  }
  const tail = store.changesSince("configmaps", 19_950)!;
  assert.equal(tail.length, 50);
  assert.deepEqual(tail.map((c) => c.rv), Array.from({ length: 50 }, (_, i) => 19_951 + i));
  assert.equal(store.changesSince("configmaps", 19_899), undefined);
});

Deno.test("`Store.watch()` delivers every later change synchronously, until unregistered", () => {
  const store = new Store();
  const seen: number[] = [];
  const stop = store.watch({ key: "configmaps", deliver: (c) => seen.push(c.rv) });
  store.commit("ADDED", "configmaps", obj("a"));
  store.commit("ADDED", "secrets", obj("b"));
  store.commit("ADDED", "configmaps", obj("c"));
  stop();
  store.commit("ADDED", "configmaps", obj("d"));
  assert.deepEqual(seen, [1, 3]);
});

Deno.test("`deepEqual()` ignores key order and undefined members", () => {
  assert.ok(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(!deepEqual({ a: [1, 2] }, { a: [2, 1] }));
  assert.ok(!deepEqual({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!deepEqual([], {}));
  assert.ok(deepEqual({ a: undefined }, {}));
});

/** What a store shows to readers, history and watchers: compared before and after a refused write. */
function observed(store: Store, seen: unknown[]) {
  return {
    rv: store.resourceVersion,
    objects: [...store.list("configmaps")],
    history: store.changesSince("configmaps", 0)?.map((c) => c.rv),
    seen: seen.length,
  };
}

Deno.test("`Store.commit()` refuses an object that cannot be encoded, leaving no trace", () => {
  const store = new Store();
  const seen: unknown[] = [];
  store.watch({ key: "configmaps", deliver: (c) => seen.push(c) });
  store.onCommit((c) => seen.push(c));
  store.commit("ADDED", "configmaps", obj("a"));
  const before = observed(store, seen);
  // A cycle stands for any value JSON.stringify throws on (deep nesting does, on a deep stack).
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(
    () => store.commit("ADDED", "configmaps", obj("deep", { data: cyclic })),
    (e: Error & { code?: number }) => e.code === 500 && /cannot be stored/.test(e.message),
  );
  assert.deepEqual(observed(store, seen), before);
  assert.equal(store.get("configmaps", "ns", "deep"), undefined);
  // The next write goes on from the same counter.
  assert.equal(store.commit("ADDED", "configmaps", obj("b")).metadata.resourceVersion, "2");
});

Deno.test("`Store.commit()` refuses an object over the size limit with 413, counting UTF-8 bytes", () => {
  const store = new Store({ maxObjectBytes: 200 });
  const seen: unknown[] = [];
  store.watch({ key: "configmaps", deliver: (c) => seen.push(c) });
  const before = observed(store, seen);
  // 60 three-byte characters: 60 UTF-16 units, 180 bytes, with the envelope over 200.
  assert.throws(
    () => store.commit("ADDED", "configmaps", obj("big", { data: { x: "€".repeat(60) } })),
    (e: Error & { code?: number }) => e.code === 413 && /request is too large/.test(e.message),
  );
  assert.deepEqual(observed(store, seen), before);
  store.commit("ADDED", "configmaps", obj("small", { data: { x: "€".repeat(10) } }));
  assert.equal(seen.length, 1);
});

Deno.test("`Store.guard()` runs before the change is applied; a throw refuses it", () => {
  const store = new Store();
  const seen: unknown[] = [];
  store.watch({ key: "configmaps", deliver: (c) => seen.push(c) });
  const encodings: string[] = [];
  let full = false;
  store.guard((change, encoded) => {
    assert.equal(store.get("configmaps", "ns", change.object.metadata.name!), change.previous);
    if (full) throw new Error("ENOSPC");
    encodings.push(encoded);
  });
  store.commit("ADDED", "configmaps", obj("a"));
  full = true;
  const before = observed(store, seen);
  assert.throws(
    () => store.commit("MODIFIED", "configmaps", obj("a", { data: { x: "1" } })),
    /ENOSPC/,
  );
  assert.deepEqual(observed(store, seen), before);
  assert.equal(store.get("configmaps", "ns", "a")!.data, undefined);
  full = false;
  store.commit("MODIFIED", "configmaps", obj("a", { data: { x: "2" } }));
  assert.deepEqual(encodings.map((e) => JSON.parse(e).metadata.resourceVersion), ["1", "2"]);
});

Deno.test("`Store.encodingOf()` gives the JSON of the latest commits, exactly as stored", () => {
  const store = new Store();
  const a = store.commit("ADDED", "configmaps", obj("a", { data: { x: "€" } }));
  assert.equal(store.encodingOf(a), JSON.stringify(a));
  const b = store.commit("ADDED", "configmaps", obj("b"));
  // A write's answer goes out after other writes have committed: it still finds its text.
  assert.equal(store.encodingOf(a), JSON.stringify(a));
  assert.equal(store.encodingOf({ ...b }), undefined); // the same content, another object
  assert.equal(store.encodingOf(b), JSON.stringify(b));
  const n0 = store.commit("ADDED", "configmaps", obj("n0"));
  for (let i = 1; i < 62; i++) store.commit("ADDED", "configmaps", obj(`n${i}`));
  assert.equal(store.encodingOf(a), JSON.stringify(a)); // the 64th latest
  store.commit("ADDED", "configmaps", obj("last"));
  assert.equal(store.encodingOf(a), undefined); // 64 kept, then forgotten
  assert.equal(store.encodingOf(b), JSON.stringify(b));
  // A large object's text is kept while it is the latest only (a few MiB kept at most).
  const big = store.commit("ADDED", "configmaps", obj("big", { data: { x: "y".repeat(40_000) } }));
  assert.equal(store.encodingOf(big), JSON.stringify(big));
  store.commit("ADDED", "configmaps", obj("after-big"));
  assert.equal(store.encodingOf(big), undefined);
  assert.equal(store.encodingOf(b), undefined); // after-big took the oldest slot, big none
  assert.equal(store.encodingOf(n0), JSON.stringify(n0));
});
