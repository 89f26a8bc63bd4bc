/**
 * The workspace check: the repository is one Deno workspace whose root is the package
 * `@kopf/kopf` and whose members (`packages/*`, e.g. `@kopf/cli`) are published beside it.
 * It fails when
 * - a member's `version` differs from the root's, or the module's `VERSION` constant
 *   (`src/cogs/configs/version.ts`, what `kopf --version` and the API server report) does;
 * - a member lacks a `name`, an `exports` with `"."`, or the root's `license`;
 * - a member imports a file outside its own folder (a relative path up and out, a `file:` URL,
 *   an absolute path), or names a workspace package with a `jsr:` specifier: members import
 *   each other by package name (`@kopf/kopf/cli`), which the workspace resolves to the local
 *   files and `deno publish` rewrites to `jsr:@kopf/kopf@^<version>` — a relative path would
 *   be published as a file the package does not contain;
 * - a package name does not resolve to the named package's own files (the workspace is not
 *   wired: the import would fetch from the registry instead).
 *
 * Why versions in lock-step: `jsr:@kopf/cli@X` is the command line of `jsr:@kopf/kopf@X`;
 * one number on both makes "which CLI goes with which module" a non-question.
 *
 * Run: `deno run -A tools/check_workspace.ts` (part of `deno task check`).
 *
 * @module
 */

import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { judgeSpecifier, readPins } from "./check_deps.ts";

const root = fromFileUrl(new URL("..", import.meta.url));

/** A package's `deno.json`, as far as this check reads it. */
export interface PackageConfig {
  name?: string;
  version?: string;
  license?: string;
  exports?: string | Record<string, string>;
  workspace?: string[];
  imports?: Record<string, string>;
}

/** A workspace member: its folder (relative to the root, without `./`) and its `deno.json`. */
export interface Member {
  dir: string;
  config: PackageConfig;
}

/**
 * Judges the members' configurations against the root's.
 *
 * @param rootConfig The root `deno.json`.
 * @param members The members, in the order of the root's `workspace`.
 * @param moduleVersion The `VERSION` constant of the module.
 * @returns One line per problem; empty when the workspace is in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configProblems } from "./check_workspace.ts";
 *
 * const rootConfig = { name: "@kopf/kopf", version: "0.2.0", license: "MIT" };
 * const cli = { name: "@kopf/cli", version: "0.1.0", license: "MIT", exports: { ".": "./main.ts" } };
 * assert.deepEqual(configProblems(rootConfig, [{ dir: "packages/cli", config: cli }], "0.2.0"), [
 *   'packages/cli/deno.json: "version" is "0.1.0", the root\'s is "0.2.0": ' +
 *   "members are released with the module, write the same version",
 * ]);
 * ```
 */
export function configProblems(
  rootConfig: PackageConfig,
  members: readonly Member[],
  moduleVersion: string,
): string[] {
  const problems: string[] = [];
  const version = rootConfig.version;
  if (!rootConfig.name || !version) {
    problems.push(`deno.json: the root is the package @kopf/kopf: it needs "name" and "version"`);
  }
  if (moduleVersion !== version) {
    problems.push(
      `src/cogs/configs/version.ts: VERSION is "${moduleVersion}", deno.json's "version" is ` +
        `"${version}": write the same version in both`,
    );
  }
  if (!members.length) problems.push(`deno.json: "workspace" lists no members`);
  for (const { dir, config } of members) {
    const at = `${dir}/deno.json`;
    if (!config.name) problems.push(`${at}: no "name" (a member is a package: "@kopf/…")`);
    if (config.version !== version) {
      problems.push(
        `${at}: "version" is ${JSON.stringify(config.version)}, the root's is "${version}": ` +
          `members are released with the module, write the same version`,
      );
    }
    if (config.license !== rootConfig.license) {
      problems.push(
        `${at}: "license" is ${JSON.stringify(config.license)}, the root's is ` +
          `${JSON.stringify(rootConfig.license)}: write the same license`,
      );
    }
    const exports = typeof config.exports === "string" ? { ".": config.exports } : config.exports;
    if (!exports?.["."]) problems.push(`${at}: no "exports" with "." (the package's entry)`);
    if (config.imports) {
      problems.push(
        `${at}: "imports" of its own: members use the root's pins (deno.json "imports"), ` +
          `so that one version of each dependency is loaded`,
      );
    }
  }
  return problems;
}

/** A module of `deno info --json`, as far as this check reads it. */
export interface GraphModule {
  specifier: string;
  dependencies?: Array<{
    specifier: string;
    code?: { specifier?: string };
    type?: { specifier?: string };
  }>;
}

/**
 * Judges the imports written in the members' files.
 *
 * @param rootUrl The workspace root as a file URL ending in `/`.
 * @param packages Every workspace package: its name and folder (`""` for the root).
 * @param modules The modules of `deno info --json` over the members' entries.
 * @param pins The root's pins (`readPins()` of check_deps.ts).
 * @returns One line per import a member must not write.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { importProblems } from "./check_workspace.ts";
 *
 * const packages = [{ name: "@kopf/kopf", dir: "" }, { name: "@kopf/cli", dir: "packages/cli" }];
 * const pins = { pins: new Map(), keys: new Map(), unpinned: [] };
 * const modules = [{
 *   specifier: "file:///repo/packages/cli/main.ts",
 *   dependencies: [
 *     { specifier: "@kopf/kopf/cli", code: { specifier: "file:///repo/cli.ts" } },
 *     { specifier: "../../mod.ts", code: { specifier: "file:///repo/mod.ts" } },
 *   ],
 * }];
 * assert.deepEqual(importProblems("file:///repo/", packages, modules, pins), [
 *   'packages/cli/main.ts: "../../mod.ts" is a file outside @kopf/cli: import it by ' +
 *   'its package name (e.g. "@kopf/kopf/…")',
 * ]);
 * ```
 */
