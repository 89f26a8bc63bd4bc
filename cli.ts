/**
 * The `kopf` command line: `deno run -A jsr-or-path/cli.ts <command>`.
 *
 * Commands today: `apiserver` (the embedded Kubernetes API server). The
 * operator commands (`run`, `freeze`, `resume`) arrive with the operator core.
 *
 * @example
 * ```sh
 * deno run -A cli.ts apiserver --port 0
 * ```
 *
 * @module
 */

import { main } from "./src/cli/main.ts";

if (import.meta.main) Deno.exit(await main(Deno.args));
