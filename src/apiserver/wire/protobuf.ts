/**
 * Request bodies in Kubernetes' protobuf encoding. kubectl 1.33 creates
 * objects through its typed clients with `Content-Type:
 * application/vnd.kubernetes.protobuf` (`kubectl create namespace`,
 * `configmap`, `secret`, `serviceaccount`, `service`, `deployment`, `job`,
 * `cronjob`, `role`, `rolebinding`, `clusterrole`, `clusterrolebinding`,
 * `quota`, `priorityclass`, `poddisruptionbudget`, `ingress`, and the
 * TokenRequest of `token`, and the reviews of `auth can-i` and `auth whoami`), and client-go
 * does not fall back to JSON when a server refuses protobuf — so a server
 * that speaks JSON only breaks those commands outright.
 *
 * The body is the magic `k8s\0` followed by a `runtime.Unknown` envelope
 * (typeMeta, raw bytes of the object). The object is decoded by a schema per
 * message (field number → JSON name and type) into the JSON a JSON client
 * would have sent. Go's proto2 encoding writes every non-pointer field, set
 * or not, so:
 * - singular zero values ("", 0, false) are dropped, as Go's `omitempty`
 *   drops them in JSON — except for fields marked as pointers (`replicas: 0`
 *   means something);
 * - a field the schema does not know is ignored only if it carries nothing
 *   (zero, or a message of zeros); with any value in it, the request is
 *   refused with 415 naming JSON as the way out — nothing sent is ever
 *   silently lost.
 *
 * The schemas cover the fields of those kinds that kubectl and typical
 * clients set (the field numbers are Kubernetes' `generated.proto` ones,
 * checked against kubectl 1.33's own bodies); anything else gets the 415.
 *
 * Why ours and not a protobuf library: the wire format is the easy part (a
 * varint reader); what matters is Kubernetes' envelope around the message and
 * Go's zero-value and pointer rules on the way to JSON, which a generic decoder
 * driven by `.proto` files would not apply, and it would need Kubernetes'
 * `generated.proto` files shipped besides.
 *
 * @module
 */

import { type FieldDef, KINDS, type Schema } from "./protobuf_schemas.ts";
import { type Field, fields, unsupported } from "./protobuf_fields.ts";

/** The protobuf media type of Kubernetes objects. */
export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

const MAGIC = [0x6b, 0x38, 0x73, 0x00]; // "k8s\0"
const utf8 = new TextDecoder();

// --- Decoding --------------------------------------------------------------------------------

function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function signed(v: bigint): number {
  return Number(BigInt.asIntN(64, v));
}

/** Whether an unknown field carries nothing: a zero, or a message (or string) of zeros only. */
function carriesNothing(f: Field): boolean {
  if (f.varint !== undefined) return f.varint === 0n;
  const bytes = f.bytes!;
  if (f.fixed) return bytes.every((b) => b === 0);
  if (!bytes.length) return true;
  try {
    return fields(bytes).every(carriesNothing);
  } catch {
    return false;
  }
}

function pair(f: Field, path: string): [string, Field | undefined] {
  let key = "";
  let value: Field | undefined;
  for (const e of fields(f.bytes ?? new Uint8Array())) {
    if (e.no === 1) key = utf8.decode(e.bytes ?? new Uint8Array());
    else if (e.no === 2) value = e;
    else if (!carriesNothing(e)) {
      throw unsupported(`unknown field ${e.no} in a map entry of ${path}`);
    }
  }
  return [key, value];
}

function quantity(f: Field | undefined): string {
  let text = "";
  for (const e of fields(f?.bytes ?? new Uint8Array())) {
    if (e.no === 1) text = utf8.decode(e.bytes ?? new Uint8Array());
  }
  return text;
}

function intOrString(f: Field): number | string {
  let type = 0n, int = 0n, text = "";
  for (const e of fields(f.bytes ?? new Uint8Array())) {
    if (e.no === 1) type = e.varint ?? 0n;
    else if (e.no === 2) int = e.varint ?? 0n;
    else if (e.no === 3) text = utf8.decode(e.bytes ?? new Uint8Array());
  }
  return type === 1n ? text : signed(int);
}

