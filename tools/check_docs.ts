/**
 * The documentation check: `deno doc --lint` over the public files must find
 * nothing but the few exceptions listed here, each with its reason. It fails
 * on a public member without JSDoc (`missing-jsdoc`) and on a public API that
 * names a type users cannot import (`private-type-ref`), so that the API
 * stays documented and nameable as it grows.
 *
 * And the examples in the docs of the public exports (`deno doc --json` of the
 * public files) import only what a user can: the public files, the package's
 * own name (`@kopf/kopf`, `@kopf/kopf/testing`…), `node:`/`jsr:` modules and
 * `npm:` packages with `deno.json`'s pins — so every example can be copied
 * into another project as it is.
 *
 * Run: `deno run -A tools/check_docs.ts` (part of `deno task check`).
 *
 * @module
 */

import { fileURLToPath as fromFileUrl } from "node:url";
import { judgeSpecifier, readPins } from "./check_deps.ts";

const root = fromFileUrl(new URL("..", import.meta.url));

/** The public files, as users import them. */
export const PUBLIC_FILES = ["mod.ts", "on.ts", "testing.ts", "cli.ts", "apiserver.ts"];

/** Accepted findings (the first line of deno doc's message, without colours), with reasons. */
export const ACCEPTED: ReadonlyMap<string, string> = new Map([
  // None: kopf.Schema and kopf.Static are kopf's own types (TypeBox's TSchema and Static are
  // undocumented npm types), kopf.Type carries `@ignore` (its type is TypeBox's builder class).
]);

/**
 * The findings of a `deno doc --lint` output that are not accepted.
 *
 * @param output The command's combined output.
 * @param accepted The accepted findings.
 * @returns One entry per unexpected finding: its message and where it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unexpectedFindings } from "./check_docs.ts";
 *
 * const output = "error[missing-jsdoc]: exported symbol is missing JSDoc documentation\n" +
 *   "  --> /repo/src/x.ts:3:1\n\nerror: Found 1 documentation lint error.\n";
 * assert.deepEqual(unexpectedFindings(output, new Map()), [
 *   "error[missing-jsdoc]: exported symbol is missing JSDoc documentation (/repo/src/x.ts:3:1)",
 * ]);
 * assert.deepEqual(unexpectedFindings(output, new Map([[
 *   "error[missing-jsdoc]: exported symbol is missing JSDoc documentation", "reason",
 * ]])), []);
 * ```
 */
export function unexpectedFindings(
  output: string,
  accepted: ReadonlyMap<string, string>,
): string[] {
  // deno colours its output when it thinks it writes to a terminal.
  // deno-lint-ignore no-control-regex
  const lines = output.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  const found: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!/^error\[[\w-]+\]:/.test(line) || accepted.has(line)) continue;
    const where = lines.slice(i + 1, i + 3).map((l) => /-->\s*(\S+)/.exec(l)?.[1]).find((w) => w);
    found.push(where ? `${line} (${where})` : line);
  }
  return found;
}

/** The code of an example: its TypeScript/JavaScript fences, or all of it when it has none. */
function exampleCode(doc: string): string {
  const fences = [...doc.matchAll(/```([\w-]*)[^\n]*\n([\s\S]*?)```/g)];
  if (!fences.length) return doc;
  return fences
    .filter((m) => ["", "ts", "js", "tsx", "jsx", "typescript", "javascript"].includes(m[1]!))
    .map((m) => m[2]!)
    .join("\n");
}

/**
 * The module specifiers an example imports (static, side-effect, dynamic, re-exports).
 *
 * @param doc The text of an `@example` tag.
 * @returns The specifiers, in order of appearance.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exampleImports } from "./check_docs.ts";
 *
 * const fence = "`".repeat(3);
 * const doc = `${fence}ts\nimport * as kopf from "../mod.ts";\nawait import("npm:yaml@^2");\n${fence}`;
 * assert.deepEqual(exampleImports(doc), ["../mod.ts", "npm:yaml@^2"]);
 * ```
 */
export function exampleImports(doc: string): string[] {
  const code = exampleCode(doc);
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'\n]+)\1/g;
  return [...code.matchAll(pattern)].map((m) => m[2]!);
}

/** What an example may import: the public files, the package's name, and pinned packages. */
export interface ExampleImportRules {
  /** The repository's root as a file URL, ending in `/`. */
  rootUrl: string;
  /** The package's name and its export paths, e.g. `@kopf/kopf`, `@kopf/kopf/testing`. */
  packageNames: ReadonlySet<string>;
  /** The pins of `deno.json` (`readPins()` of check_deps.ts). */
  pins: ReturnType<typeof readPins>;
}

/**
 * Judges one import of an example in the docs of a public export.
 *
 * @param specifier The specifier as written in the example.
 * @param file The file whose JSDoc holds the example (a file URL; relative imports resolve
 *   from it, as `deno test --doc` resolves them).
 * @param rules What may be imported.
 * @returns Why a user could not copy it, or undefined when it is fine.
 */
export function judgeExampleImport(
  specifier: string,
  file: string,
  rules: ExampleImportRules,
): string | undefined {
  if (/^\.{1,2}\//.test(specifier)) {
    const target = new URL(specifier, file).href;
    if (PUBLIC_FILES.some((f) => target === `${rules.rootUrl}${f}`)) return undefined;
    return `imports "${specifier}", an internal file: import the public files ` +
      `(${PUBLIC_FILES.join(", ")}) where the name is exported, as a user does`;
  }
  if (rules.packageNames.has(specifier)) return undefined;
  // node: modules pass; npm:/jsr: packages need deno.json's pin; bare names are refused.
  const why = judgeSpecifier(specifier, rules.pins);
  return why && `imports "${specifier}": ${why}`;
}

