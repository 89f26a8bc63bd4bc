/**
 * tests/apiserver/_kubectl.ts's registration helpers: a test that needs kubectl says when it did
 * not run and why — with no kubectl at all, with only the plain one, with some versioned
 * binaries — instead of registering nothing. Each case runs a planted test file in a child
 * `deno test` whose `PATH` holds fake kubectl scripts (or none), so it does not depend on this
 * machine's kubectl.
 */

import assert from "node:assert/strict";
import { join } from "node:path";

const HELPER = new URL("./_kubectl.ts", import.meta.url).href;
const QUIET = new URL("../../tools/quiet_tests.ts", import.meta.url).pathname;

const PLANTED = `import { testEachKubectl, testWithKubectl } from "${HELPER}";
testEachKubectl(["1.27", "1.33"], "matrix", async (binary) => {
  if (!binary.path.includes("kubectl")) throw new Error(binary.path);
});
testEachKubectl(["1.27", "1.33"], "exact", async () => {}, { exact: true });
testWithKubectl("plain", async () => {});
`;

/** Runs the planted file with `PATH` = `bin` (fake kubectl scripts in it, or none). */
async function runWith(bin: string, scripts: string[]): Promise<string> {
  for (const name of scripts) {
    await Deno.writeTextFile(join(bin, name), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  }
  const file = join(bin, "..", "planted_test.ts");
  await Deno.writeTextFile(file, PLANTED);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", QUIET, "deno", "test", "-A", "--no-check", file],
    env: { PATH: bin, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  return text;
}

/** The tests' report lines, "name ... outcome", in the order registered. */
function outcomes(text: string): string[] {
  return [...text.matchAll(/^(.*) \.\.\. (ok|ignored)/gm)].map(([, name, how]) =>
    `${name}: ${how}`
  );
}

async function withBin(fn: (bin: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-kubectl-matrix-" });
  try {
    await Deno.mkdir(join(dir, "bin"));
    await fn(join(dir, "bin"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const NONE = "not run: kubectl not found on PATH; install kubectl, e.g. Debian's kubernetes-client";

Deno.test("no kubectl on PATH: every test that needs it is listed as not run, with the reason", async () => {
  await withBin(async (bin) => {
    const text = await runWith(bin, []);
    assert.deepEqual(outcomes(text), [
      `kubectl 1.27: matrix (${NONE}): ignored`,
      `kubectl 1.33: matrix (${NONE}): ignored`,
      `kubectl 1.27: exact (${NONE}): ignored`,
      `kubectl 1.33: exact (${NONE}): ignored`,
      `plain (${NONE}): ignored`,
    ]);
    assert.match(text, /ok \| 0 passed \| 0 failed \| 5 ignored/);
    assert.match(text, /quiet_tests: 5 test\(s\) did not run here/);
    assert.match(text, /^ {2}5 — kubectl not found on PATH/m);
  });
});

Deno.test("only the plain kubectl: it runs the matrix once; each version it stands in for is named as not run", async () => {
  await withBin(async (bin) => {
    const text = await runWith(bin, ["kubectl"]);
    const beside = (v: string) => `kubectl.${v} not found beside ${bin}/kubectl`;
    assert.deepEqual(outcomes(text), [
      "kubectl (plain, for 1.27 and 1.33): matrix: ok",
      `kubectl 1.27: matrix (not run: ${
        beside("1.27")
      }; the plain kubectl ran in its place): ignored`,
      `kubectl 1.33: matrix (not run: ${
        beside("1.33")
      }; the plain kubectl ran in its place): ignored`,
      `kubectl 1.27: exact (not run: ${beside("1.27")}): ignored`,
      `kubectl 1.33: exact (not run: ${beside("1.33")}): ignored`,
      "plain: ok",
    ]);
  });
});

Deno.test("kubectl.1.27 beside kubectl, no kubectl.1.33: 1.27 runs as itself; 1.33 is said not run", async () => {
  await withBin(async (bin) => {
    const text = await runWith(bin, ["kubectl", "kubectl.1.27"]);
    const beside = `kubectl.1.33 not found beside ${bin}/kubectl`;
    assert.deepEqual(outcomes(text), [
      "kubectl 1.27: matrix: ok",
      "kubectl (plain, for 1.33): matrix: ok",
      `kubectl 1.33: matrix (not run: ${beside}; the plain kubectl ran in its place): ignored`,
      "kubectl 1.27: exact: ok",
      `kubectl 1.33: exact (not run: ${beside}): ignored`,
      "plain: ok",
    ]);
  });
});
