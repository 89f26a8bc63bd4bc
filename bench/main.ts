/**
 * `deno task bench`: figures of the embedded API server under load, each next
 * to its target. The server runs as a process of its own (so its RSS and CPU
 * are its own) and is driven over keep-alive HTTP from this process:
 *
 * 1. merge-patch throughput with 50 concurrent clients;
 * 2. merge-patch latency at a fixed 1,000 patches/s, open loop;
 * 3. watch fan-out to 20 watchers, checked for exactly-once, in-order delivery;
 * 4. RSS with 100,000 small ConfigMaps (on a fresh server);
 * 5. the operator (`operator_bench.ts`, the operator a process of its own per
 *    burst, this process the load generator): objects fully handled per second
 *    in bursts of 1,000, 2,000 and 10,000, creation-to-handler latency at 100
 *    objects/s, API requests per object lifecycle, the operator's CPU per
 *    object next to the server's and the load generator's, its idle and peak
 *    RSS (on a fresh server), a steady trickle of 100 creations/s for 20 s (CPU
 *    per object as shipped and with events off, and over its floor under the
 *    same load), and the operator's CPU overhead per object with
 *    tracing on (`OTEL_DENO=true`, spans exported to a local receiver that
 *    discards them) next to the same burst with it off;
 * 6. the server per kind (`apiserver_bench.ts`, a process of its own with its
 *    own server): CPU per create and per merge patch of ConfigMaps, Deployments,
 *    Pods and KopfExamples, figures only;
 * 7. daemons and timers (`daemons_bench.ts`): 10,000 objects, each with a
 *    10-second timer and a daemon: CPU share, timer drift, RSS (on a fresh server);
 * 8. admission (`admission_bench.ts`): creations at 200/s through a mutating and
 *    a validating webhook of an operator, p50/p99 round trip and CPU per create,
 *    next to the same without webhooks (on a fresh server);
 * 9. conversion (`conversion_bench.ts`): 1,000 objects stored at v1, LISTed at v2
 *    through an operator's converters (one ConversionReview per LIST): objects
 *    converted per second, ms per LIST, CPU per 1,000 converted and RSS of the
 *    server and the operator, next to the same LIST at v1 (on a fresh server).
 * 10. start-up (`startup_bench.ts`, a process of its own with its own server and
 *    operator processes): 100,000 already-handled KopfExamples exist when the
 *    operator starts — time to ready and idle, peak RSS, CPU, writes (zero), with
 *    the state listed in pages and streamed over the watch.
 * 11. sharding (`sharding_bench.ts`, replicas as processes, on a fresh server):
 *    throughput of 1 vs 3 sharded replicas on the same bursts (light and CPU-heavy
 *    handlers) as a ratio with each party's CPU, hand-off times after a join, a
 *    graceful leave and a kill, and the objects moved per membership change of
 *    100,000 uids over 10 replicas (computed).
 * 12. shard CPU (`shard_cpu_bench.ts`, a process of its own with its own server and
 *    replicas): 1 vs 3 sharded replicas on one burst of 6,000 creations — each
 *    replica's CPU, the three's sum over the one's, and the CPU of an event of an
 *    object a replica does not own next to one it owns.
 *
 * Every figure goes to one JSON file as well (`bench-results.json` in the
 * current directory, or the path in `KOPF_BENCH_RESULTS`): the machine, the
 * commit and, per figure, its label, value, unit, target, whether it was met,
 * its details and its line (`BenchResults` in `_stats.ts`) — those of the
 * daemons and start-up processes too, which write theirs to a file of their
 * own that this run reads back — so that runs can be compared as data.
 *
 * A missed target is printed, not failed: the run exits non-zero only when
 * the benchmark itself breaks (failed requests, lost or repeated watch events,
 * a server that will not start or stop). The load generator shares the
 * machine with the server, so its own CPU is printed too: when it is the
 * busier of the two, a rate says more about the generator than the server,
 * and the server's CPU per operation is the steadier figure.
 *
 * @module
 */

