/**
 * What pruning, defaulting and validation against a structural schema share:
 * the {@link FieldCause} they report, the vendor extensions they honour, paths
 * as kube-apiserver prints them, the field errors worded like kube-openapi's,
 * JSON equality for `uniqueItems` and `enum`, and the copy-on-write helpers.
 *
 * @module
 */

import { compileRe2 } from "./re2_pattern.ts";

/**
 * One cause of an invalid object, as a Kubernetes `StatusCause`: `reason` is
 * e.g. `FieldValueRequired`, `field` a dotted path with `[i]` for array items
 * (`spec.items[0].name`), `message` worded as kube-apiserver words it.
 */
export type FieldCause = { reason: string; message: string; field: string };

export type Json = Record<string, unknown>;
export type Segment = string | number;

export const PRESERVE = "x-kubernetes-preserve-unknown-fields";
export const EMBEDDED = "x-kubernetes-embedded-resource";
export const INT_OR_STRING = "x-kubernetes-int-or-string";

/** Maps array items copy-on-write: the same array comes back when no item changed. */
export function mapItems(v: unknown[], fn: (item: unknown, index: number) => unknown): unknown[] {
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

/**
 * Compiles a schema `pattern` as RE2 (see `re2_pattern.ts`); one that does not
 * compile (a CRD stored before patterns were checked) is not enforced.
 */
export function compilePattern(pattern: string): RegExp | undefined {
  return compileRe2(pattern).regexp;
}

export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function isMetaField(key: string): boolean {
  return key === "apiVersion" || key === "kind" || key === "metadata";
}

/** The JSON type name kube-openapi reports: integers are `integer`, not `number`. */
export function jsonType(v: unknown): string {
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

export function formatPath(path: readonly Segment[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}

export function childPath(path: readonly Segment[], key: string): string {
  const parent = formatPath(path);
  return parent === "" ? key : `${parent}.${key}`;
}

/** How kube-openapi names a value's place in messages: `spec.size in body`. */
export function subject(field: string): string {
  return field === "" ? "body" : `${field} in body`;
}

export function quote(s: string): string {
  return JSON.stringify(s);
}

/** Renders a bad value as Go's field errors do: strings quoted, numbers and booleans bare. */
export function render(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === "string") return quote(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export function invalid(field: string, value: unknown, detail: string): FieldCause {
  return {
    reason: "FieldValueInvalid",
    message: `Invalid value: ${render(value)}: ${detail}`,
    field,
  };
}

export function typeInvalid(field: string, value: unknown, detail: string): FieldCause {
  return {
    reason: "FieldValueTypeInvalid",
    message: `Invalid value: ${render(value)}: ${detail}`,
    field,
  };
}

export function required(field: string, detail?: string): FieldCause {
  const message = detail ? `Required value: ${detail}` : "Required value";
  return { reason: "FieldValueRequired", message, field };
}

export function notSupported(
  field: string,
  value: unknown,
  allowed: readonly unknown[],
): FieldCause {
  const values = allowed.map((a) => quote(typeof a === "string" ? a : String(JSON.stringify(a))));
  const detail = values.length > 0 ? `: supported values: ${values.join(", ")}` : "";
  return {
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${render(value)}${detail}`,
    field,
  };
}

export function tooMany(field: string, actual: number, max: number): FieldCause {
  const items = max === 1 ? "item" : "items";
  return {
    reason: "FieldValueTooMany",
    message: `Too many: ${actual}: must have at most ${max} ${items}`,
    field,
  };
}

export function composite(path: readonly Segment[], what: string): FieldCause {
  const field = formatPath(path);
  return invalid(field, "", `${subject(field)} ${what}`);
}

export function runeCount(s: string): number {
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

export function countKeys(v: Json): number {
  let n = 0;
  for (const key in v) if (Object.hasOwn(v, key) && v[key] !== undefined) n++;
  return n;
}

export function hasDuplicates(v: readonly unknown[]): boolean {
  for (let i = 1; i < v.length; i++) {
    for (let j = 0; j < i; j++) if (jsonEqual(v[i], v[j])) return true;
  }
  return false;
}

export function jsonEqual(a: unknown, b: unknown): boolean {
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
export function copyUntil(v: Json, stop: string): Json {
  const out: Json = {};
  for (const key in v) {
    if (key === stop) break;
    if (Object.hasOwn(v, key)) setKey(out, key, v[key]);
  }
  return out;
}

/** Sets an own data property, even one named `__proto__`. */
export function setKey(o: Json, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    o[key] = value;
  }
}
