/**
 * Kubernetes API errors as classes, so that the framework can catch exactly
 * the outcome it expects (a 404 on a patch means "the object is gone", a 409
 * on a create means "it exists", a 410 on a watch means "relist") and let
 * everything else escalate. The details come from the `Status` body the API
 * answers with, not from the HTTP code alone; non-Status bodies are cut short
 * so that no data (maybe secret) spills into logs.
 *
 * One table of status codes (at the end) says, per code, the reason to show
 * when the body names none, the error class, and a hint on what to do; the
 * classes themselves add nothing but their type for `instanceof`.
 *
 * Network-level failures (refused connections, broken TLS, timeouts) are an
 * {@link ApiConnectionError}: retried like 5xx, never confused with answers.
 * They, a failed TLS verification and a too large answer live in
 * `connection_errors.ts` and are re-exported here.
 *
 * @module
 */

import { ApiConnectionError } from "./connection_errors.ts";

export {
  ApiConnectionError,
  ResponseTooLargeError,
  TlsVerificationError,
  tlsVerificationFailure,
} from "./connection_errors.ts";

/** A `Status` object, as the API answers errors with. */
export interface KubeStatus {
  /** Always `Status`. */
  kind?: "Status";
  /** `v1`. */
  apiVersion?: string;
  /** `Failure` for errors. */
  status?: "Success" | "Failure";
  /** What went wrong, for people. */
  message?: string;
  /** What went wrong, for code: `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, … */
  reason?: string;
  /** The HTTP status code. */
  code?: number;
  /** The object concerned, the invalid fields (`causes`), and `retryAfterSeconds`. */
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: Array<{ field?: string; reason?: string; message?: string }>;
    retryAfterSeconds?: number;
  };
}

/** How much of a non-JSON error body to keep. */
const TEXT_ERROR_MAX_SIZE = 256;

/** The fields of an {@link ApiError}. */
export interface ApiErrorInit {
  /** The HTTP status code. */
  code: number;
  /** The HTTP method. */
  method: string;
  /** The request path (no server). */
  path: string;
  /** The parsed Status body, if the answer was a Status. */
  status?: KubeStatus | undefined;
  /** The text body (cut to 256 characters), if not a Status. */
  text?: string | undefined;
  /** The response headers. */
  headers?: Headers | undefined;
}

/**
 * An error answer (HTTP 4xx/5xx) of the Kubernetes API.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError, NotFoundError } from "@kopf/kopf";
 *
 * const res = new Response(JSON.stringify({
 *   kind: "Status", status: "Failure", reason: "NotFound", code: 404, message: 'pods "p1" not found',
 * }), { status: 404 });
 * const error = await ApiError.fromResponse(res, "GET", "/api/v1/namespaces/default/pods/p1");
 * assert.ok(error instanceof NotFoundError);
 * assert.equal(error.code, 404);
 * assert.equal(error.reason, "NotFound");
 * assert.equal(error.message, 'GET /api/v1/namespaces/default/pods/p1: 404 NotFound: pods "p1" not found');
 * ```
 */
export class ApiError extends Error {
  /** The HTTP status code. */
  readonly code: number;
  /** The Status reason (e.g. `NotFound`, `AlreadyExists`), or the HTTP status text. */
  readonly reason: string;
  /** The Status body, when the answer was one. */
  readonly status: KubeStatus | undefined;
  /** The (cut) text body, when the answer was not a Status. */
  readonly text: string | undefined;
  /** The HTTP method of the request. */
  readonly method: string;
  /** The path of the request. */
  readonly path: string;
  /** The response headers. */
  readonly headers: Headers;

  /**
   * Creates the error; use {@link ApiError.fromResponse} to get the right subclass.
   * The subclasses add nothing but their type (and `name`): the reason and
   * the hint for each code come from one table of status codes.
   *
   * @param init The code, request, and body.
   * @param options The usual error options.
   */
  constructor(init: ApiErrorInit, options?: ErrorOptions) {
    const known = STATUS_CODES[init.code];
    const reason = init.status?.reason || known?.reason || "Error";
    const detail = init.status?.message ?? init.text;
    const hint = known?.hint;
    super(
      `${init.method} ${init.path}: ${init.code} ${reason}${detail ? `: ${detail}` : ""}${
        hint ? ` — ${hint}` : ""
      }`,
      options,
    );
    this.name = new.target.name; // "ApiError", "NotFoundError", …: the class it was made as
    this.code = init.code;
    this.reason = reason;
    this.status = init.status;
    this.text = init.text;
    this.method = init.method;
    this.path = init.path;
    this.headers = init.headers ?? new Headers();
  }

