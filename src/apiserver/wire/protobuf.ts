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

import { ApiError } from "../shared/errors.ts";

/** The protobuf media type of Kubernetes objects. */
export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

const MAGIC = [0x6b, 0x38, 0x73, 0x00]; // "k8s\0"
const utf8 = new TextDecoder();

/** One decoded field: its number and its value (a varint, or the bytes of a length-delimited field). */
type Field = { no: number; varint?: bigint; bytes?: Uint8Array; fixed?: boolean };

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
    if (no === 0) throw unsupported("field number 0");
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw unsupported("truncated field");
      out.push({ no, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1 || wire === 5) {
      const len = wire === 1 ? 8 : 4;
      if (i + len > buf.length) throw unsupported("truncated field");
      out.push({ no, bytes: buf.subarray(i, i + len), fixed: true });
      i += len;
    } else throw unsupported(`wire type ${wire}`);
  }
  return out;
}

// --- Schemas ---------------------------------------------------------------------------------

/** How a field's value becomes JSON. */
type Type =
  | "string"
  | "int"
  | "bool"
  | "bytes" // base64 in JSON
  | "map" // map<string, string>
  | "bytesMap" // map<string, bytes>, values base64
  | "quantityMap" // map<string, Quantity>
  | "intOrString"
  | "quantity"
  | "ignored" // known, and dropped (e.g. a client-sent creationTimestamp)
  | Schema;

/** One field of a message. */
interface FieldDef {
  name: string;
  type: Type;
  repeated: boolean;
  /** A Go pointer: written only when set, so its zero value is a value. */
  pointer: boolean;
}

/** A message: its fields by number. */
interface Schema {
  fields: Map<number, FieldDef>;
}

/**
 * Builds a schema from a compact table: `"name"` is a string, `"name:int"` an int, a trailing
 * `[]` repeats it, a trailing `*` marks a pointer (or a field whose zero JSON keeps); a
 * `[spec, schema]` pair is a nested message, merged into its parent when named `inline`.
 */
function message(table: Record<number, string | [string, Schema]>): Schema {
  const schema: Schema = { fields: new Map() };
  for (const [no, entry] of Object.entries(table)) {
    const [spec, nested] = typeof entry === "string" ? [entry, undefined] : entry;
    const m = /^([A-Za-z]+)(?::([A-Za-z]+))?(\[\])?(\*)?$/.exec(spec);
    if (!m) throw new Error(`bad schema entry ${spec}`);
    const type = nested ?? ((m[2] ?? "string") as Type);
    schema.fields.set(Number(no), {
      name: m[1]!,
      type,
      repeated: !!m[3],
      pointer: !!m[4],
    });
  }
  return schema;
}

const OwnerReference = message({
  1: "kind",
  3: "name",
  4: "uid",
  5: "apiVersion",
  6: "controller:bool*",
  7: "blockOwnerDeletion:bool*",
});

const ObjectMeta = message({
  1: "name",
  2: "generateName",
  3: "namespace",
  4: "selfLink",
  5: "uid",
  6: "resourceVersion",
  7: "generation:int",
  8: "creationTimestamp:ignored",
  9: "deletionTimestamp:ignored",
  10: "deletionGracePeriodSeconds:int*",
  11: "labels:map",
  12: "annotations:map",
  13: ["ownerReferences[]", OwnerReference],
  14: "finalizers[]",
});

const LabelSelector = message({
  1: "matchLabels:map",
  2: ["matchExpressions[]", message({ 1: "key", 2: "operator", 3: "values[]" })],
});

const LocalObjectReference = message({ 1: "name" });
const ObjectReference = message({
  1: "kind",
  2: "namespace",
  3: "name",
  4: "uid",
  5: "apiVersion",
  6: "resourceVersion",
  7: "fieldPath",
});

const KeySelector = message({ 1: ["localObjectReference", LocalObjectReference], 2: "key" });
const EnvVar = message({
  1: "name",
  2: "value",
  3: [
    "valueFrom",
    message({
      1: ["fieldRef", message({ 1: "apiVersion", 2: "fieldPath" })],
      2: [
        "resourceFieldRef",
        message({ 1: "containerName", 2: "resource", 3: "divisor:quantity" }),
      ],
      3: ["configMapKeyRef", KeySelector],
      4: ["secretKeyRef", KeySelector],
    }),
  ],
});

const Container = message({
  1: "name",
  2: "image",
  3: "command[]",
  4: "args[]",
  5: "workingDir",
  6: [
    "ports[]",
    message({ 1: "name", 2: "hostPort:int", 3: "containerPort:int", 4: "protocol", 5: "hostIP" }),
  ],
  7: ["env[]", EnvVar],
  8: ["resources", message({ 1: "limits:quantityMap", 2: "requests:quantityMap" })],
  9: [
    "volumeMounts[]",
    message({ 1: "name", 2: "readOnly:bool", 3: "mountPath", 4: "subPath" }),
  ],
  13: "terminationMessagePath",
  14: "imagePullPolicy",
  16: "stdin:bool",
  17: "stdinOnce:bool",
  18: "tty:bool",
  20: "terminationMessagePolicy",
});

