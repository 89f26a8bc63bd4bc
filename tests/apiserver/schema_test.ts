import assert from "node:assert/strict";
import {
  applyDefaults,
  pruneUnknownFields,
  validateAgainstSchema,
} from "../../src/apiserver/schemas/schema.ts";
import type { JsonSchema } from "../../src/apiserver/shared/types.ts";

/** A root schema with one `spec` object of the given properties. */
function specOf(properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema {
  return { type: "object", properties: { spec: { type: "object", properties, ...extra } } };
}

function messages(schema: JsonSchema, obj: unknown): string[] {
  return validateAgainstSchema(schema, obj).map((c) => `${c.field}: ${c.message}`);
}

// ---------------------------------------------------------------------------
// validateAgainstSchema(): types
// ---------------------------------------------------------------------------

Deno.test("`validateAgainstSchema()` accepts a valid object", () => {
  const schema = specOf({
    size: { type: "integer" },
    name: { type: "string" },
    ratio: { type: "number" },
    on: { type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
  });
  const obj = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex", labels: { a: "b" } },
    spec: { size: 1, name: "x", ratio: 0.5, on: true, tags: ["a"] },
  };
  assert.deepEqual(validateAgainstSchema(schema, obj), []);
});

Deno.test("`validateAgainstSchema()` reports a wrong type as kube-apiserver words it", () => {
  const causes = validateAgainstSchema(specOf({ replicas: { type: "integer" } }), {
    spec: { replicas: "3" },
  });
  assert.deepEqual(causes, [{
    reason: "FieldValueTypeInvalid",
    field: "spec.replicas",
    message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
  }]);
});

Deno.test("`validateAgainstSchema()` tells integers from numbers", () => {
  const schema = specOf({ i: { type: "integer" }, n: { type: "number" }, s: { type: "string" } });
  assert.deepEqual(messages(schema, { spec: { i: 1.5, n: 2, s: 3 } }), [
    'spec.i: Invalid value: "number": spec.i in body must be of type integer: "number"',
    'spec.s: Invalid value: "integer": spec.s in body must be of type string: "integer"',
  ]);
});

Deno.test("`validateAgainstSchema()` reports objects, arrays and booleans of a wrong type", () => {
  const schema = specOf({
    o: { type: "object" },
    a: { type: "array" },
    b: { type: "boolean" },
  });
  assert.deepEqual(messages(schema, { spec: { o: [], a: {}, b: "true" } }), [
    'spec.o: Invalid value: "array": spec.o in body must be of type object: "array"',
    'spec.a: Invalid value: "object": spec.a in body must be of type array: "object"',
    'spec.b: Invalid value: "string": spec.b in body must be of type boolean: "string"',
  ]);
});

Deno.test("`validateAgainstSchema()` reports a wrong type of the root", () => {
  const causes = validateAgainstSchema({ type: "object" }, "x");
  assert.deepEqual(causes, [{
    reason: "FieldValueTypeInvalid",
    field: "",
    message: 'Invalid value: "string": body must be of type object: "string"',
  }]);
});

Deno.test("`validateAgainstSchema()` reports null where not nullable", () => {
  assert.deepEqual(messages(specOf({ x: { type: "string" } }), { spec: { x: null } }), [
    'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"',
  ]);
});

Deno.test("`validateAgainstSchema()` accepts null where nullable", () => {
  const schema = specOf({ x: { type: "string", nullable: true, minLength: 3 } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { x: null } }), []);
});

Deno.test("`validateAgainstSchema()` rejects a nullable null that the enum lacks", () => {
  const schema = specOf({ x: { type: "string", nullable: true, enum: ["a"] } });
  assert.deepEqual(messages(schema, { spec: { x: null } }), [
    'spec.x: Unsupported value: "null": supported values: "a"',
  ]);
  const withNull = specOf({ x: { type: "string", nullable: true, enum: ["a", null] } });
  assert.deepEqual(validateAgainstSchema(withNull, { spec: { x: null } }), []);
});

Deno.test("`validateAgainstSchema()` accepts anything where no type is declared", () => {
  const schema = specOf({ any: { "x-kubernetes-preserve-unknown-fields": true } });
  for (const any of [1, "s", null, [1], { a: 1 }, true]) {
    assert.deepEqual(validateAgainstSchema(schema, { spec: { any } }), []);
  }
});

