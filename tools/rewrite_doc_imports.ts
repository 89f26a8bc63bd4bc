/**
 * Rewrites the imports of the doc comments' examples from relative paths of the public files
 * (`../../../mod.ts`, `../../testing.ts`…) to the package's own names (`@kopf/kopf`,
 * `@kopf/kopf/testing`…), as a user writes them. `deno test --doc` and `deno check --doc`
 * resolve the names through `deno.json`'s `name` and `exports` (the package refers to itself),
 * so the examples still run against the local files.
 *
 * Only lines of doc comments (` * …`) change; the code's own imports never do. Idempotent: run
 * it again after a merge brings new examples.
 *
 * Run: `deno run -A tools/rewrite_doc_imports.ts` (prints the files it changed).
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const root = fromFileUrl(new URL("..", import.meta.url));

/**
 * The package names of the public files: `deno.json`'s `exports` under its `name`.
 *
 * @param config The package's `deno.json`.
 * @returns Each public file (relative to the root, without `./`) with its package name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { packageNames } from "./rewrite_doc_imports.ts";
 * const names = packageNames({ name: "@kopf/kopf", exports: { ".": "./mod.ts", "./on": "./on.ts" } });
 * assert.deepEqual([...names], [["mod.ts", "@kopf/kopf"], ["on.ts", "@kopf/kopf/on"]]);
 * ```
 */
export function packageNames(
  config: { name: string; exports: Record<string, string> },
): Map<string, string> {
  const names = new Map<string, string>();
  for (const [key, file] of Object.entries(config.exports)) {
    names.set(
      file.replace(/^\.\//, ""),
      key === "." ? config.name : `${config.name}${key.slice(1)}`,
    );
  }
  return names;
}

/**
 * Rewrites one file's doc-comment imports of the public files to their package names.
 *
 * @param text The file's text.
 * @param file The file's path relative to the root, e.g. `src/core/intents/markers.ts`.
 * @param names The public files' package names ({@link packageNames}).
 * @returns The rewritten text (the same text when nothing matched).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rewriteDocImports } from "./rewrite_doc_imports.ts";
 * const names = new Map([["mod.ts", "@kopf/kopf"], ["testing.ts", "@kopf/kopf/testing"]]);
 * const text = [
 *   'import { x } from "./x.ts";',
 *   ' * import * as kopf from "../../../mod.ts";',
 *   ' * import { FakeClock } from "../../../testing.ts";',
 *   ' * import { y } from "./y.ts";',
 * ].join("\n");
 * assert.equal(rewriteDocImports(text, "src/cogs/aio/clock.ts", names), [
 *   'import { x } from "./x.ts";',
 *   ' * import * as kopf from "@kopf/kopf";',
 *   ' * import { FakeClock } from "@kopf/kopf/testing";',
 *   ' * import { y } from "./y.ts";',
 * ].join("\n"));
 * ```
 */
export function rewriteDocImports(
  text: string,
  file: string,
  names: ReadonlyMap<string, string>,
): string {
  const dir = dirname(file);
  return text.replace(
    /^(\s*\*.*?\b(?:from|import)\s*\(?\s*)"(\.{1,2}\/[^"]+)"/gm,
    (line, head: string, specifier: string) => {
      const target = join(dir, specifier);
      const name = names.get(target);
      return name === undefined ? line : `${head}"${name}"`;
    },
  );
}

if (import.meta.main) {
  const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json")));
  const names = packageNames(config);
  const files: string[] = [...names.keys()];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(join(root, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) files.push(path);
    }
  };
  await walk("src");
  for (const file of files) {
    const path = resolve(root, file);
    const text = await Deno.readTextFile(path);
    const rewritten = rewriteDocImports(text, file, names);
    if (rewritten !== text) {
      await Deno.writeTextFile(path, rewritten);
      console.log(relative(root, path));
    }
  }
}
