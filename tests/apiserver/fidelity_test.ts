/**
 * Requests with kube-apiserver's answers, byte for byte: one table row per request, with the
 * status code and the exact Status body kube-apiserver writes (checked against its source:
 * apimachinery's `errors.go` for NotFound/AlreadyExists/Conflict/Invalid, go-restful's 405
 * through `NewGenericServerResponse` with an empty `details`, the negotiation errors of
 * `apiserver/pkg/endpoints/handlers/negotiation/errors.go` for 406 and 415, which set none).
 *
 * Where our wording cannot follow kube's (a bad JSON body: kube quotes Go's `encoding/json`
 * error), the row checks the code and reason only and says so.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const JSON_TYPE = { "content-type": "application/json" };
const APPLY_TYPE = { "content-type": "application/apply-patch+yaml" };

/** A Status body as kube-apiserver's JSON encoder writes it (fields in Go's order, a newline). */
function status(
  code: number,
  reason: string,
  message: string,
  details?: Record<string, unknown>,
): string {
  return JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  }).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) + "\n"; // Go's HTML-safe escapes
}

const NAME_RULE = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
  "characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

interface Row {
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as JSON; a string or bytes as they are (bytes: fetch adds no Content-Type). */
  body?: unknown;
  code: number;
  /** A request made first, as the same row's (e.g. another manager's apply). */
  before?: { method: string; path: string; headers: Record<string, string>; body: unknown };
  /** The exact body; where only the reason can match kube's, `{ reason }`; a success's `{ kind }`. */
  expect: string | { reason: string } | { kind: string };
  /** The answer's Content-Type, when not JSON. */
  contentType?: string;
  /** The answer's `Warning` header, exactly (none when not given). */
  warning?: string;
  /** Serve the custom resource `kopfexamples.kopf.dev/v1` (namespaced) with one object, `kex`. */
  crd?: boolean;
}

/** Go's `http.NotFound`: what kube-apiserver answers where no handler claims the path. */
const PAGE_NOT_FOUND = "404 page not found\n";
const TEXT_TYPE = "text/plain; charset=utf-8";
/** The REST container's 404 for a path it owns but has no route for. */
const NO_ROUTE = status(404, "NotFound", "the server could not find the requested resource", {});
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const UNSUPPORTED = status(
  415,
  "UnsupportedMediaType",
  "the body of the request was in an unknown format - accepted media types include: " +
    "application/json, application/yaml, application/vnd.kubernetes.protobuf",
);

