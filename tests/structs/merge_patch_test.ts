import assert from "node:assert/strict";
import { applyMergePatch } from "../../src/cogs/structs/merge_patch.ts";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** RFC 7386 Appendix A: original, patch, result. */
const APPENDIX_A: [unknown, unknown, unknown][] = [
  [{ a: "b" }, { a: "c" }, { a: "c" }],
  [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
  [{ a: "b" }, { a: null }, {}],
  [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
  [{ a: ["b"] }, { a: "c" }, { a: "c" }],
  [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
  [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
  [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
  [["a", "b"], ["c", "d"], ["c", "d"]],
  [{ a: "b" }, ["c"], ["c"]],
  [{ a: "foo" }, null, null],
  [{ a: "foo" }, "bar", "bar"],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: "b", c: null }, { a: "b" }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

Deno.test("`applyMergePatch()` passes the RFC 7386 appendix A cases", () => {
  for (const [original, patch, result] of APPENDIX_A) {
    const frozen = deepFreeze(structuredClone(original));
    assert.deepEqual(
      applyMergePatch(frozen, deepFreeze(structuredClone(patch))),
      result,
      `${JSON.stringify(original)} + ${JSON.stringify(patch)}`,
    );
    assert.deepEqual(frozen, original, "the target must not change");
  }
});

Deno.test("`applyMergePatch()` passes the RFC 7386 section 3 example", () => {
  const target = {
    title: "Goodbye!",
    author: { givenName: "John", familyName: "Doe" },
    tags: ["example", "sample"],
    content: "This will be unchanged",
  };
  const patch = {
    title: "Hello!",
    phoneNumber: "+01-123-456-7890",
    author: { familyName: null },
    tags: ["example"],
  };
  assert.deepEqual(applyMergePatch(target, patch), {
    title: "Hello!",
    author: { givenName: "John" },
    tags: ["example"],
    content: "This will be unchanged",
    phoneNumber: "+01-123-456-7890",
  });
});

Deno.test("`applyMergePatch()` never mutates its inputs", () => {
  const target = deepFreeze({ metadata: { labels: { a: "1" }, finalizers: ["x"] }, spec: {} });
  const patch = deepFreeze({ metadata: { labels: { a: null, b: "2" }, finalizers: null } });
  const result = applyMergePatch(target, patch);
  assert.deepEqual(result, { metadata: { labels: { b: "2" } }, spec: {} });
  assert.deepEqual(target, { metadata: { labels: { a: "1" }, finalizers: ["x"] }, spec: {} });
  assert.deepEqual(patch, { metadata: { labels: { a: null, b: "2" }, finalizers: null } });
});

Deno.test("`applyMergePatch()` shares the subtrees the patch does not touch", () => {
  const spec = { containers: [{ name: "app" }] };
  const status = { phase: "Running" };
  const target = { metadata: { name: "x", labels: { a: "1" } }, spec, status };
  const result = applyMergePatch(target, { metadata: { labels: { b: "2" } } }) as typeof target;
  assert.equal(result.spec, spec);
  assert.equal(result.status, status);
  assert.notEqual(result, target);
  assert.notEqual(result.metadata, target.metadata);
});

Deno.test("`applyMergePatch()` returns a new object even for an empty patch", () => {
  const target = { a: 1 };
  const result = applyMergePatch(target, {});
  assert.deepEqual(result, { a: 1 });
  assert.notEqual(result, target);
});

Deno.test("`applyMergePatch()` keeps the target's key order and appends new keys", () => {
  const result = applyMergePatch({ a: 1, b: 2, c: 3 }, { b: 20, d: 4 });
  assert.deepEqual(Object.keys(result as object), ["a", "b", "c", "d"]);
});

Deno.test("`applyMergePatch()` drops nulls inside a new subtree", () => {
  assert.deepEqual(applyMergePatch({}, { a: { b: null, c: { d: null, e: 1 } } }), {
    a: { c: { e: 1 } },
  });
});

Deno.test("`applyMergePatch()` replaces a primitive target with an object patch", () => {
  assert.deepEqual(applyMergePatch("text", { a: 1 }), { a: 1 });
  assert.deepEqual(applyMergePatch(undefined, { a: 1 }), { a: 1 });
  assert.deepEqual(applyMergePatch(null, { a: null }), {});
});

Deno.test("`applyMergePatch()` treats a __proto__ key as data, not as a prototype", () => {
  const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
  const result = applyMergePatch({}, patch) as Record<string, unknown>;
  assert.ok(Object.hasOwn(result, "__proto__"));
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(JSON.stringify(result), '{"__proto__":{"polluted":true},"a":1}');
});
