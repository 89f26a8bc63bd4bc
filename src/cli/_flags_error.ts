/**
 * The command line's usage mistake found after parsing (e.g. `-A` with `-n`, `kopf crd` with
 * nothing to print): one line on stderr, exit code 2. A module of its own so that `cli()`
 * knows it without importing the checks of the commands that throw it (those are imported
 * when their command runs).
 *
 * @module
 */

/**
 * A usage mistake: one line, exit code 2.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FlagsError } from "./_flags_error.ts";
 * assert.equal(new FlagsError("-A and -n exclude each other").name, "FlagsError");
 * ```
 */
export class FlagsError extends Error {
  override name = "FlagsError";
}
