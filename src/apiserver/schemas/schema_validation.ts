/**
 * Validation of an object against a CRD's structural schema, after pruning and
 * defaulting, reporting what is wrong as `StatusCause`s worded like
 * kube-apiserver's so that clients see the same 422 answers here.
 *
 * @module
 */

import type { JsonSchema } from "../shared/types.ts";
import {
  childPath,
  compilePattern,
  composite,
  countKeys,
  EMBEDDED,
  type FieldCause,
  formatPath,
  hasDuplicates,
  INT_OR_STRING,
  invalid,
  isMetaField,
  isObject,
  type Json,
  jsonEqual,
  jsonType,
  notSupported,
  PRESERVE,
  quote,
  required,
  runeCount,
  type Segment,
  subject,
  tooMany,
  typeInvalid,
} from "./schema_common.ts";
import { checkFormat } from "./schema_formats.ts";

/**
 * Validates an object against a CRD's structural schema, as kube-apiserver
 * does after pruning and defaulting. The root schema describes the whole
 * object; root `apiVersion`, `kind` and `metadata` are allowed without being
 * declared (declared constraints on them, e.g. on `metadata.name`, apply).
 * Absent properties are not validated; `null` passes only where `nullable`.
 *
 * @param schema The root schema (`openAPIV3Schema`).
 * @param obj The object (parsed JSON).
 * @returns The causes, in document order; empty when the object is valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateAgainstSchema } from "./schema_validation.ts";
 *
 * const schema = {
 *   type: "object" as const,
 *   properties: {
 *     spec: {
 *       type: "object" as const,
 *       required: ["size"],
 *       properties: { size: { type: "integer" as const, maximum: 10 } },
 *     },
 *   },
 * };
 * const causes = validateAgainstSchema(schema, { apiVersion: "v1", spec: { size: 11 } });
 * assert.deepEqual(causes, [{
 *   reason: "FieldValueInvalid",
 *   field: "spec.size",
 *   message: "Invalid value: 11: spec.size in body should be less than or equal to 10",
 * }]);
 * ```
 */
export function validateAgainstSchema(schema: JsonSchema, obj: unknown): FieldCause[] {
  const causes: FieldCause[] = [];
  validateValue(schema, obj, [], causes, true);
  return causes;
}

function validateValue(
  s: JsonSchema,
  v: unknown,
  path: Segment[],
  causes: FieldCause[],
  resource: boolean,
): void {
  const expected = s[INT_OR_STRING] === true ? "integer,string" : s.type;
  if (v === null || v === undefined) {
    if (s.nullable === true) {
      if (s.enum !== undefined && !s.enum.includes(null)) {
        causes.push(notSupported(formatPath(path), null, s.enum));
      }
    } else if (expected !== undefined) {
      const field = formatPath(path);
      causes.push(
        typeInvalid(field, "null", `${subject(field)} must be of type ${expected}: "null"`),
      );
    }
    return;
  }
  const actual = jsonType(v);
  if (expected !== undefined && !typeMatches(s, actual)) {
    const field = formatPath(path);
    causes.push(
      typeInvalid(field, actual, `${subject(field)} must be of type ${expected}: "${actual}"`),
    );
    return;
  }
  if (s.enum !== undefined && !s.enum.some((e) => jsonEqual(e, v))) {
    causes.push(notSupported(formatPath(path), v, s.enum));
  }
  if (typeof v === "string") validateString(s, v, path, causes);
  else if (typeof v === "number") validateNumber(s, v, path, causes);
  else if (Array.isArray(v)) validateArray(s, v, path, causes);
  else if (isObject(v)) validateObject(s, v, path, causes, resource);
  if (s.allOf || s.anyOf || s.oneOf || s.not) validateJunctors(s, v, path, causes, resource);
}

function validateString(s: JsonSchema, v: string, path: Segment[], causes: FieldCause[]): void {
  if (s.maxLength !== undefined && v.length > s.maxLength && runeCount(v) > s.maxLength) {
    causes.push({
      reason: "FieldValueTooLong",
      message: `Too long: may not be longer than ${s.maxLength}`,
      field: formatPath(path),
    });
  }
  if (s.minLength !== undefined && runeCount(v) < s.minLength) {
    const field = formatPath(path);
    causes.push(
      invalid(field, v, `${subject(field)} should be at least ${s.minLength} chars long`),
    );
  }
  if (s.pattern !== undefined) {
    const re = compilePattern(s.pattern);
    if (re !== undefined && !re.test(v)) {
      const field = formatPath(path);
      causes.push(invalid(field, v, `${subject(field)} should match '${s.pattern}'`));
    }
  }
  if (s.format !== undefined && !checkFormat(s.format, v)) {
    const field = formatPath(path);
    causes.push(
      typeInvalid(field, v, `${subject(field)} must be of type ${s.format}: ${quote(v)}`),
    );
  }
}

function validateNumber(s: JsonSchema, v: number, path: Segment[], causes: FieldCause[]): void {
  if (s.multipleOf !== undefined && s.multipleOf > 0) {
    const q = v / s.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) {
      const field = formatPath(path);
      causes.push(invalid(field, v, `${subject(field)} should be a multiple of ${s.multipleOf}`));
    }
  }
  if (s.maximum !== undefined) {
    const exclusive = s.exclusiveMaximum === true;
    if (exclusive ? v >= s.maximum : v > s.maximum) {
      const field = formatPath(path);
      const rel = exclusive ? "less than" : "less than or equal to";
      causes.push(invalid(field, v, `${subject(field)} should be ${rel} ${s.maximum}`));
    }
  }
  if (s.minimum !== undefined) {
    const exclusive = s.exclusiveMinimum === true;
    if (exclusive ? v <= s.minimum : v < s.minimum) {
      const field = formatPath(path);
      const rel = exclusive ? "greater than" : "greater than or equal to";
      causes.push(invalid(field, v, `${subject(field)} should be ${rel} ${s.minimum}`));
    }
  }
}

