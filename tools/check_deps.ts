/**
 * The dependency check: every package the published code imports is written as a full
 * `npm:name@range` specifier with exactly the range that `deno.json` pins for it.
 *
 * Why full specifiers in `src/`: a bare `"js-yaml"` resolves only through this repository's import
 * map, and an import map applies to the project that owns it — a user's project that imports
 * `mod.ts` by path or URL has none of our entries and fails with `Import "js-yaml" not a dependency`.
 * Why the check: the pins then appear in two places (`deno.json`'s `imports`, which the tests,
 * tools and examples use, and the specifiers in `src/`), and this keeps them one: a major bumped in
 * `deno.json` fails here until every import says the same.
 *
 * `src/`, the public files and `examples/` (what `deno publish` ships, what a user's project
 * loads, what a user copies) must write the full specifier; `tests/`, `tools/` and `bench/` run
 * with this repository's config and may use the import map's bare names, but a full specifier
 * there too must be the pinned one. This check stands in for `deno lint`'s `no-import-prefix`
 * (excluded in `deno.json`), whose advice — bare names through the import map — is what breaks
 * an import by path or URL.
 *
 * Run: `deno run -A tools/check_deps.ts` (part of `deno task check`).
 *
 * @module
 */

import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const root = fromFileUrl(new URL("..", import.meta.url));
const PUBLIC_FILES = ["mod.ts", "on.ts", "testing.ts", "cli.ts", "apiserver.ts"];
/** Folders whose imports a user's project loads or copies: no bare names. */
const SHIPPED_DIRS = ["src", "examples"];
/** Folders of the module's own development: bare names of the import map are fine. */
const INTERNAL_DIRS = ["tests", "tools", "bench"];

/** A registry specifier split: `npm:@scope/name@^1/sub.js` → scheme, name, range, subpath. */
interface PackageSpecifier {
  scheme: "npm" | "jsr";
  name: string;
  range: string | undefined;
  subpath: string;
}

/** Splits an `npm:`/`jsr:` specifier, or returns undefined for anything else. */
export function parsePackageSpecifier(specifier: string): PackageSpecifier | undefined {
  const m = /^(npm|jsr):\/?((?:@[^/@]+\/)?[^/@]+)(?:@([^/]*))?(\/.*)?$/.exec(specifier);
  if (!m) return undefined;
  return {
    scheme: m[1] as "npm" | "jsr",
    name: m[2]!,
    range: m[3] || undefined,
    subpath: m[4] ?? "",
  };
}

/**
 * The pins of `deno.json`'s `imports`: package name → its full specifier (`npm:js-yaml@^5`),
 * and the bare keys that map to a registry package (`"js-yaml"` → `js-yaml`).
 *
 * @param imports The `imports` object of `deno.json`.
 * @returns The pins by package name, the package name by import-map key, and the entries that
 *   pin no major.
 */
export function readPins(imports: Record<string, string>): {
  pins: Map<string, string>;
  keys: Map<string, string>;
  unpinned: string[];
} {
  const pins = new Map<string, string>();
  const keys = new Map<string, string>();
  const unpinned: string[] = [];
  for (const [key, target] of Object.entries(imports)) {
    const parsed = parsePackageSpecifier(target);
    if (!parsed) continue;
    const full = `${parsed.scheme}:${parsed.name}${parsed.range ? `@${parsed.range}` : ""}`;
    pins.set(parsed.name, full);
    keys.set(key.replace(/\/$/, ""), parsed.name);
    if (!parsed.range || !/^[\^~]?\d/.test(parsed.range)) {
      unpinned.push(`deno.json imports "${key}": "${target}" pins no major (write e.g. @^1)`);
    }
  }
  return { pins, keys, unpinned };
}

/**
 * Judges one specifier written in `src/` or a public file.
 *
 * @param specifier The specifier as written in the import.
 * @param pins The pins of `deno.json` (see {@link readPins}).
 * @param options `bare: true` in the module's own tests, tools and benches, where the import
 *   map's names resolve.
 * @returns Why it is wrong, or undefined when it is fine.
 */
