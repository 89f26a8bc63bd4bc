/**
 * Sharding with operator processes on the embedded API server — the short version of the soak
 * (tests/soak/_sharding.ts; the long one is `deno task soak:sharding`): 3 replicas, 60 objects
 * with create/update/delete handlers and a daemon, one replica killed with SIGKILL in the midst
 * of handling and started again after its Lease expired. Every change handled, none twice
 * (unless the kill fell between a handler and its patch), no daemon on two replicas at once, no
 * finalizer stuck, each replica owning about a third while all were up.
 */

import assert from "node:assert/strict";
import { runShardingSoak, type SoakReport } from "../soak/_sharding.ts";

/** Prints a measured figure only when KOPF_TEST_REPORT is set: the suite prints no post-test output. */
function reportFigure(line: string): void {
  if (Deno.env.get("KOPF_TEST_REPORT")) console.log(line);
}

/** Every change handled once, no daemon on two replicas, no finalizer stuck, clean exits. */
function assertEveryChangeOnce(report: SoakReport): void {
  if (report.missing.length || report.repeats.length || report.daemonOverlaps.length) {
    console.log(JSON.stringify(report, null, 1));
  }
  assert.deepEqual(report.missing, [], "every change handled");
  assert.deepEqual(report.unexpected, []);
  assert.deepEqual(report.repeats, [], "no change handled by two replicas");
  assert.deepEqual(report.daemonOverlaps, [], "no daemon on two replicas at once");
  assert.deepEqual(report.stuck, [], "no finalizer stuck");
  assert.equal(report.handled, report.changes);
  for (const [id, code] of Object.entries(report.exitCodes)) assert.equal(code, 0, id);
}

Deno.test("sharding: 3 replicas, 60 objects, one kill -9 — every change once, daemons on one replica", async () => {
  const report = await runShardingSoak({
    replicas: 3,
    objects: 60,
    kills: 1,
    addReplica: false,
    leaseDuration: 4, // renewDeadline 2.7 s: room for a busy machine (the suite runs in parallel)
  });
  reportFigure(
    `${report.handled} of ${report.changes} changes handled; ` +
      `${report.killWindowRepeats.length} repeated in the kill window; owned ${
        JSON.stringify(report.owned)
      }; takeover ${report.takeovers.map((s) => `${s.toFixed(2)} s`).join(", ")} after the kill`,
  );
  assertEveryChangeOnce(report);
  for (const counts of report.owned) {
    const n = Object.keys(counts).length;
    const p = 1 / n;
    const sigma = Math.sqrt(60 * p * (1 - p));
    for (const [id, k] of Object.entries(counts)) {
      assert.ok(Math.abs(k - 60 * p) <= 4 * sigma, `${id} owned ${k} of 60 among ${n}`);
    }
  }
  // Each replica's watch lists at its first fresh point — once (or, when the others' acknowledgements
  // take longer than the renew deadline on a busy machine, once more at that point); a replica that
  // did not wait would list at its start and again at its first point (6, and 8 were seen).
  const { start, create } = report.requests;
  const listings = start!.list + start!.watch + create!.list + create!.watch;
  assert.ok(
    listings >= 3 && listings <= 4,
    `one listing per replica: ${JSON.stringify([start, create])}`,
  );
  assert.equal(create!.get, 0, "no take-over read of a created object");
  reportFigure(`requests: ${JSON.stringify(report.requests)}`);
});

Deno.test("sharding: a replica joins while the objects' watch lags behind the Leases — what it takes over is not handled again", async () => {
  const report = await runShardingSoak({
    replicas: 2,
    objects: 60,
    kills: 0,
    addReplica: true,
    laggingWatch: 2,
    leaseDuration: 4,
  });
  if (report.missing.length || report.repeats.length) console.log(JSON.stringify(report, null, 1));
  assert.deepEqual(report.missing, [], "every change handled");
  assert.deepEqual(report.repeats, [], "no change handled again by the replica that took it over");
  assert.deepEqual(report.stuck, [], "no finalizer stuck");
  assert.equal(report.handled, report.changes);
});

// With daemons, and without (plain replicas: our own writes' echoes run no cycle, echoes.ts).
for (const daemons of [true, false]) {
  Deno.test(
    `sharding${
      daemons ? "" : " without daemons (our own writes' echoes run no cycle)"
    }: watches dropped at random and answered 410 Gone, 3 % of requests answered 429 throughout, a kill -9 and a replica added — every change once`,
    async () => {
      const report = await runShardingSoak({
        replicas: 3,
        objects: 60,
        kills: 1,
        addReplica: true,
        watchFaults: true,
        rate429: 0.03,
        daemons,
        leaseDuration: 4,
      });
      assert.equal(report.daemonStarts > 0, daemons);
      assert.ok(report.faults!.closedWatches > 0, "watch streams were closed");
      assert.ok(report.faults!.expiredWatches > 0, "watches got 410 Gone");
      assert.ok(report.faults!.tooManyRequests > 0, "requests got 429");
      reportFigure(
        `${daemons ? "" : "without daemons: "}faults: ${JSON.stringify(report.faults)}; ` +
          `requests: ${JSON.stringify(report.requests)}`,
      );
      assertEveryChangeOnce(report);
    },
  );
}
