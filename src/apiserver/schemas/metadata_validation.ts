/**
 * Validation of object metadata — names, labels, annotations, finalizers — as
 * kube-apiserver validates `ObjectMeta` of every object, built-in or custom.
 *
 * It exists so that the embedded API server rejects exactly what a real
 * cluster rejects, with the same 422 causes: an operator that sets a label
 * value of 64 characters or an unprefixed annotation with two slashes must
 * fail in tests as it would fail in production. The rules and messages follow
 * `k8s.io/apimachinery` (`IsDNS1123Subdomain`, `IsQualifiedName`,
 * `IsValidLabelValue`, `ValidateAnnotations`).
 *
 * Lengths are counted in UTF-8 bytes, as Go's `len()` does.
 *
 * @module
 */

import type { FieldCause } from "./schema.ts";
import { utf8Length } from "../shared/utf8.ts";

/** Options of {@linkcode validateName}. */
export type NameOptions = {
  /** The field to report, e.g. `metadata.name` or `metadata.generateName`. */
  field: string;
  /** Require a DNS-1123 label (≤63, no dots), as for namespaces, instead of a subdomain. */
  dns1123Label?: boolean;
  /**
   * Require only a valid URL path segment (not `.` or `..`, no `/` or `%`), as for the RBAC
   * kinds, whose names are like `system:discovery`.
   */
  pathSegment?: boolean;
  /**
   * Validate a `generateName` prefix: a trailing `-` is allowed (a random
   * suffix follows) and an empty value is not an error.
   */
  prefix?: boolean;
};

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_LABEL_MAX = 63;

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_SUBDOMAIN_MAX = 253;

const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const QUALIFIED_NAME_MAX = 63;

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MAX = 63;

const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

/**
 * Validates an object's name (or `generateName` prefix) as a DNS-1123
 * subdomain (≤253 bytes; lowercase alphanumerics, `-`, `.`; alphanumeric at
 * both ends) or, with `dns1123Label`, a DNS-1123 label (≤63 bytes, no dots).
 *
 * @param name The name; a non-string is reported as a type error.
 * @param options The field to report, the rule, and whether it is a prefix.
 * @returns One cause per broken rule (`Required value` when empty and not a
 * prefix); empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateName } from "./metadata_validation.ts";
 *
 * assert.deepEqual(validateName("kex-1", { field: "metadata.name" }), []);
 * const [cause] = validateName("Kex", { field: "metadata.name" });
 * assert.equal(cause?.reason, "FieldValueInvalid");
 * assert.match(cause?.message ?? "", /^Invalid value: "Kex": a lowercase RFC 1123 subdomain/);
 * ```
 */
export function validateName(name: unknown, options: NameOptions): FieldCause[] {
  const { field } = options;
  if (typeof name !== "string") {
    if (name === undefined || name === null) return options.prefix ? [] : [emptyName(field)];
    return [notAString(field, name)];
  }
  if (name === "") return options.prefix ? [] : [emptyName(field)];
  // A prefix may end with "-": the generated suffix makes the name valid.
  const checked = options.prefix && name.endsWith("-") ? `${name.slice(0, -1)}a` : name;
  const msgs = options.pathSegment
    ? pathSegmentProblems(checked)
    : options.dns1123Label
    ? isDns1123Label(checked)
    : isDns1123Subdomain(checked);
  return msgs.map((msg) => invalid(field, name, msg));
}

/** Why a name is not a valid URL path segment (kube-apiserver's `IsValidPathSegmentName`). */
function pathSegmentProblems(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  const problems: string[] = [];
  for (const ch of ["/", "%"]) if (name.includes(ch)) problems.push(`may not contain '${ch}'`);
  return problems;
}

/**
 * Validates labels: keys are qualified names (an optional DNS-1123 subdomain
 * prefix of ≤253 bytes and `/`, then a name of ≤63 bytes of alphanumerics,
 * `-`, `_`, `.`, alphanumeric at both ends); values are empty or ≤63 bytes of
 * the same characters; values must be strings.
 *
 * @param labels The labels; `undefined` and `null` are valid (no labels).
 * @param field The field to report.
 * @returns The causes, all reported on `field` (as kube-apiserver does), except
 * non-string values, which are reported on `field[key]`; empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateLabels } from "./metadata_validation.ts";
 *
 * assert.deepEqual(validateLabels({ "kopf.dev/app": "demo", tier: "" }), []);
 * const [cause] = validateLabels({ app: "a b" });
 * assert.equal(cause?.field, "metadata.labels");
 * assert.match(cause?.message ?? "", /^Invalid value: "a b": a valid label must be/);
 * ```
 */
export function validateLabels(labels: unknown, field = "metadata.labels"): FieldCause[] {
  if (labels === undefined || labels === null) return [];
  if (!isObject(labels)) return [notAMap(field, labels)];
  const causes: FieldCause[] = [];
  for (const key in labels) {
    if (!Object.hasOwn(labels, key)) continue;
    for (const msg of isQualifiedName(key)) causes.push(invalid(field, key, msg));
    const value = labels[key];
    if (typeof value !== "string") {
      causes.push(notAString(`${field}[${key}]`, value));
      continue;
    }
    for (const msg of isValidLabelValue(value)) causes.push(invalid(field, value, msg));
  }
  return causes;
}

