/**
 * Whether a CustomResourceDefinition's schema may be stored: the checks a
 * real kube-apiserver makes on `spec.versions[].schema.openAPIV3Schema` of an
 * `apiextensions.k8s.io/v1` CRD before it accepts it — a schema is required,
 * every `type` is one of OpenAPI's six, and the schema is *structural*.
 *
 * Why: a CRD that a real cluster refuses must be refused here too, with the
 * same Status, or an operator's manifests pass every test and then fail on
 * the first `kubectl apply` to a cluster. Without these checks, `type:
 * objekt` was stored, and objects of that CRD were then validated against a
 * type nobody knows.
 *
 * Structural, as Kubernetes defines it (the "structural schema" rules of
 * apiextensions): every field and array item has a non-empty `type` (unless
 * `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`),
 * the root is an `object` without `additionalProperties`, arrays have
 * `items`, `properties` and `additionalProperties` are not both given, root
 * `metadata` restricts `name` and `generateName` only, and what is under
 * `allOf`/`anyOf`/`oneOf`/`not` only restricts values (no `type`, `default`,
 * `description`, `nullable`, extensions, nor `metadata` there; the
 * int-or-string `anyOf: [{type: integer}, {type: string}]` is the one
 * exception). Also as apiextensions.k8s.io/v1 does: `id`, `additionalItems`,
 * `patternProperties`, `definitions`, `dependencies`, `$ref`, `type: null`
 * and an array of `items` are not supported; `pattern`s must compile as RE2
 * (`re2_pattern.ts`); `x-kubernetes-preserve-unknown-fields` is true or
 * absent; `x-kubernetes-list-type`/`-list-map-keys`/`-map-type` take their
 * known values on the right types. (A keyword of the wrong JSON type never
 * gets here: `crd_validation.ts` refuses it first, as kube's decoder does.)
 * Causes carry the field paths and wording of kube-apiserver
 * (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Unsupported
 * value: "objekt": …`), sorted as it sorts its structural errors.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import { compileRe2 } from "./re2_pattern.ts";

const TYPES = ["array", "boolean", "integer", "number", "object", "string"];
const PRESERVE = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED = "x-kubernetes-embedded-resource";
const INT_OR_STRING = "x-kubernetes-int-or-string";

type Level = "root" | "item" | "field";
type Schema = Record<string, unknown>;

/**
 * The causes that make a CRD's versions' schemas unacceptable.
 *
 * @param versions `spec.versions` of the CRD.
 * @returns The causes (empty when every schema is acceptable).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateCrdSchemas } from "./crd_schema.ts";
 * const causes = validateCrdSchemas([{
 *   name: "v1",
 *   schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "objekt" } } } },
 * }]);
 * assert.equal(causes[0]!.field, "spec.versions[0].schema.openAPIV3Schema.properties[spec].type");
 * const [bad] = validateCrdSchemas([{
 *   name: "v1",
 *   schema: { openAPIV3Schema: { type: "object", properties: { x: { type: "string", pattern: "a(?=b)" } } } },
 * }]);
 * assert.equal(bad!.field, "spec.versions[0].schema.openAPIV3Schema.properties[x].pattern");
 * ```
 */
export function validateCrdSchemas(
  versions: ReadonlyArray<{ name?: string; schema?: { openAPIV3Schema?: unknown } | null }>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  versions.forEach((v, i) => {
    const path = `spec.versions[${i}].schema.openAPIV3Schema`;
    const schema = v.schema?.openAPIV3Schema;
    if (!isSchema(schema)) {
      causes.push(required(path, "schemas are required"));
      return;
    }
    const found: StatusCause[] = [];
    walk(schema, "root", path, found);
    found.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
    causes.push(...found);
  });
  return causes;
}