const PodSpec = message({
  1: [
    "volumes[]",
    message({
      1: "name",
      // VolumeSource is embedded inline in JSON; only the common sources are known here.
    }),
  ],
  2: ["containers[]", Container],
  3: "restartPolicy",
  4: "terminationGracePeriodSeconds:int*",
  5: "activeDeadlineSeconds:int*",
  6: "dnsPolicy",
  7: "nodeSelector:map",
  8: "serviceAccountName",
  9: "serviceAccount",
  10: "nodeName",
  11: "hostNetwork:bool",
  12: "hostPID:bool",
  13: "hostIPC:bool",
  15: ["imagePullSecrets[]", LocalObjectReference],
  16: "hostname",
  17: "subdomain",
  19: "schedulerName",
  20: ["initContainers[]", Container],
  24: "priorityClassName",
});

const PodTemplateSpec = message({ 1: ["metadata", ObjectMeta], 2: ["spec", PodSpec] });

const IntOrStringPair = message({
  1: "maxUnavailable:intOrString",
  2: "maxSurge:intOrString",
});

const DeploymentSpec = message({
  1: "replicas:int*",
  2: ["selector", LabelSelector],
  3: ["template", PodTemplateSpec],
  4: ["strategy", message({ 1: "type", 2: ["rollingUpdate", IntOrStringPair] })],
  5: "minReadySeconds:int",
  6: "revisionHistoryLimit:int*",
  7: "paused:bool",
  9: "progressDeadlineSeconds:int*",
});

const JobSpec = message({
  1: "parallelism:int*",
  2: "completions:int*",
  3: "activeDeadlineSeconds:int*",
  4: ["selector", LabelSelector],
  5: "manualSelector:bool*",
  6: ["template", PodTemplateSpec],
  7: "backoffLimit:int*",
  8: "ttlSecondsAfterFinished:int*",
  9: "completionMode*",
  10: "suspend:bool*",
});

const CronJobSpec = message({
  1: "schedule",
  2: "startingDeadlineSeconds:int*",
  3: "concurrencyPolicy",
  4: "suspend:bool*",
  5: ["jobTemplate", message({ 1: ["metadata", ObjectMeta], 2: ["spec", JobSpec] })],
  6: "successfulJobsHistoryLimit:int*",
  7: "failedJobsHistoryLimit:int*",
  8: "timeZone*",
});

const ServiceSpec = message({
  1: [
    "ports[]",
    message({
      1: "name",
      2: "protocol",
      3: "port:int",
      4: "targetPort:intOrString",
      5: "nodePort:int",
      6: "appProtocol*",
    }),
  ],
  2: "selector:map",
  3: "clusterIP",
  4: "type",
  5: "externalIPs[]",
  7: "sessionAffinity",
  8: "loadBalancerIP",
  9: "loadBalancerSourceRanges[]",
  10: "externalName",
  11: "externalTrafficPolicy",
  13: "publishNotReadyAddresses:bool",
  18: "clusterIPs[]",
  19: "ipFamilies[]",
  17: "ipFamilyPolicy*",
  21: "loadBalancerClass*",
  22: "internalTrafficPolicy*",
});

const PolicyRule = message({
  1: "verbs[]",
  2: "apiGroups[]",
  3: "resources[]",
  4: "resourceNames[]",
  5: "nonResourceURLs[]",
});
const Subject = message({ 1: "kind", 2: "apiGroup", 3: "name", 4: "namespace" });
const RoleRef = message({ 1: "apiGroup", 2: "kind", 3: "name" });
const Status = message({}); // a client's status is not stored on create: only its zeros are accepted

/** The spec of (Self|Local)SubjectAccessReview: what is asked about, and for whom. */
const AccessReviewSpec = message({
  1: [
    "resourceAttributes",
    message({
      1: "namespace",
      2: "verb",
      3: "group",
      4: "version",
      5: "resource",
      6: "subresource",
      7: "name",
    }),
  ],
  2: ["nonResourceAttributes", message({ 1: "path", 2: "verb" })],
  3: "user",
  4: "groups[]",
  6: "uid",
});