/** A `deno doc --json` node, as far as this check reads it. */
type DocNode = { [key: string]: unknown };

/**
 * The findings of the example-import guard over `deno doc --json` output of the public files.
 *
 * @param doc The parsed `deno doc --json` output.
 * @param rules What may be imported.
 * @returns One line per example import a user could not copy: the symbol, the file, why.
 */
export function exampleFindings(doc: DocNode, rules: ExampleImportRules): string[] {
  const found = new Set<string>();
  const visit = (node: unknown, name: string, file: string | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, name, file);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const n = node as DocNode;
    const location = n.location as { filename?: string; line?: number } | undefined;
    const here = location?.filename ?? file;
    const own = typeof n.name === "string" && n.name ? n.name : undefined;
    const path = own && !name.endsWith(`.${own}`) && name !== own
      ? (name ? `${name}.${own}` : own)
      : name;
    const tags = (n.jsDoc as { tags?: Array<{ kind?: string; doc?: string }> } | undefined)?.tags;
    for (const tag of tags ?? []) {
      if (tag.kind !== "example" || !here) continue;
      for (const specifier of exampleImports(tag.doc ?? "")) {
        const why = judgeExampleImport(specifier, here, rules);
        if (!why) continue;
        const where = `${here.replace(rules.rootUrl, "")}${
          location?.line ? `:${location.line}` : ""
        }`;
        found.add(`${path || "module doc"} (${where}): the example ${why}`);
      }
    }
    for (const [key, value] of Object.entries(n)) {
      if (key !== "jsDoc" && key !== "location") visit(value, path, here);
    }
  };
  const nodes = (doc.nodes ?? {}) as { [file: string]: DocNode };
  for (const [file, node] of Object.entries(nodes)) {
    visit(node.module_doc, `module doc of ${file.replace(rules.rootUrl, "")}`, file);
    for (const symbol of (node.symbols ?? []) as DocNode[]) visit(symbol, "", file);
  }
  return [...found];
}

/** A package's `deno.json`, as far as this check reads it. */
interface PackageConfig {
  name?: string;
  exports?: string | Record<string, string>;
  imports?: Record<string, string>;
  workspace?: string[];
}

/**
 * The workspace's packages: the root (`@kopf/kopf`, its {@link PUBLIC_FILES}) and each member
 * of `deno.json`'s `workspace` (e.g. `@kopf/cli`) with its entry files, relative to the root.
 */
async function workspacePackages(): Promise<Array<{ config: PackageConfig; files: string[] }>> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as PackageConfig;
  const packages = [{ config, files: PUBLIC_FILES }];
  for (const member of config.workspace ?? []) {
    const dir = member.replace(/^\.\//, "").replace(/\/$/, "");
    const own = JSON.parse(await Deno.readTextFile(`${root}${dir}/deno.json`)) as PackageConfig;
    const entries = typeof own.exports === "string"
      ? [own.exports]
      : Object.values(own.exports ?? {});
    packages.push({ config: own, files: entries.map((e) => `${dir}/${e.replace(/^\.\//, "")}`) });
  }
  return packages;
}

/** The names a user imports a package's exports by: `@kopf/kopf`, `@kopf/kopf/testing`… */
function importNames(config: PackageConfig): string[] {
  if (!config.name) return [];
  const keys = typeof config.exports === "object" ? Object.keys(config.exports) : ["."];
  return keys.map((k) => k === "." ? config.name! : `${config.name}/${k.slice(2)}`);
}

async function exampleCheck(
  packages: Array<{ config: PackageConfig; files: string[] }>,
): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...packages.flatMap((p) => p.files)],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) return [`deno doc --json failed: ${new TextDecoder().decode(out.stderr)}`];
  const rules: ExampleImportRules = {
    rootUrl: new URL("..", import.meta.url).href,
    packageNames: new Set(packages.flatMap((p) => importNames(p.config))),
    pins: readPins(packages[0]!.config.imports ?? {}),
  };
  return exampleFindings(JSON.parse(new TextDecoder().decode(out.stdout)), rules);
}

if (import.meta.main) {
  const packages = await workspacePackages();
  const decoder = new TextDecoder();
  const findings: string[] = [];
  // One `deno doc --lint` per package, as JSR judges each package on its own: a type that
  // only another package exports is private to this one.
  for (const { files } of packages) {
    const { stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["doc", "--lint", ...files],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    findings.push(
      ...unexpectedFindings(decoder.decode(stdout) + decoder.decode(stderr), ACCEPTED),
    );
  }
  if (findings.length) {
    for (const f of findings) console.error(f);
    console.error(
      `doc check: ${findings.length} finding(s): document the member, or export the type ` +
        `from the public file that exports its user`,
    );
  }
  const examples = await exampleCheck(packages);
  for (const f of examples) console.error(f);
  if (examples.length) {
    console.error(
      `doc check: ${examples.length} example import(s) a user could not copy: rewrite the ` +
        `example through the public files`,
    );
  }
  if (findings.length || examples.length) Deno.exit(1);
  console.log(
    `doc check: ${packages.map((p) => `${p.config.name} (${p.files.join(", ")})`).join("; ")} — ` +
      `documented and nameable (${ACCEPTED.size} accepted exceptions); examples import only ` +
      `the public files`,
  );
}
