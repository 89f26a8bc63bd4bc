/**
 * Query parameters read as kube-apiserver reads them, one row per parameter and value, over
 * real HTTP: booleans (anything but `0`/`false` in any case is true, the empty string too),
 * integers (Go's `strconv.ParseInt`, 400 in its words), `fieldValidation`, `dryRun`,
 * `fieldManager`, `force`, `propagationPolicy` (422 on the options kind, as
 * `Validate*Options` words it), `DeleteOptions` from the body or else from the query, and
 * `pretty`.
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";

const CM = "/api/v1/namespaces/default/configmaps";

interface Row {
  /** What the row shows. */
  name: string;
  method: string;
  /** Path and query; `{n}` is replaced by a fresh object name. */
  path: string;
  body?: unknown;
  contentType?: string;
  userAgent?: string;
  status: number;
  /** The Status message (exact) of a refusal. */
  message?: string;
  /** A check of the answer's text. */
  check?: (text: string) => void;
}

/** A watch answer (a stream of events), not a List. */
const isWatch = (text: string) => {
  const first = JSON.parse(text.split("\n")[0]!);
  assert.equal(first.type, "ADDED", text.slice(0, 200));
};
const isList = (text: string) => assert.equal(JSON.parse(text).kind, "ConfigMapList");
const isTrue = (watch: string): Row => ({
  name: `watch=${watch} is a watch`,
  method: "GET",
  path: `${CM}?watch=${watch}&timeoutSeconds=1`,
  status: 200,
  check: isWatch,
});
const isFalse = (watch: string): Row => ({
  name: `watch=${watch} is a list`,
  method: "GET",
  path: `${CM}?watch=${watch}`,
  status: 200,
  check: isList,
});
const invalid = (kind: string, cause: string) => `${kind}.meta.k8s.io "" is invalid: ${cause}`;
const FIELD_VALIDATION =
  `Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`;
const apply = (manager: string | undefined, force: string | undefined, value: string) => ({
  path: `${CM}/applied?${manager ? `fieldManager=${manager}` : ""}${
    force !== undefined ? `&force=${force}` : ""
  }`,
  body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "applied" }, data: { a: value } },
  contentType: "application/apply-patch+yaml",
});

