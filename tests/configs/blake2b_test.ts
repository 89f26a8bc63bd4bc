import assert from "node:assert/strict";
import { blake2b } from "../../src/cogs/configs/_blake2b.ts";

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const ascii = (s: string) => new TextEncoder().encode(s);

Deno.test("blake2b() matches RFC 7693 Appendix A (BLAKE2b-512 of 'abc')", () => {
  assert.equal(
    hex(blake2b(ascii("abc"))),
    "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1" +
      "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
  );
});

Deno.test("blake2b() of the empty message (BLAKE2b-512 reference value)", () => {
  assert.equal(
    hex(blake2b(new Uint8Array(0))),
    "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419" +
      "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce",
  );
});

// The digest size is a parameter of the hash (not a truncation), and block boundaries
// (127/128/129/512 bytes) exercise the last-block rule. Expected values were computed with
// CPython's hashlib.blake2b(data, digest_size=N) — the very function Kopf calls.
Deno.test("blake2b() with small digest sizes and across block boundaries matches hashlib", () => {
  assert.equal(hex(blake2b(ascii("abc"), 4)), "63906248");
  assert.equal(hex(blake2b(new Uint8Array(0), 4)), "1271cf25");
  assert.equal(hex(blake2b(new Uint8Array(127).fill(97), 4)), "d52a9199");
  assert.equal(hex(blake2b(new Uint8Array(128).fill(97), 4)), "12cabd16");
  assert.equal(hex(blake2b(new Uint8Array(129).fill(97), 4)), "55ada03e");
  const counting = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
  assert.equal(hex(blake2b(counting, 4)), "2b95d5d7");
  assert.equal(hex(blake2b(counting)).slice(0, 32), "c59ab1095ca4579525338b6b74689ff2");
});

Deno.test("blake2b() rejects digest sizes outside 1..64", () => {
  assert.throws(() => blake2b(new Uint8Array(0), 0), RangeError);
  assert.throws(() => blake2b(new Uint8Array(0), 65), RangeError);
});
