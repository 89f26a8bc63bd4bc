import assert from "node:assert/strict";
import {
  validateAnnotations,
  validateFinalizers,
  validateLabels,
  validateName,
} from "../../src/apiserver/schemas/metadata_validation.ts";

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for " +
  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and " +
  "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used " +
  "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " +
  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " +
  "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or " +
  "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const NAME = { field: "metadata.name" };
const NAMESPACE = { field: "metadata.name", dns1123Label: true };

function messages(causes: { field: string; message: string }[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

// ---------------------------------------------------------------------------
// validateName()
// ---------------------------------------------------------------------------

Deno.test("`validateName()` accepts DNS-1123 subdomains", () => {
  for (const name of ["a", "kex", "kex-1", "1kex", "a.b.c", "my-app.example.com"]) {
    assert.deepEqual(validateName(name, NAME), [], name);
  }
});

Deno.test("`validateName()` rejects uppercase with kube-apiserver's exact message", () => {
  assert.deepEqual(validateName("Foo", NAME), [{
    reason: "FieldValueInvalid",
    field: "metadata.name",
    message: `Invalid value: "Foo": ${SUBDOMAIN_MSG}`,
  }]);
});

Deno.test("`validateName()` rejects bad characters and edges", () => {
  for (const name of ["-a", "a-", ".a", "a.", "a..b", "a_b", "a b", "ä", "a/b"]) {
    assert.equal(validateName(name, NAME).length, 1, name);
  }
});

Deno.test("`validateName()` allows 253 characters and rejects 254", () => {
  const label = "a".repeat(63);
  const name253 = [label, label, label, "a".repeat(61)].join(".");
  assert.equal(name253.length, 253);
  assert.deepEqual(validateName(name253, NAME), []);
  const name254 = `${name253}b`;
  assert.deepEqual(messages(validateName(name254, NAME)), [
    `metadata.name: Invalid value: "${name254}": must be no more than 253 characters`,
  ]);
});

Deno.test("`validateName()` reports both the length and the characters when both are wrong", () => {
  const name = "A".repeat(254);
  assert.deepEqual(validateName(name, NAME).map((c) => c.message), [
    `Invalid value: "${name}": must be no more than 253 characters`,
    `Invalid value: "${name}": ${SUBDOMAIN_MSG}`,
  ]);
});

Deno.test("`validateName()` requires a name", () => {
  const expected = [{
    reason: "FieldValueRequired",
    field: "metadata.name",
    message: "Required value: name or generateName is required",
  }];
  assert.deepEqual(validateName("", NAME), expected);
  assert.deepEqual(validateName(undefined, NAME), expected);
});

Deno.test("`validateName()` reports a non-string name as a type error", () => {
  assert.deepEqual(validateName(5, NAME), [{
    reason: "FieldValueTypeInvalid",
    field: "metadata.name",
    message: 'Invalid value: "integer": metadata.name must be of type string: "integer"',
  }]);
});

Deno.test("`validateName()` with dns1123Label allows 63 characters and rejects 64", () => {
  assert.deepEqual(validateName("a".repeat(63), NAMESPACE), []);
  assert.deepEqual(validateName("a".repeat(64), NAMESPACE).map((c) => c.message), [
    `Invalid value: "${"a".repeat(64)}": must be no more than 63 characters`,
  ]);
});

Deno.test("`validateName()` with dns1123Label rejects dots and bad characters", () => {
  assert.deepEqual(messages(validateName("a.b", NAMESPACE)), [
    'metadata.name: Invalid value: "a.b": must not contain dots',
  ]);
  assert.deepEqual(messages(validateName("Kube_System", NAMESPACE)), [
    `metadata.name: Invalid value: "Kube_System": ${LABEL_MSG}`,
  ]);
});

Deno.test("`validateName()` with prefix allows a trailing dash and an empty value", () => {
  const GENERATE = { field: "metadata.generateName", prefix: true };
  assert.deepEqual(validateName("kex-", GENERATE), []);
  assert.deepEqual(validateName("", GENERATE), []);
  assert.deepEqual(messages(validateName("Kex-", GENERATE)), [
    `metadata.generateName: Invalid value: "Kex-": ${SUBDOMAIN_MSG}`,
  ]);
  assert.equal(validateName("kex-", NAME).length, 1);
});

// ---------------------------------------------------------------------------
// validateLabels()
// ---------------------------------------------------------------------------

Deno.test("`validateLabels()` accepts valid keys and values", () => {
  const labels = {
    app: "demo",
    "kopf.dev/handled": "true",
    "app.kubernetes.io/name": "My_Value-1.2",
    "Upper.Case_OK": "",
    "a": "1",
  };
  assert.deepEqual(validateLabels(labels), []);
  assert.deepEqual(validateLabels(undefined), []);
  assert.deepEqual(validateLabels(null), []);
  assert.deepEqual(validateLabels({}), []);
});

Deno.test("`validateLabels()` allows a 63-character name part and rejects 64", () => {
  assert.deepEqual(validateLabels({ ["k".repeat(63)]: "v" }), []);
  assert.deepEqual(messages(validateLabels({ ["k".repeat(64)]: "v" })), [
    `metadata.labels: Invalid value: "${
      "k".repeat(64)
    }": name part must be no more than 63 characters`,
  ]);
});

Deno.test("`validateLabels()` allows a 63-character value and rejects 64", () => {
  assert.deepEqual(validateLabels({ k: "v".repeat(63) }), []);
  assert.deepEqual(validateLabels({ k: "v".repeat(64) }), [{
    reason: "FieldValueInvalid",
    field: "metadata.labels",
    message: `Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`,
  }]);
});

Deno.test("`validateLabels()` rejects values with bad characters or edges", () => {
  for (const value of ["-a", "a-", "_a", "a.", "a b", "a/b", "ä"]) {
    assert.deepEqual(messages(validateLabels({ k: value })), [
      `metadata.labels: Invalid value: ${JSON.stringify(value)}: ${VALUE_MSG}`,
    ]);
  }
});

Deno.test("`validateLabels()` rejects name parts with bad characters or edges", () => {
  for (const key of ["-a", "a-", "a b", "ä", "a:b"]) {
    assert.deepEqual(messages(validateLabels({ [key]: "v" })), [
      `metadata.labels: Invalid value: ${JSON.stringify(key)}: name part ${QNAME_MSG}`,
    ]);
  }
});

Deno.test("`validateLabels()` checks the prefix as a DNS-1123 subdomain", () => {
  assert.deepEqual(messages(validateLabels({ "Kopf.dev/x": "v" })), [
    `metadata.labels: Invalid value: "Kopf.dev/x": prefix part ${SUBDOMAIN_MSG}`,
  ]);
  assert.deepEqual(messages(validateLabels({ "/x": "v" })), [
    'metadata.labels: Invalid value: "/x": prefix part must be non-empty',
  ]);
  const prefix = [..."abcd"].map((c) => c.repeat(63)).join(".").slice(0, 253);
  assert.equal(prefix.length, 253);
  assert.deepEqual(validateLabels({ [`${prefix}/x`]: "v" }), []);
  assert.deepEqual(messages(validateLabels({ [`${prefix}e/x`]: "v" })), [
    `metadata.labels: Invalid value: "${prefix}e/x": prefix part must be no more than 253 characters`,
  ]);
});

Deno.test("`validateLabels()` rejects an empty name part and more than one slash", () => {
  assert.deepEqual(messages(validateLabels({ "kopf.dev/": "v" })), [
    'metadata.labels: Invalid value: "kopf.dev/": name part must be non-empty',
    `metadata.labels: Invalid value: "kopf.dev/": name part ${QNAME_MSG}`,
  ]);
  assert.deepEqual(messages(validateLabels({ "a/b/c": "v" })), [
    `metadata.labels: Invalid value: "a/b/c": a qualified name ${QNAME_MSG} ` +
    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  ]);
  assert.equal(validateLabels({ "": "v" }).length, 2);
});

Deno.test("`validateLabels()` reports non-string values and a non-object", () => {
  assert.deepEqual(validateLabels({ a: 1, b: true, c: null }), [
    {
      reason: "FieldValueTypeInvalid",
      field: "metadata.labels[a]",
      message: 'Invalid value: "integer": metadata.labels[a] must be of type string: "integer"',
    },
    {
      reason: "FieldValueTypeInvalid",
      field: "metadata.labels[b]",
      message: 'Invalid value: "boolean": metadata.labels[b] must be of type string: "boolean"',
    },
    {
      reason: "FieldValueTypeInvalid",
      field: "metadata.labels[c]",
      message: 'Invalid value: "null": metadata.labels[c] must be of type string: "null"',
    },
  ]);
  assert.deepEqual(messages(validateLabels(["a"])), [
    'metadata.labels: Invalid value: "array": metadata.labels must be of type object: "array"',
  ]);
});

Deno.test("`validateLabels()` reports on the given field", () => {
  const causes = validateLabels({ k: "-" }, "spec.template.metadata.labels");
  assert.equal(causes[0]?.field, "spec.template.metadata.labels");
});

// ---------------------------------------------------------------------------
// validateAnnotations()
// ---------------------------------------------------------------------------

Deno.test("`validateAnnotations()` accepts any string values and mixed-case keys", () => {
  const annotations = {
    "kopf.zalando.org/last-handled-configuration": '{"spec": {"size": 1}}\n',
    "Example.COM/Some_Key": "with spaces, slashes / and unicode ✓",
    note: "",
  };
  assert.deepEqual(validateAnnotations(annotations), []);
  assert.deepEqual(validateAnnotations(undefined), []);
});

Deno.test("`validateAnnotations()` reports bad keys with the original spelling", () => {
  assert.deepEqual(messages(validateAnnotations({ "Bad Key": "v", "a/b/c": "v" })), [
    `metadata.annotations: Invalid value: "Bad Key": name part ${QNAME_MSG}`,
    `metadata.annotations: Invalid value: "a/b/c": a qualified name ${QNAME_MSG} ` +
    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  ]);
  assert.deepEqual(messages(validateAnnotations({ "-x.com/a": "v" })), [
    `metadata.annotations: Invalid value: "-x.com/a": prefix part ${SUBDOMAIN_MSG}`,
  ]);
});

Deno.test("`validateAnnotations()` allows exactly 262144 bytes of keys and values", () => {
  const key = "note";
  const annotations = { [key]: "x".repeat(262144 - key.length) };
  assert.deepEqual(validateAnnotations(annotations), []);
});

Deno.test("`validateAnnotations()` rejects 262145 bytes", () => {
  const annotations = { a: "x".repeat(131072), b: "y".repeat(131071) };
  assert.deepEqual(validateAnnotations(annotations), [{
    reason: "FieldValueTooLong",
    field: "metadata.annotations",
    message: "Too long: must have at most 262144 bytes",
  }]);
});

Deno.test("`validateAnnotations()` counts the size in UTF-8 bytes", () => {
  // "é" is 2 bytes (1 UTF-16 unit); the key "k" adds 1: 262143 bytes pass, 262145 do not.
  assert.equal(validateAnnotations({ k: "é".repeat(131071) }).length, 0);
  assert.equal(validateAnnotations({ k: "é".repeat(131072) }).length, 1);
  // "😀" is 4 bytes (2 UTF-16 units): 262141 bytes pass, 262145 do not.
  assert.equal(validateAnnotations({ k: "😀".repeat(65535) }).length, 0);
  assert.equal(validateAnnotations({ k: "😀".repeat(65536) }).length, 1);
});

Deno.test("`validateAnnotations()` reports non-string values", () => {
  assert.deepEqual(messages(validateAnnotations({ a: { nested: 1 } })), [
    'metadata.annotations[a]: Invalid value: "object": ' +
    'metadata.annotations[a] must be of type string: "object"',
  ]);
});

// ---------------------------------------------------------------------------
// validateFinalizers()
// ---------------------------------------------------------------------------

Deno.test("`validateFinalizers()` accepts prefixed and standard unprefixed finalizers", () => {
  const finalizers = [
    "kopf.zalando.org/KopfFinalizerMarker",
    "kubernetes",
    "orphan",
    "kubernetes.io/pv-protection",
  ];
  assert.deepEqual(validateFinalizers(finalizers), []);
  assert.deepEqual(validateFinalizers(["foregroundDeletion"]), []);
  assert.deepEqual(validateFinalizers([]), []);
  assert.deepEqual(validateFinalizers(undefined), []);
});

Deno.test("`validateFinalizers()` rejects finalizers that are not qualified names", () => {
  assert.deepEqual(messages(validateFinalizers(["ok", "Bad.Prefix/x", "x/"])), [
    `metadata.finalizers: Invalid value: "Bad.Prefix/x": prefix part ${SUBDOMAIN_MSG}`,
    'metadata.finalizers: Invalid value: "x/": name part must be non-empty',
    `metadata.finalizers: Invalid value: "x/": name part ${QNAME_MSG}`,
  ]);
});

Deno.test("`validateFinalizers()` refuses orphan together with foregroundDeletion", () => {
  assert.deepEqual(validateFinalizers(["orphan", "foregroundDeletion"]), [{
    reason: "FieldValueInvalid",
    field: "metadata.finalizers",
    message: 'Invalid value: []string{"orphan", "foregroundDeletion"}: ' +
      "finalizer orphan and foregroundDeletion cannot be both set",
  }]);
});

Deno.test("`validateFinalizers()` reports a non-array and non-string items", () => {
  assert.deepEqual(messages(validateFinalizers("kopf")), [
    'metadata.finalizers: Invalid value: "string": metadata.finalizers must be of type array: "string"',
  ]);
  assert.deepEqual(messages(validateFinalizers(["a", 1])), [
    'metadata.finalizers[1]: Invalid value: "integer": ' +
    'metadata.finalizers[1] must be of type string: "integer"',
  ]);
});
