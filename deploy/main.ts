/**
 * The entry of the walkthrough operator as a single binary (`deno compile`; see "Shipping an
 * operator" in README.md and .github/workflows/compile.yml). A compiled binary holds the modules
 * it was compiled from and nothing else, so it cannot import a handlers file named on its command
 * line as `kopf run` does: the handlers are imported here, and `kopf.main()` runs the operator
 * with the binary's arguments as `kopf run`'s flags (`./evc-operator -A --liveness=…`).
 *
 * `deno compile` downloads the Deno runtime for the target, which our machines cannot reach:
 * tests/cli/image_test.ts runs this file with `deno run` and the compile step's permissions.
 *
 * @module
 */

import * as kopf from "../mod.ts";
import "../examples/19-typed/example.ts";

Deno.exit(await kopf.main());
