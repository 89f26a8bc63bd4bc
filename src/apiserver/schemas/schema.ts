/**
 * Structural OpenAPI v3 schemas of CustomResourceDefinitions
 * (`spec.versions[].schema.openAPIV3Schema`), applied to custom resources the
 * way kube-apiserver applies them on every create, update and patch:
 *
 * 1. {@linkcode pruneUnknownFields} drops fields the schema does not declare
 *    (the paths feed `fieldValidation=Strict|Warn`);
 * 2. {@linkcode applyDefaults} fills in `default`s (and drops non-nullable
 *    nulls that have no default);
 * 3. {@linkcode validateAgainstSchema} reports what is still wrong, as
 *    `StatusCause`s worded like kube-apiserver's, so that clients and tests
 *    written against a real cluster see the same 422 answers here.
 *
 * It exists because operators are tested against this embedded server: a
 * resource that a real cluster would reject, prune or default must behave the
 * same here. The functions are pure and copy-on-write: when nothing changes
 * they return the input itself, and when something changes only the objects on
 * the path to the change are copied (unchanged subtrees are shared).
 *
 * @module
 */

import { deepCopy } from "../../cogs/structs/dicts.ts";
import { compileRe2 } from "./re2_pattern.ts";
import type { JsonSchema } from "../shared/types.ts";

/**
 * One cause of an invalid object, as a Kubernetes `StatusCause`: `reason` is
 * e.g. `FieldValueRequired`, `field` a dotted path with `[i]` for array items
 * (`spec.items[0].name`), `message` worded as kube-apiserver words it.
 */
export type FieldCause = { reason: string; message: string; field: string };

type Json = Record<string, unknown>;
type Segment = string | number;

const PRESERVE = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED = "x-kubernetes-embedded-resource";
const INT_OR_STRING = "x-kubernetes-int-or-string";

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

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
 * import { validateAgainstSchema } from "./schema.ts";
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

// ---------------------------------------------------------------------------
// Defaulting
// ---------------------------------------------------------------------------

/**
 * Fills in `default`s where a declared property is absent, recursively (also
 * inside array items, `additionalProperties` values and defaults themselves),
 * as kube-apiserver does on create, update and read. Like kube-apiserver, a
 * `null` where the schema is not `nullable` is replaced by the default, or
 * removed when there is no default (object properties only; `null` array items
 * without a default stay and fail validation).
 *
 * @param schema The root schema (`openAPIV3Schema`).
 * @param obj The object (parsed JSON); never mutated.
 * @returns The input itself when nothing was defaulted; otherwise a copy of
 * the changed path that shares unchanged subtrees with the input. Default
 * values are copied, never shared with the schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyDefaults } from "./schema.ts";
 *
 * const schema = {
 *   type: "object" as const,
 *   properties: {
 *     spec: {
 *       type: "object" as const,
 *       default: {},
 *       properties: { replicas: { type: "integer" as const, default: 1 } },
 *     },
 *   },
 * };
 * assert.deepEqual(applyDefaults(schema, { kind: "Kex" }), { kind: "Kex", spec: { replicas: 1 } });
 * const complete = { spec: { replicas: 3 } };
 * assert.equal(applyDefaults(schema, complete), complete); // unchanged: the same object
 * ```
 */
export function applyDefaults(schema: JsonSchema, obj: unknown): unknown {
  return defaultValue(schema, obj);
}

/** Maps array items copy-on-write: the same array comes back when no item changed. */
function mapItems(v: unknown[], fn: (item: unknown, index: number) => unknown): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < v.length; i++) {
    const next = fn(v[i], i);
    if (next !== v[i]) {
      out ??= v.slice();
      out[i] = next;
    }
  }
  return out ?? v;
}

