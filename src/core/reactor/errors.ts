/**
 * Why an operator cannot start or go on, in one line: `OperatorError` is what
 * `kopf run` prints (and exits non-zero for); it keeps the error it stands
 * for as its `cause`, so an embedding application can still tell a login
 * failure from an unreachable server from a startup handler's failure.
 *
 * @module
 */

import { TlsVerificationError } from "../../cogs/clients/connection_errors.ts";
import { ApiError, ForbiddenError } from "../../cogs/clients/errors.ts";
import { LoginError } from "../../cogs/structs/login_errors.ts";
import { ActivityError } from "../engines/activities.ts";

/**
 * The operator could not start or run: one line says what and what to do; `cause` is the
 * original error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const e = new kopf.OperatorError("Cannot reach the Kubernetes API: refused", {
 *   cause: new Error("connection refused"),
 * });
 * assert.deepEqual([e.name, (e.cause as Error).message], ["OperatorError", "connection refused"]);
 * ```
 */
export class OperatorError extends Error {
  /** Always `"OperatorError"`. */
  override name = "OperatorError";
}

/**
 * The one line for a failed API call or login, as an OperatorError with the failure as cause.
 *
 * @param e The failure.
 * @returns The error to stop the operator with (an OperatorError as given stays as it is).
 */
export function apiFailure(e: unknown): OperatorError {
  if (e instanceof OperatorError) return e;
  if (e instanceof LoginError) {
    // Say why the login failed (a missing kubeconfig, a missing permission), not only that
    // the credentials ran out; rejected credentials (an API answer) keep the advice.
    const cause = e.cause instanceof Error && !(e.cause instanceof ApiError) ? e.cause : e;
    return new OperatorError(
      `Cannot log in to the Kubernetes API: ${cause.message.split("\n")[0]}`,
      { cause: e },
    );
  }
  const message = e instanceof Error ? e.message.split("\n")[0]! : String(e);
  // Reached, but not trusted: the message names the server and the kubeconfig's fields to fix.
  if (e instanceof TlsVerificationError) return new OperatorError(message, { cause: e });
  if (e instanceof ForbiddenError) {
    // Reached, but refused: the message names the verb and resource RBAC does not grant.
    return new OperatorError(`The Kubernetes API refused a request: ${message}`, { cause: e });
  }
  return new OperatorError(`Cannot reach the Kubernetes API: ${message}`, { cause: e });
}

/**
 * Turns a failed activity (startup, login) into the operator's one line.
 *
 * @param activity The activity's name.
 * @returns A rejection handler that throws the OperatorError.
 */
export function fatal(activity: string): (e: unknown) => never {
  return (e) => {
    if (e instanceof ActivityError) throw new OperatorError(e.message, { cause: e });
    if (e instanceof LoginError) throw apiFailure(e); // why the login failed, as any call says it
    throw new OperatorError(
      `The ${activity} failed: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  };
}
