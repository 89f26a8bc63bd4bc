import assert from "node:assert/strict";
import { applyJsonPatch, JsonPatchError } from "../../src/cogs/structs/json_patch.ts";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Applies a patch to frozen copies, so that any mutation fails the test. */
function apply(doc: unknown, ops: unknown): unknown {
  return applyJsonPatch(deepFreeze(structuredClone(doc)), deepFreeze(structuredClone(ops)));
}

function patchError(doc: unknown, ops: unknown): JsonPatchError {
  try {
    apply(doc, ops);
  } catch (error) {
    assert.ok(error instanceof JsonPatchError, `not a JsonPatchError: ${error}`);
    assert.equal(error.name, "JsonPatchError");
    assert.ok(!error.message.includes("\n"), "the message must be one line");
    return error;
  }
  assert.fail("the patch applied without an error");
}

// RFC 6902 appendix A.

Deno.test("`applyJsonPatch()` adds an object member (RFC 6902 A.1)", () => {
  assert.deepEqual(apply({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }]), {
    baz: "qux",
    foo: "bar",
  });
});

Deno.test("`applyJsonPatch()` adds an array element (RFC 6902 A.2)", () => {
  assert.deepEqual(apply({ foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }]), {
    foo: ["bar", "qux", "baz"],
  });
});

Deno.test("`applyJsonPatch()` removes an object member (RFC 6902 A.3)", () => {
  assert.deepEqual(apply({ baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }]), {
    foo: "bar",
  });
});

Deno.test("`applyJsonPatch()` removes an array element (RFC 6902 A.4)", () => {
  assert.deepEqual(apply({ foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }]), {
    foo: ["bar", "baz"],
  });
});

Deno.test("`applyJsonPatch()` replaces a value (RFC 6902 A.5)", () => {
  assert.deepEqual(
    apply({ baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }]),
    { baz: "boo", foo: "bar" },
  );
});

Deno.test("`applyJsonPatch()` moves a value (RFC 6902 A.6)", () => {
  assert.deepEqual(
    apply(
      { foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } },
      [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }],
    ),
    { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } },
  );
});

Deno.test("`applyJsonPatch()` moves an array element (RFC 6902 A.7)", () => {
  assert.deepEqual(
    apply({ foo: ["all", "grass", "cows", "eat"] }, [
      { op: "move", from: "/foo/1", path: "/foo/3" },
    ]),
    { foo: ["all", "cows", "eat", "grass"] },
  );
});

Deno.test("`applyJsonPatch()` tests a value successfully (RFC 6902 A.8)", () => {
  const doc = { baz: "qux", foo: ["a", 2, "c"] };
  assert.deepEqual(
    apply(doc, [
      { op: "test", path: "/baz", value: "qux" },
      { op: "test", path: "/foo/1", value: 2 },
    ]),
    doc,
  );
});

Deno.test("`applyJsonPatch()` answers a failed test with JsonPatchError (RFC 6902 A.9)", () => {
  const error = patchError({ baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }]);
  assert.equal(error.message, 'the "test" operation at index 0 failed: /baz is "qux", not "bar"');
  assert.equal(error.index, 0);
  assert.equal(error.op, "test");
});

Deno.test("`applyJsonPatch()` adds a nested member object (RFC 6902 A.10)", () => {
  assert.deepEqual(
    apply({ foo: "bar" }, [{ op: "add", path: "/child", value: { grandchild: {} } }]),
    { foo: "bar", child: { grandchild: {} } },
  );
});

