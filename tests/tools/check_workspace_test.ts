/**
 * The workspace check (tools/check_workspace.ts): the members' configurations against the
 * root's, and the imports written in the members' files — each rule with a case that breaks it
 * and one that keeps it; and the check passes on this repository.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  configProblems,
  type GraphModule,
  importProblems,
  type Member,
  type PackageConfig,
} from "../../tools/check_workspace.ts";
import { readPins } from "../../tools/check_deps.ts";

const ROOT_CONFIG: PackageConfig = {
  name: "@kopf/kopf",
  version: "1.2.3",
  license: "MIT",
  exports: { ".": "./mod.ts", "./cli": "./cli.ts" },
  workspace: ["./packages/cli"],
};
const CLI: PackageConfig = {
  name: "@kopf/cli",
  version: "1.2.3",
  license: "MIT",
  exports: { ".": "./main.ts" },
};
const member = (config: PackageConfig): Member[] => [{ dir: "packages/cli", config }];

Deno.test("configProblems(): a member in step with the root passes", () => {
  assert.deepEqual(configProblems(ROOT_CONFIG, member(CLI), "1.2.3"), []);
  // exports as a plain string is an entry too.
  assert.deepEqual(
    configProblems(ROOT_CONFIG, member({ ...CLI, exports: "./main.ts" }), "1.2.3"),
    [],
  );
});

Deno.test("configProblems(): a member's version that is not the root's fails, naming both", () => {
  assert.deepEqual(configProblems(ROOT_CONFIG, member({ ...CLI, version: "1.2.4" }), "1.2.3"), [
    'packages/cli/deno.json: "version" is "1.2.4", the root\'s is "1.2.3": members are ' +
    "released with the module, write the same version",
  ]);
  const { version: _, ...unversioned } = CLI;
  assert.match(
    configProblems(ROOT_CONFIG, member(unversioned), "1.2.3").join("\n"),
    /"version" is undefined, the root's is "1\.2\.3"/,
  );
});

Deno.test("configProblems(): the module's VERSION constant that is not deno.json's fails", () => {
  assert.deepEqual(configProblems(ROOT_CONFIG, member(CLI), "1.2.2"), [
    'src/cogs/configs/version.ts: VERSION is "1.2.2", deno.json\'s "version" is "1.2.3": ' +
    "write the same version in both",
  ]);
});

Deno.test("configProblems(): no name, no '.' export, another license, own imports, no members", () => {
  const { name: _, ...nameless } = CLI;
  assert.match(
    configProblems(ROOT_CONFIG, member(nameless), "1.2.3").join("\n"),
    /packages\/cli\/deno\.json: no "name"/,
  );
  assert.match(
    configProblems(ROOT_CONFIG, member({ ...CLI, exports: { "./x": "./x.ts" } }), "1.2.3")
      .join("\n"),
    /no "exports" with "\."/,
  );
  assert.match(
    configProblems(ROOT_CONFIG, member({ ...CLI, license: "Apache-2.0" }), "1.2.3").join("\n"),
    /"license" is "Apache-2\.0", the root's is "MIT"/,
  );
  assert.match(
    configProblems(ROOT_CONFIG, member({ ...CLI, imports: { "x": "npm:x@^1" } }), "1.2.3")
      .join("\n"),
    /"imports" of its own/,
  );
  assert.deepEqual(configProblems(ROOT_CONFIG, [], "1.2.3"), [
    'deno.json: "workspace" lists no members',
  ]);
});

const PACKAGES = [{ name: "@kopf/kopf", dir: "" }, { name: "@kopf/cli", dir: "packages/cli" }];
const PINS = readPins({ "js-yaml": "npm:js-yaml@^5" });

/** The member's entry importing `specifier`, which resolved to `resolved`. */
function entryImporting(specifier: string, resolved: string): GraphModule[] {
  return [
    {
      specifier: "file:///repo/packages/cli/main.ts",
      dependencies: [{ specifier, code: { specifier: resolved } }],
    },
    // The root's own files may import relatively: they are not a member's.
    {
      specifier: "file:///repo/cli.ts",
      dependencies: [{ specifier: "./src/x.ts", code: { specifier: "file:///repo/src/x.ts" } }],
    },
  ];
}

Deno.test("importProblems(): package names resolved in the workspace, own files, node: and pinned npm: pass", () => {
  for (
    const [spec, resolved] of [
      ["@kopf/kopf/cli", "file:///repo/cli.ts"],
      ["@kopf/kopf", "file:///repo/mod.ts"],
      ["./_helper.ts", "file:///repo/packages/cli/_helper.ts"],
      ["node:process", "node:process"],
      ["npm:js-yaml@^5", "npm:/js-yaml@5.0.0"],
    ] as const
  ) {
    assert.deepEqual(
      importProblems("file:///repo/", PACKAGES, entryImporting(spec, resolved), PINS),
      [],
      spec,
    );
  }
});

Deno.test("importProblems(): a file outside the member (relative, absolute, file:) fails", () => {
  for (const spec of ["../../cli.ts", "/repo/cli.ts", "file:///repo/cli.ts"]) {
    assert.deepEqual(
      importProblems("file:///repo/", PACKAGES, entryImporting(spec, "file:///repo/cli.ts"), PINS),
      [
        `packages/cli/main.ts: "${spec}" is a file outside @kopf/cli: import it by its ` +
        `package name (e.g. "@kopf/kopf/…")`,
      ],
    );
  }
});

Deno.test("importProblems(): a package name that does not resolve to the workspace's files fails", () => {
  assert.deepEqual(
    importProblems(
      "file:///repo/",
      PACKAGES,
      entryImporting("@kopf/kopf/cli", "https://jsr.io/@kopf/kopf/1.2.3/cli.ts"),
      PINS,
    ),
    [
      'packages/cli/main.ts: "@kopf/kopf/cli" resolves to https://jsr.io/@kopf/kopf/1.2.3/cli.ts, ' +
      "not to @kopf/kopf's files (the root): is it listed in deno.json's \"workspace\"?",
    ],
  );
  // The root's name resolving into a member's folder is not the root's files either.
  assert.equal(
    importProblems(
      "file:///repo/",
      PACKAGES,
      entryImporting("@kopf/kopf", "file:///repo/packages/cli/main.ts"),
      PINS,
    ).length,
    1,
  );
});

Deno.test("importProblems(): jsr:@kopf/… and unpinned packages fail", () => {
  assert.match(
    importProblems(
      "file:///repo/",
      PACKAGES,
      entryImporting("jsr:@kopf/kopf@^1.2.3/cli", "file:///repo/cli.ts"),
      PINS,
    ).join("\n"),
    /names a workspace package by its registry specifier: write the bare package name/,
  );
  assert.match(
    importProblems(
      "file:///repo/",
      PACKAGES,
      entryImporting("npm:js-yaml@^4", "npm:/js-yaml@4.0.0"),
      PINS,
    ).join("\n"),
    /deno\.json pins "npm:js-yaml@\^5"/,
  );
});

Deno.test("tools/check_workspace.ts passes on this repository", async () => {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tools/check_workspace.ts"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  assert.match(dec.decode(out.stdout), /workspace check: @kopf\/kopf@\S+ with @kopf\/cli/);
});