const ROWS: Row[] = [
  // Booleans (`watch`, `sendInitialEvents`, `force`, `orphanDependents`): the Python client's "True".
  isTrue("true"),
  isTrue("True"),
  isTrue("1"),
  isTrue(""),
  isTrue("yes"),
  isFalse("false"),
  isFalse("FALSE"),
  isFalse("0"),
  {
    name: "sendInitialEvents=yes is true (forbidden for a list)",
    method: "GET",
    path: `${CM}?sendInitialEvents=yes`,
    status: 422,
    message: invalid(
      "ListOptions",
      "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
    ),
  },
  // Integers.
  {
    name: "timeoutSeconds=abc",
    method: "GET",
    path: `${CM}?timeoutSeconds=abc`,
    status: 400,
    message: `strconv.ParseInt: parsing "abc": invalid syntax`,
  },
  {
    name: "timeoutSeconds out of int64",
    method: "GET",
    path: `${CM}?watch=1&timeoutSeconds=9223372036854775808`,
    status: 400,
    message: `strconv.ParseInt: parsing "9223372036854775808": value out of range`,
  },
  {
    name: "timeoutSeconds=-1 ends a watch at once",
    method: "GET",
    path: `${CM}?watch=1&timeoutSeconds=-1`,
    status: 200,
    check: isWatch,
  },
  {
    name: "limit= (empty) does not parse",
    method: "GET",
    path: `${CM}?limit=`,
    status: 400,
    message: `strconv.ParseInt: parsing "": invalid syntax`,
  },
  {
    name: "limit=+1 is 1",
    method: "GET",
    path: `${CM}?limit=%2B1`,
    status: 200,
    check: (text) => assert.equal(JSON.parse(text).items.length, 1),
  },
  {
    name: "limit=1.0 does not parse",
    method: "GET",
    path: `${CM}?limit=1.0`,
    status: 400,
    message: `strconv.ParseInt: parsing "1.0": invalid syntax`,
  },
  // Writes: fieldValidation, dryRun, fieldManager, force.
  {
    name: "create fieldValidation=Bogus",
    method: "POST",
    path: `${CM}?fieldValidation=Bogus`,
    body: { metadata: { name: "{n}" } },
    status: 422,
    message: invalid("CreateOptions", `fieldValidation: ${FIELD_VALIDATION}`),
  },
  {
    name: "create dryRun=Nope",
    method: "POST",
    path: `${CM}?dryRun=Nope`,
    body: { metadata: { name: "{n}" } },
    status: 422,
    message: invalid(
      "CreateOptions",
      `dryRun: Unsupported value: []string{"Nope"}: supported values: "All"`,
    ),
  },
  {
    name: "create fieldValidation= (empty) is the default",
    method: "POST",
    path: `${CM}?fieldValidation=`,
    body: { metadata: { name: "{n}" } },
    status: 201,
  },
  {
    name: "update fieldManager of 129 bytes",
    method: "PUT",
    path: `${CM}/one?fieldManager=${"m".repeat(129)}`,
    body: { metadata: { name: "one" } },
    status: 422,
    message: invalid("UpdateOptions", "fieldManager: Too long: may not be more than 128 bytes"),
  },
  {
    name: "update fieldManager with a tab",
    method: "PUT",
    path: `${CM}/one?fieldManager=a%09b`,
    body: { metadata: { name: "one" } },
    status: 422,
    message: invalid(
      "UpdateOptions",
      `fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)`,
    ),
  },
  {
    name: "patch fieldValidation=Bogus",
    method: "PATCH",
    path: `${CM}/one?fieldValidation=Bogus`,
    body: { data: { x: "1" } },
    contentType: "application/merge-patch+json",
    status: 422,
    message: invalid("PatchOptions", `fieldValidation: ${FIELD_VALIDATION}`),
  },
  {
    name: "force on a merge patch (even false)",
    method: "PATCH",
    path: `${CM}/one?force=false`,
    body: { data: { x: "1" } },
    contentType: "application/merge-patch+json",
    status: 422,
    message: invalid("PatchOptions", "force: Forbidden: may not be specified for non-apply patch"),
  },
  {
    name: "apply without fieldManager",
    method: "PATCH",
    ...apply(undefined, undefined, "1"),
    status: 422,
    message: invalid("PatchOptions", "fieldManager: Required value: is required for apply patch"),
  },
  { name: "apply by manager a", method: "PATCH", ...apply("a", undefined, "1"), status: 201 },
  { name: "apply by b conflicts", method: "PATCH", ...apply("b", "false", "2"), status: 409 },
  {
    name: "apply by b, force=FALSE, conflicts",
    method: "PATCH",
    ...apply("b", "FALSE", "2"),
    status: 409,
  },
  {
    name: "apply by b with force=True takes over",
    method: "PATCH",
    ...apply("b", "True", "2"),
    status: 200,
    check: (text) => assert.equal(JSON.parse(text).data.a, "2"),
  },
  // Deletes: options from the query (no body) or from the body (the query ignored).
  {
    name: "delete propagationPolicy=Later",
    method: "DELETE",
    path: `${CM}/one?propagationPolicy=Later`,
    status: 422,
    message: invalid(
      "DeleteOptions",
      `propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"`,
    ),
  },
  {
    name: "delete orphanDependents with propagationPolicy",
    method: "DELETE",
    path: `${CM}/one?orphanDependents=True&propagationPolicy=Orphan`,
    status: 422,
    message: invalid(
      "DeleteOptions",
      `propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`,
    ),
  },
  {
    name: "delete gracePeriodSeconds=soon",
    method: "DELETE",
    path: `${CM}/one?gracePeriodSeconds=soon`,
    status: 400,
    message: `strconv.ParseInt: parsing "soon": invalid syntax`,
  },
  {
    name: "delete dryRun=All (the query) keeps the object",
    method: "DELETE",
    path: `${CM}/one?dryRun=All`,
    status: 200,
  },
  {
    name: "a delete's body wins over its query",
    method: "DELETE",
    path: `${CM}/two?propagationPolicy=Later`,
    body: { propagationPolicy: "Background" },
    status: 200,
  },
  {
    name: "deletecollection limit=x",
    method: "DELETE",
    path: `${CM}?limit=x`,
    status: 400,
    message: `strconv.ParseInt: parsing "x": invalid syntax`,
  },
  // pretty: Go's ParseBool when given, else the User-Agent.
  {
    name: "pretty=true: indented, no trailing newline",
    method: "GET",
    path: `${CM}/one?pretty=true`,
    status: 200,
    check: (text) => assert.match(text, /^\{\n {2}"[^]*\n {4}"name": "one",\n[^]*\n\}$/),
  },
  {
    name: "curl's User-Agent: indented",
    method: "GET",
    path: `${CM}/one`,
    userAgent: "curl/8.5.0",
    status: 200,
    check: (text) => assert.match(text, /^\{\n {2}"[^]*\n\}$/),
  },
  {
    name: "pretty=0 with curl's User-Agent: compact, newline-ended",
    method: "GET",
    path: `${CM}/one?pretty=0`,
    userAgent: "curl/8.5.0",
    status: 200,
    check: (text) => assert.match(text, /^\{"[^\n]*"name":"one"[^\n]*\}\n$/),
  },
  {
    name: "pretty=yes (not Go's boolean) is false",
    method: "GET",
    path: `${CM}/one?pretty=yes`,
    status: 200,
    check: (text) => assert.match(text, /^\{"[^\n]*"name":"one"[^\n]*\}\n$/),
  },
];

Deno.test("query parameters: every row answers as kube-apiserver does", async () => {
  await using api = await startApiServer();
  for (const name of ["one", "two"]) {
    const res = await fetch(`${api.url}${CM}`, {
      method: "POST",
      body: JSON.stringify({ metadata: { name }, data: { a: "0" } }),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 201, await res.text());
  }
  let n = 0;
  const failures: string[] = [];
  for (const row of ROWS) {
    const headers: Record<string, string> = {};
    if (row.body !== undefined) headers["content-type"] = row.contentType ?? "application/json";
    if (row.userAgent) headers["user-agent"] = row.userAgent;
    const body = row.body === undefined
      ? undefined
      : JSON.stringify(row.body).replaceAll("{n}", `fresh-${n++}`);
    const res = await fetch(`${api.url}${row.path.replaceAll("{n}", `fresh-${n++}`)}`, {
      method: row.method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    try {
      assert.equal(res.status, row.status, text);
      if (row.message !== undefined) assert.equal(JSON.parse(text).message, row.message);
      row.check?.(text);
    } catch (e) {
      failures.push(`${row.name}: ${(e as Error).message.split("\n").slice(0, 6).join(" ")}`);
    }
  }
  assert.deepEqual(failures, []);
  // The dry-run delete kept "one"; the body's Background deleted "two".
  const kept = await fetch(`${api.url}${CM}/one`);
  const gone = await fetch(`${api.url}${CM}/two`);
  await kept.body?.cancel();
  await gone.body?.cancel();
  assert.deepEqual([kept.status, gone.status], [200, 404]);
});
