/**
 * Two operator processes measured side by side, at the same time, under the same steady trickle
 * — so that they see the same machine. One run of a process here swings by ±35 % from minute to
 * minute (these are shared virtual machines: the same floor process took 0.70 and 1.46 ms of CPU
 * per object in two runs a minute apart, with the same syscalls and context switches); two
 * processes measured at once swing together, and their ratio holds still enough to compare a
 * change against the tree before it, or the operator against its floor.
 *
 * Each round starts one API server's worth of fresh namespaces (`pair-a-N`, `pair-b-N`), one
 * process of each side watching its own, and one load generator per side creating 100
 * objects/s in it; the window runs from the first POST until both sides have handled all their
 * objects (the operator bench's trickle, twice at once). Per side: CPU per object (all
 * threads, and the main thread), from `/proc/<pid>/stat`.
 *
 * Run: `deno run -A bench/pair_probe.ts A B [ROUNDS] [SECONDS]` (default 3 rounds of 10 s),
 * where a side is `shipped`, `quiet`, `floor` or `floorq` (as in `trickle_probe.ts`), or
 * `shippedn`/`quietn` (the operator without `kopf.OperatorMetrics`, as `kopf run` without
 * `--liveness`; the others have them), or `raw`/`rawq` (the floor's requests with no client,
 * `_raw_floor.ts`: the runtime's floor, with and without the Events),
 * optionally after another tree's root and a colon (`/tmp/before:quiet`: that tree's
 * `bench/_bench_operator.ts` or `_floor_operator.ts`, e.g. a `git worktree` of the commit
 * before a change), and optionally followed by `@` and V8 flags added to those `kopf run` ships
 * with (`quiet@--always-sparkplug`). Each side runs from its bundle as the image runs `kopf run`
 * (`operatorBundled()`), or from the sources with `%src` in its label (`shipped%src`). With `KOPF_PROBE_PIN=1`, both processes run on the last CPU and the server
 * and the load generators on the others (`taskset`); with `KOPF_PROBE_WARMUP=S`, S seconds of
 * trickle come first on both sides (created, handled, deleted), unmeasured; with
 * `KOPF_PROBE_BURST=N`, the window is a burst instead: N creations at once on each side (50 in
 * flight each, as the operator bench's bursts), until all are handled.
 *
 * @module
 */

import { BenchClient, setUpKopfExamples } from "./_client.ts";
import { LoadGenerator } from "./_load_generator.ts";
import {
  type ChildOptions,
  operatorBundled,
  OperatorProcess,
  operatorV8Flags,
} from "./_operator_process.ts";
import { startServerProcess } from "./_server_process.ts";
import { fmt } from "./_stats.ts";

const RATE = 100;

/** What a side runs: its script and its options. */
interface Side {
  label: string;
  script: string;
  options: ChildOptions;
  /** V8 flags added to those `kopf run` ships with (comma-separated), if any. */
  v8: string | undefined;
  /** Run from its bundle (as the image runs `kopf run`), or from the sources (`%src`). */
  bundled: boolean;
}

const PRESETS: Record<string, [ChildOptions, string]> = {
  shipped: [{ posting: true }, "_bench_operator.ts"],
  quiet: [{}, "_bench_operator.ts"],
  shippedn: [{ posting: true, noMetrics: true }, "_bench_operator.ts"],
  quietn: [{ noMetrics: true }, "_bench_operator.ts"],
  floor: [{ events: true }, "_floor_operator.ts"],
  floorq: [{}, "_floor_operator.ts"],
  raw: [{ events: true }, "_raw_floor.ts"],
  rawq: [{}, "_raw_floor.ts"],
};

