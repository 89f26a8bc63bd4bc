/**
 * A JSON Schema (as TypeBox builds it) turned into a Kubernetes *structural*
 * schema, the only kind a CustomResourceDefinition accepts
 * (`apiextensions.k8s.io/v1`, OpenAPI v3.0 with Kubernetes' rules).
 *
 * Why a translation and not the schema as it is: TypeBox writes JSON Schema
 * 2019+, and a few of its spellings are not Kubernetes'. `Type.Record` is
 * `patternProperties` (Kubernetes: `additionalProperties`), literals are
 * `const` (Kubernetes: `enum`), nullable is an `anyOf` with `{type: null}`
 * (Kubernetes: `nullable: true`), `exclusiveMinimum` is a number (OpenAPI
 * 3.0: a boolean beside `minimum`), `Type.Unknown()` is `{}` (Kubernetes:
 * `x-kubernetes-preserve-unknown-fields`), and `additionalProperties: false`
 * is forbidden (Kubernetes prunes unknown fields instead). Everything else —
 * `description`, `default`, `minimum`, `pattern`, `format`, `enum`,
 * `x-kubernetes-*` — goes through as written. What has no structural form
 * (unions of objects, `$ref`/recursion, tuples, `uniqueItems`) is refused
 * with the path and what to write instead, before any cluster sees it.
 *
 * @module
 */

type Json = Record<string, unknown>;

/** A schema could not be expressed as a Kubernetes structural schema. */
export class StructuralSchemaError extends TypeError {
  /** Always `"StructuralSchemaError"`. */
  override name = "StructuralSchemaError";
}

/** Keywords that go to Kubernetes unchanged (JSONSchemaProps of apiextensions v1). */
const KEPT = new Set([
  "type",
  "format",
  "title",
  "description",
  "default",
  "maximum",
  "minimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "multipleOf",
  "enum",
  "maxProperties",
  "minProperties",
  "required",
  "nullable",
  "example",
  "externalDocs",
]);
/** JSON Schema bookkeeping that means nothing to Kubernetes. */
const DROPPED = new Set(["$id", "$schema", "$comment", "examples", "readOnly", "writeOnly"]);
const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);

/**
 * Translates a JSON Schema (e.g. a TypeBox schema) into a Kubernetes structural schema.
 *
 * @param schema The schema (not changed).
 * @param path Where the schema is, for error messages (e.g. `spec`).
 * @returns A new plain-JSON structural schema.
 * @throws {StructuralSchemaError} For what Kubernetes cannot express, naming the path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toStructural } from "@kopf/kopf";
 * const schema = toStructural({
 *   type: "object",
 *   properties: { labels: { type: "object", patternProperties: { "^(.*)$": { type: "string" } } } },
 * }, "spec");
 * assert.deepEqual(JSON.parse(JSON.stringify(schema.properties)), {"labels":{"type":"object","additionalProperties":{"type":"string"}}});
 * ```
 */
export function toStructural(schema: unknown, path: string): Record<string, unknown> {
  if (!isJson(schema)) throw new StructuralSchemaError(`${path}: a schema must be an object`);
  const s = JSON.parse(JSON.stringify(schema)) as Json; // drops TypeBox's symbol keys
  return convert(s, path);
}

