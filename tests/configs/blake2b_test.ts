/**
 * The hash behind long annotation keys: `makeSuffix()` over our BLAKE2b
 * (src/cogs/configs/_blake2b.ts) must give the bytes CPython's `hashlib.blake2b(key, digest_size=4)`
 * gives Kopf. The digest size is a parameter of BLAKE2b (not a truncation of
 * the 64-byte digest), and block boundaries (127/128/129/512 bytes) exercise
 * the last-block rule; a library that got either wrong would rename every
 * long key. Expected values were computed with CPython's hashlib and base64.
 *
 * @module
 */

import assert from "node:assert/strict";
import { blake2b as nobleBlake2b } from "@noble/hashes/blake2.js";
import { blake2b } from "../../src/cogs/configs/_blake2b.ts";
import { makeSuffix } from "../../src/cogs/configs/conventions.ts";

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

Deno.test("makeSuffix() matches hashlib.blake2b(digest_size=4) across block boundaries", () => {
  // hashlib digests: "abc" 63906248, "" 1271cf25, "a"*127 d52a9199, *128 12cabd16, *129 55ada03e.
  assert.equal(makeSuffix("abc"), "-Y5BiSA");
  assert.equal(makeSuffix(""), "-EnHPJQ");
  assert.equal(makeSuffix("a".repeat(127)), "-1SqRmQ");
  assert.equal(makeSuffix("a".repeat(128)), "-Esq9Fg");
  assert.equal(makeSuffix("a".repeat(129)), "-Va2gPg");
});

Deno.test("makeSuffix() hashes the key's UTF-8 bytes", () => {
  // hashlib.blake2b("ünïcødé/handler".encode("utf-8"), digest_size=4) → a286ab50.
  assert.equal(makeSuffix("ünïcødé/handler"), "-ooarUA");
});

Deno.test("blake2b() gives the RFC 7693 and hashlib digests we rely on", () => {
  const ascii = (s: string) => new TextEncoder().encode(s);
  assert.equal(
    hex(blake2b(ascii("abc"))),
    "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1" +
      "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
  );
  assert.equal(
    hex(blake2b(new Uint8Array(0))),
    "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419" +
      "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce",
  );
  const counting = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
  assert.equal(hex(blake2b(counting, 4)), "2b95d5d7");
  assert.equal(hex(blake2b(counting)).slice(0, 32), "c59ab1095ca4579525338b6b74689ff2");
});

Deno.test("blake2b() agrees with @noble/hashes on every length up to 5 blocks and every digest size", () => {
  // Lengths 0..640 cross the 128-byte block boundaries and the counter's growth; digest sizes
  // 1..64 the parameter block; the data is random, so the message schedule is exercised in full.
  for (let length = 0; length <= 640; length++) {
    const data = crypto.getRandomValues(new Uint8Array(length));
    const size = 1 + (length % 64);
    assert.equal(hex(blake2b(data, size)), hex(nobleBlake2b(data, { dkLen: size })), `${length}`);
  }
});

Deno.test("blake2b() refuses a digest size outside 1..64", () => {
  for (const size of [0, 65, 1.5]) {
    assert.throws(() => blake2b(new Uint8Array(0), size), RangeError);
  }
});
