/**
 * `kopf.main()`: the command line for a handlers file that ends with
 * `await kopf.main()`, without the command line in `mod.ts`'s import graph.
 *
 * Why a module of its own: an operator that is embedded (`kopf.operator()`)
 * never parses arguments, so `import * as kopf` does not load the command
 * line (its parser, its commands and their help); it is imported when
 * `main()` is first called. The command line loads no CommonJS package (which
 * would bring in Deno's CommonJS loader): tests/tools/lean_graph_test.ts
 * checks it.
 *
 * @module
 */

import type { RunControls } from "./run.ts";
import { loadingHandlers } from "./_loading.ts";

/**
 * Runs the CLI as `kopf.main()` does in a handlers file: arguments that start
 * with an option (or none at all) are `run`'s flags.
 *
 * @param args The arguments (without the program name).
 * @param controls What an embedding caller controls (registry, settings, signal, output).
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VERSION } from "@kopf/kopf";
 * import { main } from "@kopf/kopf";
 * // What it prints, caught (it writes to stdout): the version, and the exit code is 0.
 * const printed: string[] = [];
 * const write = Deno.stdout.writeSync;
 * Deno.stdout.writeSync = (bytes) => (printed.push(new TextDecoder().decode(bytes)), bytes.length);
 * try {
 *   assert.equal(await main(["--version"]), 0);
 * } finally {
 *   Deno.stdout.writeSync = write;
 * }
 * assert.deepEqual(printed, [`${VERSION}\n`]);
 * ```
 */
export async function main(
  args: string[] = Deno.args,
  controls: RunControls = {},
): Promise<number> {
  if (loadingHandlers()) {
    // A handlers file that calls kopf.main() as kopf run imports it: a command line inside the
    // command line, which would wait for its own loading to end. kopf run says so, in one line.
    throw new Error(
      "kopf.main() was called while kopf run loads this file: guard the call with " +
        "`if (import.meta.main)`, or run the file itself (deno run -A handlers.ts)",
    );
  }
  const cli = await import("./main.ts");
  return await cli.main(args, controls);
}
