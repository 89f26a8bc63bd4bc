/**
 * The causes of a 422 as kube's `field.Error` words them (`Required value`,
 * `Invalid value: …`, `Unsupported value: …: supported values: …`,
 * `Duplicate value: …`, `Not found: …`, `Forbidden: …`), so that every
 * validation of built-in kinds here renders values the one way kube does:
 * numbers and booleans bare, strings quoted, anything else as JSON.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";

/**
 * A value as kube's `field.Error` prints it.
 *
 * @param v The value.
 * @returns Its text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shown } from "./field_errors.ts";
 * assert.deepEqual([shown("a"), shown(1), shown({ a: 1 })], ['"a"', "1", '{"a":1}']);
 * ```
 */
export function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v === undefined ? null : v);
}

/**
 * `field.Required`.
 *
 * @param field The field's path.
 * @param detail What kube adds after the colon, if anything.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { required } from "./field_errors.ts";
 * assert.equal(required("spec.x", "must specify a handler type").message, "Required value: must specify a handler type");
 * ```
 */
export function required(field: string, detail = ""): StatusCause {
  const message = detail ? `Required value: ${detail}` : "Required value";
  return { reason: "FieldValueRequired", message, field };
}

/**
 * `field.Invalid`.
 *
 * @param field The field's path.
 * @param value The value found.
 * @param detail Why it is invalid.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { invalid } from "./field_errors.ts";
 * assert.equal(invalid("spec.replicas", -1, "must be greater than or equal to 0").message, "Invalid value: -1: must be greater than or equal to 0");
 * ```
 */
export function invalid(field: string, value: unknown, detail: string): StatusCause {
  return {
    reason: "FieldValueInvalid",
    message: `Invalid value: ${shown(value)}: ${detail}`,
    field,
  };
}

/**
 * `field.Forbidden`.
 *
 * @param field The field's path.
 * @param detail Why.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forbidden } from "./field_errors.ts";
 * assert.equal(forbidden("spec", "no").message, "Forbidden: no");
 * ```
 */
export function forbidden(field: string, detail: string): StatusCause {
  return { reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field };
}

/**
 * `field.NotSupported`.
 *
 * @param field The field's path.
 * @param value The value found.
 * @param supported The values allowed, in kube's order.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notSupported } from "./field_errors.ts";
 * assert.equal(
 *   notSupported("x", "Always", ["OnFailure", "Never"]).message,
 *   'Unsupported value: "Always": supported values: "OnFailure", "Never"',
 * );
 * ```
 */
export function notSupported(field: string, value: unknown, supported: string[]): StatusCause {
  return {
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${shown(value)}: supported values: ${
      supported.map((s) => JSON.stringify(s)).join(", ")
    }`,
    field,
  };
}

/**
 * `field.Duplicate`.
 *
 * @param field The field's path.
 * @param value The repeated value.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { duplicate } from "./field_errors.ts";
 * assert.equal(duplicate("x", "a").message, 'Duplicate value: "a"');
 * ```
 */
export function duplicate(field: string, value: unknown): StatusCause {
  return { reason: "FieldValueDuplicate", message: `Duplicate value: ${shown(value)}`, field };
}

/**
 * `field.NotFound`.
 *
 * @param field The field's path.
 * @param value The value that refers to nothing.
 * @returns The cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notFound } from "./field_errors.ts";
 * assert.equal(notFound("x", "data").message, 'Not found: "data"');
 * ```
 */
export function notFound(field: string, value: unknown): StatusCause {
  return { reason: "FieldValueNotFound", message: `Not found: ${shown(value)}`, field };
}
