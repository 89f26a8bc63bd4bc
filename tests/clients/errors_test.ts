import assert from "node:assert/strict";
import {
  ApiError,
  ConflictError,
  ForbiddenError,
  GoneError,
  isRetryable,
  NotFoundError,
  ServerError,
  TooManyRequestsError,
  UnauthorizedError,
  UnprocessableError,
} from "../../src/cogs/clients/errors.ts";

const CLASSES: Array<[number, typeof ApiError]> = [
  [400, ApiError],
  [401, UnauthorizedError],
  [403, ForbiddenError],
  [404, NotFoundError],
  [409, ConflictError],
  [410, GoneError],
  [418, ApiError],
  [422, UnprocessableError],
  [429, TooManyRequestsError],
  [500, ServerError],
  [501, ServerError],
  [503, ServerError],
  [599, ServerError],
];

Deno.test("ApiError.fromResponse() picks the class by code: any 5xx is a ServerError, an unlisted code an ApiError", async () => {
  for (const [code, Class] of CLASSES) {
    const error = await ApiError.fromResponse(new Response(null, { status: code }), "GET", "/x");
    assert.equal(error.constructor, Class, `${code}`);
    assert.equal(error.name, Class.name, `${code}`);
    assert.equal(error.code, code);
  }
});

Deno.test("every API error class is named after itself, keeps its cause, and is an ApiError", () => {
  for (const [, Class] of CLASSES) {
    const error = new Class({ code: 404, method: "GET", path: "/x" }, { cause: "why" });
    assert.equal(error.name, Class.name);
    assert.equal(error.cause, "why");
    assert.ok(error instanceof ApiError && error instanceof Error);
  }
  assert.equal(new NotFoundError({ code: 404, method: "GET", path: "/x" }).name, "NotFoundError");
});

Deno.test("the message takes the reason and the hint from the code, unless the Status names a reason", () => {
  const bare = new ForbiddenError({ code: 403, method: "GET", path: "/api/v1/pods" });
  assert.equal(
    bare.message,
    "GET /api/v1/pods: 403 Forbidden — grant this verb on this resource to the operator's account (RBAC)",
  );
  const status = { kind: "Status" as const, reason: "AlreadyExists", message: "cm exists" };
  const conflict = new ConflictError({ code: 409, method: "POST", path: "/x", status });
  assert.equal(conflict.reason, "AlreadyExists");
  assert.equal(conflict.message, "POST /x: 409 AlreadyExists: cm exists");
  assert.equal(new ApiError({ code: 418, method: "GET", path: "/x" }).reason, "Error");
});

Deno.test("ApiError.fromResponse() keeps non-Status JSON out of the message and cuts long text", async () => {
  const json = await ApiError.fromResponse(
    new Response(JSON.stringify({ secret: "s3cr3t" }), { status: 500 }),
    "GET",
    "/x",
  );
  assert.equal(json.message, "GET /x: 500 InternalError");
  assert.equal(json.text, undefined);
  const long = await ApiError.fromResponse(
    new Response("a".repeat(300), { status: 502 }),
    "GET",
    "/x",
  );
  assert.equal(long.text, "a".repeat(253) + "...");
});

Deno.test("isRetryable(): 429 and 5xx are, other answers are not", () => {
  const init = { code: 0, method: "GET", path: "/x" };
  assert.ok(isRetryable(new TooManyRequestsError(init)));
  assert.ok(isRetryable(new ServerError(init)));
  assert.ok(!isRetryable(new GoneError(init)));
  assert.ok(!isRetryable(new ApiError(init)));
});