Deno.test("`validateAgainstSchema()` accepts integers and strings for int-or-string", () => {
  const schema = specOf({
    port: {
      "x-kubernetes-int-or-string": true,
      anyOf: [{ type: "integer" }, { type: "string" }],
    },
  });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { port: 80 } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { port: "http" } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { port: "50%" } }), []);
});

Deno.test("`validateAgainstSchema()` rejects other types for int-or-string", () => {
  const schema = specOf({ port: { "x-kubernetes-int-or-string": true } });
  assert.deepEqual(messages(schema, { spec: { port: 1.5 } }), [
    'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
  ]);
  assert.deepEqual(messages(schema, { spec: { port: true } }), [
    'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
  ]);
});

// ---------------------------------------------------------------------------
// validateAgainstSchema(): objects
// ---------------------------------------------------------------------------

Deno.test("`validateAgainstSchema()` reports a missing required field", () => {
  const schema = specOf({ size: { type: "integer" } }, { required: ["size"] });
  assert.deepEqual(validateAgainstSchema(schema, { spec: {} }), [{
    reason: "FieldValueRequired",
    field: "spec.size",
    message: "Required value",
  }]);
});

Deno.test("`validateAgainstSchema()` reports a missing required field at the root", () => {
  const schema: JsonSchema = { type: "object", required: ["spec"], properties: { spec: {} } };
  assert.deepEqual(messages(schema, { apiVersion: "v1" }), ["spec: Required value"]);
});

Deno.test("`validateAgainstSchema()` counts a present null as present for required", () => {
  const schema = specOf({ x: { type: "string" } }, { required: ["x"] });
  assert.deepEqual(messages(schema, { spec: { x: null } }), [
    'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"',
  ]);
});

Deno.test("`validateAgainstSchema()` does not validate absent properties", () => {
  const schema = specOf({ x: { type: "string", minLength: 2 } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: {} }), []);
  assert.deepEqual(validateAgainstSchema(schema, {}), []);
});

Deno.test("`validateAgainstSchema()` validates nested objects with dotted paths", () => {
  const schema = specOf({
    template: {
      type: "object",
      required: ["image"],
      properties: {
        image: { type: "string" },
        resources: { type: "object", properties: { cpu: { type: "integer", minimum: 1 } } },
      },
    },
  });
  assert.deepEqual(messages(schema, { spec: { template: { resources: { cpu: 0 } } } }), [
    "spec.template.image: Required value",
    "spec.template.resources.cpu: Invalid value: 0: " +
    "spec.template.resources.cpu in body should be greater than or equal to 1",
  ]);
});

Deno.test("`validateAgainstSchema()` checks minProperties and maxProperties", () => {
  const schema = specOf({
    m: { type: "object", minProperties: 2, maxProperties: 3, additionalProperties: {} },
  });
  assert.deepEqual(messages(schema, { spec: { m: { a: 1 } } }), [
    "spec.m: Invalid value: 1: spec.m in body should have at least 2 properties",
  ]);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { m: { a: 1, b: 2 } } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { m: { a: 1, b: 2, c: 3 } } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { m: { a: 1, b: 2, c: 3, d: 4 } } }), [{
    reason: "FieldValueTooMany",
    field: "spec.m",
    message: "Too many: 4: must have at most 3 items",
  }]);
});

Deno.test("`validateAgainstSchema()` validates additionalProperties values by their schema", () => {
  const schema = specOf({
    limits: { type: "object", additionalProperties: { type: "integer", maximum: 10 } },
  });
  assert.deepEqual(messages(schema, { spec: { limits: { cpu: 1, mem: 11, io: "x" } } }), [
    "spec.limits.mem: Invalid value: 11: spec.limits.mem in body should be less than or equal to 10",
    'spec.limits.io: Invalid value: "string": spec.limits.io in body must be of type integer: "string"',
  ]);
});

Deno.test("`validateAgainstSchema()` reports keys forbidden by additionalProperties: false", () => {
  const schema = specOf({ a: { type: "integer" } }, { additionalProperties: false });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { a: 1, b: 2 } }), [{
    reason: "FieldValueInvalid",
    field: "spec",
    message: 'Invalid value: "": spec.b in body is a forbidden property',
  }]);
});

Deno.test("`validateAgainstSchema()` ignores undeclared fields otherwise (pruning removes them)", () => {
  const schema = specOf({ a: { type: "integer" } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { a: 1, b: "x" }, status: {} }), []);
});