/** Fills in defaults; each default is a deep copy, never shared with the schema or other objects. */
function defaultValue(s: JsonSchema, v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = s.items;
    if (items === undefined) return v;
    return mapItems(v, (child) => {
      const filled = child === null && items.nullable !== true && items.default !== undefined
        ? deepCopy(items.default)
        : child;
      return defaultValue(items, filled);
    });
  }
  if (!isObject(v)) return v;
  const props = s.properties;
  const extra = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined;
  if (props === undefined && extra === undefined) return v;

  // Absent (or non-nullable null) properties with a default get it first, so
  // the walk below also defaults inside the defaults.
  let out: Json | undefined;
  if (props !== undefined) {
    for (const key in props) {
      const prop = props[key];
      if (prop === undefined || prop.default === undefined || !Object.hasOwn(props, key)) continue;
      const current = Object.hasOwn(v, key) ? v[key] : undefined;
      if (current === undefined || (current === null && prop.nullable !== true)) {
        out ??= { ...v };
        setKey(out, key, deepCopy(prop.default));
      }
    }
  }
  const src = out ?? v;
  for (const key in src) {
    if (!Object.hasOwn(src, key)) continue;
    const sub = props !== undefined && Object.hasOwn(props, key) ? props[key] : extra;
    if (sub === undefined) continue;
    const child = src[key];
    let next = child;
    let remove = false;
    if (child === null && sub.nullable !== true) {
      if (sub.default === undefined) remove = true;
      else next = deepCopy(sub.default);
    }
    if (!remove) next = defaultValue(sub, next);
    if (!remove && next === child) continue;
    out ??= { ...v };
    if (remove) delete out[key];
    else setKey(out, key, next);
  }
  return out ?? v;
}

// ---------------------------------------------------------------------------
// Pruning
// ---------------------------------------------------------------------------

/**
 * Removes the fields that the schema does not declare, as kube-apiserver does
 * before defaulting and validation. Kept: root (and embedded-resource)
 * `apiVersion`/`kind` strings and `metadata` objects; everything under a
 * level with `x-kubernetes-preserve-unknown-fields: true` (declared
 * properties below it are still pruned by their own schemas); and keys allowed
 * by `additionalProperties` (a schema prunes inside their values; `true` keeps
 * the values as they are). Inside an object whose schema declares nothing, and
 * in array items without an `items` schema, every key is removed.
 *
 * @param schema The root schema (`openAPIV3Schema`).
 * @param obj The object (parsed JSON); never mutated.
 * @returns `value`: the input itself when nothing was pruned, otherwise a
 * copy-on-write result sharing unchanged subtrees; `pruned`: the dotted paths
 * removed, in document order (for `fieldValidation=Strict`, reply 400
 * `strict decoding error: unknown field "<path>"`; for `Warn`, one warning
 * per path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pruneUnknownFields } from "./schema.ts";
 *
 * const schema = {
 *   type: "object" as const,
 *   properties: {
 *     spec: { type: "object" as const, properties: { size: { type: "integer" as const } } },
 *   },
 * };
 * const { value, pruned } = pruneUnknownFields(schema, {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   metadata: { name: "kex" },
 *   spec: { size: 1, x: true },
 * });
 * assert.deepEqual(pruned, ["spec.x"]);
 * assert.deepEqual(value, {
 *   apiVersion: "kopf.dev/v1",
 *   kind: "KopfExample",
 *   metadata: { name: "kex" },
 *   spec: { size: 1 },
 * });
 * ```
 */
export function pruneUnknownFields(
  schema: JsonSchema,
  obj: unknown,
): { value: unknown; pruned: string[] } {
  const pruned: string[] = [];
  const value = pruneValue(schema, obj, [], pruned, true);
  return { value, pruned };
}

function pruneValue(
  s: JsonSchema | undefined,
  v: unknown,
  path: Segment[],
  pruned: string[],
  resource: boolean,
): unknown {
  if (s !== undefined && s[PRESERVE] === true) return skipPrune(s, v, path, pruned, resource);
  if (Array.isArray(v)) {
    const items = s?.items;
    return mapItems(v, (child, i) => {
      path.push(i);
      const next = pruneValue(items, child, path, pruned, false);
      path.pop();
      return next;
    });
  }
  if (!isObject(v)) return v;
  const embedded = s !== undefined && (resource || s[EMBEDDED] === true);
  let out: Json | undefined;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const child = v[key];
    if (embedded && keptMetaField(key, child)) {
      if (out !== undefined) setKey(out, key, child);
      continue;
    }
    const sub = s === undefined ? undefined : childSchema(s, key);
    let next: unknown = child;
    if (sub === undefined) {
      pruned.push(childPath(path, key));
      out ??= copyUntil(v, key);
      continue;
    }
    if (sub !== true) {
      path.push(key);
      next = pruneValue(sub, child, path, pruned, false);
      path.pop();
    }
    if (out === undefined && next !== child) out = copyUntil(v, key);
    if (out !== undefined) setKey(out, key, next);
  }
  return out ?? v;
}

