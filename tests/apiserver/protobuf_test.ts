import assert from "node:assert/strict";
import { decodeProtobufObject } from "../../src/apiserver/wire/protobuf.ts";
import { ApiError } from "../../src/apiserver/shared/errors.ts";

// A tiny proto2 encoder for hand-made bodies: [field, value] pairs; strings and nested pairs are
// length-delimited, numbers are varints (negative ones as 10-byte two's complement, as Go does).
type Pb = Array<[number, string | number | Pb]>;
const te = new TextEncoder();
function varint(v: bigint): number[] {
  const out: number[] = [];
  let x = BigInt.asUintN(64, v);
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return out;
}
function encode(fields: Pb): number[] {
  const out: number[] = [];
  for (const [no, value] of fields) {
    if (typeof value === "number") out.push(...varint(BigInt(no << 3)), ...varint(BigInt(value)));
    else {
      const bytes = typeof value === "string" ? [...te.encode(value)] : encode(value);
      out.push(...varint(BigInt((no << 3) | 2)), ...varint(BigInt(bytes.length)), ...bytes);
    }
  }
  return out;
}
function body(apiVersion: string, kind: string, object: Pb): Uint8Array {
  return new Uint8Array([
    0x6b,
    0x38,
    0x73,
    0,
    ...encode([[1, [[1, apiVersion], [2, kind]]], [2, object], [3, ""], [4, ""]]),
  ]);
}

Deno.test("protobuf: proto2 zeros are dropped, pointer zeros kept, ints signed, IntOrString both ways", () => {
  const deployment = body("apps/v1", "Deployment", [
    [1, [[1, "web"], [2, ""], [7, 0], [11, [[1, "app"], [2, "web"]]]]],
    [2, [
      [1, 0], // replicas: a pointer, so 0 is a value
      [2, [[1, [[1, "app"], [2, "web"]]]]],
      [3, [[1, []], [2, [[2, [[1, "c"], [2, "img"], [5, ""], [16, 0]]], [4, -1]]]]],
      [4, [[1, "RollingUpdate"], [2, [[1, [[1, 1], [3, "25%"]]], [2, [[1, 0], [2, 2]]]]]]],
      [5, 0], // minReadySeconds: not a pointer, so 0 is "unset"
    ]],
    [3, [[1, 0], [2, 0]]],
  ]);
  assert.deepEqual(decodeProtobufObject(deployment), {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: {},
        spec: { containers: [{ name: "c", image: "img" }], terminationGracePeriodSeconds: -1 },
      },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: 2 } },
    },
    status: {},
  });
});

Deno.test("protobuf: a field this server does not know is refused if it carries a value, ignored if not", () => {
  const withVolume = body("apps/v1", "Deployment", [
    [1, [[1, "web"]]],
    [2, [[3, [[2, [[1, [[1, "data"], [2, [[2, [[1, "Memory"]]]]]]]]]]]]], // an emptyDir volume
  ]);
  assert.throws(() => decodeProtobufObject(withVolume), (e: Error) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, 415);
    assert.equal(
      e.message,
      "the protobuf body could not be decoded (field 2 of Deployment.spec.template.spec.volumes " +
        "is not known to this server); send the object as application/json",
    );
    return true;
  });
  const zeros = body("v1", "ServiceAccount", [[1, [[1, "sa"]]], [99, 0], [98, [[1, ""], [2, 0]]]]);
  assert.deepEqual(decodeProtobufObject(zeros), {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "sa" },
  });
  assert.throws(
    () => decodeProtobufObject(body("v1", "Pod", [[1, [[1, "p"]]]])),
    /v1, Kind=Pod is not decodable here/,
  );
  assert.throws(() => decodeProtobufObject(new Uint8Array([1, 2, 3, 4, 5])), /no k8s magic/);
});
