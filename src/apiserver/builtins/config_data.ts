/**
 * ConfigMaps and Secrets are the built-ins people write by hand, and
 * kube-apiserver reads them through typed Go structs: `data` is a map of
 * strings, `binaryData` and a Secret's `data` are maps of base64 byte strings,
 * `stringData` is folded into `data`. A number or an object where a string
 * belongs, or bytes that are not base64, fail decoding (400, in Go's words);
 * keys and sizes are then validated (422). Doing the same here keeps what a
 * test stores to what a cluster would store.
 *
 * @module
 */

import { ApiError, type StatusCause } from "../shared/errors.ts";
import { utf8Length } from "../shared/utf8.ts";

/** kube's `MaxConfigMapSize` and `MaxSecretSize`: 1 MiB of values. */
export const MAX_CONFIG_DATA_BYTES = 1024 * 1024;

const KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64_CHAR = /[^A-Za-z0-9+/=\r\n]/;

/**
 * Decodes (400 on a type mismatch, as Go's decoder words it), folds a Secret's
 * `stringData` into `data`, and validates keys and sizes (422) of a ConfigMap
 * or a Secret. Other kinds pass unchanged.
 *
 * @param kind The object's kind (`ConfigMap`, `Secret`, other).
 * @param obj The object to be stored (changed in place: `stringData` folded).
 * @returns The causes of a 422 Invalid; empty when valid.
 * @throws {ApiError} 400 BadRequest when a field has the wrong type or is not base64.
 *
 * @example
 * ```ts
 * import { checkConfigData } from "./config_data.ts";
 * const secret = { metadata: { name: "s" }, stringData: { a: "hi" } };
 * checkConfigData("Secret", secret);
 * if ((secret as { data?: Record<string, string> }).data?.a !== "aGk=") throw new Error("folded");
 * const bad = { metadata: { name: "c" }, data: { n: 1 } };
 * const message = (() => {
 *   try {
 *     checkConfigData("ConfigMap", bad);
 *     return "";
 *   } catch (e) {
 *     return (e as Error).message;
 *   }
 * })();
 * if (!message.endsWith("json: cannot unmarshal number into Go struct field ConfigMap.data of type string")) {
 *   throw new Error(message);
 * }
 * const causes = checkConfigData("ConfigMap", { metadata: { name: "c" }, data: { "a b": "x" } });
 * if (causes[0]?.field !== "data[a b]") throw new Error("expected a cause for the key");
 * ```
 */
export function checkConfigData(kind: string, obj: Record<string, unknown>): StatusCause[] {
  if (kind !== "ConfigMap" && kind !== "Secret") return [];
  const decodeError = (detail: string) =>
    ApiError.badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${detail}`);
  const mapOf = (field: string, valueType: string): Record<string, unknown> | undefined => {
    const value = obj[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "object" || Array.isArray(value)) {
      throw decodeError(
        `json: cannot unmarshal ${goType(value)} into Go struct field ${kind}.${field} of type ` +
          `map[string]${valueType}`,
      );
    }
    const map = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(map)) {
      if (v === null) map[key] = ""; // Go decodes null into the zero value
      else if (typeof v !== "string") {
        throw decodeError(
          `json: cannot unmarshal ${
            goType(v)
          } into Go struct field ${kind}.${field} of type ${valueType}`,
        );
      }
    }
    return map;
  };
  const bytesField = kind === "Secret" ? "data" : "binaryData";
  const strings = kind === "ConfigMap" ? mapOf("data", "string") : mapOf("stringData", "string");
  const bytes = mapOf(bytesField, "[]uint8");
  if (obj.immutable !== undefined && obj.immutable !== null && typeof obj.immutable !== "boolean") {
    throw decodeError(
      `json: cannot unmarshal ${
        goType(obj.immutable)
      } into Go struct field ${kind}.immutable of type bool`,
    );
  }
  if (kind === "Secret" && obj.type != null && typeof obj.type !== "string") {
    throw decodeError(
      `json: cannot unmarshal ${
        goType(obj.type)
      } into Go struct field Secret.type of type v1.SecretType`,
    );
  }
  let size = 0;
  for (const value of Object.values(bytes ?? {})) {
    const decoded = base64Length(value as string);
    if (typeof decoded === "number") size += decoded;
    else throw decodeError(`illegal base64 data at input byte ${decoded.at}`);
  }
  const causes: StatusCause[] = [];
  if (kind === "Secret") {
    if (strings) {
      // stringData is write-only: folded into data (it wins), as kube's conversion does.
      const data = (bytes ?? {}) as Record<string, string>;
      for (const [key, value] of Object.entries(strings as Record<string, string>)) {
        const utf8 = new TextEncoder().encode(value);
        if (data[key] !== undefined) size -= base64Length(data[key]) as number;
        size += utf8.length;
        data[key] = btoa(Array.from(utf8, (b) => String.fromCharCode(b)).join(""));
      }
      obj.data = data;
      delete obj.stringData;
    }
    for (const key of Object.keys((obj.data as object | undefined) ?? {})) {
      causes.push(...keyCauses("data", key));
    }
    if (size > MAX_CONFIG_DATA_BYTES) {
      causes.push({
        reason: "FieldValueTooLong",
        message: `Too long: must have at most ${MAX_CONFIG_DATA_BYTES} bytes`,
        field: "data",
      });
    }
    return causes;
  }
  for (const [key, value] of Object.entries(strings ?? {})) {
    causes.push(...keyCauses("data", key));
    size += utf8Length(value as string);
  }
  for (const key of Object.keys(bytes ?? {})) {
    causes.push(...keyCauses("binaryData", key));
    if (strings && key in strings) {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${JSON.stringify(key)}: duplicate of key present in data`,
        field: `binaryData[${key}]`,
      });
    }
  }
  if (size > MAX_CONFIG_DATA_BYTES) {
    causes.push({
      reason: "FieldValueTooLong",
      message: `Too long: must have at most ${MAX_CONFIG_DATA_BYTES} bytes`,
      field: "[]",
    });
  }
  return causes;
}

/** kube's `IsConfigMapKey`. */
function keyCauses(field: string, key: string): StatusCause[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push("must be no more than 253 characters");
  if (!KEY.test(key)) {
    problems.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' " +
        "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is " +
        "'[-._a-zA-Z0-9]+')",
    );
  }
  if (key === ".") problems.push("must not be '.'");
  else if (key === "..") problems.push("must not be '..'");
  else if (key.startsWith("..")) problems.push("must not start with '..'");
  return problems.map((p) => ({
    reason: "FieldValueInvalid",
    message: `Invalid value: ${JSON.stringify(key)}: ${p}`,
    field: `${field}[${key}]`,
  }));
}

/** The decoded length of standard base64 (newlines ignored, as Go's decoder does), or where it breaks. */
function base64Length(text: string): number | { at: number } {
  const bad = BASE64_CHAR.exec(text);
  if (bad) return { at: bad.index };
  const clean = text.includes("\n") || text.includes("\r") ? text.replace(/[\r\n]/g, "") : text;
  const pad = clean.indexOf("=");
  if (pad >= 0) {
    const tail = clean.slice(pad);
    if (tail !== "=" && tail !== "==" || clean.length % 4 !== 0) return { at: pad };
  } else if (clean.length % 4 !== 0) return { at: clean.length - (clean.length % 4) };
  const padding = pad >= 0 ? clean.length - pad : 0;
  return (clean.length / 4) * 3 - padding;
}

/** How Go's JSON decoder names a JSON value's type. */
function goType(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value === "object" ? "object" : typeof value;
}
