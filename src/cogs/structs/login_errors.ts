/**
 * The errors of getting in: {@link LoginError} when the operator has no
 * credentials the API accepts, {@link AccessError} when Deno's permissions
 * keep it from reading or reaching what the credentials name.
 *
 * @module
 */

/**
 * The operator cannot log in to the API: no credentials at all, all of them
 * rejected, or a kubeconfig that cannot be read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LoginError } from "@kopf/kopf";
 * const error = new LoginError("Ran out of valid credentials: add a login handler");
 * assert.deepEqual([error.name, error instanceof Error], ["LoginError", true]);
 * ```
 */
export class LoginError extends Error {
  /**
   * Creates the error.
   *
   * @param message What failed and what to do, on one line.
   * @param options The usual error options, e.g. a `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LoginError";
  }
}

/**
 * The operator cannot access the cluster API at all — e.g. the Deno process
 * lacks the network permission for the server. Not retried.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AccessError } from "./login_errors.ts";
 * const error = new AccessError("Network access to 10.0.0.1:443 is denied: run with --allow-net=10.0.0.1:443");
 * assert.deepEqual(error.name, "AccessError");
 * ```
 */
export class AccessError extends Error {
  /**
   * Creates the error.
   *
   * @param message What failed and what to do, on one line.
   * @param options The usual error options, e.g. a `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AccessError";
  }
}
