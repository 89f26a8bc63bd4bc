/**
 * The module's version, as the API server's `/version` and the CLI report it.
 *
 * @module
 */

/**
 * The version of this module (kept equal to `deno.json`'s `version`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VERSION } from "@kopf/kopf";
 * assert.deepEqual(VERSION, "0.1.0");
 * ```
 */
export const VERSION = "0.1.0";
