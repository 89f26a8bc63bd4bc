/**
 * The kubeconfig's path operations (src/cogs/clients/_paths.ts) give what `node:path` gives, which
 * they replace (so that an operator does not load Node's `process` to find its kubeconfig): the
 * same joined, normalised paths and directories for the forms a kubeconfig holds.
 *
 * @module
 */

import assert from "node:assert/strict";
import { dirname, isAbsolute, join, sep } from "node:path";
import { directoryOf, isAbsolutePath, joinPath, SEPARATOR } from "../../src/cogs/clients/_paths.ts";

const PATHS = [
  "",
  ".",
  "..",
  "/",
  "//",
  "config",
  "/config",
  "/home/u/.kube/config",
  "/home/u/.kube/",
  "/home/u/.kube//config",
  "certs/ca.crt",
  "./certs/ca.crt",
  "../certs/ca.crt",
  "../../../x",
  "a/./b/../c",
  "/a/../../b",
  "a/b/",
  "bin/kubectl-plugin",
];

Deno.test("joinPath() joins and normalises as node:path's join()", () => {
  for (const a of PATHS) {
    for (const b of PATHS) {
      assert.equal(joinPath(a, b), join(a, b), `join(${JSON.stringify(a)}, ${JSON.stringify(b)})`);
    }
  }
  assert.equal(joinPath("/home/u", ".kube", "config"), join("/home/u", ".kube", "config"));
});

Deno.test("directoryOf() and isAbsolutePath() give node:path's dirname() and isAbsolute()", () => {
  for (const path of PATHS) {
    assert.equal(directoryOf(path), dirname(path), `dirname(${JSON.stringify(path)})`);
    assert.equal(isAbsolutePath(path), isAbsolute(path), `isAbsolute(${JSON.stringify(path)})`);
  }
  assert.equal(SEPARATOR, sep);
});
