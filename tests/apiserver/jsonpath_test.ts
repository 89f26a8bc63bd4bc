/**
 * Kubernetes' JSONPath as kube-apiserver evaluates CRD printer columns:
 * one row per expression, the expected results read from client-go's
 * `util/jsonpath` (parser.go, jsonpath.go) and its forked template
 * comparisons.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  findResults,
  JsonPathError,
  parseJsonPath,
  printResult,
} from "../../src/apiserver/wire/jsonpath.ts";

const OBJ = {
  metadata: {
    name: "w",
    annotations: { "example.com/owner": "me" },
    labels: { app: "a", tier: "b" },
  },
  spec: { replicas: 3, ratio: 0.5, items: ["a", "b", "c", "d", "e"], on: true },
  status: {
    conditions: [
      { type: "Synced", status: "False", reason: "Pending" },
      { type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", weight: 2.5 },
    ],
  },
};

/** [path (without braces), the first node's results, or "error"]. */
const CASES: Array<[string, unknown[] | "error"]> = [
  [".metadata.name", ["w"]],
  [".metadata.missing", []],
  [".metadata.name.deeper", []],
  ['.status.conditions[?(@.type=="Ready")].status', ["True"]],
  [".status.conditions[?(@.type=='Ready')].status", ["True"]],
  ['.status.conditions[?(@.type == "Ready")].status', ["True"]],
  ['.status.conditions[?(@.type!="Ready")].type', ["Synced"]],
  [".status.conditions[?(@.reason)].type", ["Synced"]],
  [".status.conditions[?(@.weight>2)].type", ["Ready"]], // 2.5 and the literal 2 are both float64
  [".status.conditions[?(@.weight>2.0)].type", ["Ready"]],
  [".status.conditions[?(@.weight<3.5)].type", ["Ready"]],
  ['.spec.items[?(@=="b")]', ["b"]],
  ['.status.conditions[?(@.type=="Nope")].status', []],
  [".status.conditions[*].type", ["Synced", "Ready"]],
  [".status.conditions.*.type", ["Synced", "Ready"]],
  [".status.conditions[0].type", ["Synced"]],
  [".status.conditions[-1].type", ["Ready"]],
  [".spec.items[1:3]", ["b", "c"]],
  [".spec.items[:2]", ["a", "b"]],
  [".spec.items[-2:]", ["d", "e"]],
  [".spec.items[::2]", ["a", "c", "e"]],
  [".spec.items[0,2]", ["a", "c"]],
  [".spec.items[9]", "error"],
  [".spec.items[2:1]", "error"],
  [".spec.items[::0]", "error"],
  [".metadata.labels.*", ["a", "b"]],
  [".metadata.annotations.example\\.com/owner", ["me"]],
  [".metadata.annotations['example.com/owner']", []], // kube splits the key at the dot
  ["..type", ["Synced", "Ready"]],
  [".spec.on", [true]],
  ['.spec.items["b"]', "error"],
  [".spec.items[", "error"],
  [".status.conditions[?(@.type=='Ready'", "error"],
  [".spec....items", "error"],
  [".spec.replicas{", "error"],
  ["{range .spec.items[*]}", "error"],
];

for (const [path, expected] of CASES) {
  Deno.test(`jsonpath {${path}}`, () => {
    if (expected === "error") {
      assert.throws(() => findResults(parseJsonPath(`{${path}}`), OBJ));
      return;
    }
    assert.deepEqual(findResults(parseJsonPath(`{${path}}`), OBJ)[0], expected);
  });
}

Deno.test("jsonpath: integral object numbers do not compare with literals (Go int64 vs float64)", () => {
  const path = (f: string) => parseJsonPath(`{.list[?(${f})].n}`);
  const data = { list: [{ n: 3 }, { n: 4.5 }] };
  assert.deepEqual(findResults(path("@.n==3"), data)[0], []);
  assert.deepEqual(findResults(path("@.n!=3"), data)[0], [3, 4.5]);
  assert.deepEqual(findResults(path("@.n>4"), data)[0], [4.5]);
  assert.deepEqual(findResults(path("@.n>=4.5"), data)[0], [4.5]);
  assert.deepEqual(findResults(path("@.n<=4.5"), data)[0], [4.5]);
  assert.deepEqual(findResults(path('@.n=="3"'), data)[0], []);
});

Deno.test("jsonpath: a filter over several values per item is an error", () => {
  const data = { list: [{ a: [1, 2] }] };
  assert.throws(() => findResults(parseJsonPath("{.list[?(@.a[*]==1)]}"), data));
});

Deno.test("jsonpath: a parse error is a JsonPathError", () => {
  assert.throws(() => parseJsonPath("{.a[}"), JsonPathError);
  assert.throws(() => parseJsonPath("{.a"), JsonPathError);
});

Deno.test("jsonpath: printed as client-go prints a result", () => {
  assert.equal(printResult("x"), "x");
  assert.equal(printResult(3), "3");
  assert.equal(printResult(true), "true");
  assert.equal(printResult(0.5), "0.5");
  assert.equal(printResult(1234567.5), "1.2345675e+06");
  assert.equal(printResult(0.00001), "1e-05");
  assert.equal(printResult(null), "<no value>");
  assert.equal(printResult({ b: [1, 2], a: "<&>" }), '{"a":"\\u003c\\u0026\\u003e","b":[1,2]}');
});