Deno.test("`validateAgainstSchema()` allows root apiVersion, kind, metadata even when forbidden", () => {
  const schema: JsonSchema = {
    type: "object",
    additionalProperties: false,
    properties: { spec: { type: "object" } },
  };
  const obj = { apiVersion: "v1", kind: "K", metadata: { name: "x" }, spec: {} };
  assert.deepEqual(validateAgainstSchema(schema, obj), []);
  assert.deepEqual(messages(schema, { ...obj, extra: 1 }), [
    ': Invalid value: "": extra in body is a forbidden property',
  ]);
});

Deno.test("`validateAgainstSchema()` applies declared constraints on metadata.name", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      metadata: { type: "object", properties: { name: { type: "string", maxLength: 5 } } },
    },
  };
  assert.deepEqual(messages(schema, { metadata: { name: "toolong" } }), [
    "metadata.name: Too long: may not be longer than 5",
  ]);
});

Deno.test("`validateAgainstSchema()` requires apiVersion and kind of embedded resources", () => {
  const schema = specOf({
    template: {
      type: "object",
      "x-kubernetes-embedded-resource": true,
      "x-kubernetes-preserve-unknown-fields": true,
    },
  });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { template: { metadata: {} } } }), [
    {
      reason: "FieldValueRequired",
      field: "spec.template.apiVersion",
      message: "Required value: must not be empty",
    },
    {
      reason: "FieldValueRequired",
      field: "spec.template.kind",
      message: "Required value: must not be empty",
    },
  ]);
  const ok = { spec: { template: { apiVersion: "v1", kind: "Pod", metadata: {}, spec: {} } } };
  assert.deepEqual(validateAgainstSchema(schema, ok), []);
});

Deno.test("`validateAgainstSchema()` is not fooled by keys named like Object.prototype members", () => {
  const schema = specOf({ a: { type: "integer" } }, { additionalProperties: false });
  const spec = JSON.parse('{"constructor": 1, "__proto__": 2}');
  assert.deepEqual(messages(schema, { spec }), [
    'spec: Invalid value: "": spec.constructor in body is a forbidden property',
    'spec: Invalid value: "": spec.__proto__ in body is a forbidden property',
  ]);
});

// ---------------------------------------------------------------------------
// validateAgainstSchema(): arrays
// ---------------------------------------------------------------------------

Deno.test("`validateAgainstSchema()` validates array items with [i] paths", () => {
  const schema = specOf({
    ports: {
      type: "array",
      items: {
        type: "object",
        required: ["port"],
        properties: { port: { type: "integer" }, name: { type: "string" } },
      },
    },
  });
  assert.deepEqual(messages(schema, { spec: { ports: [{ port: 80 }, { name: "x" }, 5] } }), [
    "spec.ports[1].port: Required value",
    'spec.ports[2]: Invalid value: "integer": spec.ports[2] in body must be of type object: "integer"',
  ]);
});

Deno.test("`validateAgainstSchema()` validates arrays of arrays", () => {
  const schema = specOf({
    grid: { type: "array", items: { type: "array", items: { type: "integer" } } },
  });
  assert.deepEqual(messages(schema, { spec: { grid: [[1, 2], [3, "4"]] } }), [
    'spec.grid[1][1]: Invalid value: "string": spec.grid[1][1] in body must be of type integer: "string"',
  ]);
});

Deno.test("`validateAgainstSchema()` checks minItems and maxItems", () => {
  const schema = specOf({ xs: { type: "array", minItems: 1, maxItems: 2, items: {} } });
  assert.deepEqual(messages(schema, { spec: { xs: [] } }), [
    "spec.xs: Invalid value: 0: spec.xs in body should have at least 1 items",
  ]);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { xs: [1, 2] } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { xs: [1, 2, 3] } }), [{
    reason: "FieldValueTooMany",
    field: "spec.xs",
    message: "Too many: 3: must have at most 2 items",
  }]);
  const one = specOf({ xs: { type: "array", maxItems: 1 } });
  assert.deepEqual(messages(one, { spec: { xs: [1, 2] } }), [
    "spec.xs: Too many: 2: must have at most 1 item",
  ]);
});

Deno.test("`validateAgainstSchema()` checks uniqueItems with deep equality", () => {
  const schema = specOf({ xs: { type: "array", uniqueItems: true } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { xs: [{ a: 1 }, { a: 2 }] } }), []);
  assert.deepEqual(messages(schema, { spec: { xs: [{ a: [1] }, { a: [1] }] } }), [
    `spec.xs: Invalid value: "": spec.xs in body shouldn't contain duplicates`,
  ]);
});

// ---------------------------------------------------------------------------
// validateAgainstSchema(): strings, numbers, enums, formats
// ---------------------------------------------------------------------------

