/**
 * The runner of the JSDoc examples ([_jsdoc_examples.ts](./_jsdoc_examples.ts)): it finds every
 * example that `deno test --doc` would run and no other, a wrong stated result fails it, its
 * failure names the source file's line, and every source file with examples is in a group that
 * one of the `jsdoc_examples_*_test.ts` files runs.
 */

import assert from "node:assert/strict";
import { exampleModule, examplesOf, groupOf, GROUPS, sourceFiles } from "./_jsdoc_examples.ts";

const ROOT = new URL("../../", import.meta.url);

const SOURCE = [
  "/**",
  " * Twice.",
  " *",
  " * @example",
  " * ```ts",
  ' * import assert from "node:assert/strict";',
  ' * import { twice } from "./twice.ts";',
  " *",
  " * assert.equal(twice(2), 5);",
  " * ```",
  " *",
  " * ```ts ignore",
  " * twice(ignored);",
  " * ```",
  " *",
  " * ```sh",
  " * deno run twice.ts",
  " * ```",
  " */",
  "export function twice(n: number): number {",
  "  return n * 2;",
  "}",
].join("\n");

Deno.test("JSDoc examples: a `ts` block is an example; `ts ignore` and `sh` blocks are not", () => {
  const found = examplesOf("src/twice.ts", SOURCE);
  assert.deepEqual(found, [{
    file: "src/twice.ts",
    first: 5,
    last: 10,
    lines: [
      'import assert from "node:assert/strict";',
      'import { twice } from "./twice.ts";',
      "",
      "assert.equal(twice(2), 5);",
    ],
  }]);
});

Deno.test("JSDoc examples: a wrong stated result fails, and the failure names the source file's line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-examples-" });
  try {
    await Deno.writeTextFile(`${dir}/twice.ts`, SOURCE);
    const fileUrl = new URL(`file://${dir}/twice.ts`).href;
    const [example] = examplesOf("twice.ts", SOURCE);
    const module = exampleModule(example!, fileUrl);
    // The relative import resolves from the file that holds the example.
    assert.match(module, new RegExp(`from "${fileUrl}"`));
    // Each line of the example sits at its line in the source file.
    assert.equal(module.split("\n")[8], "assert.equal(twice(2), 5);");
    const wrong = await import(`data:application/typescript,${encodeURIComponent(module)}`).then(
      () => undefined,
      (error: Error) => error,
    );
    assert.ok(wrong instanceof Error, "the example that states 2 × 2 = 5 passed");
    assert.match(wrong.message, /4 !== 5|Expected values to be strictly equal/);
    assert.match(wrong.stack ?? "", /:9:\d+/);
    const right = exampleModule({
      ...example!,
      lines: example!.lines.with(3, "assert.equal(twice(2), 4);"),
    }, fileUrl);
    await import(`data:application/typescript,${encodeURIComponent(right)}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JSDoc examples: two examples of the same text are two modules, each evaluated", () => {
  const example = { file: "a.ts", first: 3, last: 5, lines: ["globalThis.x = 1;"] };
  assert.notEqual(
    exampleModule(example, "file:///a.ts"),
    exampleModule({ ...example, first: 7, last: 9 }, "file:///a.ts"),
  );
});

Deno.test("JSDoc examples: every source file with examples is in exactly one group, and each group has a test file", async () => {
  const ungrouped: string[] = [];
  for (const file of sourceFiles()) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    if (examplesOf(file, text).length > 0 && groupOf(file) === undefined) ungrouped.push(file);
    const groups = Object.entries(GROUPS).filter(([, ps]) =>
      ps.some((p) => p.endsWith("/") ? file.startsWith(p) : file === p)
    );
    assert.ok(groups.length <= 1, `${file} is in the groups ${groups.map(([g]) => g)}`);
  }
  assert.deepEqual(ungrouped, [], "source files whose examples no group runs: add them to GROUPS");
  for (const group of Object.keys(GROUPS)) {
    const test = await Deno.readTextFile(
      new URL(`jsdoc_examples_${group}_test.ts`, import.meta.url),
    );
    assert.match(test, new RegExp(`testExamples\\("${group}"\\)`));
  }
});