export function judgeSpecifier(
  specifier: string,
  pins: { pins: ReadonlyMap<string, string>; keys: ReadonlyMap<string, string> },
  options: { bare?: boolean } = {},
): string | undefined {
  if (/^\.{1,2}\//.test(specifier) || specifier.startsWith("node:")) return undefined;
  const parsed = parsePackageSpecifier(specifier);
  if (parsed) {
    const pinned = pins.pins.get(parsed.name);
    if (!pinned) {
      return `${parsed.name} is not in deno.json's imports: add it there with its major pinned, ` +
        `and import it here with the same specifier`;
    }
    const written = `${parsed.scheme}:${parsed.name}${parsed.range ? `@${parsed.range}` : ""}`;
    if (written !== pinned) {
      return `deno.json pins "${pinned}": write "${pinned}${parsed.subpath}" (the pins live in deno.json)`;
    }
    return undefined;
  }
  // A bare name: the longest import-map key that is the name or a folder of it.
  const key = [...pins.keys.keys()]
    .filter((k) => specifier === k || specifier.startsWith(`${k}/`))
    .sort((a, b) => b.length - a.length)[0];
  const name = key === undefined ? undefined : pins.keys.get(key);
  const pinned = name === undefined ? undefined : pins.pins.get(name);
  if (key !== undefined && pinned !== undefined) {
    if (options.bare) return undefined;
    return `a bare "${specifier}" resolves only through this repository's import map ` +
      `(a project importing the module by path or URL has no such entry): ` +
      `write "${pinned}${specifier.slice(key.length)}"`;
  }
  return `"${specifier}" is neither relative, node: nor a package pinned in deno.json`;
}

async function walk(dir: string, out: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && !entry.name.startsWith(".") && entry.name !== "fixtures") {
      await walk(path, out);
    } else if (entry.isFile && entry.name.endsWith(".ts")) out.push(path);
  }
}

async function main(): Promise<number> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as {
    imports?: Record<string, string>;
  };
  const pins = readPins(config.imports ?? {});
  const files: string[] = PUBLIC_FILES.map((f) => `${root}${f}`);
  for (const dir of [...SHIPPED_DIRS, ...INTERNAL_DIRS]) await walk(`${root}${dir}`, files);
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    entry,
    files.map((f) => `import type {} from ${JSON.stringify(`file://${f}`)};`).join("\n"),
  );
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `--config=${root}deno.json`, entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      console.error(new TextDecoder().decode(out.stderr));
      return 2;
    }
    const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: Array<{
        specifier: string;
        dependencies?: Array<{
          specifier: string;
          code?: { span?: { start: { line: number } } };
          type?: { span?: { start: { line: number } } };
        }>;
      }>;
    };
    const problems = [...pins.unpinned];
    let judged = 0;
    for (const mod of graph.modules) {
      if (!mod.specifier.startsWith(`file://${root}`)) continue;
      const from = relative(root, fromFileUrl(mod.specifier));
      const inside = (dirs: string[]) => dirs.some((d) => from.startsWith(`${d}/`));
      const bare = inside(INTERNAL_DIRS);
      if (!bare && !inside(SHIPPED_DIRS) && !PUBLIC_FILES.includes(from)) continue;
      judged++;
      for (const dep of mod.dependencies ?? []) {
        const why = judgeSpecifier(dep.specifier, pins, { bare });
        if (!why) continue;
        const line = (dep.code ?? dep.type)?.span?.start.line;
        problems.push(`${from}${line === undefined ? "" : `:${line + 1}`}: ${why}`);
      }
    }
    for (const p of problems) console.error(`dependency check: ${p}`);
    if (problems.length) return 1;
    console.log(
      `dependency check: ${judged} modules, every package import is deno.json's pinned specifier`,
    );
    return 0;
  } finally {
    await Deno.remove(entry);
  }
}

if (import.meta.main) Deno.exit(await main());
