/**
 * `@kopf/cli`: the `kopf` command of Kopf for Deno, as a package of its own, so that
 * the command reads as Python Kopf's does:
 *
 * ```sh
 * deno run -A jsr:@kopf/cli run handlers.ts
 * deno install -g -A -n kopf jsr:@kopf/cli   # then: kopf run handlers.ts
 * ```
 *
 * Why a package of its own: the command line is the `./cli` export of `@kopf/kopf`
 * (`deno run -A jsr:@kopf/kopf/cli run handlers.ts` works as well), but a command is
 * installed and remembered by a package's name. This package holds no code of its
 * own and exports nothing: run as the main module, it runs `@kopf/kopf/cli`'s `cli()`
 * with the process's arguments and exits with its code. Its version is always the
 * module's (`deno task check` fails when they differ), so `jsr:@kopf/cli@0.1.0` is the
 * command line of `jsr:@kopf/kopf@0.1.0`. To run the command line in-process, import
 * `cli` from `@kopf/kopf/cli`.
 *
 * The handler files import `jsr:@kopf/kopf` (or `@kopf/kopf` through the project's
 * import map) in the version that this package's range resolves to, so one copy of
 * the module is loaded and the handlers register where the command runs them.
 *
 * @example The embedded API server, and an operator on it
 * ```sh
 * deno run -A jsr:@kopf/cli apiserver --kubeconfig kopf-apiserver.kubeconfig &
 * KUBECONFIG=kopf-apiserver.kubeconfig deno run -A jsr:@kopf/cli run --standalone -A handlers.ts
 * ```
 *
 * @module
 */

import { cli } from "@kopf/kopf/cli";

if (import.meta.main) Deno.exit(await cli(Deno.args));
