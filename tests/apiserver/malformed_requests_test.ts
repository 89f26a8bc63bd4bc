/**
 * Every malformed query parameter, path, header or body gets a Kubernetes
 * Status with a 4xx code — never a 500, a crash or a hang — and the server
 * serves normally afterwards.
 */
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const ALL = "/api/v1/configmaps";
const NS = "/api/v1/namespaces/default";

interface Case {
  name: string;
  method?: string;
  path: string;
  body?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
  /** The code expected, when known; else any 4xx. */
  code?: number;
  /** Invalid UTF-8 in a string is decoded with replacement characters by Go too: 2xx is right. */
  mayPass?: boolean;
  /** No handler claims the path: kube-apiserver answers Go's plain-text 404, not a Status. */
  plain?: boolean;
}

const JSON_TYPE = { "content-type": "application/json" };
const MERGE = { "content-type": "application/merge-patch+json" };
const token = "right-token";
const continueOf = (o: unknown) => btoa(JSON.stringify(o));

const cases: Case[] = [
  // Query parameters of list, watch and get.
  { name: "limit=abc", path: `${CM}?limit=abc`, code: 400 },
  { name: "limit=-1", path: `${CM}?limit=-1`, mayPass: true },
  { name: "limit=1e999", path: `${CM}?limit=1e999`, code: 400 },
  { name: "limit=1.5", path: `${CM}?limit=1.5`, code: 400 },
  { name: "limit=99999999999999999999", path: `${CM}?limit=99999999999999999999`, code: 400 },
  { name: "timeoutSeconds=x (list)", path: `${CM}?timeoutSeconds=x`, code: 400 },
  { name: "timeoutSeconds=x (watch)", path: `${CM}?watch=true&timeoutSeconds=x`, code: 400 },
  // kube-apiserver: a negative timeout ends the watch at once (200).
  { name: "timeoutSeconds=-5 (watch)", path: `${CM}?watch=true&timeoutSeconds=-5`, mayPass: true },
  {
    name: "timeoutSeconds=1e999 (watch)",
    path: `${CM}?watch=true&timeoutSeconds=1e999`,
    code: 400,
  },
  { name: "resourceVersion=abc (get)", path: `${CM}/probe?resourceVersion=abc`, code: 400 },
  { name: "resourceVersion=abc (list)", path: `${CM}?resourceVersion=abc`, code: 400 },
  { name: "resourceVersion=abc (watch)", path: `${CM}?watch=true&resourceVersion=abc`, code: 400 },
  { name: "resourceVersion=-1 (watch)", path: `${CM}?watch=true&resourceVersion=-1`, code: 400 },
  { name: "resourceVersion=1e999 (list)", path: `${CM}?resourceVersion=1e999`, code: 400 },
  {
    name: "resourceVersionMatch=Bogus",
    path: `${CM}?resourceVersion=1&resourceVersionMatch=Bogus`,
  },
  { name: "resourceVersionMatch without rv", path: `${CM}?resourceVersionMatch=NotOlderThan` },
  {
    name: "labelSelector 'a in ('",
    path: `${CM}?labelSelector=${encodeURIComponent("a in (")}`,
    code: 400,
  },
  { name: "labelSelector '!!'", path: `${CM}?labelSelector=!!`, code: 400 },
  { name: "labelSelector '=x'", path: `${CM}?labelSelector==x`, code: 400 },
  {
    name: "labelSelector on watch",
    path: `${CM}?watch=true&labelSelector=${encodeURIComponent("a in (")}`,
    code: 400,
  },
  { name: "fieldSelector '=x'", path: `${CM}?fieldSelector==x`, code: 400 },
  { name: "fieldSelector '!!'", path: `${CM}?fieldSelector=!!`, code: 400 },
  { name: "fieldSelector unknown field", path: `${CM}?fieldSelector=spec.nope=x`, code: 400 },
  { name: "fieldSelector on watch", path: `${CM}?watch=true&fieldSelector==x`, code: 400 },
  { name: "continue not base64", path: `${CM}?limit=1&continue=%%%`, code: 400 },
  {
    name: "continue base64 of non-JSON",
    path: `${CM}?limit=1&continue=${btoa("nope")}`,
    code: 400,
  },
  { name: "continue JSON array", path: `${CM}?limit=1&continue=${continueOf([1])}`, code: 400 },
  {
    name: "continue wrong version",
    path: `${CM}?limit=1&continue=${continueOf({ v: "meta.k8s.io/v0", rv: 1, start: "a" })}`,
    code: 400,
  },
  {
    name: "continue with wrong types",
    path: `${CM}?limit=1&continue=${continueOf({ v: "meta.k8s.io/v1", rv: "x", start: 5 })}`,
    code: 400,
  },
  {
    name: "continue with resourceVersion",
    path: `${CM}?limit=1&resourceVersion=1&continue=${
      continueOf({ v: "meta.k8s.io/v1", rv: 1, start: "a" })
    }`,
    code: 400,
  },
  { name: "sendInitialEvents without watch", path: `${CM}?sendInitialEvents=true` },
  { name: "sendInitialEvents=maybe", path: `${CM}?watch=true&sendInitialEvents=maybe` },
  {
    name: "sendInitialEvents without resourceVersionMatch",
    path: `${CM}?watch=true&sendInitialEvents=true`,
  },
  {
    name: "allowWatchBookmarks=x",
    path: `${CM}?watch=true&allowWatchBookmarks=x&timeoutSeconds=1`,
    mayPass: true,
  },
  { name: "pretty=x", path: `${CM}?pretty=x`, mayPass: true },
  // Any value but 0/false is true: a watch (ended by its timeout).
  { name: "watch=maybe", path: `${CM}?watch=maybe&timeoutSeconds=1`, mayPass: true },
  {
    name: "includeObject=Bogus (Table)",
    path: `${CM}?includeObject=Bogus`,
    headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
    mayPass: true,
  },
  // Paths.
  { name: "%00 in a name", path: `${CM}/a%00b`, code: 404 },
  { name: "%2F in a name", path: `${CM}/a%2Fb`, code: 404 },
  { name: "bad percent encoding", path: `${CM}/%E0%A4%A`, code: 400 },
  { name: "lone percent", path: `${CM}/%`, code: 400 },
  {
    name: "'..' segments",
    path: `/api/v1/namespaces/default/configmaps/../../secrets`,
    mayPass: true,
  },
  { name: "unknown group", path: "/apis/nope.example.com/v1/things", code: 404, plain: true },
  { name: "unknown version", path: "/api/v9/configmaps", code: 404 },
  { name: "unknown resource", path: "/api/v1/nopes", code: 404 },
  { name: "overlong name (GET)", path: `${CM}/${"a".repeat(300)}`, code: 404 },
  {
    name: "overlong name (POST)",
    method: "POST",
    path: CM,
    body: JSON.stringify({ metadata: { name: "a".repeat(300) } }),
    headers: JSON_TYPE,
    code: 422,
  },
  {
    name: "overlong namespace",
    path: `/api/v1/namespaces/${"n".repeat(300)}/configmaps`,
    mayPass: true,
  },
  {
    name: "a name with a space",
    method: "POST",
    path: CM,
    body: JSON.stringify({ metadata: { name: "a b" } }),
    headers: JSON_TYPE,
    code: 422,
  },
  { name: "subresource on a configmap", path: `${CM}/probe/status`, code: 404 },
  { name: "too many segments", path: `${CM}/probe/status/more`, code: 404 },
  {
    name: "POST to a name",
    method: "POST",
    path: `${CM}/probe`,
    body: "{}",
    headers: JSON_TYPE,
    code: 405,
  },
  {
    name: "PUT to a collection",
    method: "PUT",
    path: CM,
    body: "{}",
    headers: JSON_TYPE,
    code: 405,
  },
  // Write options.
  {
    name: "dryRun=Maybe",
    method: "POST",
    path: `${CM}?dryRun=Maybe`,
    body: JSON.stringify({ metadata: { name: "dr" } }),
    headers: JSON_TYPE,
    code: 422,
  },
  { name: "dryRun=Maybe (delete)", method: "DELETE", path: `${CM}/probe?dryRun=Maybe`, code: 422 },
  {
    name: "fieldManager over 128",
    method: "POST",
    path: `${CM}?fieldManager=${"m".repeat(129)}`,
    body: JSON.stringify({ metadata: { name: "fm" } }),
    headers: JSON_TYPE,
    code: 422,
  },
  {
    name: "fieldValidation=Bogus",
    method: "POST",
    path: `${CM}?fieldValidation=Bogus`,
    body: JSON.stringify({ metadata: { name: "fv" } }),
    headers: JSON_TYPE,
    code: 422,
  },
  {
    name: "propagationPolicy=Bogus",
    method: "DELETE",
    path: `${CM}/probe?propagationPolicy=Bogus`,
    code: 422,
  },
  {
    name: "gracePeriodSeconds=x",
    method: "DELETE",
    path: `${CM}/probe?gracePeriodSeconds=x`,
    code: 400,
  },
  {
    name: "force=maybe (apply)",
    method: "PATCH",
    path: `${CM}/probe?fieldManager=t&force=maybe`,
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "probe" } }),
    headers: { "content-type": "application/apply-patch+yaml" },
    mayPass: true,
  },
  {
    name: "apply without fieldManager",
    method: "PATCH",
    path: `${CM}/probe`,
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "probe" } }),
    headers: { "content-type": "application/apply-patch+yaml" },
  },
  // Content types and bodies.
  {
    name: "POST without content-type",
    method: "POST",
    path: CM,
    body: JSON.stringify({ metadata: { name: "nct" } }),
    mayPass: true,
  },
  {
    name: "POST with unknown content-type",
    method: "POST",
    path: CM,
    body: "x",
    headers: { "content-type": "text/frob" },
    code: 415,
  },
  {
    name: "POST with malformed content-type",
    method: "POST",
    path: CM,
    body: "{}",
    headers: { "content-type": ";;;=" },
    code: 415,
  },
  {
    name: "PATCH without content-type",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "{}",
    code: 415,
  },
  {
    name: "PATCH with application/json",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "{}",
    headers: JSON_TYPE,
    code: 415,
  },
  {
    name: "PATCH with an invalid patch type",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "{}",
    headers: { "content-type": "application/frob-patch+json" },
    code: 415,
  },
  {
    name: "POST body an array",
    method: "POST",
    path: CM,
    body: "[]",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "POST body a string",
    method: "POST",
    path: CM,
    body: '"x"',
    headers: JSON_TYPE,
    code: 400,
  },
  { name: "POST body null", method: "POST", path: CM, body: "null", headers: JSON_TYPE, code: 400 },
  {
    name: "POST body a number",
    method: "POST",
    path: CM,
    body: "5",
    headers: JSON_TYPE,
    code: 400,
  },
  { name: "POST empty body", method: "POST", path: CM, body: "", headers: JSON_TYPE, code: 400 },
  { name: "POST no body", method: "POST", path: CM, headers: JSON_TYPE, code: 400 },
  {
    name: "POST truncated JSON",
    method: "POST",
    path: CM,
    body: '{"metadata":',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "POST invalid UTF-8 in a string",
    method: "POST",
    path: CM,
    body: new Uint8Array([
      ...new TextEncoder().encode('{"metadata":{"name":"utf"},"data":{"a":"'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}}'),
    ]),
    headers: JSON_TYPE,
    mayPass: true,
  },
  {
    name: "POST invalid UTF-8 outside strings",
    method: "POST",
    path: CM,
    body: new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]),
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "metadata a string",
    method: "POST",
    path: CM,
    body: '{"metadata":"x"}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "metadata an array",
    method: "POST",
    path: CM,
    body: '{"metadata":[]}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata null",
    method: "POST",
    path: CM,
    body: '{"metadata":null}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.name a number",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":5}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.labels an array",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"l","labels":["a"]}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.labels value a number",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"l","labels":{"a":1}}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.annotations a string",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"l","annotations":"x"}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.finalizers a string",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"l","finalizers":"x"}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.ownerReferences an object",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"l","ownerReferences":{}}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.ownerReferences of numbers",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"l","ownerReferences":[1]}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.generateName a number",
    method: "POST",
    path: CM,
    body: '{"metadata":{"generateName":5}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.resourceVersion a number (PUT)",
    method: "PUT",
    path: `${CM}/probe`,
    body: '{"metadata":{"name":"probe","resourceVersion":5}}',
    headers: JSON_TYPE,
  },
  {
    name: "metadata.managedFields a string",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"mf","managedFields":"x"}}',
    headers: JSON_TYPE,
    mayPass: true,
  },
  {
    name: "metadata.namespace a number",
    method: "POST",
    path: CM,
    body: '{"metadata":{"name":"ns","namespace":5}}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "apiVersion a number",
    method: "POST",
    path: CM,
    body: '{"apiVersion":5,"metadata":{"name":"av"}}',
    headers: JSON_TYPE,
    mayPass: true,
  },
  {
    name: "kind an object",
    method: "POST",
    path: CM,
    body: '{"kind":{},"metadata":{"name":"kd"}}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "PUT name mismatch",
    method: "PUT",
    path: `${CM}/probe`,
    body: '{"metadata":{"name":"other"}}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "PUT body an array",
    method: "PUT",
    path: `${CM}/probe`,
    body: "[]",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "merge patch an array",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "[]",
    headers: MERGE,
    code: 400,
  },
  {
    name: "merge patch a string",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '"x"',
    headers: MERGE,
    code: 400,
  },
  {
    name: "merge patch setting metadata to a string",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '{"metadata":"x"}',
    headers: MERGE,
    code: 400,
  },
  {
    name: "merge patch labels to a number",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '{"metadata":{"labels":5}}',
    headers: MERGE,
    mayPass: true,
  },
  {
    name: "strategic patch an array",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "[]",
    headers: { "content-type": "application/strategic-merge-patch+json" },
    code: 400,
  },
  {
    name: "strategic patch null",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "null",
    headers: { "content-type": "application/strategic-merge-patch+json" },
    code: 400,
  },
  {
    name: "JSON patch an object",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "{}",
    headers: { "content-type": "application/json-patch+json" },
    code: 400,
  },
  {
    name: "JSON patch op garbage",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '[{"op":"frob","path":"/x"}]',
    headers: { "content-type": "application/json-patch+json" },
  },
  {
    name: "JSON patch op not an object",
    method: "PATCH",
    path: `${CM}/probe`,
    body: "[1]",
    headers: { "content-type": "application/json-patch+json" },
  },
  {
    name: "JSON patch path a number",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '[{"op":"add","path":5,"value":1}]',
    headers: { "content-type": "application/json-patch+json" },
  },
  {
    name: "JSON patch removing metadata",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '[{"op":"remove","path":"/metadata"}]',
    headers: { "content-type": "application/json-patch+json" },
    mayPass: true,
  },
  {
    name: "JSON patch replacing metadata by a number",
    method: "PATCH",
    path: `${CM}/probe`,
    body: '[{"op":"replace","path":"/metadata","value":1}]',
    headers: { "content-type": "application/json-patch+json" },
  },
  {
    name: "apply body a YAML list",
    method: "PATCH",
    path: `${CM}/probe?fieldManager=t`,
    body: "- a\n- b\n",
    headers: { "content-type": "application/apply-patch+yaml" },
    code: 400,
  },
  {
    name: "apply body YAML garbage",
    method: "PATCH",
    path: `${CM}/probe?fieldManager=t`,
    body: "a: [\n",
    headers: { "content-type": "application/apply-patch+yaml" },
    code: 400,
  },
  {
    name: "apply body a YAML scalar",
    method: "PATCH",
    path: `${CM}/probe?fieldManager=t`,
    body: "hello\n",
    headers: { "content-type": "application/apply-patch+yaml" },
    code: 400,
  },
  {
    name: "apply without apiVersion/kind",
    method: "PATCH",
    path: `${CM}/probe?fieldManager=t`,
    body: '{"metadata":{"name":"probe"}}',
    headers: { "content-type": "application/apply-patch+yaml" },
    mayPass: true,
  },
  {
    name: "protobuf garbage",
    method: "POST",
    path: CM,
    body: new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0xff, 0xff, 0xff]),
    headers: { "content-type": "application/vnd.kubernetes.protobuf" },
  },
  {
    name: "protobuf empty",
    method: "POST",
    path: CM,
    body: new Uint8Array([]),
    headers: { "content-type": "application/vnd.kubernetes.protobuf" },
  },
  {
    name: "delete body garbage",
    method: "DELETE",
    path: `${CM}/probe`,
    body: "garbage",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body an array",
    method: "DELETE",
    path: `${CM}/probe`,
    body: "[]",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body null",
    method: "DELETE",
    path: `${CM}/probe`,
    body: "null",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body a string",
    method: "DELETE",
    path: `${CM}/probe`,
    body: '"x"',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body propagationPolicy a number",
    method: "DELETE",
    path: `${CM}/probe`,
    body: '{"propagationPolicy":5}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body dryRun a string",
    method: "DELETE",
    path: `${CM}/probe`,
    body: '{"dryRun":"All"}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body preconditions a string",
    method: "DELETE",
    path: `${CM}/probe`,
    body: '{"preconditions":"x"}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "delete body gracePeriodSeconds a string",
    method: "DELETE",
    path: `${CM}/probe`,
    body: '{"gracePeriodSeconds":"x"}',
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "deletecollection with a bad selector",
    method: "DELETE",
    path: `${CM}?labelSelector=!!`,
    code: 400,
  },
  {
    name: "deletecollection body garbage",
    method: "DELETE",
    path: CM,
    body: "garbage",
    headers: JSON_TYPE,
    code: 400,
  },
  // Headers.
  {
    name: "Accept garbage",
    path: `${CM}/probe`,
    headers: { accept: ";;;garbage/===" },
    mayPass: true,
  },
  {
    name: "Accept protobuf only",
    path: `${CM}/probe`,
    headers: { accept: "application/vnd.kubernetes.protobuf" },
    mayPass: true,
  },
  {
    name: "Accept Table garbage",
    path: CM,
    headers: { accept: "application/json;as=Table;v=v9;g=nope" },
    mayPass: true,
  },
  {
    name: "huge header (64 KiB)",
    path: `${CM}/probe`,
    headers: { "x-big": "x".repeat(64 * 1024) },
    mayPass: true,
  },
  {
    name: "Impersonate-User empty",
    path: `${CM}/probe`,
    headers: { "impersonate-user": "" },
    mayPass: true,
  },
  {
    name: "Impersonate-Group without user",
    path: `${CM}/probe`,
    headers: { "impersonate-group": "g" },
    code: 500,
  },
  {
    name: "Content-Length not a number",
    method: "POST",
    path: CM,
    body: "{}",
    headers: { ...JSON_TYPE },
    mayPass: true,
  },
  // Admin endpoints.
  {
    name: "admin faults garbage",
    method: "PATCH",
    path: "/admin/faults",
    body: "garbage",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "admin faults an array",
    method: "PATCH",
    path: "/admin/faults",
    body: "[]",
    headers: JSON_TYPE,
    mayPass: true,
  },
  {
    name: "admin faults null",
    method: "PUT",
    path: "/admin/faults",
    body: "null",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "admin faults wrong types",
    method: "PATCH",
    path: "/admin/faults",
    body: '{"errorRate":"x","latencyMs":{}}',
    headers: JSON_TYPE,
    code: 400,
  },
  // Reviews and tokens.
  {
    name: "SelfSubjectAccessReview body an array",
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    body: "[]",
    headers: JSON_TYPE,
    code: 400,
  },
  {
    name: "SelfSubjectAccessReview spec a string",
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    body: '{"spec":"x"}',
    headers: JSON_TYPE,
  },
  {
    name: "TokenRequest body an array",
    method: "POST",
    path: "/api/v1/namespaces/default/serviceaccounts/default/token",
    body: "[]",
    headers: JSON_TYPE,
  },
  {
    name: "TokenRequest expiration a string",
    method: "POST",
    path: "/api/v1/namespaces/default/serviceaccounts/default/token",
    body: '{"spec":{"expirationSeconds":"x"}}',
    headers: JSON_TYPE,
  },
];

