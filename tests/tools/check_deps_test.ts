import assert from "node:assert/strict";
import { judgeSpecifier, parsePackageSpecifier, readPins } from "../../tools/check_deps.ts";

const PINS = readPins({
  "yaml": "npm:yaml@^2.8.0",
  "@noble/hashes": "npm:@noble/hashes@^2",
  "@sinclair/typebox": "npm:@sinclair/typebox@^0.34",
});

Deno.test("`parsePackageSpecifier()` splits scheme, scoped name, range and subpath", () => {
  assert.deepEqual(parsePackageSpecifier("npm:@noble/hashes@^2/sha2.js"), {
    scheme: "npm",
    name: "@noble/hashes",
    range: "^2",
    subpath: "/sha2.js",
  });
  assert.deepEqual(parsePackageSpecifier("npm:yaml"), {
    scheme: "npm",
    name: "yaml",
    range: undefined,
    subpath: "",
  });
  assert.equal(parsePackageSpecifier("./x.ts"), undefined);
  assert.equal(parsePackageSpecifier("yaml"), undefined);
});

Deno.test("`judgeSpecifier()` accepts relative, node: and deno.json's exact pins (with subpaths)", () => {
  for (const s of ["./a.ts", "../b/c.ts", "node:path", "npm:yaml@^2.8.0"]) {
    assert.equal(judgeSpecifier(s, PINS), undefined, s);
  }
  assert.equal(judgeSpecifier("npm:@noble/hashes@^2/blake2.js", PINS), undefined);
  assert.equal(judgeSpecifier("npm:@sinclair/typebox@^0.34/value", PINS), undefined);
});

Deno.test("`judgeSpecifier()` refuses bare names and names the full specifier to write", () => {
  assert.match(
    judgeSpecifier("yaml", PINS)!,
    /only through this repository's import map.*"npm:yaml@\^2\.8\.0"/,
  );
  assert.match(
    judgeSpecifier("@sinclair/typebox/value", PINS)!,
    /write "npm:@sinclair\/typebox@\^0\.34\/value"/,
  );
  assert.match(judgeSpecifier("lodash", PINS)!, /neither relative, node: nor a package pinned/);
  assert.match(judgeSpecifier("https://example.com/x.ts", PINS)!, /neither relative/);
});

Deno.test("`judgeSpecifier()` refuses a range other than deno.json's, and an unknown package", () => {
  assert.match(judgeSpecifier("npm:yaml@^2", PINS)!, /deno.json pins "npm:yaml@\^2\.8\.0"/);
  assert.match(judgeSpecifier("npm:yaml", PINS)!, /deno.json pins/);
  assert.match(
    judgeSpecifier("npm:@noble/hashes@^1/sha2.js", PINS)!,
    /write "npm:@noble\/hashes@\^2\/sha2\.js"/,
  );
  assert.match(judgeSpecifier("npm:zod@^4", PINS)!, /zod is not in deno.json's imports/);
});

Deno.test("`readPins()` flags an import-map entry that pins no major", () => {
  assert.deepEqual(readPins({ "a": "npm:a@^1", "b": "npm:b", "c": "./c.ts" }).unpinned, [
    'deno.json imports "b": "npm:b" pins no major (write e.g. @^1)',
  ]);
});

Deno.test("`judgeSpecifier()` lets the module's own tests use the import map's names, not other ranges", () => {
  assert.equal(judgeSpecifier("yaml", PINS, { bare: true }), undefined);
  assert.equal(judgeSpecifier("@sinclair/typebox/value", PINS, { bare: true }), undefined);
  assert.match(judgeSpecifier("npm:yaml@^3", PINS, { bare: true })!, /deno.json pins/);
  assert.match(judgeSpecifier("lodash", PINS, { bare: true })!, /neither relative/);
});
