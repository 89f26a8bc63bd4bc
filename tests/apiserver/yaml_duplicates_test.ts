/**
 * Keys sent twice in YAML bodies — server-side apply's apply-patch+yaml (JSON
 * or YAML text) and a create's application/yaml — reported as kube-apiserver
 * reports them: go-yaml's `line N: key "k" already set in map`, a 400 under
 * fieldValidation=Strict, warnings by default, nothing under Ignore, the last
 * value kept; and JSON merge and strategic patches' duplicates by path.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
const APPLY = "application/apply-patch+yaml";
const APPLY_JSON = '{\n"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},\n' +
  '"data": {"a": "1",\n"a": "2",\n"b": "1",\n"b": "2"}}';
const YAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  name: x\n  bogus: 1\n" +
  'data:\n  a: "1"\n  a: "2"\n';

interface Row {
  name: string;
  method: string;
  path: string;
  type: string;
  body: string;
  code: number;
  message?: string;
  warnings?: string[];
  /** The stored data after a success. */
  data?: Record<string, string>;
}

const ROWS: Row[] = [
  {
    name: "an apply patch (JSON text) under Strict is go-yaml's 400",
    method: "PATCH",
    path: `${CMS}/x?fieldManager=m&fieldValidation=Strict`,
    type: APPLY,
    body: APPLY_JSON,
    code: 400,
    message:
      "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n" +
      '  line 4: key "a" already set in map\n  line 6: key "b" already set in map',
  },
  {
    name: "an apply patch warns by default, the last values kept",
    method: "PATCH",
    path: `${CMS}/x?fieldManager=m`,
    type: APPLY,
    body: APPLY_JSON,
    code: 201,
    warnings: ['line 4: key "a" already set in map', 'line 6: key "b" already set in map'],
    data: { a: "2", b: "2" },
  },
  {
    name: "an apply patch says nothing under Ignore",
    method: "PATCH",
    path: `${CMS}/x?fieldManager=m&fieldValidation=Ignore`,
    type: APPLY,
    body: APPLY_JSON,
    code: 201,
    warnings: [],
    data: { a: "2", b: "2" },
  },
  {
    name: "an apply patch in YAML under Warn",
    method: "PATCH",
    path: `${CMS}/x?fieldManager=m&fieldValidation=Warn`,
    type: APPLY,
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "1"\n  a: "3"\n',
    code: 201,
    warnings: ['line 7: key "a" already set in map'],
    data: { a: "3" },
  },
  {
    name: "a YAML create under Strict lists go-yaml's errors, then the unknown fields",
    method: "POST",
    path: `${CMS}?fieldValidation=Strict`,
    type: "application/yaml",
    body: YAML,
    code: 400,
    message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ' +
      'yaml: unmarshal errors:\n  line 5: key "name" already set in map\n' +
      '  line 9: key "a" already set in map, unknown field "metadata.bogus"',
  },
  {
    name: "a YAML create warns per key by default and is stored",
    method: "POST",
    path: CMS,
    type: "application/yaml",
    body: YAML,
    code: 201,
    warnings: [
      'line 5: key "name" already set in map',
      'line 9: key "a" already set in map',
      'unknown field "metadata.bogus"',
    ],
    data: { a: "2" },
  },
  {
    name: "a strategic merge patch's duplicates under Strict, by path",
    method: "PATCH",
    path: `${CMS}/existing?fieldValidation=Strict`,
    type: "application/strategic-merge-patch+json",
    body: '{"data": {"b": "1", "b": "2"}}',
    code: 400,
    message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ' +
      'duplicate field "data.b"',
  },
];

/** The texts of a response's `Warning` headers (`299 - "…"`), in order. */
function warningsOf(headers: Headers): string[] {
  const raw = headers.get("warning");
  if (!raw) return [];
  return [...raw.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`));
}

for (const row of ROWS) {
  Deno.test(`duplicate keys: ${row.name}`, async () => {
    await using api = await startApiServer();
    const made = await call(api.url, "POST", CMS, { metadata: { name: "existing" } });
    assert.equal(made.status, 201);
    const r = await call(api.url, row.method, row.path, row.body, row.type);
    assert.equal(r.status, row.code, JSON.stringify(r.body));
    if (row.message !== undefined) {
      assert.equal(r.body.reason, "BadRequest");
      assert.equal(r.body.message, row.message);
    }
    if (row.warnings) assert.deepEqual(warningsOf(r.headers), row.warnings);
    if (row.data) assert.deepEqual(r.body.data, row.data);
  });
}

// kubectl reads a manifest's YAML itself (a repeated key fails there, or is dropped) and sends
// `--raw` bodies as JSON: what it can bring to the server is a JSON body that repeats a key.
testEachKubectl(
  ["1.27", "1.33"],
  "kubectl create --raw with a body that repeats a key meets the server's strict decoding",
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const r = await k.fails(
      ["create", "--raw", `${CMS}?fieldValidation=Strict`, "-f", "-"],
      {
        stdin: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "name": "x"}}',
      },
    );
    assert.match(
      r.stderr,
      /Error from server \(BadRequest\): ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata\.name"/,
    );
  },
);