/** The structural invariants of one schema node and what is under it. */
function walk(s: Schema, level: Level, path: string, out: StatusCause[]): void {
  const type = s.type;
  if (type !== undefined && (typeof type !== "string" || !TYPES.includes(type))) {
    out.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${JSON.stringify(type)}: supported values: ${
        TYPES.map((t) => `"${t}"`).join(", ")
      }`,
      field: `${path}.type`,
    });
  }
  if (type === "array" && s.items === undefined) {
    out.push(required(`${path}.items`, "must be specified"));
  }
  if (isSchema(s.items)) walk(s.items, "item", `${path}.items`, out);
  const properties = isRecord(s.properties) ? s.properties : {};
  for (const [key, value] of Object.entries(properties)) {
    if (isSchema(value)) walk(value, "field", `${path}.properties[${key}]`, out);
  }
  const additional = s.additionalProperties;
  if (additional !== undefined && additional !== null) {
    if (level === "root") {
      out.push(forbidden(`${path}.additionalProperties`, "must not be used at the root"));
    }
    if (additional === false) {
      out.push(
        forbidden(`${path}.additionalProperties`, "additionalProperties cannot be set to false"),
      );
    }
    if (Object.keys(properties).length) {
      out.push(
        forbidden(
          `${path}.additionalProperties`,
          "additionalProperties and properties are mutual exclusive",
        ),
      );
    }
    if (isSchema(additional)) walk(additional, "field", `${path}.additionalProperties`, out);
  }
  if (s.uniqueItems === true) {
    out.push(forbidden(
      `${path}.uniqueItems`,
      "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
    ));
  }
  if (s.$ref !== undefined) out.push(forbidden(`${path}.$ref`, "$ref is not supported"));
  unsupported(s, path, out);
  extensions(s, path, out);
  pattern(s, path, out);
  if (s[INT_OR_STRING] === true && s[PRESERVE] === true) {
    out.push(
      invalid(`${path}.${PRESERVE}`, true, "must be false if x-kubernetes-int-or-string is true"),
    );
  }
  if (s[INT_OR_STRING] === true && s[EMBEDDED] === true) {
    out.push(
      invalid(`${path}.${EMBEDDED}`, true, "must be false if x-kubernetes-int-or-string is true"),
    );
  }
  junctors(s, path, out);
  const empty = type === undefined || type === "";
  if (s[EMBEDDED] === true && type !== "object") {
    const detail = "must be object if x-kubernetes-embedded-resource is true";
    out.push(empty ? required(`${path}.type`, detail) : invalid(`${path}.type`, type, detail));
  } else if (empty && s[INT_OR_STRING] !== true && s[PRESERVE] !== true) {
    const where = level === "root"
      ? "at the root"
      : level === "item"
      ? "for specified array items"
      : "for specified object fields";
    out.push(required(`${path}.type`, `must not be empty ${where}`));
  }
  if (level === "root" && !empty && type !== "object") {
    out.push(invalid(`${path}.type`, type, "must be object at the root"));
  }
  const checkMeta = level === "root" || s[EMBEDDED] === true;
  for (
    const [key, want] of [["kind", "string"], ["apiVersion", "string"], ["metadata", "object"]]
  ) {
    const p = properties[key!];
    if (checkMeta && isSchema(p) && p.type !== want) {
      out.push(invalid(`${path}.properties[${key}].type`, p.type ?? "", `must be ${want}`));
    }
  }
  const meta = properties.metadata;
  if (level === "root" && isSchema(meta) && !onlyNames(meta)) {
    out.push(forbidden(
      `${path}.properties[metadata]`,
      "must not specify anything other than name and generateName, but metadata is implicitly specified",
    ));
  }
}

/** `allOf`/`anyOf`/`oneOf`/`not`: value validations only (int-or-string's anyOf excepted). */
function junctors(s: Schema, path: string, out: StatusCause[]): void {
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const allOf = Array.isArray(s.allOf) ? s.allOf : [];
  const skipFirstAllOfAnyOf = isSchema(allOf[0]) && isIntOrStringAnyOf(allOf[0].anyOf);
  if (!skipAnyOf) list(s.anyOf, `${path}.anyOf`, out);
  allOf.forEach((v, i) => {
    if (isSchema(v)) nested(v, `${path}.allOf[${i}]`, out, skipFirstAllOfAnyOf && i === 0);
  });
  list(s.oneOf, `${path}.oneOf`, out);
  if (isSchema(s.not)) nested(s.not, `${path}.not`, out);
}

function list(items: unknown, path: string, out: StatusCause[]): void {
  if (!Array.isArray(items)) return;
  items.forEach((v, i) => {
    if (isSchema(v)) nested(v, `${path}[${i}]`, out);
  });
}

/** A schema under a junctor: it may restrict values, never declare structure. */
function nested(v: Schema, path: string, out: StatusCause[], skipAnyOf = false): void {
  if (!skipAnyOf) list(v.anyOf, `${path}.anyOf`, out);
  const allOf = Array.isArray(v.allOf) ? v.allOf : [];
  allOf.forEach((x, i) => {
    if (isSchema(x)) nested(x, `${path}.allOf[${i}]`, out);
  });
  list(v.oneOf, `${path}.oneOf`, out);
  if (isSchema(v.not)) nested(v.not, `${path}.not`, out);
  if (isSchema(v.items)) nested(v.items, `${path}.items`, out);
  const properties = isRecord(v.properties) ? v.properties : {};
  for (const [key, value] of Object.entries(properties)) {
    if (isSchema(value)) nested(value, `${path}.properties[${key}]`, out);
  }
  const rules: Array<[string, boolean, string]> = [
    ["type", typeof v.type === "string" && v.type !== "", "must be empty to be structural"],
    [
      "additionalProperties",
      v.additionalProperties !== undefined,
      "must be undefined to be structural",
    ],
    ["default", v.default !== undefined, "must be undefined to be structural"],
    ["title", !!v.title, "must be empty to be structural"],
    ["description", !!v.description, "must be empty to be structural"],
    ["nullable", v.nullable === true, "must be false to be structural"],
    [PRESERVE, v[PRESERVE] === true, "must be false to be structural"],
    [EMBEDDED, v[EMBEDDED] === true, "must be false to be structural"],
    [INT_OR_STRING, v[INT_OR_STRING] === true, "must be false to be structural"],
    [
      "x-kubernetes-list-map-keys",
      Array.isArray(v["x-kubernetes-list-map-keys"]) &&
      (v["x-kubernetes-list-map-keys"] as unknown[]).length > 0,
      "must be empty to be structural",
    ],
    [
      "x-kubernetes-list-type",
      v["x-kubernetes-list-type"] !== undefined,
      "must be undefined to be structural",
    ],
  ];
  for (const [key, bad, detail] of rules) if (bad) out.push(forbidden(`${path}.${key}`, detail));
  pattern(v, path, out);
  if (properties.metadata !== undefined) {
    out.push(
      forbidden(`${path}.properties[metadata]`, "must not be specified in a nested context"),
    );
  }
}

/** What apiextensions.k8s.io/v1 does not support in a schema (its `specStandardValidatorV3`). */
function unsupported(s: Schema, path: string, out: StatusCause[]): void {
  const given = (v: unknown) => v !== undefined && v !== null;
  const nonEmpty = (v: unknown) => isRecord(v) && Object.keys(v).length > 0;
  if (typeof s.id === "string" && s.id) out.push(forbidden(`${path}.id`, "id is not supported"));
  if (given(s.additionalItems)) {
    out.push(forbidden(`${path}.additionalItems`, "additionalItems is not supported"));
  }
  if (nonEmpty(s.patternProperties)) {
    out.push(forbidden(`${path}.patternProperties`, "patternProperties is not supported"));
  }
  if (nonEmpty(s.definitions)) {
    out.push(forbidden(`${path}.definitions`, "definitions are not supported"));
  }
  if (given(s.dependencies)) {
    out.push(forbidden(`${path}.dependencies`, "dependencies are not supported"));
  }
  if (s.type === "null") {
    out.push(
      forbidden(`${path}.type`, "type cannot be set to null, use nullable as an alternative"),
    );
  }
  if (Array.isArray(s.items) && s.items.length) {
    out.push(forbidden(`${path}.items`, "items must be a schema object and not an array"));
  }
}

/** The `x-kubernetes-*` list, map and pruning markers: known values, on the right types. */
function extensions(s: Schema, path: string, out: StatusCause[]): void {
  if (s[PRESERVE] === false) {
    out.push(invalid(`${path}.${PRESERVE}`, false, "must be true or undefined"));
  }
  const listType = s["x-kubernetes-list-type"];
  const mapKeys = s["x-kubernetes-list-map-keys"];
  const hasKeys = Array.isArray(mapKeys) && mapKeys.length > 0;
  if (typeof listType === "string") {
    if (!["atomic", "set", "map"].includes(listType)) {
      out.push(notSupported(`${path}.x-kubernetes-list-type`, listType, ["atomic", "set", "map"]));
    }
    if (s.type !== "array") {
      out.push(
        invalid(`${path}.x-kubernetes-list-type`, listType, "must only be used on type=array"),
      );
    }
    if (hasKeys && listType !== "map") {
      out.push(invalid(
        `${path}.x-kubernetes-list-type`,
        listType,
        "must be map if x-kubernetes-list-map-keys is non-empty",
      ));
    }
    if (listType === "map" && !hasKeys) {
      out.push(required(
        `${path}.x-kubernetes-list-map-keys`,
        "must not be empty if x-kubernetes-list-type is map",
      ));
    }
  } else if (hasKeys) {
    out.push(required(
      `${path}.x-kubernetes-list-type`,
      "must be map if x-kubernetes-list-map-keys is non-empty",
    ));
  }
  const mapType = s["x-kubernetes-map-type"];
  if (typeof mapType === "string") {
    if (s.type !== "object") {
      out.push(
        invalid(`${path}.x-kubernetes-map-type`, mapType, "must only be used on type=object"),
      );
    }
    if (mapType !== "granular" && mapType !== "atomic") {
      out.push(notSupported(`${path}.x-kubernetes-map-type`, mapType, ["granular", "atomic"]));
    }
  }
}

/** A `pattern` must compile as Go's RE2 compiles it (see `re2_pattern.ts`). */
function pattern(s: Schema, path: string, out: StatusCause[]): void {
  if (typeof s.pattern !== "string" || !s.pattern) return;
  const { error } = compileRe2(s.pattern);
  if (error) {
    out.push(invalid(
      `${path}.pattern`,
      s.pattern,
      `must be a valid regular expression, but isn't: ${error}`,
    ));
  }
}

