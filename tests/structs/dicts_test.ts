import assert from "node:assert/strict";
import {
  cherrypick,
  deepCopy,
  ensure,
  hasPath,
  parseField,
  remove,
  resolve,
} from "../../src/cogs/structs/dicts.ts";

Deno.test("parseField() splits dotted strings and copies arrays", () => {
  assert.deepEqual(parseField("spec.a.b"), ["spec", "a", "b"]);
  assert.deepEqual(parseField(["metadata", "annotations", "a.b/c"]), [
    "metadata",
    "annotations",
    "a.b/c",
  ]);
  assert.deepEqual(parseField(null), []);
  assert.deepEqual(parseField(undefined), []);
  assert.deepEqual(parseField(""), []);
  const source = ["a"];
  const parsed = parseField(source);
  parsed.push("b");
  assert.deepEqual(source, ["a"]);
  assert.throws(() => parseField(42 as unknown as string), TypeError);
});

Deno.test("resolve() reads nested fields and falls back when absent or not an object", () => {
  const body = { spec: { size: "1G", ports: [80], none: null, text: "x" } };
  assert.equal(resolve(body, "spec.size"), "1G");
  assert.deepEqual(resolve(body, ["spec", "ports"]), [80]);
  assert.equal(resolve(body, "spec.none", "fallback"), null);
  assert.equal(resolve(body, "spec.missing", "fallback"), "fallback");
  assert.equal(resolve(body, "spec.text.deeper", "fallback"), "fallback");
  assert.equal(resolve(body, "spec.ports.0", "fallback"), "fallback");
  assert.equal(resolve(null, "spec", "fallback"), "fallback");
  assert.equal(resolve(body, "spec.missing"), undefined);
  assert.equal(resolve(body, null), body);
  assert.equal(resolve({}, "toString", "fallback"), "fallback");
});

Deno.test("hasPath() tells a present null from an absent field", () => {
  const patch = { metadata: { annotations: { a: null } } };
  assert.equal(hasPath(patch, "metadata.annotations.a"), true);
  assert.equal(hasPath(patch, "metadata.annotations.b"), false);
  assert.equal(hasPath(patch, "metadata.annotations.a.x"), false);
  assert.equal(hasPath(patch, []), true);
});

Deno.test("ensure() creates parents and replaces non-object parents", () => {
  const obj: Record<string, unknown> = { status: null };
  ensure(obj, "status.kopf.progress", 1);
  ensure(obj, ["metadata", "annotations", "a.b/c"], "v");
  assert.deepEqual(obj, {
    status: { kopf: { progress: 1 } },
    metadata: { annotations: { "a.b/c": "v" } },
  });
  assert.throws(() => ensure(obj, [], 1), TypeError);
  const proto: Record<string, unknown> = {};
  ensure(proto, "__proto__.polluted", true);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("remove() removes a field and the parents it leaves empty", () => {
  const obj = { a: { b: { c: 1 }, d: 2 }, e: { f: { g: 1 } }, keep: {} };
  remove(obj, "a.b.c");
  remove(obj, "e.f.g");
  remove(obj, "x.y.z");
  assert.deepEqual(obj, { a: { d: 2 }, keep: {} });
  assert.throws(() => remove(obj, null), TypeError);
});

Deno.test("cherrypick() copies present fields only, through the picker", () => {
  const src = { metadata: { labels: { a: "1" }, annotations: null }, spec: { x: [1] } };
  const dst: Record<string, unknown> = { spec: { y: 2 } };
  cherrypick(src, dst, ["metadata.labels", "metadata.annotations", "spec.x", "status.z"], deepCopy);
  assert.deepEqual(dst, {
    spec: { y: 2, x: [1] },
    metadata: { labels: { a: "1" }, annotations: null },
  });
  (dst.spec as { x: number[] }).x.push(2);
  assert.deepEqual(src.spec.x, [1]);
});

Deno.test("deepCopy() copies objects and arrays and drops undefined members", () => {
  const a = { x: [{ y: 1 }], u: undefined, n: null };
  const b = deepCopy(a);
  assert.deepEqual(b, { x: [{ y: 1 }], n: null });
  assert.notEqual(b.x[0], a.x[0]);
});

Deno.test("parseField() returns a fresh array each time, though dotted fields are split once", () => {
  const first = parseField("spec.cached.path");
  first.push("changed");
  first[0] = "status";
  assert.deepEqual(parseField("spec.cached.path"), ["spec", "cached", "path"]);
  const body = { spec: { cached: { path: 1 } } };
  assert.equal(resolve(body, "spec.cached.path"), 1, "the walks read the cached keys unchanged");
  ensure(body, "spec.cached.other", 2);
  remove(body, "spec.cached.path");
  assert.deepEqual(body, { spec: { cached: { other: 2 } } });
});

Deno.test("cherrypick() takes its fields from any iterable, not only arrays", () => {
  const body = { metadata: { labels: { a: "1" } }, spec: { x: 1 } };
  const dst: Record<string, unknown> = {};
  cherrypick(body, dst, new Set(["metadata.labels", "spec.x", "spec.missing"]));
  assert.deepEqual(dst, { metadata: { labels: { a: "1" } }, spec: { x: 1 } });
  assert.throws(() => cherrypick(body, {}, [42 as unknown as string]), TypeError);
});