import { measureAdmission } from "./admission_bench.ts";
import { measureConversion } from "./conversion_bench.ts";
import { BenchClient } from "./_client.ts";
import { readCpuSeconds, type ServerProcess, startServerProcess } from "./_server_process.ts";
import { figure, fmt, readResults, recordFigures, RESULTS_ENV, writeResults } from "./_stats.ts";
import { measureLatency } from "./patch_latency.ts";
import { measureMemory } from "./memory.ts";
import { machine, measureOperator } from "./operator_bench.ts";
import { measureThroughput, seedConfigMaps } from "./patch_throughput.ts";
import { measureFanout, seedKopfExamples } from "./watch_fanout.ts";
import { measureSharding } from "./sharding_bench.ts";

const ROOT = new URL("../", import.meta.url);
const MB = 1024 * 1024;

const PATCH_OBJECTS = 500;
const CLIENTS = 50;
const LATENCY_RATE = 1_000;
const WATCHERS = 20;
const CHANGES = 5_000;
const WATCHED_OBJECTS = 100;
const RSS_OBJECTS = 100_000;
/** Where the figures of the run go as JSON. */
const RESULTS = Deno.env.get(RESULTS_ENV) ?? "bench-results.json";

/**
 * Runs a benchmark as a process of its own, its figures written to a file of its own and added
 * to this run's.
 *
 * @param file The benchmark's file name in `bench/`.
 * @returns Its exit status and its output.
 */
async function runChild(file: string): Promise<{ success: boolean; code: number; text: string }> {
  const results = await Deno.makeTempFile({ prefix: "kopf-bench-", suffix: ".json" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL(`./${file}`, import.meta.url).pathname],
      env: { [RESULTS_ENV]: results },
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    // Passed through as it comes (its progress lines), and kept for the targets.
    let text = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      await Deno.stdout.write(new TextEncoder().encode(chunk));
    }
    const { success, code } = await child.status;
    recordFigures(await readResults(results));
    return { success, code, text };
  } finally {
    await Deno.remove(results).catch(() => {});
  }
}

/** CPU used by the server and by this process over one phase. */
interface PhaseCpu {
  /** Server CPU seconds. */
  server: number;
  /** A note for the figure's line: cores used by each side. */
  note: string;
}

/**
 * Runs a phase and measures the CPU both processes used over it.
 *
 * @param server The server process.
 * @param run The phase.
 * @returns The phase's result and the CPU figures.
 */
async function withCpu<T>(
  server: ServerProcess,
  run: () => Promise<T>,
): Promise<{ result: T; cpu: PhaseCpu }> {
  const server0 = await server.cpuSeconds();
  const self0 = await readCpuSeconds(Deno.pid);
  const t0 = performance.now();
  const result = await run();
  const seconds = (performance.now() - t0) / 1000;
  const serverCpu = await server.cpuSeconds() - server0;
  const selfCpu = await readCpuSeconds(Deno.pid) - self0;
  return {
    result,
    cpu: {
      server: serverCpu,
      note: `CPU: server ${fmt(serverCpu / seconds, 2)} cores, load generator ${
        fmt(selfCpu / seconds, 2)
      }`,
    },
  };
}

/**
 * Runs every benchmark and prints one line per figure.
 *
 * @returns The exit code: 0, or 1 if the benchmark broke.
 */
