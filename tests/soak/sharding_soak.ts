/**
 * `deno task soak:sharding`: the sharding soak (_sharding.ts) at full size — 3 replicas,
 * 1,000 objects with create/update/delete handlers and a daemon each; one replica killed
 * (SIGKILL) in the midst of handling and started again after its Lease expired, another killed
 * and started again at once (the same identity takes its Lease over), a fourth replica added;
 * then every object deleted. Prints the figures and exits non-zero if a change was missed or
 * handled twice outside a kill window, a daemon ran on two replicas at once, a finalizer got
 * stuck, or a replica's share while all were up was off by more than 4σ of a fair split.
 *
 * Takes about half a minute on two cores; kept out of `deno task test` (which runs a short
 * version, tests/reactor/sharding_test.ts). Size by environment: `KOPF_SOAK_OBJECTS=2000`; without
 * the daemons: `KOPF_SOAK_DAEMONS=0`.
 *
 * @module
 */

import { runShardingSoak } from "./_sharding.ts";

const objects = Number(Deno.env.get("KOPF_SOAK_OBJECTS") ?? 1000);
const t0 = performance.now();
const report = await runShardingSoak({
  replicas: 3,
  objects,
  kills: 2,
  addReplica: true,
  leaseDuration: 5,
  // KOPF_SOAK_DAEMONS=0: no daemons — plain replicas, whose own writes' echoes run no cycle.
  daemons: Deno.env.get("KOPF_SOAK_DAEMONS") !== "0",
  log: (line) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`),
});

const failures: string[] = [];
const fail = (what: string, list: string[]) => {
  if (list.length) failures.push(`${what}: ${list.length} (${list.slice(0, 5).join("; ")})`);
};
fail("changes never handled", report.missing);
fail("runs of no change made", report.unexpected);
fail("changes handled twice outside a kill window", report.repeats);
fail("daemons on two replicas at once", report.daemonOverlaps);
fail("objects left (finalizer stuck)", report.stuck);
for (const counts of report.owned) {
  const n = Object.keys(counts).length;
  const p = 1 / n;
  const sigma = Math.sqrt(objects * p * (1 - p));
  for (const [id, k] of Object.entries(counts)) {
    if (Math.abs(k - objects * p) > 4 * sigma) {
      failures.push(
        `${id} owned ${k} of ${objects} among ${n} (fair: ${(objects * p).toFixed(0)})`,
      );
    }
  }
}
for (const [id, code] of Object.entries(report.exitCodes)) {
  if (code !== 0) failures.push(`${id} exited with ${code} on SIGTERM`);
}

const share = (counts: Record<string, number>) =>
  Object.entries(counts).map(([id, k]) => `${id} ${k} (${((k / objects) * 100).toFixed(1)}%)`)
    .join(", ");
console.log(`\nsharding soak: ${objects} objects, ${report.changes} changes`);
console.log(`  handled:                 ${report.handled} of ${report.changes}`);
console.log(`  repeated in a kill window: ${report.killWindowRepeats.length}`);
for (const r of report.killWindowRepeats.slice(0, 10)) console.log(`    ${r}`);
console.log(`  repeated otherwise:      ${report.repeats.length}`);
console.log(
  `  daemon overlaps:         ${report.daemonOverlaps.length} (of ${report.daemonStarts} daemon starts)`,
);
console.log(`  objects left:            ${report.stuck.length}`);
for (const counts of report.owned) {
  console.log(`  owned with ${Object.keys(counts).length} up:       ${share(counts)}`);
}
console.log(`  handler runs by replica: ${JSON.stringify(report.runsByReplica)}`);
console.log(
  `  kill to last takeover:   ${report.takeovers.map((s) => `${s.toFixed(2)} s`).join(", ")} ` +
    `(lease duration 5 s)`,
);
console.log(
  `  phases: ${
    Object.entries(report.phases).map(([p, s]) => `${p} ${s.toFixed(1)} s`).join(", ")
  }; total ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
console.log(
  `  objects' requests:       ${
    Object.entries(report.requests).map(([p, r]) =>
      `${p}: ${r.list} LIST, ${r.watch} WATCH, ${r.get} GET`
    ).join("; ")
  } (a WATCH with initial events is a listing; the deletions' LISTs are the soak's own)`,
);
for (const f of failures) console.error(`FAILED: ${f}`);
Deno.exit(failures.length ? 1 : 0);
