/**
 * Daemons and timers while the operator is paused (peering), on a fake clock: all stopped with
 * Kopf's reason "operator pausing" (as their `stopped` flag reports it), none spawned while
 * paused, spawned again by the next cycle after the resume — and one still exiting when the
 * pause is over is spawned again once it has exited, never twice at once.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { gate, Rig } from "./_spawning.ts";

Deno.test("daemons: a pause stops them with 'operator pausing'; the next cycle after the resume spawns them", async () => {
  const rig = new Rig();
  const events: string[] = [];
  kopf.daemon("kopfexamples", { registry: rig.registry }, async function watcher({ stopped }) {
    events.push(`start@${rig.now()}`);
    await stopped.wait();
    events.push(`stop:${stopped.reason}@${rig.now()}`);
  });
  kopf.timer("kopfexamples", { registry: rig.registry, interval: 2 }, function tick() {
    events.push(`tick@${rig.now()}`);
  });
  rig.observe();
  await rig.clock.advance(3);
  const peering = rig.paused.make("peering 'default' cluster-wide");
  peering.turnTo(true);
  await rig.clock.advance(0);
  assert.equal(rig.running, 0);
  assert.equal(rig.state?.paused, true, "marked for a cycle after the resume");
  assert.ok(rig.lines.includes("Daemon 'watcher' is signalled to exit (operator pausing)."));
  assert.ok(rig.lines.includes("Timer 'tick' is signalled to exit (operator pausing)."));
  rig.observe({ spec: { x: 1 } }); // a cycle in flight while paused: nothing spawned
  await rig.clock.advance(10);
  assert.equal(rig.running, 0);
  peering.turnTo(false);
  rig.observe(); // the reactor's cycle after the resume
  await rig.clock.advance(2);
  assert.equal(rig.state?.paused, false);
  assert.deepEqual(events, [
    "start@0",
    "tick@0",
    "tick@2",
    "stop:operator pausing@3",
    "start@13",
    "tick@13",
    "tick@15",
  ]);
  await rig.close();
});

Deno.test("daemons: one still exiting when the pause is over is spawned again after its exit, not twice", async () => {
  const rig = new Rig();
  const slow = gate();
  let starts = 0;
  let concurrent = 0;
  let maxConcurrent = 0;
  kopf.daemon(
    "kopfexamples",
    { registry: rig.registry, cancellationBackoff: 10, cancellationTimeout: 10 },
    async function lingering({ stopped }) {
      starts++;
      maxConcurrent = Math.max(maxConcurrent, ++concurrent);
      await stopped.wait();
      if (starts === 1) await slow.promise; // the first one takes its time to exit
      concurrent--;
    },
  );
  rig.observe();
  await rig.clock.advance(1);
  const toggle = rig.paused.make("peering", true);
  await rig.clock.advance(1);
  toggle.turnTo(false);
  rig.observe(); // the cycle after the resume: the old one still exits
  await rig.clock.advance(1);
  assert.equal(starts, 1);
  slow.open();
  await rig.clock.advance(0.1);
  assert.equal(starts, 2, "spawned again once the old one has exited");
  assert.equal(maxConcurrent, 1);
  await rig.close();
});

Deno.test("daemons: paused at their creation (the gate held at start), spawned only after the resume", async () => {
  const rig = new Rig();
  const toggle = rig.paused.make("peering detection", true);
  let starts = 0;
  kopf.daemon("kopfexamples", { registry: rig.registry }, async function later({ stopped }) {
    starts++;
    await stopped.wait();
  });
  rig.observe();
  await rig.clock.advance(1);
  assert.equal(starts, 0);
  assert.equal(rig.state?.paused, true);
  toggle.drop();
  rig.observe();
  await rig.clock.advance(0);
  assert.equal(starts, 1);
  await rig.close();
});
