/**
 * The pause gate's primitive: a set of named toggles that is on while any is on — independent
 * reasons hold it and release it in any order; listeners and waiters see the whole, not the parts.
 */

import assert from "node:assert/strict";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";

Deno.test("ToggleSet: on while any toggle is on; listeners hear only changes of the whole", () => {
  const gate = new ToggleSet();
  const heard: boolean[] = [];
  gate.subscribe((on) => heard.push(on));
  const peering = gate.make("peering 'default' cluster-wide");
  const lease = gate.make("leader election");
  assert.equal(gate.on, false);
  peering.turnTo(true);
  lease.turnTo(true);
  peering.turnTo(true); // no change
  assert.deepEqual(gate.reasons, ["peering 'default' cluster-wide", "leader election"]);
  peering.turnTo(false);
  assert.equal(gate.on, true, "the other reason still holds it");
  lease.turnTo(false);
  assert.equal(gate.on, false);
  assert.deepEqual(heard, [true, false]);
});

Deno.test("ToggleSet: an initially-on toggle holds at once; a dropped one holds no more", () => {
  const gate = new ToggleSet();
  const heard: boolean[] = [];
  const unsubscribe = gate.subscribe((on) => heard.push(on));
  const detecting = gate.make("detection", true);
  const other = gate.make("other", true);
  assert.equal(gate.size, 2);
  detecting.drop();
  detecting.drop(); // idempotent
  assert.equal(detecting.dropped, true);
  detecting.turnTo(true); // a dropped toggle changes nothing
  assert.deepEqual(gate.reasons, ["other"]);
  other.drop();
  assert.equal(gate.on, false);
  assert.equal(gate.size, 0);
  unsubscribe();
  gate.make("late", true);
  assert.deepEqual(heard, [true, false]);
});

Deno.test("ToggleSet.waitFor(): resolves on the awaited state, at once if it holds; false on abort", async () => {
  const gate = new ToggleSet();
  assert.equal(await gate.waitFor(false), true);
  const t = gate.make("t");
  const on = gate.waitFor(true);
  const off = gate.waitFor(false); // holds now: at once
  assert.equal(await off, true);
  t.turnTo(true);
  assert.equal(await on, true);
  const stop = new AbortController();
  const cut = gate.waitFor(false, stop.signal);
  stop.abort();
  assert.equal(await cut, false);
  const later = gate.waitFor(false);
  t.turnTo(false);
  assert.equal(await later, true);
  const aborted = new AbortController();
  aborted.abort();
  t.turnTo(true);
  assert.equal(await gate.waitFor(false, aborted.signal), false);
});
