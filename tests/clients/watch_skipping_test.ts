/**
 * Watch lines of objects to skip, told apart undecoded (watch_skipping.ts): only when every
 * `"uid":"…"` of a compact ADDED or MODIFIED line is to be skipped; anything else is decoded —
 * never a wrong skip, at worst a decoded line more. Checked against JSON.parse on hostile lines.
 */

import assert from "node:assert/strict";
import { SKIPPED, skippingLines } from "../../src/cogs/clients/watch_skipping.ts";

const THEIRS = "0b7c0000-1f2e-4d3c-9b8a-000000000001";
const MINE = "0b7c0000-1f2e-4d3c-9b8a-000000000002";
const filter = skippingLines((uid) => uid === THEIRS);

/** What the line's object is: the decision must agree with its real metadata.uid. */
function check(line: string): unknown {
  const out = filter(line);
  const parsed = JSON.parse(line);
  if (out !== undefined) {
    assert.equal(parsed.object?.metadata?.uid, THEIRS, `skipped a line of ${line}`);
    assert.ok(parsed.type === "ADDED" || parsed.type === "MODIFIED", line);
  }
  return out;
}

Deno.test("skippingLines(): a compact ADDED/MODIFIED line of an object to skip stands as SKIPPED with its resourceVersion", () => {
  for (const type of ["ADDED", "MODIFIED"]) {
    const line = JSON.stringify({
      type,
      object: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "x", uid: THEIRS, resourceVersion: "42" },
        data: { a: "b" },
      },
    });
    assert.deepEqual(check(line), {
      type: SKIPPED,
      object: { metadata: { resourceVersion: "42" } },
    });
  }
  // Sorted keys (a custom resource's metadata): resourceVersion before uid.
  const sorted =
    `{"type":"MODIFIED","object":{"metadata":{"name":"x","resourceVersion":"7","uid":"${THEIRS}"}}}`;
  assert.deepEqual(check(sorted), {
    type: SKIPPED,
    object: { metadata: { resourceVersion: "7" } },
  });
});

Deno.test("skippingLines(): decoded — another type, our object, a nested uid of ours, other spellings, escapes", () => {
  const lines = [
    `{"type":"DELETED","object":{"metadata":{"uid":"${THEIRS}"}}}`,
    `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}`,
    `{"type":"ERROR","object":{"code":410}}`,
    `{"type":"MODIFIED","object":{"metadata":{"uid":"${MINE}"}}}`,
    // An owner reference's uid (listed before the object's own in sorted metadata) or a spec's.
    `{"type":"MODIFIED","object":{"metadata":{"ownerReferences":[{"uid":"${MINE}"}],"uid":"${THEIRS}"}}}`,
    `{"type":"MODIFIED","object":{"metadata":{"uid":"${THEIRS}"},"spec":{"uid":"${MINE}"}}}`,
    // The object's own uid with its key escaped, a nested one that looks like it is theirs.
    `{"type":"MODIFIED","object":{"metadata":{"\\u0075id":"${MINE}"},"spec":{"uid":"${THEIRS}"}}}`,
    `{"type":"MODIFIED","object":{"metadata":{"uid": "${MINE}"},"spec":{"uid":"${THEIRS}"}}}`,
    `{"type":"MODIFIED","object":{"metadata":{"uid":"${THEIRS}\\u0031"}}}`,
    `{"type":"MODIFIED","object":{"metadata":{"uid":"${THEIRS}\\""}}}`,
    // The type spelled otherwise, or not first.
    `{ "type":"MODIFIED","object":{"metadata":{"uid":"${THEIRS}"}}}`,
    `{"object":{"metadata":{"uid":"${THEIRS}"}},"type":"MODIFIED"}`,
    `{"type":"MODIFIEDX","object":{"metadata":{"uid":"${THEIRS}"}}}`,
    // No uid at all.
    `{"type":"MODIFIED","object":{"metadata":{"name":"x"}}}`,
  ];
  for (const line of lines) assert.equal(check(line), undefined, line);
});

Deno.test("skippingLines(): text that only looks like a uid key (in strings, escaped) never decides; an ambiguous resourceVersion is left out", () => {
  // Inside a string, quotes are escaped: no candidate there; the real uid decides.
  const annotated = JSON.stringify({
    type: "MODIFIED",
    object: {
      metadata: { annotations: { note: `"uid":"${MINE}"` }, uid: THEIRS, resourceVersion: "3" },
    },
  });
  assert.deepEqual(check(annotated), {
    type: SKIPPED,
    object: { metadata: { resourceVersion: "3" } },
  });
  // A key that ends in `"uid` (escaped quote inside the key) is a candidate too: decoded.
  const key =
    `{"type":"MODIFIED","object":{"metadata":{"uid":"${THEIRS}"},"data":{"x\\"uid":"${MINE}"}}}`;
  assert.equal(check(key), undefined);
  // Two resourceVersions (one in the spec): which is the object's is not known undecoded.
  const two = JSON.stringify({
    type: "MODIFIED",
    object: { metadata: { uid: THEIRS, resourceVersion: "3" }, spec: { resourceVersion: "1" } },
  });
  assert.deepEqual(check(two), { type: SKIPPED, object: { metadata: {} } });
});

Deno.test("skippingLines(): random mutations of real lines never skip a line whose object is not to be skipped", () => {
  let seed = 11;
  const next = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
  const base = JSON.stringify({
    type: "MODIFIED",
    object: {
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: {
        annotations: { "kopf.zalando.org/last-handled-configuration": '{"spec":{"uid":"x"}}' },
        name: "x",
        ownerReferences: [{ uid: MINE }],
        resourceVersion: "5",
        uid: THEIRS,
      },
      spec: { uid: THEIRS },
    },
  });
  const pieces = ['"uid":"', MINE, THEIRS, '\\"', '"', ",", "{", "}", " ", "\\\\"];
  let decided = 0;
  for (let i = 0; i < 5000; i++) {
    const at = next(base.length);
    const cut = next(8);
    const line = base.slice(0, at) + pieces[next(pieces.length)] + base.slice(at + cut);
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // not JSON: the splitter's parse throws for it as before (when decoded)
    }
    if (check(line) !== undefined) decided++;
    assert.ok(parsed !== undefined);
  }
  assert.ok(decided > 0, "some mutated lines are still skipped");
});