  /** The Status details (causes, retryAfterSeconds, name/kind), if any. */
  get details(): KubeStatus["details"] | undefined {
    return this.status?.details;
  }

  /**
   * How long the server asked to wait before retrying, in seconds: the
   * `Retry-After` header, else `details.retryAfterSeconds`.
   */
  get retryAfter(): number | undefined {
    const header = this.headers.get("retry-after");
    if (header !== null) {
      const seconds = Number(header);
      if (Number.isFinite(seconds) && seconds >= 0) return seconds;
      const date = Date.parse(header);
      if (!Number.isNaN(date)) return Math.max(0, (date - Date.now()) / 1000);
    }
    const fromBody = this.status?.details?.retryAfterSeconds;
    return typeof fromBody === "number" && fromBody >= 0 ? fromBody : undefined;
  }

  /**
   * Reads an error response into the right error class (this consumes the body).
   *
   * @param response A response with status >= 400.
   * @param method The request method.
   * @param path The request path.
   * @returns The error (not thrown).
   */
  static async fromResponse(response: Response, method: string, path: string): Promise<ApiError> {
    let text: string | undefined;
    try {
      text = (await response.text()).trim() || undefined;
    } catch {
      text = undefined;
    }
    let status: KubeStatus | undefined;
    if (text !== undefined) {
      const raw = text;
      try {
        const parsed = JSON.parse(raw);
        if (parsed && typeof parsed === "object" && parsed.kind === "Status") status = parsed;
        text = undefined; // JSON but not a Status: maybe data, keep it out of logs.
      } catch {
        if (raw.length >= TEXT_ERROR_MAX_SIZE) text = raw.slice(0, TEXT_ERROR_MAX_SIZE - 3) + "...";
      }
    }
    const init = { code: response.status, method, path, status, text, headers: response.headers };
    const known = STATUS_CODES[response.status];
    const Class = status?.reason === "AlreadyExists" && response.status === 409
      ? AlreadyExistsError
      : known?.error ?? (response.status >= 500 && response.status < 600 ? ServerError : ApiError);
    return new Class(init);
  }
}

/**
 * 401: the credentials were rejected. The API client reports them to the
 * vault and retries with new ones; this escalates only when re-login fails.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnauthorizedError } from "@kopf/kopf";
 * const e = new UnauthorizedError({ code: 401, method: "GET", path: "/api" });
 * assert.deepEqual([e.name, e.code], ["UnauthorizedError", 401]);
 * assert.equal(
 *   e.message,
 *   "GET /api: 401 Unauthorized — the credentials were rejected: check the kubeconfig's user or the login handlers",
 * );
 * ```
 */
export class UnauthorizedError extends ApiError {}

/**
 * 403: the credentials are valid but lack RBAC permissions; the message says
 * what to grant.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError, ForbiddenError } from "@kopf/kopf";
 *
 * const res = new Response(null, { status: 403 });
 * const error = await ApiError.fromResponse(res, "LIST", "/api/v1/pods");
 * assert.ok(error instanceof ForbiddenError);
 * assert.match(error.message, /grant this verb on this resource/);
 * ```
 */
export class ForbiddenError extends ApiError {}

/**
 * 404: the object (or its namespace, or the resource) does not exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NotFoundError } from "@kopf/kopf";
 * const e = new NotFoundError({ code: 404, method: "GET", path: "/x" });
 * assert.deepEqual([e.name, e.reason], ["NotFoundError", "NotFound"]);
 * ```
 */
export class NotFoundError extends ApiError {}

/**
 * 409: the object already exists, or a resourceVersion did not match.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConflictError } from "@kopf/kopf";
 * const status = { kind: "Status" as const, reason: "AlreadyExists", message: 'configmaps "cm" already exists' };
 * const e = new ConflictError({ code: 409, method: "POST", path: "/x", status });
 * assert.deepEqual([e.name, e.reason], ["ConflictError", "AlreadyExists"]);
 * ```
 */
export class ConflictError extends ApiError {}

/**
 * 409 with the reason `AlreadyExists`: a create found an object of that name.
 * A {@link ConflictError}, so code that catches conflicts still catches it; a
 * 409 of a stale resourceVersion (reason `Conflict`) is not one of these.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AlreadyExistsError, ApiError, ConflictError } from "@kopf/kopf";
 *
 * const body = { kind: "Status", reason: "AlreadyExists", code: 409, message: 'configmaps "cm" already exists' };
 * const error = await ApiError.fromResponse(new Response(JSON.stringify(body), { status: 409 }), "POST", "/x");
 * assert.ok(error instanceof AlreadyExistsError && error instanceof ConflictError);
 * assert.equal(error.name, "AlreadyExistsError");
 * ```
 */
