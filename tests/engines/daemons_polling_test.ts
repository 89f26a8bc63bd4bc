/**
 * `settings.background.cancellationPolling`: how often the deletion re-checks
 * an exiting daemon that has no `cancellationTimeout` and no
 * `cancellationPolling` of its own (Kopf's default 60 s). On a fake clock.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { Rig } from "./_spawning.ts";

async function checks(rig: Rig): Promise<Array<[number, boolean]>> {
  const out: Array<[number, boolean]> = [];
  for (let i = 0; i < 2; i++) {
    let all: boolean | undefined;
    const waiting = rig.daemons.waitObject(rig.state!).then((a) => (all = a));
    assert.ok(
      await rig.clock.advanceUntil(() => all !== undefined, 600),
      "a check within 600 fake s",
    );
    await waiting;
    out.push([rig.now(), all!]);
  }
  return out;
}

function slowDaemon(rig: Rig, exitAfter: number): void {
  kopf.daemon("kopfexamples", { registry: rig.registry }, async function slow({ stopped }) {
    await stopped.wait();
    await rig.clock.sleep(exitAfter);
  });
}

Deno.test("daemons: without its own cancellationPolling, a daemon is re-checked every settings.background.cancellationPolling seconds", async () => {
  const rig = new Rig();
  rig.settings.background.cancellationPolling = 7;
  slowDaemon(rig, 10);
  rig.observe();
  rig.stop();
  assert.deepEqual(await checks(rig), [[7, false], [10, true]]);
  assert.ok(rig.lines.includes("Daemon 'slow' is still exiting. The next check is in 7 seconds."));
});

Deno.test("daemons: the settings' default cancellationPolling is Kopf's 60 seconds", async () => {
  const rig = new Rig();
  assert.equal(rig.settings.background.cancellationPolling, 60);
  slowDaemon(rig, 100);
  rig.observe();
  rig.stop();
  assert.deepEqual(await checks(rig), [[60, false], [100, true]]);
  assert.ok(rig.lines.includes("Daemon 'slow' is still exiting. The next check is in 60 seconds."));
});