/** Every row runs against a server holding one ConfigMap, `existing`, at resourceVersion `rv`. */
const ROWS: Row[] = [
  {
    name: "404 on a missing object",
    path: `${CM}/missing`,
    code: 404,
    expect: status(404, "NotFound", 'configmaps "missing" not found', {
      name: "missing",
      kind: "configmaps",
    }),
  },
  {
    name: "404 on a create in a missing namespace names the namespace",
    method: "POST",
    path: "/api/v1/namespaces/nowhere/configmaps",
    headers: JSON_TYPE,
    body: { metadata: { name: "x" } },
    code: 404,
    expect: status(404, "NotFound", 'namespaces "nowhere" not found', {
      name: "nowhere",
      kind: "namespaces",
    }),
  },
  {
    name: "409 AlreadyExists on a create",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: { metadata: { name: "existing" } },
    code: 409,
    expect: status(409, "AlreadyExists", 'configmaps "existing" already exists', {
      name: "existing",
      kind: "configmaps",
    }),
  },
  {
    name: "409 Conflict on an update with a stale resourceVersion",
    method: "PUT",
    path: `${CM}/existing`,
    headers: JSON_TYPE,
    body: { metadata: { name: "existing", resourceVersion: "1" }, data: { a: "2" } },
    code: 409,
    expect: status(
      409,
      "Conflict",
      'Operation cannot be fulfilled on configmaps "existing": the object has been modified; ' +
        "please apply your changes to the latest version and try again",
      { name: "existing", kind: "configmaps" },
    ),
  },
  {
    name: "422 on an invalid name",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: { metadata: { name: "Bad_Name" } },
    code: 422,
    expect: status(
      422,
      "Invalid",
      `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ${NAME_RULE}`,
      {
        name: "Bad_Name",
        kind: "ConfigMap",
        causes: [{
          reason: "FieldValueInvalid",
          message: `Invalid value: "Bad_Name": ${NAME_RULE}`,
          field: "metadata.name",
        }],
      },
    ),
  },
  {
    name: "422 on a missing name",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: { metadata: {} },
    code: 422,
    expect: status(
      422,
      "Invalid",
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
      {
        kind: "ConfigMap",
        causes: [{
          reason: "FieldValueRequired",
          message: "Required value: name or generateName is required",
          field: "metadata.name",
        }],
      },
    ),
  },
  {
    name: "405 on PUT to a collection",
    method: "PUT",
    path: CM,
    headers: JSON_TYPE,
    body: {},
    code: 405,
    expect: status(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
      {},
    ),
  },
  {
    name: "405 on POST to an object",
    method: "POST",
    path: `${CM}/existing`,
    headers: JSON_TYPE,
    body: {},
    code: 405,
    expect: status(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
      {},
    ),
  },
  {
    name: "406 on an Accept the server cannot answer",
    path: `${CM}/existing`,
    headers: { accept: "text/html" },
    code: 406,
    expect: status(
      406,
      "NotAcceptable",
      "only the following media types are accepted: " +
        "application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ),
  },
  {
    name: "406 on a missing object: negotiated before anything is read",
    path: `${CM}/missing`,
    headers: { accept: "application/xml" },
    code: 406,
    expect: status(
      406,
      "NotAcceptable",
      "only the following media types are accepted: " +
        "application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ),
  },
  {
    name: "415 on a create in an unsupported content type",
    method: "POST",
    path: CM,
    headers: { "content-type": "application/xml" },
    body: "<ConfigMap/>",
    code: 415,
    expect: status(
      415,
      "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: " +
        "application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ),
  },
  {
    name: "415 on a patch that is not a patch type",
    method: "PATCH",
    path: `${CM}/existing`,
    headers: JSON_TYPE,
    body: {},
    code: 415,
    expect: status(
      415,
      "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: " +
        "application/json-patch+json, application/merge-patch+json, " +
        "application/apply-patch+yaml, application/strategic-merge-patch+json",
    ),
  },
  {
    name: "400 on a name that differs from the URL's",
    method: "PUT",
    path: `${CM}/existing`,
    headers: JSON_TYPE,
    body: { metadata: { name: "other" } },
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "the name of the object (other) does not match the name on the URL (existing)",
    ),
  },
  {
    name: "409 Conflict on an apply over another applier's field",
    before: {
      method: "PATCH",
      path: `${CM}/applied?fieldManager=one`,
      headers: APPLY_TYPE,
      body: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "applied" },
        data: { k: "a" },
      },
    },
    method: "PATCH",
    path: `${CM}/applied?fieldManager=two`,
    headers: APPLY_TYPE,
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "applied" }, data: { k: "b" } },
    code: 409,
    expect: status(409, "Conflict", 'Apply failed with 1 conflict: conflict with "one": .data.k', {
      causes: [{
        reason: "FieldManagerConflict",
        message: 'conflict with "one"',
        field: ".data.k",
      }],
    }),
  },
  {
    name: "400 on a create whose body is not JSON, in Go's words",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: "{bad",
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get " +
        "version/kind; json parse error: invalid character 'b' looking for beginning of " +
        "object key string ({bad)",
    ),
  },
  {
    name: "400 on a create whose body is cut short, the body summarized to 30 bytes",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: '{"metadata": {"name": "a-rather-long-name"}, "data": {',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get " +
        "version/kind; json parse error: unexpected end of JSON input " +
        '({"metadata": {"name": "a-rathe ...)',
    ),
  },
  {
    name: "400 on a create with an empty body",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: "",
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get " +
        "version/kind; json parse error: unexpected end of JSON input (<empty>)",
    ),
  },
  {
    name: "400 on an update whose body has a value cut short",
    method: "PUT",
    path: `${CM}/existing`,
    headers: JSON_TYPE,
    body: '{"data": {"a": tru}}',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get " +
        "version/kind; json parse error: invalid character '}' in literal true " +
        `(expecting 'e') ({"data": {"a": tru}})`,
    ),
  },
  {
    name: "400 on a merge patch that is not JSON (fieldValidation Warn by default)",
    method: "PATCH",
    path: `${CM}/existing`,
    headers: { "content-type": "application/merge-patch+json" },
    body: '{"data": {"a" "1"}}',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "error decoding patch: invalid character '\"' after object key",
    ),
  },
  {
    name: "400 on a merge patch that is not JSON, fieldValidation Ignore",
    method: "PATCH",
    path: `${CM}/existing?fieldValidation=Ignore`,
    headers: { "content-type": "application/merge-patch+json" },
    body: "{,}",
    code: 400,
    expect: status(400, "BadRequest", "Invalid JSON Patch"),
  },
  {
    name: "400 on a JSON patch that is not JSON, fieldValidation Ignore",
    method: "PATCH",
    path: `${CM}/existing?fieldValidation=Ignore`,
    headers: { "content-type": "application/json-patch+json" },
    body: '[{"op": "add",]',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "invalid character ']' looking for beginning of object key string",
    ),
  },
  {
    name: "400 on a strategic merge patch that is not JSON",
    method: "PATCH",
    path: `${CM}/existing?fieldValidation=Strict`,
    headers: { "content-type": "application/strategic-merge-patch+json" },
    body: '{"data": {"a": 01}}',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      "invalid character '1' after object key:value pair",
    ),
  },
  {
    name: "plain-text 404 on a path no handler claims",
    path: "/foo",
    code: 404,
    expect: PAGE_NOT_FOUND,
    contentType: TEXT_TYPE,
  },
  {
    name: "plain-text 404 on a group nothing serves",
    path: "/apis/nothing.example.com",
    code: 404,
    expect: PAGE_NOT_FOUND,
    contentType: TEXT_TYPE,
  },
  {
    name: "plain-text 404 on a resource of a group nothing serves",
    path: "/apis/nothing.example.com/v1/namespaces/default/things/x",
    code: 404,
    expect: PAGE_NOT_FOUND,
    contentType: TEXT_TYPE,
  },
  {
    name: "JSON 404 on an unknown resource of the core group",
    path: "/api/v1/nothings",
    code: 404,
    expect: NO_ROUTE,
  },
  {
    name: "JSON 404 on an unknown resource of a built-in group",
    path: "/apis/apps/v1/nothings",
    code: 404,
    expect: NO_ROUTE,
  },
  {
    name: "JSON 404 on an unknown version of a built-in group",
    path: "/apis/apps/v9",
    code: 404,
    expect: NO_ROUTE,
  },
  {
    name: "JSON 404 on a path deeper than any route of a built-in",
    path: `${CM}/existing/status/deeper`,
    code: 404,
    expect: NO_ROUTE,
  },
  {
    name: "JSON 404 on a named namespaced object outside a namespace",
    path: "/api/v1/configmaps/existing",
    code: 404,
    expect: NO_ROUTE,
  },
  {
    name: "405 on a create outside a namespace for a namespaced built-in",
    method: "POST",
    path: "/api/v1/configmaps",
    headers: JSON_TYPE,
    body: { metadata: { name: "x" } },
    code: 405,
    expect: status(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
      {},
    ),
  },
  {
    name: "plain-text 404 on an unknown plural of a custom resource group",
    crd: true,
    path: "/apis/kopf.dev/v1/namespaces/default/nothings",
    code: 404,
    expect: PAGE_NOT_FOUND,
    contentType: TEXT_TYPE,
  },
  {
    name: "plain-text 404 on an unserved version of a custom resource",
    crd: true,
    path: "/apis/kopf.dev/v9/namespaces/default/kopfexamples",
    code: 404,
    expect: PAGE_NOT_FOUND,
    contentType: TEXT_TYPE,
  },
  {
    name: "plain-text 404 on a named custom resource outside its namespace",
    crd: true,
    path: "/apis/kopf.dev/v1/kopfexamples/kex",
    code: 404,
    expect: PAGE_NOT_FOUND,
    contentType: TEXT_TYPE,
  },
  {
    name: "404 NotFound naming the object on an unknown subresource of a custom resource",
    crd: true,
    path: `${KEX}/kex/scale`,
    code: 404,
    expect: status(404, "NotFound", 'kopfexamples.kopf.dev "kex" not found', {
      name: "kex",
      group: "kopf.dev",
      kind: "kopfexamples",
    }),
  },
  {
    name: "a list of a custom resource across namespaces is served",
    crd: true,
    path: "/apis/kopf.dev/v1/kopfexamples?limit=1&fieldSelector=metadata.name%3Dnone",
    code: 200,
    expect: { kind: "KopfExampleList" },
  },
  {
    name: "415 on a create in text/plain (fetch's default for a string body)",
    method: "POST",
    path: CM,
    body: JSON.stringify({ metadata: { name: "x" } }),
    code: 415,
    expect: UNSUPPORTED,
  },
  {
    name: "415 on a create in */*",
    method: "POST",
    path: CM,
    headers: { "content-type": "*/*" },
    body: { metadata: { name: "x" } },
    code: 415,
    expect: UNSUPPORTED,
  },
  {
    name: "415 on a create in a +json type that is not a patch",
    method: "POST",
    path: CM,
    headers: { "content-type": "application/merge-patch+json" },
    body: { metadata: { name: "x" } },
    code: 415,
    expect: UNSUPPORTED,
  },
  {
    name: "415 on an update in a malformed media type",
    method: "PUT",
    path: `${CM}/existing`,
    headers: { "content-type": "application/json; charset" },
    body: { metadata: { name: "existing" } },
    code: 415,
    expect: UNSUPPORTED,
  },
  {
    name: "415 on a delete whose options are in text/plain",
    method: "DELETE",
    path: `${CM}/existing`,
    headers: { "content-type": "text/plain" },
    body: { propagationPolicy: "Background" },
    code: 415,
    expect: UNSUPPORTED,
  },
  {
    name: "a create with no Content-Type is read as JSON",
    method: "POST",
    path: CM,
    body: new TextEncoder().encode(JSON.stringify({ metadata: { name: "x" } })),
    code: 201,
    expect: { kind: "ConfigMap" },
  },
  {
    name: "a create in JSON with parameters, in any case, is read as JSON",
    method: "POST",
    path: CM,
    headers: { "content-type": "Application/JSON; charset=utf-8" },
    body: { metadata: { name: "x" } },
    code: 201,
    expect: { kind: "ConfigMap" },
  },
  {
    name: "400 on a create with a field sent twice, fieldValidation Strict",
    method: "POST",
    path: `${CM}?fieldValidation=Strict`,
    headers: JSON_TYPE,
    body: '{"metadata": {"name": "x", "name": "x"}}',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ' +
        'duplicate field "metadata.name"',
    ),
  },
  {
    name: "400 lists duplicates and unknown fields in the order the body has them",
    method: "POST",
    path: `${CM}?fieldValidation=Strict`,
    headers: JSON_TYPE,
    body: '{"metadata": {"name": "x", "name": "x"}, "bogus": {"b": 1, "b": 2}, ' +
      '"data": {"a": "1", "a": "2"}}',
    code: 400,
    expect: status(
      400,
      "BadRequest",
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ' +
        'duplicate field "metadata.name", unknown field "bogus", duplicate field "data.a"',
    ),
  },
  {
    name: "a create with a field sent twice is a warning by default, the last one kept",
    method: "POST",
    path: CM,
    headers: JSON_TYPE,
    body: '{"metadata": {"name": "x"}, "data": {"a": "1", "a": "2"}}',
    code: 201,
    expect: { kind: "ConfigMap" },
    warning: '299 - "duplicate field \\"data.a\\""',
  },
  {
    name: "a create with a field sent twice is not reported under fieldValidation Ignore",
    method: "POST",
    path: `${CM}?fieldValidation=Ignore`,
    headers: JSON_TYPE,
    body: '{"metadata": {"name": "x"}, "data": {"a": "1", "a": "2"}}',
    code: 201,
    expect: { kind: "ConfigMap" },
  },
  {
    name: "a merge patch with a field sent twice warns with its path",
    method: "PATCH",
    path: `${CM}/existing`,
    headers: { "content-type": "application/merge-patch+json" },
    body: '{"data": {"b": "1", "b": "2"}}',
    code: 200,
    expect: { kind: "ConfigMap" },
    warning: '299 - "duplicate field \\"data.b\\""',
  },
];

