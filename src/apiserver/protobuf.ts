/**
 * Request bodies in Kubernetes' protobuf encoding, for the few built-in kinds
 * that clients send that way. kubectl 1.33 creates objects through its typed
 * clients with `Content-Type: application/vnd.kubernetes.protobuf`
 * (`kubectl create namespace`, `create configmap`, `create secret`), and
 * client-go does not fall back to JSON when a server refuses protobuf, so a
 * server that speaks JSON only breaks those commands outright.
 *
 * The body is the magic `k8s\0` followed by a `runtime.Unknown` envelope
 * (typeMeta, raw bytes of the object). Only what those commands send is
 * decoded — Namespace, ConfigMap, Secret and the writable part of
 * ObjectMeta — into the same JSON shape a JSON client would have sent.
 * Anything else is refused with 415, naming JSON as the way out.
 *
 * @module
 */

import { ApiError } from "./errors.ts";

/** The protobuf media type of Kubernetes objects. */
export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

const MAGIC = [0x6b, 0x38, 0x73, 0x00]; // "k8s\0"
const utf8 = new TextDecoder();

/** One decoded field: its number and its value (a varint, or the bytes of a length-delimited field). */
type Field = { no: number; varint?: bigint; bytes?: Uint8Array };

function unsupported(detail: string): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the protobuf body could not be decoded (${detail}); send the object as application/json`,
  );
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let value = 0n, shift = 0n;
    for (;;) {
      if (i >= buf.length) throw unsupported("truncated varint");
      const b = buf[i++]!;
      value |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return value;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3, wire = key & 7;
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw unsupported("truncated field");
      out.push({ no, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw unsupported(`wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => utf8.decode(f.bytes ?? new Uint8Array());

function mapEntry(f: Field, binary: boolean): [string, string] {
  let key = "", value = "";
  for (const e of fields(f.bytes ?? new Uint8Array())) {
    if (e.no === 1) key = str(e);
    if (e.no === 2) value = binary ? base64(e.bytes ?? new Uint8Array()) : str(e);
  }
  return [key, value];
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function addTo(obj: Record<string, unknown>, key: string, f: Field, binary = false): void {
  const [k, v] = mapEntry(f, binary);
  ((obj[key] ??= {}) as Record<string, string>)[k] = v;
}

const SCALAR_META: Record<number, string> = {
  1: "name",
  2: "generateName",
  3: "namespace",
  6: "resourceVersion",
};

function objectMeta(buf: Uint8Array): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    const key = SCALAR_META[f.no];
    if (key) {
      if (str(f)) meta[key] = str(f); // proto2 sends unset strings as "".
    } else if (f.no === 11) addTo(meta, "labels", f);
    else if (f.no === 12) addTo(meta, "annotations", f);
    else if (f.no === 14) ((meta.finalizers ??= []) as string[]).push(str(f));
    else if (f.no === 13) {
      const ref: Record<string, unknown> = {};
      for (const r of fields(f.bytes!)) {
        if (r.no === 1) ref.kind = str(r);
        else if (r.no === 3) ref.name = str(r);
        else if (r.no === 4) ref.uid = str(r);
        else if (r.no === 5) ref.apiVersion = str(r);
        else if (r.no === 6) ref.controller = r.varint !== 0n;
        else if (r.no === 7) ref.blockOwnerDeletion = r.varint !== 0n;
      }
      ((meta.ownerReferences ??= []) as unknown[]).push(ref);
    }
  }
  return meta;
}

function kindBody(kind: string, buf: Uint8Array): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    if (f.no === 1) {
      obj.metadata = objectMeta(f.bytes!);
      continue;
    }
    if (kind === "Namespace" && f.no === 2) {
      const finalizers = fields(f.bytes!).filter((s) => s.no === 1).map(str);
      obj.spec = finalizers.length ? { finalizers } : {};
    } else if (kind === "ConfigMap") {
      if (f.no === 2) addTo(obj, "data", f);
      else if (f.no === 3) addTo(obj, "binaryData", f, true);
      else if (f.no === 4) obj.immutable = f.varint !== 0n;
    } else if (kind === "Secret") {
      if (f.no === 2) addTo(obj, "data", f, true);
      else if (f.no === 3 && str(f)) obj.type = str(f);
      else if (f.no === 4) addTo(obj, "stringData", f);
      else if (f.no === 5) obj.immutable = f.varint !== 0n;
    }
  }
  return obj;
}

/**
 * Decodes a protobuf-encoded object into its JSON form.
 *
 * @param body The request body (`k8s\0` + `runtime.Unknown`).
 * @returns The object as JSON would have carried it.
 * @throws {ApiError} 415 for a kind this server cannot decode, or a malformed body.
 *
 * @example
 * ```ts
 * import { decodeProtobufObject } from "./protobuf.ts";
 * const te = new TextEncoder();
 * const ld = (no: number, b: Uint8Array) => [(no << 3) | 2, b.length, ...b];
 * const typeMeta = ld(1, new Uint8Array([...ld(1, te.encode("v1")), ...ld(2, te.encode("Namespace"))]));
 * const raw = ld(2, new Uint8Array(ld(1, new Uint8Array(ld(1, te.encode("ns1"))))));
 * const body = new Uint8Array([0x6b, 0x38, 0x73, 0, ...typeMeta, ...raw]);
 * console.log(JSON.stringify(decodeProtobufObject(body)));
 * // {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns1"}}
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
        if (t.no === 1) apiVersion = str(t);
        if (t.no === 2) kind = str(t);
      }
    } else if (f.no === 2) raw = f.bytes;
  }
  if (apiVersion !== "v1" || !["Namespace", "ConfigMap", "Secret"].includes(kind)) {
    throw unsupported(`${apiVersion || "?"}, Kind=${kind || "?"} is not decodable here`);
  }
  return { apiVersion, kind, ...kindBody(kind, raw ?? new Uint8Array()) };
}