/** Under `x-kubernetes-preserve-unknown-fields`: keeps unknown keys, prunes declared ones. */
function skipPrune(
  s: JsonSchema | undefined,
  v: unknown,
  path: Segment[],
  pruned: string[],
  resource: boolean,
): unknown {
  if (s === undefined) return v;
  if (Array.isArray(v)) {
    const items = s.items;
    if (items === undefined) return v;
    return mapItems(v, (child, i) => {
      path.push(i);
      const next = skipPrune(items, child, path, pruned, false);
      path.pop();
      return next;
    });
  }
  if (!isObject(v)) return v;
  const embedded = resource || s[EMBEDDED] === true;
  let out: Json | undefined;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const child = v[key];
    const sub = embedded && isMetaField(key) ? undefined : childSchema(s, key);
    let next: unknown = child;
    if (sub !== undefined && sub !== true) {
      path.push(key);
      next = pruneValue(sub, child, path, pruned, false);
      path.pop();
    }
    if (out === undefined && next !== child) out = copyUntil(v, key);
    if (out !== undefined) setKey(out, key, next);
  }
  return out ?? v;
}

/** The schema of a key: declared property, `additionalProperties` schema, `true` (keep), or none. */
function childSchema(s: JsonSchema, key: string): JsonSchema | true | undefined {
  const props = s.properties;
  if (props !== undefined && Object.hasOwn(props, key)) return props[key];
  const extra = s.additionalProperties;
  if (typeof extra === "object") return extra;
  return extra === true ? true : undefined;
}

function keptMetaField(key: string, value: unknown): boolean {
  if (key === "apiVersion" || key === "kind") return typeof value === "string";
  return key === "metadata" && isObject(value);
}

// ---------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------

