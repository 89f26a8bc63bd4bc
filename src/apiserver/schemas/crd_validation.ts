/**
 * Whether a CustomResourceDefinition's schemas can be read at all: every
 * keyword of `spec.versions[].schema.openAPIV3Schema` has the JSON type that
 * kube-apiserver's Go struct (`JSONSchemaProps`) gives it — `properties` an
 * object of schemas, `items` a schema, `required` an array of strings,
 * `minLength` an integer, `pattern` a string, and so on.
 *
 * Why: kube-apiserver decodes a CRD into Go structs before it validates
 * anything, so `properties: "nope"` never reaches validation — the request is
 * a 400 BadRequest with the decoder's message. Without this check such a CRD
 * was stored, and every object of it then lost its whole spec to pruning.
 * The message is the Go decoder's: `CustomResourceDefinition in version "v1"
 * cannot be handled as a CustomResourceDefinition: json: cannot unmarshal
 * string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties
 * of type map[string]v1.JSONSchemaProps` — the path names struct fields only
 * (no indexes, no map keys), and, as Go does, only the first mistake is told.
 * The checks that follow decoding (structural rules, patterns) are
 * `crd_schema.ts`'s.
 *
 * @module
 */

type Json = Record<string, unknown>;
type Kind = "string" | "bool" | "float64" | "int64" | "[]string" | "any";

/** The JSONSchemaProps fields of one JSON kind each (Go's types). */
const SCALARS: Record<string, Kind> = {
  id: "string",
  $schema: "string",
  $ref: "string",
  description: "string",
  type: "string",
  format: "string",
  title: "string",
  pattern: "string",
  "x-kubernetes-list-type": "string",
  "x-kubernetes-map-type": "string",
  exclusiveMaximum: "bool",
  exclusiveMinimum: "bool",
  uniqueItems: "bool",
  nullable: "bool",
  "x-kubernetes-preserve-unknown-fields": "bool",
  "x-kubernetes-embedded-resource": "bool",
  "x-kubernetes-int-or-string": "bool",
  maximum: "float64",
  minimum: "float64",
  multipleOf: "float64",
  maxLength: "int64",
  minLength: "int64",
  maxItems: "int64",
  minItems: "int64",
  maxProperties: "int64",
  minProperties: "int64",
  required: "[]string",
  "x-kubernetes-list-map-keys": "[]string",
  default: "any",
  example: "any",
};

const MAPS = ["properties", "patternProperties", "definitions"];
const LISTS = ["allOf", "oneOf", "anyOf"];

/**
 * The decode error of a CRD's schemas, as kube-apiserver words it, if any.
 *
 * @param spec The CRD's `spec`.
 * @returns The message of the 400 BadRequest, or undefined when every schema decodes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { crdDecodeError } from "./crd_validation.ts";
 * const spec = { versions: [{ name: "v1", schema: { openAPIV3Schema: { type: "object", properties: "nope" } } }] };
 * assert.equal(
 *   crdDecodeError(spec),
 *   'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ' +
 *     "json: cannot unmarshal string into Go struct field " +
 *     "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties of type map[string]v1.JSONSchemaProps",
 * );
 * ```
 */
export function crdDecodeError(spec: unknown): string | undefined {
  const error = decodeSpec(spec);
  return error === undefined
    ? undefined
    : `CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ${error}`;
}

function decodeSpec(spec: unknown): string | undefined {
  if (!isRecord(spec)) return undefined;
  const versions = spec.versions;
  if (versions === undefined || versions === null) return undefined;
  if (!Array.isArray(versions)) {
    return mismatch(
      versions,
      "CustomResourceDefinitionSpec",
      "spec.versions",
      "[]v1.CustomResourceDefinitionVersion",
    );
  }
  for (const v of versions) {
    if (!isRecord(v)) continue;
    const schema = v.schema;
    if (schema === undefined || schema === null) continue;
    if (!isRecord(schema)) {
      return mismatch(
        schema,
        "CustomResourceDefinitionVersion",
        "spec.versions.schema",
        "v1.CustomResourceValidation",
      );
    }
    const root = schema.openAPIV3Schema;
    if (root === undefined || root === null) continue;
    const path = "spec.versions.schema.openAPIV3Schema";
    if (!isRecord(root)) {
      return mismatch(root, "CustomResourceValidation", path, "v1.JSONSchemaProps");
    }
    const error = decodeSchema(root, path);
    if (error) return error;
  }
  return undefined;
}