async function main(): Promise<number> {
  const broken: string[] = [];
  let targets = 0;
  let met = 0;
  const report = (f: { line: string; met: boolean }) => {
    targets++;
    if (f.met) met++;
    console.log(f.line);
  };

  // Ctrl-C stops the servers this run started before leaving.
  const servers = new Set<ServerProcess>();
  const interrupted = new AbortController();
  const onSignal = () => {
    interrupted.abort();
    void Promise.all([...servers].map((s) => s.stop())).then(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  const start = async () => {
    const s = await startServerProcess({ root: ROOT, signal: interrupted.signal });
    servers.add(s);
    return s;
  };
  const stop = async (s: ServerProcess, which: string) => {
    const code = await s.stop();
    servers.delete(s);
    if (code !== 0) broken.push(`the ${which} server exited with code ${code} on SIGTERM`);
  };

  const server = await start();
  console.log(
    `kopf API server benchmark: server pid ${server.pid} at ${server.url} ` +
      `(deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} CPUs)`,
  );
  try {
    using api = new BenchClient(server.url);

    await seedConfigMaps(api, PATCH_OBJECTS);
    {
      const { result: r, cpu } = await withCpu(server, () =>
        measureThroughput(api, {
          clients: CLIENTS,
          objects: PATCH_OBJECTS,
          warmupMs: 1_500,
          durationMs: 10_000,
        }));
      const perPatch = (cpu.server / (r.committed + 2)) * 1e6;
      report(figure(`merge-patch throughput (${CLIENTS} clients)`, r.perSecond, "patches/s", {
        target: { atLeast: 5_000 },
        note: `[${fmt(r.patches)} patches in ${fmt(r.seconds, 1)} s, ${fmt(r.errors)} errors; ` +
          `server ${fmt(perPatch)} µs CPU/patch; ${cpu.note}]`,
      }));
      if (r.errors) broken.push(`${r.errors} merge patches failed`);
      if (r.rvAdvanced !== r.committed) {
        broken.push(
          `${fmt(r.committed)} patches succeeded but the resourceVersion moved by ${
            fmt(r.rvAdvanced)
          }: not every patch was a real change`,
        );
      }
    }

    {
      const { result: r, cpu } = await withCpu(
        server,
        () =>
          measureLatency(api, { rate: LATENCY_RATE, durationMs: 10_000, objects: PATCH_OBJECTS }),
      );
      report(figure(
        `merge-patch latency p99 at ${fmt(LATENCY_RATE)} patches/s (open loop)`,
        r.p99,
        "ms",
        {
          decimals: 2,
          target: { below: 20 },
          note: `[p50 ${fmt(r.p50, 2)} ms, p90 ${fmt(r.p90, 2)} ms, max ${fmt(r.max, 1)} ms; ` +
            `${fmt(r.sent)} patches, ${fmt(r.errors)} errors; ` +
            `generator sent up to ${fmt(r.maxSendDelay, 1)} ms late; ${cpu.note}]`,
        },
      ));
      if (r.errors) broken.push(`${r.errors} merge patches failed in the latency run`);
    }

    await seedKopfExamples(api, ROOT, WATCHED_OBJECTS);
    {
      const { result: r, cpu } = await withCpu(server, () =>
        measureFanout(api, {
          watchers: WATCHERS,
          changes: CHANGES,
          objects: WATCHED_OBJECTS,
          concurrency: 20,
          timeoutMs: 60_000,
        }));
      const ok = r.problems.length === 0;
      console.log(
        figure(
          `watch fan-out (${WATCHERS} watchers × ${fmt(CHANGES)} changes)`,
          r.eventsPerSecond,
          "events/s delivered",
          {
            note: `[last watcher had the last event ${fmt(r.lastEventMs)} ms after the first ` +
              `change, ${fmt(r.lagAfterLastAckMs)} ms after the last ack; ` +
              `${ok ? "every event exactly once, in order ✓" : "DELIVERY BROKEN ✗"}; ${cpu.note}]`,
          },
        ).line,
      );
      for (const p of r.problems.slice(0, 10)) console.log(`  ${p}`);
      if (!ok) broken.push(`watch delivery broken (${r.problems.length} problems)`);
    }
  } finally {
    await stop(server, "first");
  }

  // A fresh server, so "before" is an idle server and "after" is the objects' cost.
  const fresh = await start();
  try {
    using api = new BenchClient(fresh.url);
    const cpu0 = await fresh.cpuSeconds();
    const r = await measureMemory(api, fresh, { objects: RSS_OBJECTS, concurrency: 32 });
    const cpu = await fresh.cpuSeconds() - cpu0;
    const added = r.rssAfter - r.rssBefore;
    report(figure(`RSS with ${fmt(r.objects)} ConfigMaps`, r.rssAfter / MB, "MB", {
      target: { below: 400 },
      note: `[idle server ${fmt(r.rssBefore / MB)} MB, +${fmt(added / MB)} MB ` +
        `≈ ${fmt(added / r.objects)} bytes/object; created at ${fmt(r.createdPerSecond)}/s, ` +
        `server ${fmt((cpu / r.objects) * 1e6)} µs CPU/create]`,
    }));
  } finally {
    await stop(fresh, "second");
  }

  // The operator benchmark: a fresh server, the operator in processes of its own, the load here.
  const third = await start();
  try {
    console.log(`kopf operator benchmark: server pid ${third.pid}; ${machine()}`);
    const outcome = await measureOperator(third, ROOT);
    targets += outcome.targets;
    met += outcome.met;
    broken.push(...outcome.broken);
  } finally {
    await stop(third, "third");
  }

  // The server's CPU per create and patch of each kind it has rules for: a process of its own
  // (its own server), figures only (no targets).
  {
    const out = await runChild("apiserver_bench.ts");
    if (!out.success) broken.push(`per-kind API server benchmark: exit code ${out.code}`);
  }

  // Daemons and timers: a process of their own (its own server too), so that what the earlier
  // phases left in this process (heap, connections) does not count in their RSS and drift.
  {
    const out = await runChild("daemons_bench.ts");
    const text = out.text;
    for (const line of text.split("\n")) {
      if (!/\(target [^)]*\)/.test(line)) continue;
      targets++;
      if (line.includes("✓")) met++;
    }
    if (!out.success) broken.push(`daemons benchmark: exit code ${out.code}`);
    console.log(
      "  (with a worker limit: KOPF_BENCH_WORKER_LIMIT=100 deno run -A bench/daemons_bench.ts)",
    );
  }

  // Admission: a fresh server, the operator's webhook server in this process.
  const fourth = await start();
  try {
    const outcome = await measureAdmission(fourth, ROOT);
    targets += outcome.targets;
    met += outcome.met;
    broken.push(...outcome.broken);
  } finally {
    await stop(fourth, "fourth");
  }

  // Conversion: a fresh server, the operator's conversion webhook in this process.
  const fifth = await start();
  try {
    const outcome = await measureConversion(fifth, ROOT);
    targets += outcome.targets;
    met += outcome.met;
    broken.push(...outcome.broken);
  } finally {
    await stop(fifth, "fifth");
  }

  // Start-up over 100,000 existing objects: a process of its own (its own server and operators).
  {
    const out = await runChild("startup_bench.ts");
    const text = out.text;
    for (const line of text.split("\n")) {
      if (!/\(target [^)]*\)/.test(line)) continue;
      targets++;
      if (line.includes("✓")) met++;
    }
    if (!out.success) broken.push(`start-up benchmark: exit code ${out.code}`);
  }

  // Sharding: a fresh server, replicas as processes of their own.
  const sixth = await start();
  try {
    const outcome = await measureSharding(sixth);
    targets += outcome.targets;
    met += outcome.met;
    broken.push(...outcome.broken);
  } finally {
    await stop(sixth, "sixth");
  }

  // Shard CPU: a process of its own (its own server and replicas).
  {
    const out = await runChild("shard_cpu_bench.ts");
    for (const line of out.text.split("\n")) {
      if (!/\(target [^)]*\)/.test(line)) continue;
      targets++;
      if (line.includes("✓")) met++;
    }
    if (!out.success) broken.push(`shard CPU benchmark: exit code ${out.code}`);
  }

  Deno.removeSignalListener("SIGINT", onSignal);
  console.log(`targets met: ${met} of ${targets}`);
  console.log(`all figures as JSON: ${await writeResults(RESULTS)}`);
  for (const b of broken) console.error(`bench broken: ${b}`);
  return broken.length ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main());