const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BYTE_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UUID_RE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/i;
const IPV4_RE = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const HOSTNAME_LABEL_RE = /^[A-Za-z0-9](?:[-A-Za-z0-9]{0,61}[A-Za-z0-9])?$/;
const EMAIL_RE = /^[^@\s]+@[^@\s]+$/;
const MAC_RE = /^(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}$/;
const DURATION_RE = /^[-+]?(?:0|(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const HEX_COLOR_RE = /^#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR_RE = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/;
const OBJECT_ID_RE = /^[0-9a-fA-F]{24}$/;

/**
 * Whether a string matches a format. Formats kube-apiserver does not check
 * (`int32`, `int64`, `float`, `double`, `password`, `uri`, …) always match.
 */
function checkFormat(format: string, v: string): boolean {
  switch (format) {
    case "date-time":
    case "datetime": {
      const m = DATE_TIME_RE.exec(v);
      return m !== null && validDate(m[1], m[2], m[3]) && Number(m[4]) < 24 &&
        Number(m[5]) < 60 && (m[6] === undefined || Number(m[6]) <= 60);
    }
    case "date": {
      const m = DATE_RE.exec(v);
      return m !== null && validDate(m[1], m[2], m[3]);
    }
    case "byte":
      return BYTE_RE.test(v);
    case "uuid":
      return UUID_RE.test(v);
    case "uuid3":
    case "uuid4":
    case "uuid5":
      return UUID_RE.test(v) && v.length === 36 && v[14] === format[4];
    case "ipv4":
      return IPV4_RE.test(v);
    case "ipv6":
      return isIPv6(v);
    case "cidr": {
      const slash = v.indexOf("/");
      if (slash < 0) return false;
      const ip = v.slice(0, slash);
      const bits = v.slice(slash + 1);
      if (!/^(?:0|[1-9]\d{0,2})$/.test(bits)) return false;
      if (IPV4_RE.test(ip)) return Number(bits) <= 32;
      return isIPv6(ip) && Number(bits) <= 128;
    }
    case "hostname":
      return v.length <= 253 && v.split(".").every((label) => HOSTNAME_LABEL_RE.test(label));
    case "email":
      return EMAIL_RE.test(v);
    case "mac":
      return MAC_RE.test(v);
    case "duration":
      return DURATION_RE.test(v);
    case "hexcolor":
      return HEX_COLOR_RE.test(v);
    case "rgbcolor": {
      const m = RGB_COLOR_RE.exec(v);
      return m !== null && m.slice(1).every((c) => Number(c) <= 255);
    }
    case "bsonobjectid":
      return OBJECT_ID_RE.test(v);
    default:
      return true;
  }
}

function validDate(y: string | undefined, m: string | undefined, d: string | undefined): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

function isIPv6(v: string): boolean {
  if (!v.includes(":") || /[^0-9A-Fa-f:.]/.test(v)) return false;
  try {
    new URL(`http://[${v}]/`);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/**
 * Compiles a schema `pattern` as RE2 (see `re2_pattern.ts`); one that does not
 * compile (a CRD stored before patterns were checked) is not enforced.
 */
function compilePattern(pattern: string): RegExp | undefined {
  return compileRe2(pattern).regexp;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isMetaField(key: string): boolean {
  return key === "apiVersion" || key === "kind" || key === "metadata";
}

/** The JSON type name kube-openapi reports: integers are `integer`, not `number`. */
function jsonType(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return Number.isInteger(v) ? "integer" : "number";
    case "boolean":
      return "boolean";
    case "object":
      return v === null ? "null" : Array.isArray(v) ? "array" : "object";
    default:
      return typeof v;
  }
}

function formatPath(path: readonly Segment[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}

function childPath(path: readonly Segment[], key: string): string {
  const parent = formatPath(path);
  return parent === "" ? key : `${parent}.${key}`;
}

/** How kube-openapi names a value's place in messages: `spec.size in body`. */
function subject(field: string): string {
  return field === "" ? "body" : `${field} in body`;
}

function quote(s: string): string {
  return JSON.stringify(s);
}

/** Renders a bad value as Go's field errors do: strings quoted, numbers and booleans bare. */
function render(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === "string") return quote(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function invalid(field: string, value: unknown, detail: string): FieldCause {
  return {
    reason: "FieldValueInvalid",
    message: `Invalid value: ${render(value)}: ${detail}`,
    field,
  };
}

function typeInvalid(field: string, value: unknown, detail: string): FieldCause {
  return {
    reason: "FieldValueTypeInvalid",
    message: `Invalid value: ${render(value)}: ${detail}`,
    field,
  };
}

function required(field: string, detail?: string): FieldCause {
  const message = detail ? `Required value: ${detail}` : "Required value";
  return { reason: "FieldValueRequired", message, field };
}

function notSupported(field: string, value: unknown, allowed: readonly unknown[]): FieldCause {
  const values = allowed.map((a) => quote(typeof a === "string" ? a : String(JSON.stringify(a))));
  const detail = values.length > 0 ? `: supported values: ${values.join(", ")}` : "";
  return {
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${render(value)}${detail}`,
    field,
  };
}

function tooMany(field: string, actual: number, max: number): FieldCause {
  const items = max === 1 ? "item" : "items";
  return {
    reason: "FieldValueTooMany",
    message: `Too many: ${actual}: must have at most ${max} ${items}`,
    field,
  };
}

function composite(path: readonly Segment[], what: string): FieldCause {
  const field = formatPath(path);
  return invalid(field, "", `${subject(field)} ${what}`);
}

function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function countKeys(v: Json): number {
  let n = 0;
  for (const key in v) if (Object.hasOwn(v, key) && v[key] !== undefined) n++;
  return n;
}

function hasDuplicates(v: readonly unknown[]): boolean {
  for (let i = 1; i < v.length; i++) {
    for (let j = 0; j < i; j++) if (jsonEqual(v[i], v[j])) return true;
  }
  return false;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Json;
  const y = b as Json;
  if (countKeys(x) !== countKeys(y)) return false;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || x[key] === undefined) continue;
    if (!Object.hasOwn(y, key) || !jsonEqual(x[key], y[key])) return false;
  }
  return true;
}

/** A shallow copy of `v` with the own keys that come before `stop`. */
function copyUntil(v: Json, stop: string): Json {
  const out: Json = {};
  for (const key in v) {
    if (key === stop) break;
    if (Object.hasOwn(v, key)) setKey(out, key, v[key]);
  }
  return out;
}

/** Sets an own data property, even one named `__proto__`. */
function setKey(o: Json, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    o[key] = value;
  }
}
