import assert from "node:assert/strict";
import { Fifo } from "../../src/cogs/aio/fifo.ts";

Deno.test("Fifo: first in, first out, across the compaction of its consumed front", () => {
  const q = new Fifo<number>();
  let next = 0;
  let expected = 0;
  // Interleaved pushes and shifts, long enough to compact the front several times.
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 300; i++) q.push(next++);
    for (let i = 0; i < 250; i++) assert.equal(q.shift(), expected++);
    assert.equal(q.size, next - expected);
  }
  while (q.size) assert.equal(q.shift(), expected++);
  assert.equal(expected, next);
  assert.equal(q.shift(), undefined);
  q.push(-1);
  assert.equal(q.shift(), -1);
});