Deno.test("`applyJsonPatch()` ignores unrecognized members of an operation (RFC 6902 A.11)", () => {
  assert.deepEqual(
    apply({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux", xyz: 123 }]),
    { foo: "bar", baz: "qux" },
  );
});

Deno.test("`applyJsonPatch()` refuses to add to a nonexistent target (RFC 6902 A.12)", () => {
  const error = patchError({ foo: "bar" }, [{ op: "add", path: "/baz/bat", value: "qux" }]);
  assert.equal(error.message, 'the "add" operation at index 0 failed: /baz does not exist');
});

Deno.test("`applyJsonPatch()` fails an operation whose duplicate op member parses as remove (RFC 6902 A.13)", () => {
  const ops = JSON.parse('[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]');
  const error = patchError({ foo: "bar" }, ops);
  assert.equal(error.message, 'the "remove" operation at index 0 failed: /baz does not exist');
});

Deno.test("`applyJsonPatch()` decodes ~01 as ~1, not as / (RFC 6902 A.14)", () => {
  const doc = { "/": 9, "~1": 10 };
  assert.deepEqual(apply(doc, [{ op: "test", path: "/~01", value: 10 }]), doc);
});

Deno.test("`applyJsonPatch()` does not equate strings and numbers (RFC 6902 A.15)", () => {
  const error = patchError({ "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: "10" }]);
  assert.equal(error.message, 'the "test" operation at index 0 failed: /~01 is 10, not "10"');
});

Deno.test("`applyJsonPatch()` appends an array value with - (RFC 6902 A.16)", () => {
  assert.deepEqual(
    apply({ foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }]),
    { foo: ["bar", ["abc", "def"]] },
  );
});

// The Kopf finalizer patch.

const OBJ = {
  metadata: { name: "x", resourceVersion: "5", finalizers: ["other.example.com/guard"] },
  spec: { size: 1 },
};

Deno.test("`applyJsonPatch()` adds a finalizer behind a resourceVersion test", () => {
  assert.deepEqual(
    apply(OBJ, [
      { op: "test", path: "/metadata/resourceVersion", value: "5" },
      { op: "add", path: "/metadata/finalizers/-", value: "kopf.zalando.org/KopfFinalizerMarker" },
    ]),
    {
      metadata: {
        name: "x",
        resourceVersion: "5",
        finalizers: ["other.example.com/guard", "kopf.zalando.org/KopfFinalizerMarker"],
      },
      spec: { size: 1 },
    },
  );
});

Deno.test("`applyJsonPatch()` answers a stale resourceVersion test with JsonPatchError", () => {
  const error = patchError(OBJ, [
    { op: "test", path: "/metadata/resourceVersion", value: "4" },
    { op: "add", path: "/metadata/finalizers/-", value: "kopf.zalando.org/KopfFinalizerMarker" },
  ]);
  assert.equal(
    error.message,
    'the "test" operation at index 0 failed: /metadata/resourceVersion is "5", not "4"',
  );
});

Deno.test("`applyJsonPatch()` removes a finalizer only after testing it is still there", () => {
  const obj = { metadata: { resourceVersion: "7", finalizers: ["a", "kopf", "b"] } };
  assert.deepEqual(
    apply(obj, [
      { op: "test", path: "/metadata/resourceVersion", value: "7" },
      { op: "test", path: "/metadata/finalizers/1", value: "kopf" },
      { op: "remove", path: "/metadata/finalizers/1" },
    ]),
    { metadata: { resourceVersion: "7", finalizers: ["a", "b"] } },
  );
  const error = patchError(obj, [
    { op: "test", path: "/metadata/finalizers/0", value: "kopf" },
    { op: "remove", path: "/metadata/finalizers/0" },
  ]);
  assert.equal(
    error.message,
    'the "test" operation at index 0 failed: /metadata/finalizers/0 is "a", not "kopf"',
  );
});

Deno.test("`applyJsonPatch()` creates the finalizers list when it is missing", () => {
  assert.deepEqual(
    apply({ metadata: { resourceVersion: "1" } }, [
      { op: "test", path: "/metadata/resourceVersion", value: "1" },
      { op: "add", path: "/metadata/finalizers", value: ["kopf"] },
    ]),
    { metadata: { resourceVersion: "1", finalizers: ["kopf"] } },
  );
  const error = patchError({ metadata: {} }, [
    { op: "add", path: "/metadata/finalizers/-", value: "kopf" },
  ]);
  assert.equal(
    error.message,
    'the "add" operation at index 0 failed: /metadata/finalizers does not exist',
  );
});

// Semantics beyond the appendix.

Deno.test("`applyJsonPatch()` tests with deep equality regardless of key order", () => {
  const doc = { a: { x: 1, y: [1, { p: true, q: null }] } };
  assert.deepEqual(
    apply(doc, [{ op: "test", path: "/a", value: { y: [1, { q: null, p: true }], x: 1 } }]),
    doc,
  );
  assert.match(
    patchError(doc, [{ op: "test", path: "/a/y", value: [{ q: null, p: true }, 1] }]).message,
    /\/a\/y is \[1,\{"p":true,"q":null\}\], not/,
  );
  assert.match(patchError(doc, [{ op: "test", path: "/a", value: { x: 1 } }]).message, /\/a is/);
  assert.match(
    patchError({ a: {} }, [{ op: "test", path: "/a", value: [] }]).message,
    /\/a is \{\}, not \[\]/,
  );
});

Deno.test("`applyJsonPatch()` tests, adds to and replaces the whole document", () => {
  assert.deepEqual(apply({ a: 1 }, [{ op: "test", path: "", value: { a: 1 } }]), { a: 1 });
  assert.deepEqual(apply({ a: 1 }, [{ op: "add", path: "", value: [1] }]), [1]);
  assert.deepEqual(apply({ a: 1 }, [{ op: "replace", path: "", value: "x" }]), "x");
  assert.equal(
    patchError({ a: 1 }, [{ op: "test", path: "", value: {} }]).message,
    'the "test" operation at index 0 failed: the document is {"a":1}, not {}',
  );
  assert.equal(
    patchError({ a: 1 }, [{ op: "remove", path: "" }]).message,
    'the "remove" operation at index 0 failed: the document root cannot be removed',
  );
});

Deno.test("`applyJsonPatch()` checks array indices", () => {
  const doc = { a: [1, 2, 3] };
  assert.deepEqual(apply(doc, [{ op: "add", path: "/a/3", value: 4 }]), { a: [1, 2, 3, 4] });
  assert.deepEqual(apply(doc, [{ op: "add", path: "/a/0", value: 0 }]), { a: [0, 1, 2, 3] });
  assert.equal(
    patchError(doc, [{ op: "add", path: "/a/4", value: 5 }]).message,
    'the "add" operation at index 0 failed: /a/4 is out of bounds: the array has 3 items',
  );
  assert.match(
    patchError(doc, [{ op: "add", path: "/a/01", value: 5 }]).message,
    /"01" is not an index/,
  );
  assert.match(
    patchError(doc, [{ op: "add", path: "/a/x", value: 5 }]).message,
    /"x" is not an index/,
  );
  assert.match(patchError(doc, [{ op: "remove", path: "/a/3" }]).message, /\/a\/3 does not exist/);
  assert.match(patchError(doc, [{ op: "remove", path: "/a/-" }]).message, /\/a\/- does not exist/);
  assert.match(
    patchError(doc, [{ op: "replace", path: "/a/-", value: 1 }]).message,
    /\/a\/- does not exist/,
  );
  assert.match(
    patchError(doc, [{ op: "test", path: "/a/-", value: 1 }]).message,
    /\/a\/- does not exist/,
  );
  assert.deepEqual(apply(doc, [{ op: "replace", path: "/a/2", value: 30 }]), { a: [1, 2, 30] });
});

Deno.test("`applyJsonPatch()` treats - as an ordinary member name in objects", () => {
  assert.deepEqual(apply({ a: {} }, [{ op: "add", path: "/a/-", value: 1 }]), { a: { "-": 1 } });
});

Deno.test("`applyJsonPatch()` refuses to add into a primitive", () => {
  assert.equal(
    patchError({ a: "text" }, [{ op: "add", path: "/a/b", value: 1 }]).message,
    'the "add" operation at index 0 failed: /a is neither an object nor an array',
  );
});

Deno.test("`applyJsonPatch()` fails remove and replace of a missing member", () => {
  assert.equal(
    patchError({ a: {} }, [{ op: "replace", path: "/a/b", value: 1 }]).message,
    'the "replace" operation at index 0 failed: /a/b does not exist',
  );
  assert.equal(
    patchError({ a: {} }, [{ op: "remove", path: "/a/b/c" }]).message,
    'the "remove" operation at index 0 failed: /a/b does not exist',
  );
});

Deno.test("`applyJsonPatch()` copies values, and later changes to the copy leave the source alone", () => {
  assert.deepEqual(
    apply({ a: { x: [1] } }, [
      { op: "copy", from: "/a", path: "/b" },
      { op: "add", path: "/b/x/-", value: 2 },
      { op: "add", path: "/b/y", value: true },
    ]),
    { a: { x: [1] }, b: { x: [1, 2], y: true } },
  );
  assert.match(
    patchError({ a: 1 }, [{ op: "copy", from: "/missing", path: "/b" }]).message,
    /"copy" operation at index 0 failed: \/missing does not exist/,
  );
});

Deno.test("`applyJsonPatch()` moves in place as a no-op, and never into a child of itself", () => {
  assert.deepEqual(apply({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a" }]), {
    a: { b: 1 },
  });
  assert.equal(
    patchError({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a/b/c" }]).message,
    'the "move" operation at index 0 failed: /a cannot be moved into its own child /a/b/c',
  );
  assert.deepEqual(
    apply({ ab: 1, a: {} }, [{ op: "move", from: "/ab", path: "/a/b" }]),
    { a: { b: 1 } },
  );
});

Deno.test("`applyJsonPatch()` unescapes ~1 and ~0 in pointers", () => {
  assert.deepEqual(
    apply({ metadata: { annotations: {} } }, [
      { op: "add", path: "/metadata/annotations/example.com~1note", value: "x" },
      { op: "add", path: "/metadata/annotations/a~0b", value: "y" },
    ]),
    { metadata: { annotations: { "example.com/note": "x", "a~b": "y" } } },
  );
});

Deno.test("`applyJsonPatch()` reports the index of the operation that failed", () => {
  const error = patchError({ a: 1 }, [
    { op: "add", path: "/b", value: 2 },
    { op: "replace", path: "/a", value: 3 },
    { op: "remove", path: "/c" },
  ]);
  assert.equal(error.index, 2);
  assert.equal(error.op, "remove");
  assert.equal(error.message, 'the "remove" operation at index 2 failed: /c does not exist');
});

Deno.test("`applyJsonPatch()` validates the shape of the patch", () => {
  const invalid = (ops: unknown, expected: string) =>
    assert.equal(patchError({ a: 1 }, ops).message, expected);
  invalid({ op: "add" }, "a JSON patch must be an array of operations, got an object");
  invalid(null, "a JSON patch must be an array of operations, got null");
  invalid("x", 'a JSON patch must be an array of operations, got "x"');
  invalid([1], "the operation at index 0 is invalid: it must be an object, got 1");
  invalid(
    [{ op: "add", path: "/b", value: 1 }, { op: "merge", path: "/a" }],
    'the operation at index 1 is invalid: "op" must be one of "add", "remove", "replace", ' +
      '"move", "copy", "test", got "merge"',
  );
  invalid(
    [{ path: "/a" }],
    'the operation at index 0 is invalid: "op" must be one of "add", "remove", "replace", ' +
      '"move", "copy", "test", got undefined',
  );
  invalid(
    [{ op: "remove" }],
    'the "remove" operation at index 0 is invalid: "path" must be a string',
  );
  invalid(
    [{ op: "add", path: "/b" }],
    'the "add" operation at index 0 is invalid: "value" is missing',
  );
  invalid(
    [{ op: "test", path: "/a" }],
    'the "test" operation at index 0 is invalid: "value" is missing',
  );
  invalid(
    [{ op: "move", path: "/b" }],
    'the "move" operation at index 0 is invalid: "from" must be a string',
  );
  invalid(
    [{ op: "remove", path: "a" }],
    'the "remove" operation at index 0 is invalid: "path" is not a JSON pointer: "a" must start with "/"',
  );
  invalid(
    [{ op: "remove", path: "/a~2" }],
    'the "remove" operation at index 0 is invalid: "path" is not a JSON pointer: ' +
      '"/a~2" has a "~" not followed by 0 or 1',
  );
  invalid(
    [{ op: "copy", from: "/a~", path: "/b" }],
    'the "copy" operation at index 0 is invalid: "from" is not a JSON pointer: ' +
      '"/a~" has a "~" not followed by 0 or 1',
  );
});

Deno.test("`applyJsonPatch()` validates every operation before applying any", () => {
  const error = patchError({ a: 1 }, [{ op: "remove", path: "/missing" }, {
    op: "nope",
    path: "/a",
  }]);
  assert.equal(error.index, 1);
  assert.match(error.message, /is invalid/);
});

Deno.test("`applyJsonPatch()` accepts null as a value", () => {
  assert.deepEqual(apply({ a: 1 }, [{ op: "replace", path: "/a", value: null }]), { a: null });
  assert.deepEqual(apply({ a: null }, [{ op: "test", path: "/a", value: null }]), { a: null });
});

Deno.test("`applyJsonPatch()` answers an empty patch with the document", () => {
  assert.deepEqual(apply({ a: 1 }, []), { a: 1 });
});

Deno.test("`applyJsonPatch()` never mutates the document and shares untouched subtrees", () => {
  const spec = { containers: [{ name: "app" }] };
  const doc = deepFreeze({ metadata: { labels: { a: "1" } }, spec });
  const result = applyJsonPatch(doc, [{
    op: "add",
    path: "/metadata/labels/b",
    value: "2",
  }]) as typeof doc;
  assert.deepEqual(doc, {
    metadata: { labels: { a: "1" } },
    spec: { containers: [{ name: "app" }] },
  });
  assert.deepEqual(result.metadata.labels, { a: "1", b: "2" });
  assert.equal(result.spec, spec);
});

Deno.test("`applyJsonPatch()` treats a __proto__ member as data, never as a prototype", () => {
  const result = apply({}, [{
    op: "add",
    path: "/__proto__",
    value: { polluted: true },
  }]) as object;
  assert.ok(Object.hasOwn(result, "__proto__"));
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.match(
    patchError({}, [{ op: "add", path: "/__proto__/polluted", value: true }]).message,
    /\/__proto__ does not exist/,
  );
  assert.match(
    patchError({}, [{ op: "test", path: "/constructor", value: {} }]).message,
    /\/constructor does not exist/,
  );
});