for (const row of ROWS) {
  Deno.test(`fidelity: ${row.name}`, async () => {
    await using api = await startApiServer();
    const made = await fetch(`${api.url}${CM}`, {
      method: "POST",
      headers: JSON_TYPE,
      body: JSON.stringify({ metadata: { name: "existing" }, data: { a: "1" } }),
    });
    assert.equal(made.status, 201, await made.text());
    if (row.crd) await serveKopfExamples(api.url);
    if (row.before) {
      const first = await fetch(`${api.url}${row.before.path}`, {
        method: row.before.method,
        headers: row.before.headers,
        body: JSON.stringify(row.before.body),
      });
      assert.ok(first.ok, await first.text());
    }
    const init: RequestInit = { method: row.method ?? "GET", headers: row.headers ?? {} };
    if (row.body !== undefined) {
      init.body = typeof row.body === "string" || row.body instanceof Uint8Array
        ? row.body as BodyInit
        : JSON.stringify(row.body);
    }
    const res = await fetch(`${api.url}${row.path}`, init);
    const text = await res.text();
    assert.equal(res.status, row.code, text);
    assert.equal(res.headers.get("content-type"), row.contentType ?? "application/json");
    assert.equal(res.headers.get("warning"), row.warning ?? null);
    if (typeof row.expect === "object" && "kind" in row.expect) {
      assert.equal(JSON.parse(text).kind, row.expect.kind);
    } else if (typeof row.expect === "string") {
      assert.equal(text, row.expect);
    } else {
      const body = JSON.parse(text);
      assert.deepEqual([body.kind, body.status, body.reason, body.code], [
        "Status",
        "Failure",
        (row.expect as { reason: string }).reason,
        row.code,
      ]);
    }
  });
}

/** Serves `kopfexamples.kopf.dev/v1` (namespaced, with a status subresource) and makes `kex`. */
async function serveKopfExamples(url: string): Promise<void> {
  const crd = await fetch(`${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: "POST",
    headers: JSON_TYPE,
    body: JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "kopfexamples.kopf.dev" },
      spec: {
        group: "kopf.dev",
        scope: "Namespaced",
        names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
        }],
      },
    }),
  });
  assert.equal(crd.status, 201, await crd.text());
  const made = await fetch(`${url}${KEX}`, {
    method: "POST",
    headers: JSON_TYPE,
    body: JSON.stringify({
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name: "kex" },
    }),
  });
  assert.equal(made.status, 201, await made.text());
}

Deno.test("fidelity: / lists the paths served, indented as kube-apiserver's index writes them", async () => {
  await using api = await startApiServer();
  const res = await fetch(`${api.url}/`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.ok(text.startsWith('{\n  "paths": [\n    "/api",\n') && !text.endsWith("\n"), text);
  const paths: string[] = JSON.parse(text).paths;
  for (const p of ["/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/healthz", "/version"]) {
    assert.ok(paths.includes(p), p);
  }
  assert.deepEqual(paths, [...paths].sort());
});