function validateArray(
  s: JsonSchema,
  v: readonly unknown[],
  path: Segment[],
  causes: FieldCause[],
): void {
  if (s.minItems !== undefined && v.length < s.minItems) {
    const field = formatPath(path);
    causes.push(
      invalid(field, v.length, `${subject(field)} should have at least ${s.minItems} items`),
    );
  }
  if (s.maxItems !== undefined && v.length > s.maxItems) {
    causes.push(tooMany(formatPath(path), v.length, s.maxItems));
  }
  if (s.uniqueItems === true && hasDuplicates(v)) {
    const field = formatPath(path);
    causes.push(invalid(field, "", `${subject(field)} shouldn't contain duplicates`));
  }
  const items = s.items;
  if (items === undefined) return;
  for (let i = 0; i < v.length; i++) {
    path.push(i);
    validateValue(items, v[i], path, causes, false);
    path.pop();
  }
}

function validateObject(
  s: JsonSchema,
  v: Json,
  path: Segment[],
  causes: FieldCause[],
  resource: boolean,
): void {
  if (s.minProperties !== undefined || s.maxProperties !== undefined) {
    const size = countKeys(v);
    if (s.minProperties !== undefined && size < s.minProperties) {
      const field = formatPath(path);
      causes.push(
        invalid(
          field,
          size,
          `${subject(field)} should have at least ${s.minProperties} properties`,
        ),
      );
    }
    if (s.maxProperties !== undefined && size > s.maxProperties) {
      causes.push(tooMany(formatPath(path), size, s.maxProperties));
    }
  }
  const embedded = s[EMBEDDED] === true;
  if (embedded) {
    for (const key of ["apiVersion", "kind"]) {
      if (v[key] === undefined) causes.push(required(childPath(path, key), "must not be empty"));
    }
  }
  if (s.required !== undefined) {
    for (const key of s.required) {
      if (!Object.hasOwn(v, key) || v[key] === undefined) {
        causes.push(required(childPath(path, key)));
      }
    }
  }
  const props = s.properties;
  const extra = s.additionalProperties;
  for (const key in v) {
    const child = v[key];
    if (child === undefined || !Object.hasOwn(v, key)) continue;
    const prop = props !== undefined && Object.hasOwn(props, key) ? props[key] : undefined;
    if (prop !== undefined) {
      path.push(key);
      validateValue(prop, child, path, causes, false);
      path.pop();
    } else if ((resource || embedded) && isMetaField(key)) {
      continue; // apiVersion, kind, metadata: validated elsewhere.
    } else if (typeof extra === "object") {
      path.push(key);
      validateValue(extra, child, path, causes, false);
      path.pop();
    } else if (extra === false && s[PRESERVE] !== true) {
      const field = formatPath(path);
      const name = childPath(path, key);
      causes.push(invalid(field, "", `${name} in body is a forbidden property`));
    }
  }
}

function validateJunctors(
  s: JsonSchema,
  v: unknown,
  path: Segment[],
  causes: FieldCause[],
  resource: boolean,
): void {
  if (s.allOf !== undefined) {
    const before = causes.length;
    for (const sub of s.allOf) validateValue(sub, v, path, causes, resource);
    if (causes.length > before) {
      causes.push(composite(path, "must validate all the schemas (allOf)"));
    }
  }
  if (s.anyOf !== undefined) {
    const { valid, best } = tryEach(s.anyOf, v, path, resource);
    if (valid === 0) {
      causes.push(composite(path, "must validate at least one schema (anyOf)"));
      if (best !== undefined) causes.push(...best);
    }
  }
  if (s.oneOf !== undefined) {
    const { valid, best } = tryEach(s.oneOf, v, path, resource);
    if (valid !== 1) {
      causes.push(composite(path, "must validate one and only one schema (oneOf)"));
      if (valid === 0 && best !== undefined) causes.push(...best);
    }
  }
  if (s.not !== undefined) {
    const sub: FieldCause[] = [];
    validateValue(s.not, v, path, sub, resource);
    if (sub.length === 0) causes.push(composite(path, "shouldn't validate the schema (not)"));
  }
}

/** Validates `v` against each schema; counts the matches and keeps the smallest failure. */
function tryEach(
  schemas: readonly JsonSchema[],
  v: unknown,
  path: Segment[],
  resource: boolean,
): { valid: number; best: FieldCause[] | undefined } {
  let valid = 0;
  let best: FieldCause[] | undefined;
  for (const sub of schemas) {
    const found: FieldCause[] = [];
    validateValue(sub, v, path, found, resource);
    if (found.length === 0) valid++;
    else if (best === undefined || found.length < best.length) best = found;
  }
  return { valid, best };
}

function typeMatches(s: JsonSchema, actual: string): boolean {
  if (s[INT_OR_STRING] === true) return actual === "integer" || actual === "string";
  if (s.type === "number") return actual === "number" || actual === "integer";
  return s.type === actual;
}