function side(label: string): Side {
  const sources = label.includes("%src");
  const [spec, v8] = label.replace("%src", "").split("@", 2) as [string, string | undefined];
  const at = spec.lastIndexOf(":");
  const root = at > 0 ? spec.slice(0, at) : undefined;
  const which = at > 0 ? spec.slice(at + 1) : spec;
  const preset = PRESETS[which];
  if (!preset) throw new Error(`unknown side '${which}': one of ${Object.keys(PRESETS)}`);
  const [options, file] = preset;
  const script = root
    ? new URL(`bench/${file}`, `file://${root.replace(/\/?$/, "/")}`).href
    : `./${file}`;
  return { label, script, options, v8, bundled: !sources && operatorBundled() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pin(pid: number, cpus: string): Promise<void> {
  const { success } = await new Deno.Command("taskset", {
    args: ["-a", "-p", "-c", cpus, String(pid)],
    stdout: "null",
    stderr: "null",
  }).output();
  if (!success) throw new Error(`taskset could not pin process ${pid} to CPUs ${cpus}`);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

if (import.meta.main) {
  const [a, b, roundsArg = "3", secondsArg = "10"] = Deno.args;
  if (!a || !b) {
    console.error("usage: deno run -A bench/pair_probe.ts A B [ROUNDS] [SECONDS]");
    Deno.exit(2);
  }
  const sides = [side(a), side(b)] as const;
  const rounds = Number(roundsArg);
  const seconds = Number(secondsArg);
  const warmup = Number(Deno.env.get("KOPF_PROBE_WARMUP") ?? 0);
  const pinned = Deno.env.get("KOPF_PROBE_PIN") === "1";
  const burst = Number(Deno.env.get("KOPF_PROBE_BURST") ?? 0);
  const cpus = navigator.hardwareConcurrency;
  if (pinned && cpus < 2) throw new Error("KOPF_PROBE_PIN needs two CPUs at least");
  const last = String(cpus - 1);
  const rest = cpus > 2 ? `0-${cpus - 2}` : "0";
  if (pinned) await pin(Deno.pid, rest);

  const root = new URL("../", import.meta.url);
  await using server = await startServerProcess({ root });
  if (pinned) await pin(server.pid, rest);
  using api = new BenchClient(server.url);
  const ratios: number[] = [];
  const mainRatios: number[] = [];
  const perSide: [number[], number[]] = [[], []];
  console.log(
    `pair probe: ${sides[0].label} vs ${sides[1].label}, ${rounds} rounds of ${
      burst ? `a burst of ${burst}` : `${seconds} s at ${RATE} objects/s`
    } each${warmup ? `, ${warmup} s warm-up` : ""}${pinned ? `, both on CPU ${last}` : ""}`,
  );
  for (let round = 0; round < rounds; round++) {
    const namespaces = [`pair-a-${round}`, `pair-b-${round}`];
    for (const ns of namespaces) await setUpKopfExamples(api, root, ns);
    await using loadA = await LoadGenerator.start(
      server.url,
      `/apis/kopf.dev/v1/namespaces/${namespaces[0]}/kopfexamples`,
      "create_fn",
    );
    await using loadB = await LoadGenerator.start(
      server.url,
      `/apis/kopf.dev/v1/namespaces/${namespaces[1]}/kopfexamples`,
      "create_fn",
    );
    const loads = [loadA, loadB] as const;
    // Started in turn, A first in even rounds and B first in odd ones.
    const order = round % 2 ? [1, 0] : [0, 1];
    const ops: OperatorProcess[] = [];
    for (const i of order) {
      const s = sides[i]!;
      // The side's flags through the variable the operator processes read, as it was after.
      const given = Deno.env.get("KOPF_BENCH_V8_FLAGS");
      const flags = operatorV8Flags()[0]?.replace(/^--v8-flags=/, "");
      if (s.v8) Deno.env.set("KOPF_BENCH_V8_FLAGS", [flags, s.v8].filter(Boolean).join(","));
      try {
        ops[i] = await OperatorProcess.start(
          server.kubeconfig,
          {
            ...s.options,
            namespace: namespaces[i],
          },
          s.script,
          {},
          s.bundled,
        );
      } finally {
        if (given === undefined) Deno.env.delete("KOPF_BENCH_V8_FLAGS");
        else Deno.env.set("KOPF_BENCH_V8_FLAGS", given);
      }
    }
    try {
      if (pinned) { for (const op of ops) await pin(op.pid, last); }
      const trickle = async (prefix: string, n: number) => {
        const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
        await Promise.all(loads.map(async (load) => {
          await load.steady(names, RATE);
          await load.awaitAll(names, "handled", 120_000);
        }));
        return names;
      };
      if (warmup > 0) {
        const names = await trickle("warm", RATE * warmup);
        await Promise.all(loads.map(async (load) => {
          await load.remove(names, 50);
          await load.awaitAll(names, "gone", 60_000);
        }));
      }
      await sleep(1000);
      const cpu0 = await Promise.all(ops.map((op) => op.cpuSeconds()));
      const main0 = await Promise.all(ops.map((op) => op.mainThreadCpuSeconds()));
      const objects = burst || RATE * seconds;
      if (burst) {
        const names = Array.from({ length: objects }, (_, i) => `probe-${i}`);
        await Promise.all(loads.map(async (load) => {
          await load.create(names, 50);
          await load.awaitAll(names, "handled", 300_000);
        }));
      } else await trickle("probe", objects);
      const cpu = (await Promise.all(ops.map((op) => op.cpuSeconds()))).map((x, i) =>
        ((x - cpu0[i]!) / objects) * 1e3
      );
      const main = (await Promise.all(ops.map((op) => op.mainThreadCpuSeconds()))).map((x, i) =>
        ((x - main0[i]!) / objects) * 1e3
      );
      ratios.push(cpu[0]! / cpu[1]!);
      mainRatios.push(main[0]! / main[1]!);
      perSide[0].push(cpu[0]!);
      perSide[1].push(cpu[1]!);
      console.log(
        `round ${round + 1}: ${sides[0].label} ${fmt(cpu[0]!, 3)} ms (main ${fmt(main[0]!, 3)}), ` +
          `${sides[1].label} ${fmt(cpu[1]!, 3)} ms (main ${fmt(main[1]!, 3)}) per object: ` +
          `${fmt(ratios.at(-1)!, 3)} (main ${fmt(mainRatios.at(-1)!, 3)})`,
      );
    } finally {
      await Promise.all(ops.map((op) => op.stop().catch(() => {})));
    }
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  console.log(
    `${sides[0].label} over ${sides[1].label}, CPU per object: median ${
      fmt(median(ratios), 3)
    }, mean ${fmt(mean(ratios), 3)}, range ${fmt(Math.min(...ratios), 3)}–${
      fmt(Math.max(...ratios), 3)
    } (main thread: median ${fmt(median(mainRatios), 3)}); ${sides[0].label} ${
      fmt(median(perSide[0]), 3)
    } ms, ${sides[1].label} ${fmt(median(perSide[1]), 3)} ms (medians)`,
  );
}