const ServiceBackendPort = message({ 1: "name", 2: "number:int" });
const IngressBackend = message({
  3: ["resource", message({ 1: "apiGroup*", 2: "kind", 3: "name" })],
  4: ["service", message({ 1: "name", 2: ["port", ServiceBackendPort] })],
});
const IngressSpec = message({
  1: ["defaultBackend", IngressBackend],
  2: ["tls[]", message({ 1: "hosts[]", 2: "secretName" })],
  3: [
    "rules[]",
    message({
      1: "host",
      2: [
        "inline",
        message({
          1: [
            "http",
            message({
              1: [
                "paths[]",
                message({ 1: "path", 2: ["backend", IngressBackend], 3: "pathType*" }),
              ],
            }),
          ],
        }),
      ],
    }),
  ],
  4: "ingressClassName*",
});

const PodDisruptionBudgetSpec = message({
  1: "minAvailable:intOrString*",
  2: ["selector", LabelSelector],
  3: "maxUnavailable:intOrString*",
  4: "unhealthyPodEvictionPolicy*",
});

/** The top-level kinds: apiVersion/kind → the object's fields (field 1 is always metadata). */
const KINDS: Record<string, Schema> = {
  "v1/Namespace": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "finalizers[]" })],
    3: ["status", Status],
  }),
  "v1/ConfigMap": message({
    1: ["metadata", ObjectMeta],
    2: "data:map",
    3: "binaryData:bytesMap",
    4: "immutable:bool*",
  }),
  "v1/Secret": message({
    1: ["metadata", ObjectMeta],
    2: "data:bytesMap",
    3: "type",
    4: "stringData:map",
    5: "immutable:bool*",
  }),
  "v1/ResourceQuota": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "hard:quantityMap", 2: "scopes[]" })],
    3: ["status", Status],
  }),
  "scheduling.k8s.io/v1/PriorityClass": message({
    1: ["metadata", ObjectMeta],
    2: "value:int*", // not omitempty in JSON: 0 is written
    3: "globalDefault:bool",
    4: "description",
    5: "preemptionPolicy*",
  }),
  "policy/v1/PodDisruptionBudget": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", PodDisruptionBudgetSpec],
    3: ["status", Status],
  }),
  "networking.k8s.io/v1/Ingress": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", IngressSpec],
    3: ["status", Status],
  }),
  "v1/ServiceAccount": message({
    1: ["metadata", ObjectMeta],
    2: ["secrets[]", ObjectReference],
    3: ["imagePullSecrets[]", LocalObjectReference],
    4: "automountServiceAccountToken:bool*",
  }),
  "v1/Service": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", ServiceSpec],
    3: ["status", Status],
  }),
  "apps/v1/Deployment": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", DeploymentSpec],
    3: ["status", Status],
  }),
  "batch/v1/Job": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", JobSpec],
    3: ["status", Status],
  }),
  "batch/v1/CronJob": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", CronJobSpec],
    3: ["status", Status],
  }),
  "rbac.authorization.k8s.io/v1/Role": message({
    1: ["metadata", ObjectMeta],
    2: ["rules[]", PolicyRule],
  }),
  "rbac.authorization.k8s.io/v1/ClusterRole": message({
    1: ["metadata", ObjectMeta],
    2: ["rules[]", PolicyRule],
    3: ["aggregationRule", message({ 1: ["clusterRoleSelectors[]", LabelSelector] })],
  }),
  "rbac.authorization.k8s.io/v1/RoleBinding": message({
    1: ["metadata", ObjectMeta],
    2: ["subjects[]", Subject],
    3: ["roleRef", RoleRef],
  }),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": message({
    1: ["metadata", ObjectMeta],
    2: ["subjects[]", Subject],
    3: ["roleRef", RoleRef],
  }),
  // The reviews of `kubectl auth can-i` (`--list`), `auth whoami`, and their kin.
  "authorization.k8s.io/v1/SelfSubjectAccessReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", AccessReviewSpec],
    3: ["status", Status],
  }),
  "authorization.k8s.io/v1/SubjectAccessReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", AccessReviewSpec],
    3: ["status", Status],
  }),
  "authorization.k8s.io/v1/LocalSubjectAccessReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", AccessReviewSpec],
    3: ["status", Status],
  }),
  "authorization.k8s.io/v1/SelfSubjectRulesReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "namespace" })],
    3: ["status", Status],
  }),
  "authentication.k8s.io/v1/SelfSubjectReview": message({
    1: ["metadata", ObjectMeta],
    2: ["status", Status],
  }),
  "authentication.k8s.io/v1/TokenReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "token", 2: "audiences[]" })],
    3: ["status", Status],
  }),
  // `kubectl create token` (1.33) posts it to serviceaccounts/<name>/token.
  "authentication.k8s.io/v1/TokenRequest": message({
    1: ["metadata", ObjectMeta],
    2: [
      "spec",
      message({
        1: "audiences[]",
        3: ["boundObjectRef", message({ 1: "kind", 2: "apiVersion", 3: "name", 4: "uid" })],
        4: "expirationSeconds:int*",
      }),
    ],
    3: ["status", Status],
  }),
};

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
