/**
 * A user's daemon and timer tested in virtual time, as docs/testing.md shows it ("A daemon's test
 * in virtual time"): an operator on a `FakeClock` (`KopfRunner`'s `clock`), a daemon that sleeps
 * 60 s per iteration with `kopf.sleep()`, a timer every 10 minutes, one hour of fake time — and
 * the handlers' contexts carry that clock.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock, KopfRunner, startApiServer } from "../../testing.ts";

Deno.test("virtual time: an hour of a daemon and a timer passes on the fake clock", async () => {
  const registry = new kopf.OperatorRegistry();
  let iterations = 0;
  let ticks = 0;
  const clocks: kopf.Clock[] = [];
  const only = { registry, labels: { app: "demo" } };
  kopf.daemon("configmaps", only, async function poll({ signal, clock }) {
    clocks.push(clock);
    while (!signal.aborted) {
      iterations++;
      await kopf.sleep(60, signal);
    }
  });
  kopf.timer("configmaps", { ...only, interval: 600 }, function tick({ clock }) {
    clocks.push(clock);
    ticks++;
  });

  const clock = new FakeClock();
  await using api = await startApiServer();
  await using runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: api.kubeconfig.path,
    clock,
  });
  const response = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name: "demo", labels: { app: "demo" } } }),
  });
  await response.body?.cancel();
  assert.ok(await clock.advanceUntil(() => iterations > 0 && ticks > 0, 1), "they start");

  const began = performance.now();
  await clock.advance(3600);
  const wall = (performance.now() - began) / 1000;
  // The daemon at 0, 60, …, 3600 s; the timer at 0, 600, …, 3600 s.
  assert.deepEqual({ iterations, ticks }, { iterations: 61, ticks: 7 });
  // Every context's clock is the operator's.
  assert.ok(clocks.length > 0 && clocks.every((c) => c === clock), "the contexts' clock");
  // Loose on purpose: about 0.01 s here (a few `setImmediate` turns per fake timer: ~70 timers
  // in the hour; 0.5 s when the turns were zero-delay timeouts). 5 s only catches real sleeping
  // (an hour, or a minute).
  assert.ok(wall < 5, `an hour of fake time took ${wall.toFixed(2)} s of wall time`);
  void runner;
});
