/**
 * The short data-directory soak (the full one: `deno task soak:data`): `kopf apiserver
 * --data-dir` as a child process, 4 writers over HTTP, a real kill -9 at a random moment in each
 * of 3 rounds, every acknowledged write present after each restart; a torn-line round and a
 * full-disk round (a tmpfs; said so when it cannot be mounted).
 */

import assert from "node:assert/strict";
import { runDataSoak } from "../soak/_data_soak.ts";

Deno.test("data dir soak (short): kill -9 at random moments, a torn line, a full disk — no acknowledged write lost, every restart loads", async () => {
  const report = await runDataSoak({ rounds: 3, writers: 4, payloadBytes: 2048, maxRoundMs: 400 });
  assert.deepEqual(report.lost, []);
  assert.deepEqual(report.unexpected, []);
  assert.equal(report.rounds, 3);
  assert.equal(report.restartsLoaded, report.restarts);
  assert.ok(report.acknowledged > 0, "some writes were acknowledged");
  assert.equal(report.tornRound, "loaded twice, nothing lost");
  if (report.fullDiskRound.startsWith("skipped")) {
    console.error(`data soak: ${report.fullDiskRound}`);
  } else assert.ok(!report.fullDiskRound.startsWith("FAILED"), report.fullDiskRound);
});
