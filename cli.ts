/**
 * The `kopf` command line: `deno run -A jsr-or-path/cli.ts <command>`.
 *
 * Commands: `run` (an operator with the handlers of the given files) and
 * `apiserver` (the embedded Kubernetes API server). Without a command, it
 * prints the help (exit code 1); bad input is one `kopf: …` line (exit code 2).
 *
 * The same command is the package `@kopf/cli` (`deno run -A jsr:@kopf/cli …`,
 * `deno install -g -A -n kopf jsr:@kopf/cli`), which runs this module's
 * {@link cli}; this entry stays for `jsr:@kopf/kopf/cli` and paths to `cli.ts`.
 *
 * @example
 * ```sh
 * deno run -A cli.ts apiserver --port 0
 * ```
 *
 * @module
 */

import { cli } from "./src/cli/main.ts";

export { cli };

if (import.meta.main) Deno.exit(await cli(Deno.args));