/** One field's JSON value, or undefined to leave it out. */
function value(def: FieldDef, f: Field, path: string): unknown {
  const t = def.type;
  if (typeof t === "object") return decode(t, f.bytes ?? new Uint8Array(), path);
  switch (t) {
    case "string":
      return utf8.decode(f.bytes ?? new Uint8Array());
    case "int":
      return signed(f.varint ?? 0n);
    case "bool":
      return (f.varint ?? 0n) !== 0n;
    case "bytes":
      return base64(f.bytes ?? new Uint8Array());
    case "quantity":
      return quantity(f);
    case "intOrString":
      return intOrString(f);
    default:
      throw unsupported(`field type ${t} of ${path}`);
  }
}

function isZero(v: unknown): boolean {
  return v === "" || v === 0 || v === false;
}

function decode(schema: Schema, buf: Uint8Array, path: string): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    const def = schema.fields.get(f.no);
    if (!def) {
      if (carriesNothing(f)) continue;
      throw unsupported(`field ${f.no} of ${path} is not known to this server`);
    }
    const where = `${path}.${def.name}`;
    if (def.type === "ignored") continue;
    if (def.type === "map" || def.type === "bytesMap" || def.type === "quantityMap") {
      const [k, v] = pair(f, where);
      const text = def.type === "bytesMap"
        ? base64(v?.bytes ?? new Uint8Array())
        : def.type === "quantityMap"
        ? quantity(v)
        : utf8.decode(v?.bytes ?? new Uint8Array());
      ((obj[def.name] ??= {}) as Record<string, string>)[k] = text;
      continue;
    }
    const v = value(def, f, where);
    if (def.name === "inline") Object.assign(obj, v); // a Go struct embedded inline in JSON
    else if (def.repeated) ((obj[def.name] ??= []) as unknown[]).push(v);
    else if (def.pointer || !isZero(v)) obj[def.name] = v;
  }
  return obj;
}

/**
 * Decodes a protobuf-encoded object into its JSON form.
 *
 * @param body The request body (`k8s\0` + `runtime.Unknown`).
 * @returns The object as JSON would have carried it.
 * @throws {ApiError} 415 for a kind this server cannot decode, a field it does not know that
 *   carries a value, or a malformed body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeProtobufObject } from "./protobuf.ts";
 * const te = new TextEncoder();
 * const ld = (no: number, b: Uint8Array) => [(no << 3) | 2, b.length, ...b];
 * const typeMeta = ld(1, new Uint8Array([...ld(1, te.encode("v1")), ...ld(2, te.encode("Namespace"))]));
 * const raw = ld(2, new Uint8Array(ld(1, new Uint8Array(ld(1, te.encode("ns1"))))));
 * const body = new Uint8Array([0x6b, 0x38, 0x73, 0, ...typeMeta, ...raw]);
 * assert.deepEqual(decodeProtobufObject(body), {
 *   apiVersion: "v1",
 *   kind: "Namespace",
 *   metadata: { name: "ns1" },
 * });
 * ```
 */
export function decodeProtobufObject(body: Uint8Array): Record<string, unknown> {
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b)) {
    throw unsupported("no k8s magic prefix");
  }
  let apiVersion = "", kind = "";
  let raw: Uint8Array | undefined;
  for (const f of fields(body.subarray(4))) {
    if (f.no === 1) {
      for (const t of fields(f.bytes!)) {
        if (t.no === 1) apiVersion = utf8.decode(t.bytes);
        if (t.no === 2) kind = utf8.decode(t.bytes);
      }
    } else if (f.no === 2) raw = f.bytes;
  }
  const schema = KINDS[`${apiVersion}/${kind}`];
  if (!schema) {
    throw unsupported(`${apiVersion || "?"}, Kind=${kind || "?"} is not decodable here`);
  }
  return { apiVersion, kind, ...decode(schema, raw ?? new Uint8Array(), kind) };
}
