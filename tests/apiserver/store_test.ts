import assert from "node:assert/strict";
import { Store } from "../../src/apiserver/store.ts";
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
