/**
 * Kubernetes `Status` errors: one error class that knows its HTTP response,
 * so every layer of the API server can `throw` and the router answers with the
 * exact `{kind: "Status", code, reason, message, details}` that clients parse.
 *
 * @module
 */

import { jsonText } from "./json_body.ts";

/** A cause of a 422 Invalid (or 400) answer, as `details.causes[]` carries it. */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

/** Extra details of a Status: what the error is about. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/**
 * An error that answers as a Kubernetes `Status` object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError } from "./errors.ts";
 * const err = ApiError.notFound("configmaps", "", "absent");
 * assert.deepEqual([err.code, err.toStatus().reason], [404, "NotFound"]);
 * ```
 */
export class ApiError extends Error {
  override name = "ApiError";
  /** The HTTP status code. */
  readonly code: number;
  /** The Kubernetes reason, e.g. `NotFound`, `AlreadyExists`, `Invalid`. */
  readonly reason: string;
  /** Details: the object's name, group, kind, and field causes. */
  readonly details: StatusDetails | undefined;
  /** The Status's list metadata, e.g. the `continue` token of a 410 for an expired one. */
  listMeta: { continue?: string } | undefined;

  /**
   * @param code The HTTP status code.
   * @param reason The Kubernetes reason.
   * @param message The human message.
   * @param details Optional details.
   */
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /**
   * The `Status` object for the response body.
   *
   * @returns A plain `Status` object.
   */
  toStatus(): Record<string, unknown> {
    const status = statusObject(this.code, this.reason, this.message, this.details);
    if (this.listMeta) status.metadata = { ...this.listMeta };
    return status;
  }

  /**
   * The HTTP response of this error.
   *
   * @returns A JSON `Response` with the status code (and `Retry-After` for 429/503).
   */
  toResponse(): Response {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.details?.retryAfterSeconds !== undefined) {
      headers["retry-after"] = String(this.details.retryAfterSeconds);
    }
    return new Response(jsonText(this.toStatus()), { status: this.code, headers });
  }

  /**
   * 404 NotFound for a resource and name, worded as kube-apiserver words it.
   *
   * @param plural The resource plural (with group when not core: `kopfexamples.kopf.dev`).
   * @param group The API group.
   * @param name The object's name.
   * @returns The error.
   */
  static notFound(plural: string, group: string, name: string): ApiError {
    const what = group ? `${plural}.${group}` : plural;
    return new ApiError(404, "NotFound", `${what} "${name}" not found`, {
      name,
      group,
      kind: plural,
    });
  }

  /**
   * 409 AlreadyExists.
   *
   * @param plural The resource plural.
   * @param group The API group.
   * @param name The object's name.
   * @returns The error.
   */
  static alreadyExists(plural: string, group: string, name: string): ApiError {
    const what = group ? `${plural}.${group}` : plural;
    return new ApiError(409, "AlreadyExists", `${what} "${name}" already exists`, {
      name,
      group,
      kind: plural,
    });
  }

  /**
   * 409 Conflict (a stale resourceVersion or a failed precondition).
   *
   * @param plural The resource plural.
   * @param group The API group.
   * @param name The object's name.
   * @param why What conflicted.
   * @returns The error.
   */
  static conflict(plural: string, group: string, name: string, why: string): ApiError {
    const what = group ? `${plural}.${group}` : plural;
    return new ApiError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${what} "${name}": ${why}`,
      {
        name,
        group,
        kind: plural,
      },
    );
  }

  /**
   * 422 Invalid with field causes.
   *
   * @param kind The object's kind.
   * @param group The API group.
   * @param name The object's name.
   * @param causes What is invalid, field by field.
   * @returns The error.
   */
  static invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
    const what = group ? `${kind}.${group}` : kind;
    const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
    const body = list.length === 1 ? list[0] : `[${list.join(", ")}]`;
    return new ApiError(422, "Invalid", `${what} "${name}" is invalid: ${body}`, {
      name,
      group,
      kind,
      causes,
    });
  }

  /**
   * 400 BadRequest.
   *
   * @param message What was wrong with the request.
   * @returns The error.
   */
  static badRequest(message: string): ApiError {
    return new ApiError(400, "BadRequest", message);
  }

  /**
   * 405 MethodNotAllowed, as kube-apiserver's router writes it for a method a path does not
   * serve (go-restful's error through `NewGenericServerResponse`: an empty `details: {}`).
   *
   * @returns The error.
   */
  static methodNotAllowed(): ApiError {
    return new ApiError(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
      {},
    );
  }
}

/**
 * The details as Go's `omitempty` writes them: `name`, `group`, `kind`, `uid` only when not
 * empty (no `group` for the core group), `causes` only when there are some, `retryAfterSeconds`
 * only when not 0 — and `{}` when none is left, as kube-apiserver writes a details it set.
 */
function presentDetails(details: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes?.length) out.causes = details.causes;
  if (details.retryAfterSeconds) out.retryAfterSeconds = details.retryAfterSeconds;
  return out;
}

/**
 * Builds a `Status` object.
 *
 * @param code The HTTP code.
 * @param reason The reason (empty for success).
 * @param message The message.
 * @param details Optional details.
 * @returns The Status object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statusObject } from "./errors.ts";
 * assert.deepEqual(statusObject(200, "", "").status, "Success");
 * ```
 */
export function statusObject(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): Record<string, unknown> {
  const status: Record<string, unknown> = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: code < 400 ? "Success" : "Failure",
  };
  if (message) status.message = message;
  if (reason) status.reason = reason;
  if (details) status.details = presentDetails(details);
  status.code = code;
  return status;
}