function notSupported(field: string, value: string, allowed: string[]): StatusCause {
  return {
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${
      allowed.map((a) => JSON.stringify(a)).join(", ")
    }`,
    field,
  };
}

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  const [a, b] = anyOf as Schema[];
  const only = (x: Schema | undefined, type: string) =>
    isSchema(x) && Object.keys(x).length === 1 && x.type === type;
  return only(a, "integer") && only(b, "string");
}

/** Root metadata restricting nothing, or only `name` and/or `generateName`. */
function onlyNames(meta: Schema): boolean {
  const { type: _type, properties, ...rest } = meta;
  if (Object.keys(rest).length) return false;
  if (properties === undefined) return true;
  if (!isRecord(properties)) return false;
  const keys = Object.keys(properties);
  return keys.every((k) => k === "name" || k === "generateName");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isSchema(v: unknown): v is Schema {
  return isRecord(v);
}

function required(field: string, detail: string): StatusCause {
  return { reason: "FieldValueRequired", message: `Required value: ${detail}`, field };
}

function forbidden(field: string, detail: string): StatusCause {
  return { reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field };
}

function invalid(field: string, value: unknown, detail: string): StatusCause {
  return {
    reason: "FieldValueInvalid",
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
    field,
  };
}

function text(c: StatusCause): string {
  return `${c.field}: ${c.message}`;
}
