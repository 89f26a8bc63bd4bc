/**
 * ConfigMaps and Secrets are decoded and validated as kube-apiserver does:
 * wrong types and bad base64 are 400 in Go's words, bad keys and sizes 422.
 */
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const SECRETS = "/api/v1/namespaces/default/secrets";

Deno.test("ConfigMap and Secret fields of the wrong type are 400 in Go's decoder words; nothing stored", async () => {
  await using api = await startApiServer();
  const cases: [string, string, Record<string, unknown>, string][] = [
    [
      CM,
      "number in data",
      { data: { n: 1 } },
      "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
    ],
    [
      CM,
      "object in data",
      { data: { o: { a: "b" } } },
      "json: cannot unmarshal object into Go struct field ConfigMap.data of type string",
    ],
    [
      CM,
      "data a string",
      { data: "x" },
      "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string",
    ],
    [
      CM,
      "data an array",
      { data: ["x"] },
      "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string",
    ],
    [
      CM,
      "binaryData not base64",
      { binaryData: { b: "!!!" } },
      "illegal base64 data at input byte 0",
    ],
    [
      CM,
      "binaryData a number",
      { binaryData: { b: 5 } },
      "json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type []uint8",
    ],
    [
      CM,
      "immutable a string",
      { immutable: "yes" },
      "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool",
    ],
    [
      SECRETS,
      "secret data not base64",
      { data: { p: "not base64!" } },
      "illegal base64 data at input byte 3",
    ],
    [
      SECRETS,
      "secret data bad padding",
      { data: { p: "abc" } },
      "illegal base64 data at input byte 0",
    ],
    [
      SECRETS,
      "secret data a number",
      { data: { p: 1 } },
      "json: cannot unmarshal number into Go struct field Secret.data of type []uint8",
    ],
    [
      SECRETS,
      "stringData a bool",
      { stringData: { p: true } },
      "json: cannot unmarshal bool into Go struct field Secret.stringData of type string",
    ],
  ];
  for (const [path, label, fields, message] of cases) {
    const kind = path === CM ? "ConfigMap" : "Secret";
    const r = await call(api.url, "POST", path, { metadata: { name: "x" }, ...fields });
    assert.equal(r.status, 400, `${label}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.reason, "BadRequest", label);
    assert.equal(
      r.body.message,
      `${kind} in version "v1" cannot be handled as a ${kind}: ${message}`,
      label,
    );
    assert.equal((await call(api.url, "GET", `${path}/x`)).status, 404, `${label}: not stored`);
  }
  // And by a patch of a valid one.
  assert.equal(
    (await call(api.url, "POST", CM, { metadata: { name: "ok" }, data: { a: "b" } })).status,
    201,
  );
  const p = await call(
    api.url,
    "PATCH",
    `${CM}/ok`,
    { data: { a: 7 } },
    "application/merge-patch+json",
  );
  assert.equal(p.status, 400, JSON.stringify(p.body));
  assert.equal((await call(api.url, "GET", `${CM}/ok`)).body.data.a, "b");
});

Deno.test("ConfigMap and Secret keys and sizes are validated: 422 Invalid with causes", async () => {
  await using api = await startApiServer();
  const badKey = await call(api.url, "POST", CM, {
    metadata: { name: "k" },
    data: { "a b": "x", "..": "y" },
  });
  assert.equal(badKey.status, 422, JSON.stringify(badKey.body));
  assert.equal(badKey.body.reason, "Invalid");
  const fields = badKey.body.details.causes.map((c: { field: string }) => c.field);
  assert.ok(fields.includes("data[a b]") && fields.includes("data[..]"), JSON.stringify(fields));
  assert.match(badKey.body.message, /a valid config key must consist of alphanumeric characters/);

  const dup = await call(api.url, "POST", CM, {
    metadata: { name: "d" },
    data: { k: "x" },
    binaryData: { k: "eA==" },
  });
  assert.equal(dup.status, 422);
  assert.match(
    dup.body.message,
    /binaryData\[k\]: Invalid value: "k": duplicate of key present in data/,
  );

  const big = await call(api.url, "POST", CM, {
    metadata: { name: "big" },
    data: { a: "x".repeat(600_000), b: "y".repeat(600_000) },
  });
  assert.equal(big.status, 422, JSON.stringify(big.body).slice(0, 300));
  assert.match(big.body.message, /Too long: must have at most 1048576 bytes/);

  const bigSecret = await call(api.url, "POST", SECRETS, {
    metadata: { name: "big" },
    stringData: { a: "x".repeat(1_100_000) },
  });
  assert.equal(bigSecret.status, 422, JSON.stringify(bigSecret.body).slice(0, 300));
  assert.match(bigSecret.body.message, /data: Too long: must have at most 1048576 bytes/);

  const secretKey = await call(api.url, "POST", SECRETS, {
    metadata: { name: "sk" },
    data: { "no/slash": "eA==" },
  });
  assert.equal(secretKey.status, 422);

  for (const name of ["k", "d", "big"]) {
    assert.equal((await call(api.url, "GET", `${CM}/${name}`)).status, 404);
  }
});

Deno.test("valid ConfigMaps and Secrets are stored; stringData is folded into data", async () => {
  await using api = await startApiServer();
  const cm = await call(api.url, "POST", CM, {
    metadata: { name: "c" },
    data: { "key.name": "v", KEY_NAME: "", "key-name": "w" },
    binaryData: { bin: "AAEC", wrapped: "AAEC\nAAEC" },
    immutable: false,
  });
  assert.equal(cm.status, 201, JSON.stringify(cm.body));
  const s = await call(api.url, "POST", SECRETS, {
    metadata: { name: "s" },
    data: { a: "eA==", b: "eQ==" },
    stringData: { b: "héllo" },
  });
  assert.equal(s.status, 201, JSON.stringify(s.body));
  assert.deepEqual(s.body.data, { a: "eA==", b: btoa("h\u00c3\u00a9llo") });
  assert.equal(s.body.stringData, undefined);
  assert.equal(s.body.type, "Opaque");
  const got = await call(api.url, "GET", `${SECRETS}/s`);
  assert.equal(got.body.data.b, "aMOpbGxv");
  // The largest allowed: exactly 1 MiB of values.
  const max = await call(api.url, "POST", CM, {
    metadata: { name: "max" },
    data: { a: "x".repeat(1024 * 1024) },
  });
  assert.equal(max.status, 201);
});
