/**
 * The protobuf wire format, and only that: a message's fields as numbers with
 * varint, length-delimited or fixed values, read with limits checked before
 * each slice. A malformed body is a 415 that names JSON as the way out.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";

/** One decoded field: its number and its value (a varint, or the bytes of a length-delimited field). */
export type Field = { no: number; varint?: bigint; bytes?: Uint8Array; fixed?: boolean };

export function unsupported(detail: string): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the protobuf body could not be decoded (${detail}); send the object as application/json`,
  );
}

export function fields(buf: Uint8Array): Field[] {
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