function convert(s: Json, path: string): Json {
  if (s.$ref !== undefined || s.$defs !== undefined) {
    throw refuse(path, "$ref and recursive schemas", "spell the nested schema out");
  }
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) return union(s, path);
  const out: Json = {};
  for (const [key, value] of Object.entries(s)) {
    if (DROPPED.has(key)) continue;
    if (key.startsWith("x-kubernetes-")) out[key] = value;
    else if (KEPT.has(key)) out[key] = value;
    else if (key === "const") out.enum = [value];
    else if (key === "exclusiveMinimum" || key === "exclusiveMaximum") {
      if (typeof value === "number") {
        out[key === "exclusiveMinimum" ? "minimum" : "maximum"] = value;
        out[key] = true;
      } else out[key] = value;
    } else if (key === "properties") {
      if (!isJson(value)) throw refuse(path, "properties that are not an object");
      const properties: Json = {};
      for (const [name, sub] of Object.entries(value)) {
        properties[name] = convert(asSchema(sub, `${path}.${name}`), `${path}.${name}`);
      }
      out.properties = properties;
    } else if (key === "patternProperties") {
      const entries = isJson(value) ? Object.entries(value) : [];
      if (entries.length !== 1 || !["^(.*)$", "^.*$"].includes(entries[0]![0])) {
        throw refuse(path, "patternProperties", "use Type.Record(Type.String(), …)");
      }
      out.additionalProperties = convert(asSchema(entries[0]![1], `${path}.*`), `${path}.*`);
    } else if (key === "additionalProperties") {
      if (value === true) out["x-kubernetes-preserve-unknown-fields"] = true;
      else if (isJson(value)) out.additionalProperties = convert(value, `${path}.*`);
      // false: Kubernetes prunes unknown fields itself and forbids saying so.
    } else if (key === "items") {
      if (Array.isArray(value)) throw refuse(path, "tuples", "use Type.Array(…)");
      out.items = convert(asSchema(value, `${path}[]`), `${path}[]`);
    } else if (key === "uniqueItems") {
      if (value === true) {
        throw refuse(path, "uniqueItems", 'use "x-kubernetes-list-type": "set"');
      }
    } else if (key === "allOf" || key === "not") {
      throw refuse(path, key, "use Type.Composite(…) for merged objects");
    } else {
      throw refuse(path, `the keyword ${JSON.stringify(key)}`);
    }
  }
  if (out.type === undefined && out.enum !== undefined) out.type = typeOfValues(out.enum, path);
  if (out.type === "null") throw refuse(path, "a null-only type", "use Type.Optional(…)");
  if (out.type !== undefined && !TYPES.has(out.type as string)) {
    throw refuse(path, `the type ${JSON.stringify(out.type)}`, "use JSON types only");
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  // An object with declared properties and also free-form extras has no structural form.
  if (out.properties !== undefined && out.additionalProperties !== undefined) {
    throw refuse(path, "properties together with additionalProperties");
  }
  if (out.type === undefined && !out["x-kubernetes-int-or-string"]) {
    out["x-kubernetes-preserve-unknown-fields"] = true; // Type.Unknown(), Type.Any()
  }
  if (out.type === "object" && isEmptyObject(out.properties) && !out.additionalProperties) {
    delete out.properties; // Type.Object({}): anything, unless told to preserve it
  }
  return out;
}

/** `anyOf`/`oneOf`: nullable, enums of literals, int-or-string; nothing else is structural. */
function union(s: Json, path: string): Json {
  const branches = ((s.anyOf ?? s.oneOf) as unknown[]).map((b, i) => asSchema(b, `${path}|${i}`));
  const { anyOf: _a, oneOf: _o, ...rest } = s;
  const nonNull = branches.filter((b) => b.type !== "null");
  const nullable = nonNull.length < branches.length;
  let base: Json;
  const types = nonNull.map((b) => b.type);
  if (nonNull.length === 1) {
    base = convert({ ...nonNull[0]!, ...rest }, path);
  } else if (nonNull.length > 1 && nonNull.every((b) => "const" in b || isEnum(b))) {
    const values = nonNull.flatMap((b) => ("const" in b ? [b.const] : b.enum as unknown[]));
    base = convert({ ...rest, type: typeOfValues(values, path), enum: values }, path);
  } else if (
    nonNull.length === 2 && types.includes("integer") && types.includes("string") &&
    nonNull.every((b) => Object.keys(b).length === 1)
  ) {
    base = convert(rest, path);
    delete base["x-kubernetes-preserve-unknown-fields"];
    base["x-kubernetes-int-or-string"] = true;
    base.anyOf = [{ type: "integer" }, { type: "string" }];
  } else {
    throw refuse(
      path,
      "unions other than nullable, literals and int-or-string",
      "use one object with optional fields, or Type.Unknown()",
    );
  }
  if (nullable) base.nullable = true;
  return base;
}

function isEnum(b: Json): boolean {
  return Array.isArray(b.enum) && Object.keys(b).every((k) => k === "enum" || k === "type");
}

function typeOfValues(values: unknown, path: string): string {
  const types = new Set(
    (values as unknown[]).map((v) =>
      typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v
    ),
  );
  if (types.size === 2 && types.has("integer") && types.has("number")) return "number";
  const [only] = types;
  if (types.size !== 1 || !["string", "integer", "number", "boolean"].includes(only!)) {
    throw refuse(path, "literals of mixed or non-scalar types");
  }
  return only!;
}

function asSchema(value: unknown, path: string): Json {
  if (!isJson(value)) throw new StructuralSchemaError(`${path}: a schema must be an object`);
  return value;
}

function refuse(path: string, what: string, instead?: string): StructuralSchemaError {
  return new StructuralSchemaError(
    `${path}: Kubernetes structural schemas do not allow ${what}${instead ? `: ${instead}` : ""}`,
  );
}

function isEmptyObject(v: unknown): boolean {
  return isJson(v) && Object.keys(v).length === 0;
}

function isJson(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