export function importProblems(
  rootUrl: string,
  packages: ReadonlyArray<{ name: string; dir: string }>,
  modules: readonly GraphModule[],
  pins: ReturnType<typeof readPins>,
): string[] {
  const problems: string[] = [];
  const members = packages.filter((p) => p.dir);
  const folder = (dir: string) => dir ? `${rootUrl}${dir}/` : rootUrl;
  /** The package whose files hold a URL: the member with the longest folder, else the root. */
  const owner = (url: string) =>
    [...packages].sort((a, b) => b.dir.length - a.dir.length)
      .find((p) => url.startsWith(folder(p.dir)));
  for (const mod of modules) {
    const member = members.find((m) => mod.specifier.startsWith(folder(m.dir)));
    if (!member) continue;
    const from = mod.specifier.slice(rootUrl.length);
    for (const dep of mod.dependencies ?? []) {
      const spec = dep.specifier;
      const resolved = dep.code?.specifier ?? dep.type?.specifier ?? "";
      const named = packages.find((p) => spec === p.name || spec.startsWith(`${p.name}/`));
      if (/^(\.{1,2}\/|\/|file:)/.test(spec)) {
        if (!resolved.startsWith(folder(member.dir))) {
          problems.push(
            `${from}: "${spec}" is a file outside ${member.name}: import it by its package ` +
              `name (e.g. "@kopf/kopf/…")`,
          );
        }
      } else if (named) {
        if (owner(resolved)?.name !== named.name) {
          problems.push(
            `${from}: "${spec}" resolves to ${resolved || "nothing"}, not to ${named.name}'s ` +
              `files (${folder(named.dir).slice(rootUrl.length) || "the root"}): ` +
              `is it listed in deno.json's "workspace"?`,
          );
        }
      } else if (/^jsr:\/?@kopf\//.test(spec)) {
        problems.push(
          `${from}: "${spec}" names a workspace package by its registry specifier: write ` +
            `the bare package name (the workspace resolves it; deno publish pins it)`,
        );
      } else {
        const why = judgeSpecifier(spec, pins);
        if (why) problems.push(`${from}: ${why}`);
      }
    }
  }
  return problems;
}

async function main(): Promise<number> {
  const rootConfig = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as PackageConfig;
  const members: Member[] = [];
  for (const entry of rootConfig.workspace ?? []) {
    const dir = relative(root, `${root}${entry}`);
    members.push({
      dir,
      config: JSON.parse(await Deno.readTextFile(`${root}${dir}/deno.json`)) as PackageConfig,
    });
  }
  const versionFile = await Deno.readTextFile(`${root}src/cogs/configs/version.ts`);
  const moduleVersion = /export const VERSION = "([^"]*)"/.exec(versionFile)?.[1] ?? "(none)";
  const problems = configProblems(rootConfig, members, moduleVersion);

  const entries = members.flatMap(({ dir, config }) => {
    const exports = typeof config.exports === "string" ? [config.exports] : config.exports;
    return Object.values(exports ?? {}).map((e) => `${root}${dir}/${e}`);
  });
  if (entries.length) {
    // `deno info` takes one entry: a scratch module (in the root, so that the workspace is
    // the one found) imports the members' entries.
    const entry = await Deno.makeTempFile({
      dir: root,
      prefix: ".check_workspace_",
      suffix: ".ts",
    });
    let out: Deno.CommandOutput;
    try {
      await Deno.writeTextFile(
        entry,
        entries.map((e) => `import type {} from ${JSON.stringify(`file://${e}`)};`).join("\n"),
      );
      out = await new Deno.Command(Deno.execPath(), {
        args: ["info", "--json", entry],
        cwd: root,
        stdout: "piped",
        stderr: "piped",
      }).output();
    } finally {
      await Deno.remove(entry);
    }
    if (!out.success) {
      console.error(new TextDecoder().decode(out.stderr));
      return 2;
    }
    const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: GraphModule[] };
    const packages = [
      { name: rootConfig.name ?? "", dir: "" },
      ...members.map((m) => ({ name: m.config.name ?? "", dir: m.dir })),
    ];
    const rootUrl = new URL("..", import.meta.url).href;
    const pins = readPins(rootConfig.imports ?? {});
    problems.push(...importProblems(rootUrl, packages, graph.modules, pins));
  }
  for (const p of problems) console.error(`workspace check: ${p}`);
  if (problems.length) return 1;
  console.log(
    `workspace check: ${rootConfig.name}@${rootConfig.version} with ` +
      members.map((m) => `${m.config.name} (${m.dir})`).join(", ") +
      `: one version, members import the module by its package name`,
  );
  return 0;
}

if (import.meta.main) Deno.exit(await main());