/** Sends one case; the answer's status and parsed body. */
async function send(
  base: string,
  c: Case,
): Promise<{ status: number; body: unknown; text: string }> {
  const init: RequestInit = { method: c.method ?? "GET", headers: c.headers ?? {} };
  if (c.body !== undefined) init.body = c.body;
  const res = await fetch(`${base}${c.path}`, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** A GET that must work after each malformed request. */
async function assertServes(
  base: string,
  label: string,
  headers: Record<string, string> = {},
  path = `${CM}/probe`,
) {
  const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200, `${label}: the server serves afterwards`);
  await res.body?.cancel();
}

Deno.test("every malformed request is a 4xx Status, and the server serves on", async () => {
  await using api = await startApiServer();
  const made = await fetch(`${api.url}${CM}`, {
    method: "POST",
    body: JSON.stringify({ metadata: { name: "probe" }, data: { a: "b" } }),
    headers: JSON_TYPE,
  });
  assert.equal(made.status, 201);
  await made.body?.cancel();
  const failures: string[] = [];
  for (const c of cases) {
    let answer;
    try {
      answer = await send(api.url, c);
    } catch (e) {
      failures.push(`${c.name}: no answer (${(e as Error).message})`);
      continue;
    }
    const { status, body, text } = answer;
    const status4xx = status >= 400 && status < 500;
    const ok = c.code === 500
      ? status === 500
      : c.mayPass
      ? status < 500
      : c.code
      ? status === c.code
      : status4xx;
    if (!ok) failures.push(`${c.name}: ${status} ${text.slice(0, 200)}`);
    if (c.plain) {
      if (text !== "404 page not found\n") failures.push(`${c.name}: not plain text: ${text}`);
    } else if (status >= 400) {
      const s = body as { kind?: string; code?: number; message?: string } | undefined;
      if (s?.kind !== "Status" || s.code !== status || !s.message) {
        failures.push(`${c.name}: not a Status: ${status} ${text.slice(0, 200)}`);
      }
    }
    try {
      await assertServes(api.url, c.name);
    } catch (e) {
      failures.push(`${c.name}: ${(e as Error).message}`);
    }
    // Restore the probe if a case deleted or changed it.
    const probe = await fetch(`${api.url}${CM}/probe`);
    if (probe.status === 404) {
      await fetch(`${api.url}${CM}`, {
        method: "POST",
        body: JSON.stringify({ metadata: { name: "probe" }, data: { a: "b" } }),
        headers: JSON_TYPE,
      }).then((r) => r.body?.cancel());
    }
    await probe.body?.cancel();
  }
  assert.deepEqual(failures, []);
  // The one 500 is kube-apiserver's own answer (its impersonation filter's InternalError).
  assert.equal(api.countRequests({ code: 500 }), 1, "no other request answered 500");
});

Deno.test("a garbage Authorization header is 401 with a token configured, over and over", async () => {
  await using api = await startApiServer({ token });
  for (
    const header of [
      "garbage",
      "Bearer",
      "Bearer ",
      "Basic !!!",
      `Bearer ${"x".repeat(10_000)}`,
      "Bearer a b c",
    ]
  ) {
    const r = await send(api.url, {
      name: header,
      path: `${ALL}`,
      headers: { authorization: header },
    });
    assert.equal(r.status, 401, `${header.slice(0, 20)}: ${r.text.slice(0, 200)}`);
    assert.equal((r.body as { kind: string }).kind, "Status");
  }
  await assertServes(api.url, "after garbage tokens", { authorization: `Bearer ${token}` }, NS);
});

Deno.test("malformed framing on a raw connection: the server answers 4xx or closes, and serves on", async () => {
  await using api = await startApiServer();
  const frames = [
    "GARBAGE\r\n\r\n",
    "GET / HTTP/9.9\r\n\r\n",
    "GET /api HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
    "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "GET /api HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n",
    `GET /api HTTP/1.1\r\nHost: x\r\nX-Big: ${"y".repeat(2 * 1024 * 1024)}\r\n\r\n`,
    "FROB /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n\r\n",
  ];
  for (const frame of frames) {
    const conn = await Deno.connect({ port: api.port });
    await conn.write(new TextEncoder().encode(frame)).catch(() => 0);
    const buf = new Uint8Array(2048);
    const timer = setTimeout(() => conn.close(), 10_000);
    let head = "";
    try {
      const n = await conn.read(buf);
      head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    } catch {
      head = "(reset)";
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch { /* closed by the timer */ }
    }
    assert.ok(
      !/^HTTP\/1\.[01] 5/.test(head),
      `${JSON.stringify(frame.slice(0, 60))}: ${head.slice(0, 100)}`,
    );
    await assertServes(api.url, JSON.stringify(frame.slice(0, 40)), {}, NS);
  }
});

Deno.test("bad watch and list parameters are worded as kube-apiserver words them", async () => {
  await using api = await startApiServer();
  const expectations: [string, string][] = [
    [`${CM}?watch=true&timeoutSeconds=abc`, 'strconv.ParseInt: parsing "abc": invalid syntax'],
    [`${CM}?timeoutSeconds=1.5`, 'strconv.ParseInt: parsing "1.5": invalid syntax'],
    [
      `${CM}?watch=true&resourceVersion=-5`,
      'resourceVersion: Invalid value: "-5": strconv.ParseUint: parsing "-5": invalid syntax',
    ],
  ];
  for (const [path, message] of expectations) {
    const res = await fetch(`${api.url}${path}`);
    const body = await res.json();
    assert.equal(res.status, 400, path);
    assert.deepEqual([body.kind, body.reason, body.code, body.message], [
      "Status",
      "BadRequest",
      400,
      message,
    ], path);
  }
});
