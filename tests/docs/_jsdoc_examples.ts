/**
 * The JSDoc examples of the source files, run as tests: every fenced `ts` block in a doc comment
 * of the public files, `packages/` and `src/` is one test, named `file#first-last` after the
 * lines of its fences, as `deno test --doc` names it.
 *
 * Why not `deno test --doc`: it runs each of the ~590 examples as a test module of its own, in a
 * fresh worker that loads and evaluates the module graph (`@kopf/kopf` is ~190 modules) again —
 * about 0.2 s of CPU per example, 120 s of the suite's 510 s (`deno task test:times`), for
 * examples whose own work takes a few milliseconds. Here a handful of test files (one per group
 * of folders, see {@link GROUPS}) each run their groups' examples in one worker: the graph loads
 * once per file, and each example is still a module of its own (its own names and imports),
 * evaluated inside its own `Deno.test` with the usual sanitizers and time limit.
 *
 * What stays the same: the examples' text, as written (relative imports resolved from the file
 * that holds them, as `deno test --doc` resolves them; the package's own names through
 * `deno.json`); a failure names the example, is reported at its place in the source file, and
 * its stack has the source file's line numbers (each example's module keeps its lines at the
 * lines they have in the source file). Their types are
 * checked by `deno task check` (`deno check --doc`), as before; the modules are `data:` URLs, so
 * that `deno test`'s own type check does not check each of them again at run time.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Where `Deno.test` reads the location of a test that a helper registers (see tools/test_time_limit.ts). */
const LOCATION = Symbol.for("Deno.test.location");

/** The languages of a fence that `deno test --doc` runs. */
const LANGUAGES = new Set([
  "ts",
  "typescript",
  "mts",
  "cts",
  "tsx",
  "js",
  "javascript",
  "mjs",
  "cjs",
  "jsx",
]);

/** The groups of source files whose examples one test file runs, by the paths they start with. */
export const GROUPS: Readonly<Record<string, readonly string[]>> = {
  public: [
    "mod.ts",
    "on.ts",
    "testing.ts",
    "cli.ts",
    "apiserver.ts",
    "packages/",
    "src/cli/",
    "src/kits/",
  ],
  cogs_io: ["src/cogs/aio/", "src/cogs/clients/", "src/cogs/tracing/"],
  cogs_data: ["src/cogs/configs/", "src/cogs/metrics/", "src/cogs/structs/"],
  core: ["src/core/"],
  apiserver: ["src/apiserver/"],
};

/** One example: where it is, and its code. */
export interface JsdocExample {
  /** The file that holds it, relative to the repository's root. */
  file: string;
  /** The line of its opening fence (1-based). */
  first: number;
  /** The line of its closing fence. */
  last: number;
  /** Its code, without the comment's ` * ` margin, one entry per line. */
  lines: string[];
}

/**
 * The examples of one source text: the fenced blocks of a runnable language in its doc comments,
 * but for those marked `ignore` (` ```ts ignore`), which `deno test --doc` does not run either.
 *
 * @param file The file's path (relative to the root), for the result.
 * @param text The file's text.
 * @returns Its examples, in order.
 */
export function examplesOf(file: string, text: string): JsdocExample[] {
  const lines = text.split("\n");
  const found: JsdocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*\*\s?```(\S*)(.*)$/.exec(lines[i]!);
    // `ts ignore`: shown, type-checked, not run (as `deno test --doc` has it).
    const attributes = open?.[2]?.trim().split(/\s+/) ?? [];
    if (!open || !LANGUAGES.has(open[1]!) || attributes.includes("ignore")) continue;
    let j = i + 1;
    while (j < lines.length && !/^\s*\*\s?```\s*$/.test(lines[j]!)) j++;
    if (j === lines.length) {
      throw new SyntaxError(`${file}:${i + 1}: an example's fence is not closed`);
    }
    found.push({
      file,
      first: i + 1,
      last: j + 1,
      lines: lines.slice(i + 1, j).map((l) => l.replace(/^\s*\*(?: |$)/, "")),
    });
    i = j;
  }
  return found;
}

/**
 * An example as a module: its lines at the lines they have in the source file (so that a stack
 * names the right line), a first line that names it (so that two examples of the same text are
 * two modules), and its relative imports resolved from the file that holds it.
 *
 * @param example The example.
 * @param fileUrl The holding file's URL.
 * @returns The module's source.
 */
export function exampleModule(example: JsdocExample, fileUrl: string): string {
  const relativeImport = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]+)\2/g;
  const code = example.lines.map((line) =>
    line.replace(
      relativeImport,
      (_, lead, quote, spec) => `${lead}${quote}${new URL(spec, fileUrl).href}${quote}`,
    )
  );
  const padding = Array(example.first - 1).fill("");
  return [`// ${example.file}#${example.first}-${example.last}`, ...padding, ...code].join("\n") +
    "\n";
}

/** The source files (relative to the root) that hold examples: the public files, packages/, src/. */
export function sourceFiles(): string[] {
  const files = ["mod.ts", "on.ts", "testing.ts", "cli.ts", "apiserver.ts"];
  const walk = (dir: string) => {
    for (
      const entry of [...Deno.readDirSync(join(ROOT, dir))].sort((a, b) => a.name < b.name ? -1 : 1)
    ) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name)) files.push(path);
    }
  };
  walk("packages");
  walk("src");
  return files;
}

/**
 * The group a source file's examples belong to.
 *
 * @param file The file, relative to the root.
 * @returns The group's name, or undefined if no group holds it.
 */
export function groupOf(file: string): string | undefined {
  return Object.entries(GROUPS).find(([, prefixes]) =>
    prefixes.some((p) => p.endsWith("/") ? file.startsWith(p) : file === p)
  )?.[0];
}

/**
 * Registers one `Deno.test` per example of the group's files.
 *
 * @param group A name in {@link GROUPS}.
 */
export function testExamples(group: string): void {
  if (!(group in GROUPS)) throw new TypeError(`no group of examples named ${group}`);
  for (const file of sourceFiles().filter((f) => groupOf(f) === group)) {
    const path = join(ROOT, file);
    const fileUrl = pathToFileURL(path).href;
    for (const example of examplesOf(file, Deno.readTextFileSync(path))) {
      const name = `${file}#${example.first}-${example.last}`;
      const source = exampleModule(example, fileUrl);
      const url = `data:application/typescript;base64,${base64(source)}`;
      const run = async () => void await import(url);
      // Where the run reports the test: the example's fence in its file (its stack names the
      // data: URL, with the source file's line numbers).
      Object.assign(run, { [LOCATION]: `${fileUrl}:${example.first}:4` });
      Deno.test(name, run);
    }
  }
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