Deno.test("`validateAgainstSchema()` checks maxLength in characters, not UTF-16 units", () => {
  const schema = specOf({ s: { type: "string", maxLength: 3 } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "abc" } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "😀😀😀" } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "abcd" } }), [{
    reason: "FieldValueTooLong",
    field: "spec.s",
    message: "Too long: may not be longer than 3",
  }]);
});

Deno.test("`validateAgainstSchema()` checks minLength", () => {
  const schema = specOf({ s: { type: "string", minLength: 2 } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "ab" } }), []);
  assert.deepEqual(messages(schema, { spec: { s: "a" } }), [
    'spec.s: Invalid value: "a": spec.s in body should be at least 2 chars long',
  ]);
});

Deno.test("`validateAgainstSchema()` checks a pattern (unanchored, as Go does)", () => {
  const schema = specOf({ s: { type: "string", pattern: "^[a-z]+$" }, t: { pattern: "b" } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "abc", t: "abc" } }), []);
  assert.deepEqual(messages(schema, { spec: { s: "Abc", t: "xyz" } }), [
    `spec.s: Invalid value: "Abc": spec.s in body should match '^[a-z]+$'`,
    `spec.t: Invalid value: "xyz": spec.t in body should match 'b'`,
  ]);
});

Deno.test("`validateAgainstSchema()` ignores a pattern it cannot compile", () => {
  const schema = specOf({ s: { type: "string", pattern: "(" } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "x" } }), []);
});

Deno.test("`validateAgainstSchema()` checks maximum and minimum", () => {
  const schema = specOf({ size: { type: "integer", minimum: 1, maximum: 10 } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { size: 1 } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { size: 10 } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { size: 11 } }), [{
    reason: "FieldValueInvalid",
    field: "spec.size",
    message: "Invalid value: 11: spec.size in body should be less than or equal to 10",
  }]);
  assert.deepEqual(messages(schema, { spec: { size: 0 } }), [
    "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
  ]);
});

Deno.test("`validateAgainstSchema()` checks exclusiveMaximum and exclusiveMinimum", () => {
  const schema = specOf({
    r: {
      type: "number",
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1,
      exclusiveMaximum: true,
    },
  });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { r: 0.5 } }), []);
  assert.deepEqual(messages(schema, { spec: { r: 1 } }), [
    "spec.r: Invalid value: 1: spec.r in body should be less than 1",
  ]);
  assert.deepEqual(messages(schema, { spec: { r: 0 } }), [
    "spec.r: Invalid value: 0: spec.r in body should be greater than 0",
  ]);
});

Deno.test("`validateAgainstSchema()` checks multipleOf, also for fractions", () => {
  const schema = specOf({ n: { type: "number", multipleOf: 0.1 }, i: { multipleOf: 5 } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { n: 0.3, i: 15 } }), []);
  assert.deepEqual(messages(schema, { spec: { n: 0.35, i: 7 } }), [
    "spec.n: Invalid value: 0.35: spec.n in body should be a multiple of 0.1",
    "spec.i: Invalid value: 7: spec.i in body should be a multiple of 5",
  ]);
});

Deno.test("`validateAgainstSchema()` reports a value outside the enum", () => {
  const schema = specOf({ mode: { type: "string", enum: ["a", "b"] } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { mode: "a" } }), []);
  assert.deepEqual(validateAgainstSchema(schema, { spec: { mode: "x" } }), [{
    reason: "FieldValueNotSupported",
    field: "spec.mode",
    message: 'Unsupported value: "x": supported values: "a", "b"',
  }]);
});

Deno.test("`validateAgainstSchema()` compares non-string enums as JSON", () => {
  const schema = specOf({ v: { enum: [1, true, { a: [1] }] } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { v: { a: [1] } } }), []);
  assert.deepEqual(messages(schema, { spec: { v: 2 } }), [
    'spec.v: Unsupported value: 2: supported values: "1", "true", "{\\"a\\":[1]}"',
  ]);
});