export class AlreadyExistsError extends ConflictError {}

/**
 * 410: the resourceVersion is too old (watch/list must start over).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError, GoneError } from "@kopf/kopf";
 *
 * const error = await ApiError.fromResponse(new Response("too old", { status: 410 }), "GET", "/x");
 * assert.ok(error instanceof GoneError);
 * assert.equal(error.message, "GET /x: 410 Gone: too old");
 * ```
 */
export class GoneError extends ApiError {}

/**
 * 422: the object is invalid, or a JSON patch operation (e.g. `test`) failed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnprocessableError } from "@kopf/kopf";
 * const causes = [{ field: "spec.replicas", reason: "FieldValueInvalid" }];
 * const e = new UnprocessableError({ code: 422, method: "PATCH", path: "/x", status: { details: { causes } } });
 * assert.deepEqual([e.name, e.details?.causes?.[0]?.field], ["UnprocessableError", "spec.replicas"]);
 * ```
 */
export class UnprocessableError extends ApiError {}

/**
 * 429: the server throttles the client; retried after `Retry-After`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TooManyRequestsError } from "@kopf/kopf";
 * const headers = new Headers({ "retry-after": "3" });
 * const e = new TooManyRequestsError({ code: 429, method: "GET", path: "/x", headers });
 * assert.deepEqual([e.name, e.code, e.retryAfter], ["TooManyRequestsError", 429, 3]);
 * ```
 */
export class TooManyRequestsError extends ApiError {}

/**
 * 5xx (any of them): the server failed; retried with backoff.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError, ServerError } from "@kopf/kopf";
 *
 * const error = await ApiError.fromResponse(new Response(null, { status: 501 }), "GET", "/x");
 * assert.ok(error instanceof ServerError);
 * assert.equal(error.name, "ServerError");
 * ```
 */
export class ServerError extends ApiError {}

/**
 * Whether an error is temporary and worth retrying: connection failures,
 * timeouts, 429 and 5xx (Kopf's "Retrying of API errors").
 *
 * @param error Any error.
 * @returns True if retryable.
 *
 * @example
 * ```ts
 * import { NotFoundError, ServerError } from "@kopf/kopf";
 * import assert from "node:assert/strict";
 * import { isRetryable } from "./errors.ts";
 * assert.equal(isRetryable(new ServerError({ code: 503, method: "GET", path: "/" })), true);
 * assert.equal(isRetryable(new NotFoundError({ code: 404, method: "GET", path: "/" })), false);
 * ```
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof ApiConnectionError || error instanceof ServerError ||
    error instanceof TooManyRequestsError;
}

/** What the clients know of a status code. */
interface StatusCode {
  /** The reason when the answer is not a `Status` that names one (Kubernetes' names). */
  reason: string;
  /** The class of its errors; unlisted: {@link ServerError} for 5xx, else {@link ApiError}. */
  error?: typeof ApiError;
  /** What to do about it, appended to the message. */
  hint?: string;
}

/** The status codes of the Kubernetes API, one row each. */
const STATUS_CODES: Readonly<Record<number, StatusCode>> = {
  200: { reason: "OK" }, // an answer that is not what was asked for (e.g. empty)
  400: { reason: "BadRequest" },
  401: {
    reason: "Unauthorized",
    error: UnauthorizedError,
    hint: "the credentials were rejected: check the kubeconfig's user or the login handlers",
  },
  403: {
    reason: "Forbidden",
    error: ForbiddenError,
    hint: "grant this verb on this resource to the operator's account (RBAC)",
  },
  404: { reason: "NotFound", error: NotFoundError },
  405: { reason: "MethodNotAllowed" },
  409: { reason: "Conflict", error: ConflictError },
  410: { reason: "Gone", error: GoneError },
  413: {
    reason: "RequestEntityTooLarge",
    hint: "the request's body is over the API server's limit (kube-apiserver: 3 MiB): send less",
  },
  415: { reason: "UnsupportedMediaType" },
  422: { reason: "Invalid", error: UnprocessableError },
  429: { reason: "TooManyRequests", error: TooManyRequestsError },
  500: { reason: "InternalError" },
  502: { reason: "BadGateway" },
  503: { reason: "ServiceUnavailable" },
  504: { reason: "Timeout" },
};