/** The first decode error in one schema; `path` is Go's field path to it. */
function decodeSchema(s: Json, path: string): string | undefined {
  for (const [key, value] of Object.entries(s)) {
    if (value === null) continue; // Go leaves a field alone on null.
    const field = path ? `${path}.${key}` : key;
    const scalar = SCALARS[key];
    if (scalar) {
      const error = decodeScalar(value, scalar, field);
      if (error) return error;
    } else if (MAPS.includes(key)) {
      if (!isRecord(value)) {
        return mismatch(value, "JSONSchemaProps", field, "map[string]v1.JSONSchemaProps");
      }
      for (const sub of Object.values(value)) {
        if (sub === null) continue;
        if (!isRecord(sub)) return mismatch(sub, "JSONSchemaProps", field, "v1.JSONSchemaProps");
        const error = decodeSchema(sub, field);
        if (error) return error;
      }
    } else if (LISTS.includes(key)) {
      if (!Array.isArray(value)) {
        return mismatch(value, "JSONSchemaProps", field, "[]v1.JSONSchemaProps");
      }
      for (const sub of value) {
        if (sub === null) continue;
        if (!isRecord(sub)) return mismatch(sub, "JSONSchemaProps", field, "v1.JSONSchemaProps");
        const error = decodeSchema(sub, field);
        if (error) return error;
      }
    } else if (key === "not") {
      if (!isRecord(value)) return mismatch(value, "JSONSchemaProps", field, "v1.JSONSchemaProps");
      const error = decodeSchema(value, field);
      if (error) return error;
    } else if (key === "enum") {
      if (!Array.isArray(value)) return mismatch(value, "JSONSchemaProps", field, "[]v1.JSON");
    } else if (key === "items") {
      // JSONSchemaPropsOrArray decodes itself: its errors carry no outer path.
      if (Array.isArray(value)) {
        for (const sub of value) {
          if (sub === null) continue;
          if (!isRecord(sub)) return mismatch(sub, "", "", "v1.JSONSchemaProps");
          const error = decodeSchema(sub, "");
          if (error) return error;
        }
      } else if (isRecord(value)) {
        const error = decodeSchema(value, "");
        if (error) return error;
      } else return "items must be either an object or an array";
    } else if (key === "additionalProperties" || key === "additionalItems") {
      // JSONSchemaPropsOrBool decodes itself, too.
      if (isRecord(value)) {
        const error = decodeSchema(value, "");
        if (error) return error;
      } else if (typeof value !== "boolean") return "boolean or JSON schema expected";
    } else if (key === "externalDocs") {
      if (!isRecord(value)) {
        return mismatch(value, "JSONSchemaProps", field, "v1.ExternalDocumentation");
      }
    } else if (key === "x-kubernetes-validations") {
      if (!Array.isArray(value)) {
        return mismatch(value, "JSONSchemaProps", field, "v1.ValidationRules");
      }
    }
  }
  return undefined;
}

function decodeScalar(value: unknown, kind: Kind, field: string): string | undefined {
  switch (kind) {
    case "any":
      return undefined;
    case "string":
      return typeof value === "string"
        ? undefined
        : mismatch(value, "JSONSchemaProps", field, "string");
    case "bool":
      return typeof value === "boolean"
        ? undefined
        : mismatch(value, "JSONSchemaProps", field, "bool");
    case "float64":
      return typeof value === "number"
        ? undefined
        : mismatch(value, "JSONSchemaProps", field, "float64");
    case "int64":
      if (typeof value === "number" && Number.isInteger(value)) return undefined;
      return mismatch(value, "JSONSchemaProps", field, "int64");
    case "[]string":
      if (!Array.isArray(value)) return mismatch(value, "JSONSchemaProps", field, "[]string");
      for (const item of value) {
        if (item !== null && typeof item !== "string") {
          return mismatch(item, "JSONSchemaProps", field, "string");
        }
      }
      return undefined;
  }
}

/** Go's `UnmarshalTypeError` text: `json: cannot unmarshal <kind> into Go struct field S.path of type T`. */
function mismatch(value: unknown, struct: string, field: string, type: string): string {
  const what = typeof value === "number"
    ? (type === "int64" ? `number ${value}` : "number")
    : typeof value === "boolean"
    ? "bool"
    : Array.isArray(value)
    ? "array"
    : typeof value === "string"
    ? "string"
    : "object";
  const into = field ? `Go struct field ${struct}.${field}` : "Go value";
  return `json: cannot unmarshal ${what} into ${into} of type ${type}`;
}

function isRecord(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
