import assert from "node:assert/strict";
import { readPins } from "../../tools/check_deps.ts";
import {
  exampleFindings,
  type ExampleImportRules,
  exampleImports,
  judgeExampleImport,
  unexpectedFindings,
} from "../../tools/check_docs.ts";

const OUTPUT = [
  "\x1b[1m\x1b[31merror[missing-jsdoc]\x1b[0m: \x1b[1mexported symbol is missing JSDoc documentation\x1b[0m",
  "  \x1b[38;5;12m-->\x1b[0m \x1b[36m/repo/src/a.ts\x1b[0m:\x1b[33m7\x1b[0m:\x1b[33m3\x1b[0m",
  "",
  "error[private-type-ref]: public type 'ResourceDefinition' references private type 'TSchema'",
  "  --> /repo/src/cogs/structs/typed_resources.ts:60:3",
  "",
  "error[private-type-ref]: public type 'f' references private type 'Hidden'",
  "  --> /repo/src/b.ts:1:1",
  "",
  "error: Found 3 documentation lint errors.",
].join("\n");

const ACCEPTED: ReadonlyMap<string, string> = new Map([
  [
    "error[private-type-ref]: public type 'ResourceDefinition' references private type 'TSchema'",
    "a reason",
  ],
]);

Deno.test("check_docs: findings other than the accepted ones fail, with where they are", () => {
  assert.deepEqual(unexpectedFindings(OUTPUT, ACCEPTED), [
    "error[missing-jsdoc]: exported symbol is missing JSDoc documentation (/repo/src/a.ts:7:3)",
    "error[private-type-ref]: public type 'f' references private type 'Hidden' (/repo/src/b.ts:1:1)",
  ]);
  assert.equal(unexpectedFindings(OUTPUT, new Map()).length, 3);
  assert.deepEqual(unexpectedFindings("Checked 4 files\n", ACCEPTED), []);
});

const RULES: ExampleImportRules = {
  rootUrl: "file:///repo/",
  packageNames: new Set(["@kopf/kopf", "@kopf/kopf/testing"]),
  pins: readPins({ "yaml": "npm:yaml@^2.8.0" }),
};

Deno.test("`exampleImports()` finds static, type, side-effect and dynamic imports in the code fences", () => {
  const doc = [
    'Some prose that says from "nowhere".',
    "```ts",
    'import * as kopf from "../../mod.ts";',
    'import type { X } from "./x.ts";',
    'import "npm:reflect-metadata@^0.2";',
    'const y = await import("npm:yaml@^2.8.0");',
    'export { z } from "node:path";',
    "```",
    "```sh",
    'deno run -A cli.ts run from "shell.ts"',
    "```",
  ].join("\n");
  assert.deepEqual(exampleImports(doc), [
    "../../mod.ts",
    "./x.ts",
    "npm:reflect-metadata@^0.2",
    "npm:yaml@^2.8.0",
    "node:path",
  ]);
});

Deno.test("`judgeExampleImport()` accepts the public files, the package's name, node: and pinned npm:", () => {
  const file = "file:///repo/src/cogs/configs/settings.ts";
  for (const s of ["../../../mod.ts", "../../../testing.ts", "@kopf/kopf", "node:assert/strict"]) {
    assert.equal(judgeExampleImport(s, file, RULES), undefined, s);
  }
  assert.equal(judgeExampleImport("npm:yaml@^2.8.0", file, RULES), undefined);
  assert.equal(judgeExampleImport("./mod.ts", "file:///repo/mod.ts", RULES), undefined);
});

Deno.test("`judgeExampleImport()` refuses internal files, bare names and unpinned packages", () => {
  const file = "file:///repo/src/cogs/configs/settings.ts";
  assert.match(judgeExampleImport("./settings.ts", file, RULES)!, /an internal file/);
  // A file named mod.ts that is not the public one.
  assert.match(judgeExampleImport("./mod.ts", file, RULES)!, /an internal file/);
  assert.match(judgeExampleImport("yaml", file, RULES)!, /write "npm:yaml@\^2\.8\.0"/);
  assert.match(judgeExampleImport("npm:yaml@^1", file, RULES)!, /deno.json pins/);
  assert.match(judgeExampleImport("@kopf/kopf/internal", file, RULES)!, /neither relative/);
});

Deno.test("`exampleFindings()` names the symbol (and member) and the file of each example a user could not copy", () => {
  const example = (from: string) => ({
    kind: "example",
    doc: `\`\`\`ts\nimport { A } from "${from}";\n\`\`\``,
  });
  const doc = {
    nodes: {
      "file:///repo/mod.ts": {
        module_doc: { jsDoc: { tags: [example("./mod.ts")] } },
        symbols: [
          {
            name: "AdmissionSettings",
            declarations: [{
              location: { filename: "file:///repo/src/cogs/configs/settings.ts", line: 511 },
              jsDoc: { tags: [example("./settings.ts")] },
              def: {
                methods: [{
                  name: "check",
                  location: { filename: "file:///repo/src/cogs/configs/settings.ts", line: 530 },
                  jsDoc: { tags: [example("../../../mod.ts"), example("../structs/x.ts")] },
                }],
              },
            }],
          },
          {
            name: "fine",
            declarations: [{
              location: { filename: "file:///repo/src/a/b.ts", line: 3 },
              jsDoc: { tags: [example("../../testing.ts")] },
            }],
          },
        ],
      },
    },
  };
  assert.deepEqual(exampleFindings(doc, RULES), [
    'AdmissionSettings (src/cogs/configs/settings.ts:511): the example imports "./settings.ts", ' +
    "an internal file: import the public files (mod.ts, on.ts, testing.ts, cli.ts, apiserver.ts) " +
    "where the name is exported, as a user does",
    "AdmissionSettings.check (src/cogs/configs/settings.ts:530): the example imports " +
    '"../structs/x.ts", an internal file: import the public files (mod.ts, on.ts, testing.ts, ' +
    "cli.ts, apiserver.ts) where the name is exported, as a user does",
  ]);
});