Deno.test("`validateAgainstSchema()` checks the date-time format", () => {
  const schema = specOf({ t: { type: "string", format: "date-time" } });
  for (const t of ["2024-02-29T12:00:00Z", "2024-01-01T00:00:00.123+02:00", "2024-01-01T10:00"]) {
    assert.deepEqual(validateAgainstSchema(schema, { spec: { t } }), [], t);
  }
  for (const t of ["yesterday", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01"]) {
    assert.equal(validateAgainstSchema(schema, { spec: { t } }).length, 1, t);
  }
  assert.deepEqual(validateAgainstSchema(schema, { spec: { t: "soon" } }), [{
    reason: "FieldValueTypeInvalid",
    field: "spec.t",
    message: 'Invalid value: "soon": spec.t in body must be of type date-time: "soon"',
  }]);
});

Deno.test("`validateAgainstSchema()` checks other string formats", () => {
  const cases: Array<[string, string[], string[]]> = [
    ["date", ["2024-02-29"], ["2024-02-30", "2024-1-1"]],
    ["byte", ["aGVsbG8=", ""], ["aGVsbG8", "!!!!"]],
    ["uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567"]],
    ["uuid4", ["123e4567-e89b-42d3-a456-426614174000"], ["123e4567-e89b-12d3-a456-426614174000"]],
    ["ipv4", ["10.0.0.1"], ["256.0.0.1", "10.0.0", "01.2.3.4"]],
    ["ipv6", ["::1", "fe80::1:2"], ["1.2.3.4", "::g"]],
    ["cidr", ["10.0.0.0/8", "fd00::/64"], ["10.0.0.0/33", "10.0.0.0"]],
    ["hostname", ["example.com", "a-b"], ["-a.com", "a..b"]],
    ["email", ["a@b.c"], ["a.b.c"]],
    ["mac", ["00:1a:2B:3c:4d:5e"], ["00:1a:2b:3c:4d"]],
    ["duration", ["1h30m", "0", "1.5s"], ["1 hour", "h"]],
  ];
  for (const [format, good, bad] of cases) {
    const schema = specOf({ v: { type: "string", format } });
    for (const v of good) assert.deepEqual(validateAgainstSchema(schema, { spec: { v } }), [], v);
    for (const v of bad) {
      assert.equal(validateAgainstSchema(schema, { spec: { v } }).length, 1, `${format} ${v}`);
    }
  }
});

Deno.test("`validateAgainstSchema()` accepts formats kube-apiserver does not check", () => {
  const schema = specOf({
    i: { type: "integer", format: "int32" },
    j: { type: "integer", format: "int64" },
    p: { type: "string", format: "password" },
    u: { type: "string", format: "no-such-format" },
  });
  assert.deepEqual(
    validateAgainstSchema(schema, { spec: { i: 2 ** 40, j: 1, p: "x", u: "y" } }),
    [],
  );
});

// ---------------------------------------------------------------------------
// validateAgainstSchema(): allOf, anyOf, oneOf, not
// ---------------------------------------------------------------------------

Deno.test("`validateAgainstSchema()` requires all of allOf", () => {
  const schema = specOf({ s: { type: "string", allOf: [{ minLength: 2 }, { maxLength: 3 }] } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { s: "abc" } }), []);
  assert.deepEqual(messages(schema, { spec: { s: "abcd" } }), [
    "spec.s: Too long: may not be longer than 3",
    'spec.s: Invalid value: "": spec.s in body must validate all the schemas (allOf)',
  ]);
});

Deno.test("`validateAgainstSchema()` requires one of anyOf and explains the closest miss", () => {
  const schema = specOf({}, { anyOf: [{ required: ["a"] }, { required: ["b"] }] });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { b: 1 } }), []);
  assert.deepEqual(messages(schema, { spec: {} }), [
    'spec: Invalid value: "": spec in body must validate at least one schema (anyOf)',
    "spec.a: Required value",
  ]);
});

Deno.test("`validateAgainstSchema()` requires exactly one of oneOf", () => {
  const schema = specOf({}, { oneOf: [{ required: ["a"] }, { required: ["b"] }] });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { a: 1 } }), []);
  assert.deepEqual(messages(schema, { spec: { a: 1, b: 2 } }), [
    'spec: Invalid value: "": spec in body must validate one and only one schema (oneOf)',
  ]);
  assert.deepEqual(messages(schema, { spec: {} }), [
    'spec: Invalid value: "": spec in body must validate one and only one schema (oneOf)',
    "spec.a: Required value",
  ]);
});

Deno.test("`validateAgainstSchema()` rejects what matches not", () => {
  const schema = specOf({}, { not: { required: ["forbidden"] } });
  assert.deepEqual(validateAgainstSchema(schema, { spec: { ok: 1 } }), []);
  assert.deepEqual(messages(schema, { spec: { forbidden: 1 } }), [
    `spec: Invalid value: "": spec in body shouldn't validate the schema (not)`,
  ]);
});

