/**
 * A minimal DER (ASN.1 Distinguished Encoding Rules) encoder, just enough to
 * write X.509 v3 certificates with WebCrypto keys.
 *
 * It exists so that the embedded API server can mint its own CA, server and
 * client certificates on any machine without `openssl` or a native crypto
 * library: WebCrypto signs, and these few functions lay out the bytes.
 * Every function returns a complete TLV (tag, length, value) as a
 * `Uint8Array`; composite values take already-encoded children.
 *
 * Private to `src/apiserver/`; not part of the public surface.
 *
 * @module
 */

/** Concatenates byte arrays into one. */
export function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Encodes a DER length: short form below 128, long form otherwise. */
function encodeLength(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** Wraps `value` with a tag byte and its DER length. */
export function tlv(tag: number, value: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(tag), encodeLength(value.length), value);
}

/** `SEQUENCE { ...children }`. */
export function sequence(...children: Uint8Array[]): Uint8Array {
  return tlv(0x30, concat(...children));
}

/** `SET { ...children }` (callers pass one child per RDN, so no sorting needed). */
export function set(...children: Uint8Array[]): Uint8Array {
  return tlv(0x31, concat(...children));
}

/** A constructed, context-specific `[n] EXPLICIT` wrapper. */
export function explicit(n: number, inner: Uint8Array): Uint8Array {
  return tlv(0xa0 | n, inner);
}

/** A primitive, context-specific `[n] IMPLICIT` value (e.g. GeneralName). */
export function implicit(n: number, value: Uint8Array): Uint8Array {
  return tlv(0x80 | n, value);
}

/** `BOOLEAN`. */
export function boolean(value: boolean): Uint8Array {
  return tlv(0x01, Uint8Array.of(value ? 0xff : 0x00));
}

/**
 * `INTEGER` from unsigned big-endian bytes (or a small non-negative number):
 * redundant leading zeros are dropped and a zero is prepended when the high
 * bit is set, so the value stays positive.
 */
export function integer(value: Uint8Array | number): Uint8Array {
  let bytes: Uint8Array;
  if (typeof value === "number") {
    const list: number[] = [];
    for (let n = value; n > 0; n = Math.floor(n / 256)) list.unshift(n & 0xff);
    bytes = Uint8Array.from(list);
  } else {
    bytes = value;
  }
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  bytes = bytes.subarray(start);
  if (bytes.length === 0) bytes = Uint8Array.of(0);
  if ((bytes[0] ?? 0) & 0x80) bytes = concat(Uint8Array.of(0), bytes);
  return tlv(0x02, bytes);
}

/**
 * `BIT STRING` of whole bytes. `unusedBits` trailing bits of the last byte
 * are padding (DER named-bit lists must drop trailing zero bits).
 */
export function bitString(bytes: Uint8Array, unusedBits = 0): Uint8Array {
  return tlv(0x03, concat(Uint8Array.of(unusedBits), bytes));
}

/**
 * `BIT STRING` for a named-bit list such as KeyUsage: bit 0 is the most
 * significant bit of the first byte; trailing zero bits are dropped as DER
 * requires.
 */
export function namedBits(bits: number[]): Uint8Array {
  if (bits.length === 0) return bitString(new Uint8Array(0));
  const highest = Math.max(...bits);
  const bytes = new Uint8Array(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[Math.floor(bit / 8)]! |= 0x80 >> (bit % 8);
  return bitString(bytes, 7 - (highest % 8));
}

/** `OCTET STRING`. */
export function octetString(bytes: Uint8Array): Uint8Array {
  return tlv(0x04, bytes);
}

/** `OBJECT IDENTIFIER` from dotted notation, e.g. `"2.5.4.3"`. */
export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const out: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const chunk: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) {
      chunk.unshift(0x80 | (n & 0x7f));
    }
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}

/** `UTF8String`. */
export function utf8String(text: string): Uint8Array {
  return tlv(0x0c, new TextEncoder().encode(text));
}

/**
 * An X.509 `Time`: `UTCTime` for years 1950–2049 and `GeneralizedTime`
 * otherwise (RFC 5280 §4.1.2.5), always in UTC with whole seconds.
 */
export function time(date: Date): Uint8Array {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, "") + "Z"; // YYYYMMDDHHmmssZ
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) {
    return tlv(0x17, new TextEncoder().encode(digits.slice(2)));
  }
  return tlv(0x18, new TextEncoder().encode(digits));
}
