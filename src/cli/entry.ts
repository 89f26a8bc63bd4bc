/**
 * `kopf.main()`: the command line for a handlers file that ends with
 * `await kopf.main()`, without the command line in `mod.ts`'s import graph.
 *
 * Why a module of its own: the parser of the arguments (`commander`) is a
 * CommonJS package, and any CommonJS package brings in Deno's CommonJS loader
 * (with the package, ≈12 MiB of memory). An operator that is embedded
 * (`kopf.operator()`) never parses arguments, so `import * as kopf` must not
 * load them; the command line is imported when `main()` is first called.
 *
 * @module
 */

import type { RunControls } from "./run.ts";

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
 * import { main } from "../../mod.ts";
 * const code = await main(["--version"]);
 * console.log(code); // 0
 * ```
 */
export async function main(
  args: string[] = Deno.args,
  controls: RunControls = {},
): Promise<number> {
  const cli = await import("./main.ts");
  return await cli.main(args, controls);
}
