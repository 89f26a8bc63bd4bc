import assert from "node:assert/strict";
import {
  AnnotationKeys,
  detectMarkedPrefixes,
  makeSafeKey,
  makeSuffix,
  markKey,
  removeAnnotations,
  removeEmptyStanzas,
  storeMarker,
} from "../../src/cogs/configs/conventions.ts";
import { Patch } from "../../src/cogs/structs/patches.ts";

// How the vectors below were derived: Kopf's rule (kopf/_cogs/configs/conventions.py,
// StorageKeyFormingConvention) was restated in a few lines of Python on top of CPython's own
// hashlib and base64 — suffix = ("-" + base64.b64encode(hashlib.blake2b(key.encode("utf-8"),
// digest_size=4).digest(), altchars=b"-.").decode()).rstrip("=-."); v2 hashes the ORIGINAL id
// when it is over 63 characters and keeps 63 - len(suffix) characters of the sanitised id;
// v1 counts the prefix and "/" into the 63 and hashes the SANITISED id — and the outputs for
// these ids were copied here. They do not depend on this port's BLAKE2b in any way.
const LONG_60 = "a_very_long_handler_identifier_for_the_kopfexamples_resource"; // 60 characters
const LONG_65 = `${LONG_60}/sub1`; // 65 characters

Deno.test("makeSafeKey() replaces / < >", () => {
  assert.equal(makeSafeKey("create_fn/sub1"), "create_fn.sub1");
  assert.equal(makeSafeKey("short<lambda>"), "short_lambda_");
});

Deno.test("makeSuffix() is Kopf's blake2b-32 in base64 with -. altchars", () => {
  assert.equal(makeSuffix("abc"), "-Y5BiSA");
  assert.equal(makeSuffix("create_fn/sub1"), "-GrIzsA");
  assert.equal(makeSuffix("create_fn.sub1"), "-nnI9Vw");
  assert.equal(makeSuffix(LONG_65), "-PBu3DQ");
  assert.equal(makeSuffix("last-handled-configuration"), "-a.A3qw"); // "/" → "."
});

Deno.test("AnnotationKeys: short ids give one key in both forms", () => {
  const keys = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: true });
  assert.deepEqual(keys.makeKeys("create_fn"), ["kopf.zalando.org/create_fn"]);
  assert.deepEqual(keys.makeKeys("create_fn/sub1"), ["kopf.zalando.org/create_fn.sub1"]);
  assert.deepEqual(keys.makeKeys("short<lambda>"), ["kopf.zalando.org/short_lambda_"]);
});

Deno.test("AnnotationKeys: long ids are cut and hash-suffixed exactly as Kopf does", () => {
  const keys = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: true });
  // 60 characters: fits the v2 name limit, but not v1's whole-key limit.
  assert.deepEqual(keys.makeKeys(LONG_60), [
    `kopf.zalando.org/${LONG_60}`,
    "kopf.zalando.org/a_very_long_handler_identifier_for_the_-2g6hUA",
  ]);
  // 65 characters: both are cut; v2 hashes the original id, v1 the sanitised one.
  assert.deepEqual(keys.makeKeys(LONG_65), [
    "kopf.zalando.org/a_very_long_handler_identifier_for_the_kopfexamples_reso-PBu3DQ",
    "kopf.zalando.org/a_very_long_handler_identifier_for_the_-g9pOug",
  ]);
  assert.equal(keys.makeV2Key("x".repeat(63)), `kopf.zalando.org/${"x".repeat(63)}`);
  assert.equal(keys.makeV2Key("x".repeat(64)), `kopf.zalando.org/${"x".repeat(56)}-SItAqA`);
  assert.equal(keys.makeV1Key("x".repeat(63)), `kopf.zalando.org/${"x".repeat(39)}-GINbRg`);
  for (const key of keys.makeKeys(LONG_65)) {
    assert.ok(key.split("/")[1]!.length <= 63);
  }
  const v2only = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: false });
  assert.deepEqual(v2only.makeKeys(LONG_60), [`kopf.zalando.org/${LONG_60}`]);
});

Deno.test("AnnotationKeys: an empty prefix is refused", () => {
  assert.throws(() => new AnnotationKeys({ prefix: "", v1: true }), TypeError);
});

Deno.test("markKey() marks keys of ReplicaSets owned by Deployments only", () => {
  const owned = { kind: "ReplicaSet", metadata: { ownerReferences: [{ kind: "Deployment" }] } };
  assert.equal(markKey("fn", owned), "fn-ofDRS");
  assert.equal(markKey("fn", { kind: "ReplicaSet", metadata: {} }), "fn");
  assert.equal(markKey("fn", { kind: "Pod", metadata: owned.metadata }), "fn");
  const keys = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: true });
  assert.deepEqual(keys.makeKeys("fn", owned), ["kopf.zalando.org/fn-ofDRS"]);
});

Deno.test("detectMarkedPrefixes() finds Kopf's and marked prefixes", () => {
  const found = detectMarkedPrefixes([
    "kopf.zalando.org/fn",
    "other.kopf.zalando.org/fn",
    "my.example.com/kopf-managed",
    "my.example.com/fn",
    "unrelated.example.com/fn",
    "no-prefix",
  ]);
  assert.deepEqual([...found].sort(), [
    "kopf.zalando.org",
    "my.example.com",
    "other.kopf.zalando.org",
  ]);
});

Deno.test("storeMarker() brands custom prefixes once", () => {
  const patch = new Patch();
  storeMarker("kopf.zalando.org", patch, {});
  storeMarker("kopf.example.com", patch, {});
  assert.equal(patch.isEmpty(), true);
  storeMarker("my.example.com", patch, {});
  assert.deepEqual(patch.toJSON(), {
    metadata: { annotations: { "my.example.com/kopf-managed": "yes" } },
  });
  const marked = { metadata: { annotations: { "other.example.com/kopf-managed": "yes" } } };
  const patch2 = new Patch();
  storeMarker("other.example.com", patch2, marked);
  assert.equal(patch2.isEmpty(), true);
});

Deno.test("removeAnnotations() and removeEmptyStanzas() clean essences", () => {
  const essence = {
    spec: {},
    metadata: { labels: {}, annotations: { a: "1" } },
    status: {},
  };
  removeAnnotations(essence, ["a", "b"]);
  removeEmptyStanzas(essence);
  assert.deepEqual(essence, { spec: {} });
});

Deno.test("AnnotationKeys.keysOf() shares one frozen array per key; makeKeys() copies it", () => {
  const keys = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: true });
  const shared = keys.keysOf("create_fn/sub1");
  assert.equal(keys.keysOf("create_fn/sub1"), shared);
  assert.ok(Object.isFrozen(shared));
  const copy = keys.makeKeys("create_fn/sub1");
  assert.deepEqual(copy, [...shared]);
  copy.push("changed");
  assert.deepEqual(keys.makeKeys("create_fn/sub1"), [...shared]);
  const rs = { kind: "ReplicaSet", metadata: { ownerReferences: [{ kind: "Deployment" }] } };
  assert.deepEqual(keys.keysOf("fn", rs), ["kopf.zalando.org/fn-ofDRS"]);
});