// ---------------------------------------------------------------------------
// applyDefaults()
// ---------------------------------------------------------------------------

Deno.test("`applyDefaults()` fills in an absent property", () => {
  const schema = specOf({ replicas: { type: "integer", default: 1 }, name: { type: "string" } });
  assert.deepEqual(applyDefaults(schema, { spec: { name: "x" } }), {
    spec: { name: "x", replicas: 1 },
  });
});

Deno.test("`applyDefaults()` keeps a present value, even a falsy one", () => {
  const schema = specOf({
    n: { type: "integer", default: 1 },
    s: { type: "string", default: "d" },
    b: { type: "boolean", default: true },
  });
  const obj = { spec: { n: 0, s: "", b: false } };
  assert.equal(applyDefaults(schema, obj), obj);
});

Deno.test("`applyDefaults()` returns the input itself when nothing is defaulted", () => {
  const schema = specOf({
    a: { type: "integer", default: 1 },
    xs: { type: "array", items: { type: "object", properties: { b: { default: 2 } } } },
  });
  const obj = { spec: { a: 5, xs: [{ b: 3 }, { b: 4 }] } };
  assert.equal(applyDefaults(schema, obj), obj);
  const noSchemaObj = { spec: { a: 5 } };
  assert.equal(applyDefaults({ type: "object" }, noSchemaObj), noSchemaObj);
});

Deno.test("`applyDefaults()` does not mutate the input and shares unchanged subtrees", () => {
  const schema = specOf({ a: { default: 1 }, other: { type: "object" } });
  const other = { deep: [1, 2] };
  const status = { phase: "Ready" };
  const obj = { spec: { other }, status };
  const snapshot = structuredClone(obj);
  const out = applyDefaults(schema, obj) as { spec: { other: unknown }; status: unknown };
  assert.deepEqual(obj, snapshot);
  assert.deepEqual(out, { spec: { other, a: 1 }, status });
  assert.equal(out.spec.other, other);
  assert.equal(out.status, status);
});

Deno.test("`applyDefaults()` defaults inside a defaulted object", () => {
  const root: JsonSchema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        default: {},
        properties: {
          replicas: { type: "integer", default: 1 },
          strategy: {
            type: "object",
            default: { type: "Rolling" },
            properties: { type: { type: "string" }, surge: { type: "integer", default: 25 } },
          },
        },
      },
    },
  };
  assert.deepEqual(applyDefaults(root, {}), {
    spec: { replicas: 1, strategy: { type: "Rolling", surge: 25 } },
  });
});

Deno.test("`applyDefaults()` defaults inside array items", () => {
  const schema = specOf({
    ports: {
      type: "array",
      items: {
        type: "object",
        properties: { port: { type: "integer" }, protocol: { type: "string", default: "TCP" } },
      },
    },
  });
  const ports = [{ port: 80 }, { port: 53, protocol: "UDP" }];
  const out = applyDefaults(schema, { spec: { ports } }) as { spec: { ports: unknown[] } };
  assert.deepEqual(out, {
    spec: { ports: [{ port: 80, protocol: "TCP" }, { port: 53, protocol: "UDP" }] },
  });
  assert.equal(out.spec.ports[1], ports[1]);
  assert.deepEqual(ports[0], { port: 80 });
});

Deno.test("`applyDefaults()` defaults inside additionalProperties values", () => {
  const schema = specOf({
    limits: {
      type: "object",
      additionalProperties: { type: "object", properties: { max: { default: 10 } } },
    },
  });
  assert.deepEqual(applyDefaults(schema, { spec: { limits: { cpu: {}, mem: { max: 2 } } } }), {
    spec: { limits: { cpu: { max: 10 }, mem: { max: 2 } } },
  });
});

Deno.test("`applyDefaults()` replaces a non-nullable null with the default", () => {
  const schema = specOf({ a: { type: "integer", default: 1 } });
  assert.deepEqual(applyDefaults(schema, { spec: { a: null } }), { spec: { a: 1 } });
});

Deno.test("`applyDefaults()` removes a non-nullable null without a default", () => {
  const schema = specOf({ a: { type: "integer" }, b: { type: "integer" } });
  const obj = { spec: { a: null, b: 2 } };
  assert.deepEqual(applyDefaults(schema, obj), { spec: { b: 2 } });
  assert.deepEqual(obj, { spec: { a: null, b: 2 } });
});

