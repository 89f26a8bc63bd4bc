/**
 * BLAKE2b (RFC 7693), unkeyed, with the digest size as a parameter of the hash — what
 * `hashlib.blake2b(data, digest_size=n)` computes in CPython and what the long annotation keys of
 * conventions.ts hash with (a 4-byte digest, so that the keys match Kopf's bytes).
 *
 * Why our own: Web Crypto has no BLAKE2, and the package we used (`@noble/hashes`) was the only
 * reason an operator without sharding (whose rendezvous hashing uses its SHA-256) loaded it:
 * ≈1 MiB of an idle operator's memory for a hash of long handler ids. The hash is not a security boundary here
 * (a collision renames nothing: both ids would share a key, as with any truncated digest); the
 * tests hold it to RFC 7693's and hashlib's digests and to `@noble/hashes` on random inputs.
 *
 * 64-bit words are pairs of 32-bit halves (low at even, high at odd indexes): no BigInt.
 *
 * @module
 */

/** The initialisation vector: the 64-bit words of SHA-512's, as (low, high) halves. */
const IV = new Uint32Array([
  0xf3bcc908,
  0x6a09e667,
  0x84caa73b,
  0xbb67ae85,
  0xfe94f82b,
  0x3c6ef372,
  0x5f1d36f1,
  0xa54ff53a,
  0xade682d1,
  0x510e527f,
  0x2b3e6c1f,
  0x9b05688c,
  0xfb41bd6b,
  0x1f83d9ab,
  0x137e2179,
  0x5be0cd19,
]);

/** The message word schedule of the 12 rounds (rounds 10 and 11 repeat 0 and 1). */
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

/** The message block's words and the working vector: scratch, reused by every call. */
const M = new Uint32Array(32);
const V = new Uint32Array(32);

/** v[a] += v[b] + m[x] (64-bit, as 32-bit halves). */
function add3(v: Uint32Array, a: number, b: number, m: Uint32Array, x: number): void {
  const lo = v[2 * a]! + v[2 * b]! + m[2 * x]!;
  const hi = v[2 * a + 1]! + v[2 * b + 1]! + m[2 * x + 1]! + Math.floor(lo / 0x100000000);
  v[2 * a] = lo;
  v[2 * a + 1] = hi;
}

/** v[a] += v[b] (64-bit). */
function add2(v: Uint32Array, a: number, b: number): void {
  const lo = v[2 * a]! + v[2 * b]!;
  const hi = v[2 * a + 1]! + v[2 * b + 1]! + (lo >= 0x100000000 ? 1 : 0);
  v[2 * a] = lo;
  v[2 * a + 1] = hi;
}

/** v[a] = (v[a] ^ v[b]) rotated right by `n` bits (16, 24, 32 or 63). */
function xorRotr(v: Uint32Array, a: number, b: number, n: number): void {
  const lo = v[2 * a]! ^ v[2 * b]!;
  const hi = v[2 * a + 1]! ^ v[2 * b + 1]!;
  if (n === 32) {
    v[2 * a] = hi;
    v[2 * a + 1] = lo;
  } else if (n === 63) {
    v[2 * a] = (lo << 1) | (hi >>> 31);
    v[2 * a + 1] = (hi << 1) | (lo >>> 31);
  } else {
    v[2 * a] = (lo >>> n) | (hi << (32 - n));
    v[2 * a + 1] = (hi >>> n) | (lo << (32 - n));
  }
}

/** The mixing function G of RFC 7693 §3.1. */
function mix(
  v: Uint32Array,
  m: Uint32Array,
  a: number,
  b: number,
  c: number,
  d: number,
  x: number,
  y: number,
): void {
  add3(v, a, b, m, x);
  xorRotr(v, d, a, 32);
  add2(v, c, d);
  xorRotr(v, b, c, 24);
  add3(v, a, b, m, y);
  xorRotr(v, d, a, 16);
  add2(v, c, d);
  xorRotr(v, b, c, 63);
}

/** The compression function F of RFC 7693 §3.2, over one 128-byte block at `offset`. */
function compress(
  h: Uint32Array,
  block: Uint8Array,
  offset: number,
  counter: number,
  last: boolean,
): void {
  const m = M;
  for (let i = 0; i < 32; i++) {
    const o = offset + 4 * i;
    m[i] = block[o]! | (block[o + 1]! << 8) | (block[o + 2]! << 16) | (block[o + 3]! << 24);
  }
  const v = V;
  v.set(h, 0);
  v.set(IV, 16);
  // the byte counter's low 64 bits (inputs here are far below 2^53)
  v[24] = v[24]! ^ (counter >>> 0);
  v[25] = v[25]! ^ Math.floor(counter / 0x100000000);
  if (last) {
    v[28] = ~v[28]!;
    v[29] = ~v[29]!;
  }
  for (let round = 0; round < 12; round++) {
    const s = SIGMA[round % 10]!;
    mix(v, m, 0, 4, 8, 12, s[0]!, s[1]!);
    mix(v, m, 1, 5, 9, 13, s[2]!, s[3]!);
    mix(v, m, 2, 6, 10, 14, s[4]!, s[5]!);
    mix(v, m, 3, 7, 11, 15, s[6]!, s[7]!);
    mix(v, m, 0, 5, 10, 15, s[8]!, s[9]!);
    mix(v, m, 1, 6, 11, 12, s[10]!, s[11]!);
    mix(v, m, 2, 7, 8, 13, s[12]!, s[13]!);
    mix(v, m, 3, 4, 9, 14, s[14]!, s[15]!);
  }
  for (let i = 0; i < 16; i++) h[i] = h[i]! ^ v[i]! ^ v[i + 16]!;
}

/**
 * The unkeyed BLAKE2b digest of `data`, `size` bytes long (1–64; the size is a parameter of the
 * hash, not a truncation of the 64-byte digest).
 *
 * @param data The bytes to hash.
 * @param size The digest's length in bytes (default 64).
 * @returns The digest.
 * @throws {RangeError} If `size` is not an integer from 1 to 64.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { blake2b } from "./_blake2b.ts";
 * const abc = new TextEncoder().encode("abc");
 * assert.deepEqual([...blake2b(abc, 4)], [0x63, 0x90, 0x62, 0x48]); // hashlib, digest_size=4
 * assert.equal(blake2b(abc)[0], 0xba); // RFC 7693, appendix A
 * ```
 */
export function blake2b(data: Uint8Array, size = 64): Uint8Array {
  if (!Number.isInteger(size) || size < 1 || size > 64) {
    throw new RangeError(`A BLAKE2b digest is 1 to 64 bytes long, not ${size}`);
  }
  const h = IV.slice();
  h[0] = h[0]! ^ 0x01010000 ^ size; // parameter block: digest length, no key, fanout 1, depth 1
  const blocks = Math.max(1, Math.ceil(data.length / 128));
  for (let i = 0; i < blocks - 1; i++) compress(h, data, 128 * i, 128 * (i + 1), false);
  const tail = new Uint8Array(128);
  tail.set(data.subarray(128 * (blocks - 1)));
  compress(h, tail, 0, data.length, true);
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = h[i >> 2]! >>> (8 * (i & 3));
  return out;
}
