/**
 * `deno task soak:data`: the data-directory soak (_data_soak.ts) at full size — 8 concurrent
 * writers over HTTP against `kopf apiserver --data-dir` (a child process), the server killed
 * with SIGKILL at a random moment in each of 25 rounds, every acknowledged write checked after
 * each restart, every restart required to load; then a torn-line round and a full-disk round (a
 * 2 MiB tmpfs: real ENOSPC; skipped, and said so, where tmpfs cannot be mounted). Objects carry
 * up to 96 KiB of padding, so the log passes the 64 MiB compaction threshold several times and
 * kills land around compactions too. Exits non-zero on any loss, unexpected answer or failed
 * load. Kept out of `deno task test` (which runs a short version,
 * tests/apiserver/data_dir_soak_test.ts). Sizes by environment: `KOPF_SOAK_ROUNDS=50`,
 * `KOPF_SOAK_FSYNC=write`.
 *
 * `deno task soak:data --bench` measures writes/s instead: 8 concurrent writers, 4,000 small
 * creates/updates, against no data directory and each `--data-dir-fsync` mode
 * (`KOPF_BENCH_WRITERS=32`, `KOPF_BENCH_WRITES=8000`).
 *
 * @module
 */

import { benchWrites, runDataSoak } from "./_data_soak.ts";

if (Deno.args.includes("--bench")) {
  const total = Number(Deno.env.get("KOPF_BENCH_WRITES") ?? 4000);
  const writers = Number(Deno.env.get("KOPF_BENCH_WRITERS") ?? 8);
  const modes: Array<[string, string[] | undefined]> = [
    ["no data dir", undefined],
    ["--data-dir-fsync off", ["--data-dir-fsync", "off"]],
    ["--data-dir-fsync group (default)", ["--data-dir-fsync", "group"]],
    ["--data-dir-fsync write", ["--data-dir-fsync", "write"]],
  ];
  console.log(
    `writes/s, ${writers} concurrent writers, ${total} ConfigMap creates/updates over HTTP:`,
  );
  for (const [label, flags] of modes) {
    const rate = await benchWrites(flags, writers, total);
    console.log(`  ${label.padEnd(34)} ${rate.toFixed(0).padStart(6)} writes/s`);
  }
  Deno.exit(0);
}

const rounds = Number(Deno.env.get("KOPF_SOAK_ROUNDS") ?? 25);
const fsync = Deno.env.get("KOPF_SOAK_FSYNC");
const t0 = performance.now();
const report = await runDataSoak({
  rounds,
  writers: 8,
  payloadBytes: 96 * 1024,
  maxRoundMs: 3000,
  ...(fsync ? { flags: ["--data-dir-fsync", fsync] } : {}),
  log: (line) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`),
});

console.log(
  `\ndata soak: ${report.rounds} kill -9 rounds, ${report.acknowledged} writes acknowledged, ` +
    `lost ${report.lost.length}, restarts loaded ${report.restartsLoaded}/${report.restarts}, ` +
    `unexpected answers ${report.unexpected.length}`,
);
console.log(`torn-line round: ${report.tornRound}`);
console.log(`full-disk round: ${report.fullDiskRound}`);
const failures = [...report.lost, ...report.unexpected];
if (failures.length || report.restartsLoaded !== report.restarts) {
  for (const f of failures.slice(0, 20)) console.error(`  ${f}`);
  Deno.exit(1);
}