Deno.test("`applyDefaults()` keeps a nullable null and does not default it", () => {
  const schema = specOf({ a: { type: "integer", nullable: true, default: 1 } });
  const obj = { spec: { a: null } };
  assert.equal(applyDefaults(schema, obj), obj);
});

Deno.test("`applyDefaults()` replaces null array items with the items default", () => {
  const schema = specOf({ xs: { type: "array", items: { type: "string", default: "x" } } });
  assert.deepEqual(applyDefaults(schema, { spec: { xs: ["a", null] } }), {
    spec: { xs: ["a", "x"] },
  });
  const noDefault = specOf({ xs: { type: "array", items: { type: "string" } } });
  const obj = { spec: { xs: [null] } };
  assert.equal(applyDefaults(noDefault, obj), obj);
});

Deno.test("`applyDefaults()` copies default values instead of sharing them with the schema", () => {
  const schema = specOf({ tags: { type: "array", default: ["a"] } });
  const first = applyDefaults(schema, { spec: {} }) as { spec: { tags: string[] } };
  first.spec.tags.push("b");
  assert.deepEqual(applyDefaults(schema, { spec: {} }), { spec: { tags: ["a"] } });
});

Deno.test("`applyDefaults()` leaves scalars and undeclared values alone", () => {
  const schema = specOf({ a: { default: 1 } });
  assert.equal(applyDefaults(schema, "x"), "x");
  assert.equal(applyDefaults(schema, null), null);
  const obj = { spec: "not-an-object" };
  assert.equal(applyDefaults(schema, obj), obj);
});

// ---------------------------------------------------------------------------
// pruneUnknownFields()
// ---------------------------------------------------------------------------

Deno.test("`pruneUnknownFields()` removes undeclared fields and lists their paths", () => {
  const schema = specOf({ size: { type: "integer" } });
  const obj = { spec: { size: 1, x: 2, y: { z: 3 } }, status: { ok: true } };
  const { value, pruned } = pruneUnknownFields(schema, obj);
  assert.deepEqual(value, { spec: { size: 1 } });
  assert.deepEqual(pruned, ["spec.x", "spec.y", "status"]);
  assert.deepEqual(obj, { spec: { size: 1, x: 2, y: { z: 3 } }, status: { ok: true } });
});

Deno.test("`pruneUnknownFields()` returns the input itself when nothing is pruned", () => {
  const schema = specOf({ xs: { type: "array", items: { type: "object", properties: {} } } });
  const obj = { apiVersion: "v1", kind: "K", metadata: { name: "a", x: 1 }, spec: { xs: [{}] } };
  const { value, pruned } = pruneUnknownFields(schema, obj);
  assert.equal(value, obj);
  assert.deepEqual(pruned, []);
});

Deno.test("`pruneUnknownFields()` never prunes root apiVersion, kind and metadata", () => {
  const { value, pruned } = pruneUnknownFields({ type: "object" }, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex", anything: 1 },
    spec: {},
  });
  assert.deepEqual(value, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex", anything: 1 },
  });
  assert.deepEqual(pruned, ["spec"]);
});

Deno.test("`pruneUnknownFields()` prunes root meta fields of a wrong type, as kube-apiserver does", () => {
  const { pruned } = pruneUnknownFields({ type: "object" }, { kind: 1, metadata: "x" });
  assert.deepEqual(pruned, ["kind", "metadata"]);
});

Deno.test("`pruneUnknownFields()` keeps everything under root preserve-unknown-fields", () => {
  const schema: JsonSchema = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  const obj = { spec: { a: { b: [1, { c: 2 }] } }, status: {} };
  const { value, pruned } = pruneUnknownFields(schema, obj);
  assert.equal(value, obj);
  assert.deepEqual(pruned, []);
});

Deno.test("`pruneUnknownFields()` keeps unknowns under nested preserve-unknown-fields only", () => {
  const schema = specOf({
    free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    strict: { type: "object", properties: { a: { type: "integer" } } },
  });
  const obj = { spec: { free: { any: { deep: 1 } }, strict: { a: 1, b: 2 } } };
  const { value, pruned } = pruneUnknownFields(schema, obj);
  assert.deepEqual(value, { spec: { free: { any: { deep: 1 } }, strict: { a: 1 } } });
  assert.deepEqual(pruned, ["spec.strict.b"]);
});

Deno.test("`pruneUnknownFields()` still prunes declared properties under preserve-unknown-fields", () => {
  const schema: JsonSchema = {
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
    properties: { spec: { type: "object", properties: { a: { type: "integer" } } } },
  };
  const { value, pruned } = pruneUnknownFields(schema, { spec: { a: 1, b: 2 }, other: { c: 3 } });
  assert.deepEqual(value, { spec: { a: 1 }, other: { c: 3 } });
  assert.deepEqual(pruned, ["spec.b"]);
});

