/**
 * Rendezvous hashing, as sharding uses it: stable owners (the same on every replica and across
 * versions), an even split, and a membership change that moves only ~1/N of 100,000 uids — only
 * to a member that comes, only from a member that goes.
 */

import assert from "node:assert/strict";
import { sha256 } from "npm:@noble/hashes@^2/sha2.js";
import { hash64, Rendezvous, weight } from "../../src/cogs/structs/rendezvous.ts";

/** 100,000 uid-like keys, the same in every run (no randomness in a test of stability). */
const UIDS = Array.from({ length: 100_000 }, (_, i) => {
  const h = i.toString(16).padStart(12, "0");
  return `0b7c${h.slice(0, 4)}-1f2e-4d3c-9b8a-${h}`;
});
const KEYS = UIDS.map(hash64);

const members = (n: number) => Array.from({ length: n }, (_, i) => `replica-${i}`);

function owners(r: Rendezvous): string[] {
  return KEYS.map((k) => r.ownerOfHash(k)!);
}

Deno.test("hash64 and weight are fixed functions: the same owners in every process and version", () => {
  // The wire contract: replicas of different builds must agree, so these values never change.
  assert.deepEqual(hash64("abc"), { hi: 0xba7816bf, lo: 0x8f01cfea });
  assert.equal(weight(hash64("replica-0"), hash64("uid-1")), 7941438053346094);
  const r = new Rendezvous(["replica-2", "replica-0", "replica-1"]);
  assert.deepEqual(r.members, ["replica-0", "replica-1", "replica-2"], "sorted, order-free");
  assert.deepEqual(
    ["a", "b", "c", "d", "e"].map((u) => r.owner(u)),
    ["replica-2", "replica-1", "replica-0", "replica-0", "replica-2"],
  );
  assert.equal(new Rendezvous([]).owner("a"), undefined);
});

Deno.test("hash64 of short ASCII keys (its own one-block SHA-256) gives the library's bits: every length 0-70, non-ASCII too", () => {
  const library = (text: string) => {
    const d = sha256(new TextEncoder().encode(text));
    const hi = ((d[0]! << 24) | (d[1]! << 16) | (d[2]! << 8) | d[3]!) >>> 0;
    const lo = ((d[4]! << 24) | (d[5]! << 16) | (d[6]! << 8) | d[7]!) >>> 0;
    return { hi, lo };
  };
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  for (let n = 0; n <= 70; n++) {
    for (let k = 0; k < 20; k++) {
      let text = "";
      for (let i = 0; i < n; i++) text += String.fromCharCode(32 + (next() % 95));
      assert.deepEqual(hash64(text), library(text), `length ${n}: ${JSON.stringify(text)}`);
    }
  }
  for (const text of ["ü", "uid-ü-1", "\u0000", "\x7f\x80", "日本".repeat(10)]) {
    assert.deepEqual(hash64(text), library(text), JSON.stringify(text));
  }
  for (const uid of UIDS.slice(0, 1000)) assert.deepEqual(hash64(uid), library(uid), uid);
});

Deno.test("10 members split 100,000 uids evenly (each within 3% of 10,000)", () => {
  const counts = new Map<string, number>();
  for (const o of owners(new Rendezvous(members(10)))) counts.set(o, (counts.get(o) ?? 0) + 1);
  assert.equal(counts.size, 10);
  for (const [m, n] of counts) assert.ok(Math.abs(n - 10_000) < 300, `${m}: ${n}`);
});

Deno.test("a member that joins takes ~1/N of 100,000 uids, all from the others, none moved between them", () => {
  for (const n of [2, 3, 10]) {
    const before = owners(new Rendezvous(members(n)));
    const after = owners(new Rendezvous([...members(n), "newcomer"]));
    let moved = 0;
    for (let i = 0; i < KEYS.length; i++) {
      if (before[i] === after[i]) continue;
      moved++;
      assert.equal(after[i], "newcomer", "a uid moves only to the member that joined");
    }
    const expected = KEYS.length / (n + 1);
    assert.ok(Math.abs(moved - expected) < expected * 0.05, `N=${n + 1}: ${moved} moved`);
  }
});

Deno.test("a member that leaves gives away only its own ~1/N of 100,000 uids, spread over the rest", () => {
  const all = members(10);
  const before = owners(new Rendezvous(all));
  const after = owners(new Rendezvous(all.filter((m) => m !== "replica-3")));
  const received = new Map<string, number>();
  let moved = 0;
  for (let i = 0; i < KEYS.length; i++) {
    if (before[i] === after[i]) continue;
    moved++;
    assert.equal(before[i], "replica-3", "only the leaver's uids move");
    received.set(after[i]!, (received.get(after[i]!) ?? 0) + 1);
  }
  assert.equal(moved, before.filter((o) => o === "replica-3").length);
  assert.ok(Math.abs(moved - 10_000) < 300, `${moved} moved`);
  assert.equal(received.size, 9, "every remaining member gets a share");
  for (const [m, got] of received) assert.ok(Math.abs(got - moved / 9) < 150, `${m}: ${got}`);
});
