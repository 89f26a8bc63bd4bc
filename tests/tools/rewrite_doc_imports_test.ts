import assert from "node:assert/strict";
import { packageNames, rewriteDocImports } from "../../tools/rewrite_doc_imports.ts";

const NAMES = packageNames({
  name: "@kopf/kopf",
  exports: { ".": "./mod.ts", "./testing": "./testing.ts", "./apiserver": "./apiserver.ts" },
});

Deno.test("`rewriteDocImports()` names the public files in doc comments, at any depth, and only there", () => {
  const text = [
    'import { here } from "../../mod.ts";', // code, not a comment: kept
    " * ```ts",
    ' * import * as kopf from "../../mod.ts";',
    ' * import type { ApiStore } from "../../apiserver.ts";',
    ' * const { startApiServer } = await import("../../testing.ts");',
    ' * import { internal } from "./internal.ts";', // not a public file: kept
    ' * import { other } from "../mod.ts";', // src/mod.ts, not the root's: kept
    " * ```",
  ].join("\n");
  assert.deepEqual(rewriteDocImports(text, "src/a/b.ts", NAMES).split("\n"), [
    'import { here } from "../../mod.ts";',
    " * ```ts",
    ' * import * as kopf from "@kopf/kopf";',
    ' * import type { ApiStore } from "@kopf/kopf/apiserver";',
    ' * const { startApiServer } = await import("@kopf/kopf/testing");',
    ' * import { internal } from "./internal.ts";',
    ' * import { other } from "../mod.ts";',
    " * ```",
  ]);
});

Deno.test("`rewriteDocImports()` is idempotent and reads the root's own files as `./`", () => {
  const text = ' * import * as kopf from "./mod.ts";\n * import { x } from "@kopf/kopf";';
  const once = rewriteDocImports(text, "mod.ts", NAMES);
  assert.equal(once, ' * import * as kopf from "@kopf/kopf";\n * import { x } from "@kopf/kopf";');
  assert.equal(rewriteDocImports(once, "mod.ts", NAMES), once);
});