/**
 * Validates annotations: keys are qualified names, checked case-insensitively
 * as kube-apiserver does; values are any strings; keys and values together
 * must not exceed 256 KiB (262144 bytes of UTF-8).
 *
 * @param annotations The annotations; `undefined` and `null` are valid.
 * @param field The field to report.
 * @returns The causes (`FieldValueInvalid` per bad key on `field`,
 * `FieldValueTooLong` `Too long: must have at most 262144 bytes` when too big,
 * `FieldValueTypeInvalid` on `field[key]` for a non-string value); empty when
 * valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateAnnotations } from "./metadata_validation.ts";
 *
 * assert.deepEqual(validateAnnotations({ "Kopf.Dev/Last-Handled": "{}" }), []);
 * const big = { note: "x".repeat(262144) };
 * assert.deepEqual(validateAnnotations(big), [{
 *   reason: "FieldValueTooLong",
 *   message: "Too long: must have at most 262144 bytes",
 *   field: "metadata.annotations",
 * }]);
 * ```
 */
export function validateAnnotations(
  annotations: unknown,
  field = "metadata.annotations",
): FieldCause[] {
  if (annotations === undefined || annotations === null) return [];
  if (!isObject(annotations)) return [notAMap(field, annotations)];
  const causes: FieldCause[] = [];
  let size = 0;
  for (const key in annotations) {
    if (!Object.hasOwn(annotations, key)) continue;
    for (const msg of isQualifiedName(key.toLowerCase())) causes.push(invalid(field, key, msg));
    const value = annotations[key];
    size += utf8Length(key);
    if (typeof value === "string") size += utf8Length(value);
    else causes.push(notAString(`${field}[${key}]`, value));
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B) {
    causes.push({
      reason: "FieldValueTooLong",
      message: `Too long: must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes`,
      field,
    });
  }
  return causes;
}

/**
 * Validates finalizers: each must be a qualified name (so `kopf.dev/finalizer`
 * and the standard unprefixed `kubernetes`, `orphan`, `foregroundDeletion`
 * are all fine), and `orphan` with `foregroundDeletion` together is refused.
 *
 * @param finalizers The finalizers; `undefined` and `null` are valid.
 * @param field The field to report.
 * @returns The causes, reported on `field`; empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateFinalizers } from "./metadata_validation.ts";
 *
 * assert.deepEqual(validateFinalizers(["kopf.zalando.org/KopfFinalizerMarker", "orphan"]), []);
 * const [cause] = validateFinalizers(["a/b/c"]);
 * assert.equal(cause?.field, "metadata.finalizers");
 * assert.match(cause?.message ?? "", /^Invalid value: "a\/b\/c": a qualified name must/);
 * ```
 */
export function validateFinalizers(
  finalizers: unknown,
  field = "metadata.finalizers",
): FieldCause[] {
  if (finalizers === undefined || finalizers === null) return [];
  if (!Array.isArray(finalizers)) {
    return [typeInvalid(field, jsonType(finalizers), `${field} must be of type array`)];
  }
  const causes: FieldCause[] = [];
  let orphan = false;
  let foreground = false;
  for (let i = 0; i < finalizers.length; i++) {
    const finalizer: unknown = finalizers[i];
    if (typeof finalizer !== "string") {
      causes.push(notAString(`${field}[${i}]`, finalizer));
      continue;
    }
    for (const msg of isQualifiedName(finalizer)) causes.push(invalid(field, finalizer, msg));
    if (finalizer === "orphan") orphan = true;
    if (finalizer === "foregroundDeletion") foreground = true;
  }
  if (orphan && foreground) {
    const list = finalizers.map((f) => JSON.stringify(String(f))).join(", ");
    causes.push({
      reason: "FieldValueInvalid",
      message:
        `Invalid value: []string{${list}}: finalizer orphan and foregroundDeletion cannot be both set`,
      field,
    });
  }
  return causes;
}

// ---------------------------------------------------------------------------
// The apimachinery rules, returning bare messages.
// ---------------------------------------------------------------------------

function isDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
  }
  return errs;
}

function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL_RE.test(value)) {
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"));
  }
  return errs;
}

function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = value;
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix === "") errs.push("prefix part must be non-empty");
    else for (const msg of isDns1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
  } else {
    return [
      `a qualified name ${
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
      } with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name === "") errs.push("name part must be non-empty");
  else if (utf8Length(name) > QUALIFIED_NAME_MAX) {
    errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  }
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(
      `name part ${
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
      }`,
    );
  }
  return errs;
}

function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  }
  return errs;
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  // Go's wording, double space included: "(e.g. 'MyName',  or 'my.name', regex ...)".
  const eg = examples.map((e) => `'${e}', `).join(" or ");
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function jsonType(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function render(v: unknown): string {
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v ?? "null") ?? String(v);
}

function invalid(field: string, value: unknown, detail: string): FieldCause {
  return {
    reason: "FieldValueInvalid",
    message: `Invalid value: ${render(value)}: ${detail}`,
    field,
  };
}

function typeInvalid(field: string, actual: string, detail: string): FieldCause {
  return {
    reason: "FieldValueTypeInvalid",
    message: `Invalid value: ${render(actual)}: ${detail}: ${render(actual)}`,
    field,
  };
}

function notAString(field: string, value: unknown): FieldCause {
  return typeInvalid(field, jsonType(value), `${field} must be of type string`);
}

function notAMap(field: string, value: unknown): FieldCause {
  return typeInvalid(field, jsonType(value), `${field} must be of type object`);
}

function emptyName(field: string): FieldCause {
  return {
    reason: "FieldValueRequired",
    message: "Required value: name or generateName is required",
    field,
  };
}