Deno.test("`pruneUnknownFields()` prunes inside array items with [i] paths", () => {
  const schema = specOf({
    ports: { type: "array", items: { type: "object", properties: { port: { type: "integer" } } } },
  });
  const ports = [{ port: 80 }, { port: 81, name: "x" }];
  const { value, pruned } = pruneUnknownFields(schema, { spec: { ports } });
  assert.deepEqual(value, { spec: { ports: [{ port: 80 }, { port: 81 }] } });
  assert.deepEqual(pruned, ["spec.ports[1].name"]);
  assert.equal((value as { spec: { ports: unknown[] } }).spec.ports[0], ports[0]);
  assert.deepEqual(ports[1], { port: 81, name: "x" });
});

Deno.test("`pruneUnknownFields()` empties objects in arrays without an items schema", () => {
  const schema = specOf({ xs: { type: "array" } });
  const { value, pruned } = pruneUnknownFields(schema, { spec: { xs: [1, { a: 1 }] } });
  assert.deepEqual(value, { spec: { xs: [1, {}] } });
  assert.deepEqual(pruned, ["spec.xs[1].a"]);
});

Deno.test("`pruneUnknownFields()` keeps additionalProperties keys and prunes inside them", () => {
  const schema = specOf({
    limits: {
      type: "object",
      additionalProperties: { type: "object", properties: { max: { type: "integer" } } },
    },
    labels: { type: "object", additionalProperties: true },
  });
  const obj = {
    spec: { limits: { cpu: { max: 1, junk: 2 } }, labels: { a: { nested: 1 } } },
  };
  const { value, pruned } = pruneUnknownFields(schema, obj);
  assert.deepEqual(value, {
    spec: { limits: { cpu: { max: 1 } }, labels: { a: { nested: 1 } } },
  });
  assert.deepEqual(pruned, ["spec.limits.cpu.junk"]);
});

Deno.test("`pruneUnknownFields()` keeps meta fields of embedded resources", () => {
  const schema = specOf({
    template: {
      type: "object",
      "x-kubernetes-embedded-resource": true,
      properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    },
  });
  const obj = {
    spec: {
      template: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: { containers: [] },
        extra: 1,
      },
    },
  };
  const { value, pruned } = pruneUnknownFields(schema, obj);
  assert.deepEqual(pruned, ["spec.template.extra"]);
  assert.deepEqual(value, {
    spec: {
      template: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: { containers: [] },
      },
    },
  });
});

Deno.test("`pruneUnknownFields()` keeps key order and copies only the changed path", () => {
  const schema = specOf({ a: {}, c: {}, d: { type: "object" } });
  const d = {};
  const obj = { spec: { a: 1, b: 2, c: 3, d } };
  const { value } = pruneUnknownFields(schema, obj);
  const spec = (value as { spec: Record<string, unknown> }).spec;
  assert.deepEqual(Object.keys(spec), ["a", "c", "d"]);
  assert.equal(spec.d, d);
});

Deno.test("`pruneUnknownFields()` handles keys named __proto__ as plain keys", () => {
  const schema = specOf({ a: {} }, { "x-kubernetes-preserve-unknown-fields": true });
  const spec = JSON.parse('{"b": 1, "__proto__": {"x": 1}, "a": {"y": 2}}');
  const { value, pruned } = pruneUnknownFields(schema, { spec });
  const out = (value as { spec: Record<string, unknown> }).spec;
  assert.deepEqual(pruned, ["spec.a.y"]);
  assert.deepEqual(Object.keys(out), ["b", "__proto__", "a"]);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { x: 1 });
});

Deno.test("prune, default, validate: the apiserver's order works end to end", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        required: ["size"],
        properties: {
          size: { type: "integer", minimum: 1, default: 1 },
          mode: { type: "string", enum: ["fast", "slow"], default: "slow" },
        },
      },
    },
  };
  const { value, pruned } = pruneUnknownFields(schema, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex" },
    spec: { typo: 1 },
  });
  const defaulted = applyDefaults(schema, value);
  assert.deepEqual(pruned, ["spec.typo"]);
  assert.deepEqual(defaulted, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex" },
    spec: { size: 1, mode: "slow" },
  });
  assert.deepEqual(validateAgainstSchema(schema, defaulted), []);
});
