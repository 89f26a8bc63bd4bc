/**
 * The documentation check: `deno doc --lint` over the public files must find
 * nothing but the few exceptions listed here, each with its reason. It fails
 * on a public member without JSDoc (`missing-jsdoc`) and on a public API that
 * names a type users cannot import (`private-type-ref`), so that the API
 * stays documented and nameable as it grows.
 *
 * Run: `deno run -A tools/check_docs.ts` (part of `deno task check`).
 *
 * @module
 */

import { fileURLToPath as fromFileUrl } from "node:url";

const root = fromFileUrl(new URL("..", import.meta.url));

/** The public files, as users import them. */
export const PUBLIC_FILES = ["mod.ts", "on.ts", "testing.ts", "cli.ts"];

/** Accepted findings (the first line of deno doc's message, without colours), with reasons. */
export const ACCEPTED: ReadonlyMap<string, string> = new Map([
  [
    "error[private-type-ref]: public type 'OperatorMetrics.prototype.registry' references private type 'Registry'",
    "prom-client's own Registry: users register their metrics in it and pass it to prom-client; " +
    "re-exporting it would drag in prom-client types that prom-client itself does not export",
  ],
  [
    "error[private-type-ref]: public type 'ResourceDefinition' references private type 'TSchema'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'TypedResource.prototype.specSchema' references private type 'TSchema'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'TypedResource.prototype.statusSchema' references private type 'TSchema'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'defineResource' references private type 'TSchema'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'defineResource' references private type 'Static'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'VersionDefinition' references private type 'TSchema'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'VersionsOf' references private type 'Static'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'VersionsOf' references private type 'TSchema'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
  [
    "error[private-type-ref]: public type 'Type' references private type 'JavaScriptTypeBuilder'",
    "TypeBox's own types (typed resources take TypeBox schemas): users import them from " +
    "@sinclair/typebox; re-exporting them would drag TypeBox's undocumented internals in",
  ],
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

if (import.meta.main) {
  const { stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...PUBLIC_FILES],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decoder = new TextDecoder();
  const findings = unexpectedFindings(decoder.decode(stdout) + decoder.decode(stderr), ACCEPTED);
  if (findings.length) {
    for (const f of findings) console.error(f);
    console.error(
      `doc check: ${findings.length} finding(s): document the member, or export the type ` +
        `from the public file that exports its user`,
    );
    Deno.exit(1);
  }
  console.log(
    `doc check: ${PUBLIC_FILES.join(", ")} — documented and nameable ` +
      `(${ACCEPTED.size} accepted exception)`,
  );
}
