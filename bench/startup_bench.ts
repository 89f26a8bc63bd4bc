/**
 * The start-up benchmark (issue 15 item 4): 100,000 KopfExamples that an
 * operator handled before — each with Kopf's finalizer, a diff base that
 * matches it and its create result in `status` — exist when the operator
 * starts. Target: ready and idle within 30 s, peak RSS ≤ 400 MiB, zero writes.
 *
 * The objects are written straight into the API server's data directory (a
 * snapshot of the store, `--data-dir`) and loaded when it starts: 100,000
 * HTTP creates would take minutes and measure the server, not the operator.
 * The operator runs in a process of its own (`_startup_operator.ts`) whose
 * RSS and CPU are sampled from `/proc` every 100 ms; the server's request
 * counters give the writes. Each way of reading the state runs on a fresh
 * operator over the same server:
 *
 * - `list`: paginated LIST (`limit=500`, `continue`), then WATCH;
 * - `stream`: the state streamed over the watch (`sendInitialEvents=true`).
 *
 * Figures per run: time to ready (the initial listing done: `onReady`), time
 * until the operator's CPU settles (under 5% of a core over 1 s) and until
 * no per-object worker is left (`settings.batching.idleTimeout`, 5 s, after
 * the last cycle), peak and settled RSS, CPU seconds and CPU per object, the
 * requests it made by verb, writes (must be 0), and the server's CPU.
 *
 * Run alone: `deno run -A bench/startup_bench.ts` (`KOPF_BENCH_STARTUP_OBJECTS`
 * for another count, `KOPF_BENCH_STARTUP_MODES=stream` for one way,
 * `KOPF_BENCH_STARTUP_FLAGS="--cpu-prof --cpu-prof-dir=DIR"` for Deno flags of the operator);
 * `deno task bench` runs it last. With `KOPF_BENCH_RESULTS=FILE`, its figures go to that JSON
 * file as well (as `deno task bench` collects them).
 *
 * @module
 */

import { BenchClient, expectOk, setUpKopfExamples } from "./_client.ts";
import { readCpuSeconds, readRss, startServerProcess } from "./_server_process.ts";
import { figure, fmt, RESULTS_ENV, writeResults } from "./_stats.ts";

const ROOT = new URL("../", import.meta.url);
const MB = 1024 * 1024;
const NAMESPACE = "bench-startup";
const KEY = "kopfexamples.kopf.dev";
const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";
const OBJECTS = Number(Deno.env.get("KOPF_BENCH_STARTUP_OBJECTS") ?? 100_000);
const MODES = (Deno.env.get("KOPF_BENCH_STARTUP_MODES") ?? "list,stream").split(",")
  .map((m) => m.trim()) as Array<"list" | "stream">;
/** How long an operator may take to become idle before the run is called broken. */
const DEADLINE_SECONDS = 120;

/** What one operator start-up measured. */
interface StartupRun {
  /** Seconds from the spawn to `onReady` (the initial listing done). */
  ready: number;
  /** Seconds from the spawn until the CPU settled (< 5% of a core over 1 s) after ready. */
  settled: number;
  /** Seconds from the spawn until no per-object worker was left. */
  idle: number;
  /** Seconds from the spawn until the module was loaded (the first line of the child). */
  loaded: number;
  /** Peak RSS, bytes, over the run. */
  peakRss: number;
  /** RSS when idle, bytes. */
  idleRss: number;
  /** CPU seconds of the operator process up to idle. */
  cpu: number;
  /** CPU seconds of the server over the run. */
  serverCpu: number;
  /** Requests by `"<verb>"` to KopfExamples, and others, over the run. */
  requests: Map<string, number>;
  /** Writes of any resource (create, update, patch, delete, deletecollection). */
  writes: number;
  /** Create handler calls (must be 0: every object was handled before). */
  created: number;
}

/**
 * Writes `count` already-handled KopfExamples into a data directory's snapshot.
 *
 * @param dir The data directory (with a snapshot that has the CRD and the namespace).
 * @param count How many objects.
 */
async function seedSnapshot(dir: string, count: number): Promise<void> {
  // The data directory's snapshot (storage/persistence.ts): a header line with the format and the
  // resourceVersion, one `{"key","object"}` line per object, a trailer with the count. A clean
  // stop left the change log empty.
  const path = `${dir}/snapshot.jsonl`;
  const lines = (await Deno.readTextFile(path)).split("\n").filter(Boolean);
  const header = JSON.parse(lines[0]!) as { format: number; resourceVersion: number };
  const trailer = JSON.parse(lines[lines.length - 1]!) as { end: boolean; objects: number };
  if (header.format !== 2 || !trailer.end) {
    throw new Error(`${path}: not a format-2 snapshot (the data directory's format changed?)`);
  }
  const out = lines.slice(1, -1);
  let rv = header.resourceVersion;
  const created = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  for (let i = 0; i < count; i++) {
    const spec = { field: "value", items: ["item1", "item2"], n: i };
    // Kopf's essence: the body without apiVersion, kind, metadata, status; no labels here.
    const essence = `${JSON.stringify({ spec })}\n`;
    out.push(JSON.stringify({
      key: KEY,
      object: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: {
          name: `kex-${String(i).padStart(6, "0")}`,
          namespace: NAMESPACE,
          uid: crypto.randomUUID(),
          resourceVersion: String(++rv),
          generation: 1,
          creationTimestamp: created,
          finalizers: [FINALIZER],
          annotations: { [LAST_HANDLED]: essence },
        },
        spec,
        status: { create_fn: { message: "created" } },
      },
    }));
  }
  const text = [
    JSON.stringify({ ...header, resourceVersion: rv }),
    ...out,
    JSON.stringify({ ...trailer, objects: out.length }),
  ].join("\n") + "\n";
  await Deno.writeTextFile(path, text);
}

async function requestCounts(api: BenchClient): Promise<Map<string, number>> {
  const answer = await api.send("GET", "/admin/stats", { parse: true });
  expectOk(answer, "reading the server's request counts");
  return new Map(Object.entries((answer.body as { requests: Record<string, number> }).requests));
}

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/**
 * Starts one operator process over the seeded server and measures it until idle.
 *
 * @param server The server: URL, kubeconfig, CPU.
 * @param mode How the operator reads the state.
 * @returns The figures.
 */
async function runOperator(
  server: { kubeconfig: string; cpuSeconds(): Promise<number> },
  api: BenchClient,
  mode: "list" | "stream",
): Promise<StartupRun> {
  const before = await requestCounts(api);
  const server0 = await server.cpuSeconds();
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      // E.g. KOPF_BENCH_STARTUP_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the operator.
      ...(Deno.env.get("KOPF_BENCH_STARTUP_FLAGS")?.split(" ").filter(Boolean) ?? []),
      new URL("./_startup_operator.ts", import.meta.url).pathname,
      server.kubeconfig,
      mode === "stream" ? "always" : "never",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const pid = child.pid;
  const seconds = () => (performance.now() - t0) / 1000;
  let peakRss = 0;
  const samples: Array<{ t: number; cpu: number }> = [];
  let ready: number | undefined, idle: number | undefined, settled: number | undefined;
  let loaded: number | undefined;
  let created = 0;
  let failed: Error | undefined;
  // Lines of the child: ready, idle.
  const lines = (async () => {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const event = JSON.parse(line) as { event: string; ms: number; created?: number };
        if (event.event === "loaded") loaded = seconds();
        if (event.event === "ready") ready = seconds();
        if (event.event === "idle") {
          idle = seconds();
          created = event.created ?? 0;
        }
      }
    }
  })();
  let lastReport = 0;
  while (idle === undefined || settled === undefined) {
    await new Promise((r) => setTimeout(r, 100));
    let cpu: number, rss: number;
    try {
      [cpu, rss] = await Promise.all([readCpuSeconds(pid), readRss(pid)]);
    } catch {
      failed = new Error(`the operator (${mode}) exited before it was idle`);
      break;
    }
    peakRss = Math.max(peakRss, rss);
    const t = seconds();
    samples.push({ t, cpu });
    if (ready !== undefined && settled === undefined) {
      const past = samples.findLast((s) => s.t <= t - 1);
      if (past && past.t >= ready && (cpu - past.cpu) / (t - past.t) < 0.05) settled = t - 1;
    }
    if (t - lastReport >= 5) {
      lastReport = t;
      console.log(
        `  … ${mode}: ${fmt(t, 0)} s, ${ready === undefined ? "listing" : "ready"}, ` +
          `RSS ${fmt(rss / MB)} MiB (peak ${fmt(peakRss / MB)}), CPU ${fmt(cpu, 1)} s`,
      );
    }
    if (t > DEADLINE_SECONDS) {
      failed = new Error(`the operator (${mode}) was not idle after ${DEADLINE_SECONDS} s`);
      break;
    }
  }
  const cpu = samples.at(-1)?.cpu ?? 0;
  const idleRss = await readRss(pid).catch(() => 0);
  const serverCpu = await server.cpuSeconds() - server0;
  const after = await requestCounts(api);
  try {
    child.kill("SIGTERM");
  } catch { /* gone */ }
  const killer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, 20_000);
  await child.status;
  clearTimeout(killer);
  await lines.catch(() => {});
  if (failed) throw failed;
  const requests = new Map<string, number>();
  let writes = 0;
  for (const [key, count] of after) {
    const n = count - (before.get(key) ?? 0);
    if (n <= 0) continue;
    const [verb = "", resource = ""] = key.split(" ");
    if (verb === "admin") continue;
    if (WRITE_VERBS.has(verb)) writes += n;
    const name = resource === KEY ? verb : `${verb} ${resource || "-"}`;
    requests.set(name, (requests.get(name) ?? 0) + n);
  }
  return {
    ready: ready!,
    settled: settled!,
    idle: idle!,
    loaded: loaded ?? 0,
    peakRss,
    idleRss,
    cpu,
    serverCpu,
    requests,
    writes,
    created,
  };
}

function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ")[0] ?? "?";
  } catch {
    return "?";
  }
}

/** What the start-up benchmark reports back to `bench/main.ts`. */
export interface StartupBenchOutcome {
  targets: number;
  met: number;
  broken: string[];
}

/**
 * Seeds a server with already-handled objects and measures operator start-ups over it.
 *
 * @param options How many objects and which ways of reading the state.
 * @returns Targets met, and what broke.
 */
export async function measureStartup(
  options: { objects?: number; modes?: Array<"list" | "stream"> } = {},
): Promise<StartupBenchOutcome> {
  const objects = options.objects ?? OBJECTS;
  const modes = options.modes ?? MODES;
  const outcome: StartupBenchOutcome = { targets: 0, met: 0, broken: [] };
  const report = (f: { line: string; met: boolean }) => {
    outcome.targets++;
    if (f.met) outcome.met++;
    console.log(f.line);
  };
  const dir = await Deno.makeTempDir({ prefix: "kopf-bench-startup-" });
  try {
    {
      const first = await startServerProcess({ root: ROOT, args: ["--data-dir", dir] });
      using api = new BenchClient(first.url);
      await setUpKopfExamples(api, ROOT, NAMESPACE);
      const code = await first.stop();
      if (code !== 0) throw new Error(`the seeding server exited with code ${code}`);
    }
    let t = performance.now();
    await seedSnapshot(dir, objects);
    const seeded = (performance.now() - t) / 1000;
    t = performance.now();
    const server = await startServerProcess({
      root: ROOT,
      args: ["--data-dir", dir],
      readyTimeoutMs: 300_000,
    });
    const loaded = (performance.now() - t) / 1000;
    try {
      using api = new BenchClient(server.url);
      console.log(
        `kopf start-up benchmark: ${fmt(objects)} already-handled KopfExamples ` +
          `(finalizer, diff base, result) written in ${fmt(seeded, 1)} s, loaded by the server ` +
          `(pid ${server.pid}) in ${fmt(loaded, 1)} s, server RSS ${
            fmt(await server.rss() / MB)
          } MiB; ${navigator.hardwareConcurrency} CPUs, load average ${loadAverage()}`,
      );
      for (const mode of modes) {
        const how = mode === "list"
          ? "paginated LIST (limit=500) + WATCH"
          : "streamed over the watch";
        let r: StartupRun;
        try {
          r = await runOperator(server, api, mode);
        } catch (e) {
          outcome.broken.push((e as Error).message);
          console.log(`start-up, ${how}: BROKEN — ${(e as Error).message}`);
          continue;
        }
        const perObject = (r.cpu / objects) * 1000;
        // Idle: the CPU settled and no per-object worker is left, whichever is later.
        const idle = Math.max(r.settled, r.idle);
        const verbs = [...r.requests].map(([k, n]) => `${k} ${fmt(n)}`).join(", ");
        report(
          figure(`start-up over ${fmt(objects)} handled objects, ${how}: idle in`, idle, "s", {
            decimals: 1,
            target: { below: 30 },
            note:
              `[ready (listed) at ${fmt(r.ready, 1)} s (module loaded at ${fmt(r.loaded, 1)} s), ` +
              `CPU settled at ${fmt(r.settled, 1)} s, no worker left at ${fmt(r.idle, 1)} s; ` +
              `${fmt(objects / idle)} objects/s; operator CPU ${fmt(r.cpu, 1)} s = ` +
              `${fmt(perObject, 3)} ms/object; server CPU ${fmt(r.serverCpu, 1)} s; ` +
              `peak RSS ${fmt(r.peakRss / MB)} MiB, idle ${
                fmt(r.idleRss / MB)
              } MiB; requests: ${verbs}]`,
          }),
        );
        report(figure(`  peak RSS of that start-up`, r.peakRss / MB, "MiB", {
          target: { below: 400.5 },
          note: `[${fmt(r.peakRss / objects)} bytes/object; idle ${fmt(r.idleRss / MB)} MiB; ` +
            `CPU ${fmt(perObject, 3)} ms/object]`,
        }));
        report(figure(`  API writes at that start-up`, r.writes, "writes", {
          target: { below: 1 },
          note: `[create handler calls: ${fmt(r.created)}]`,
        }));
        if (r.created) outcome.broken.push(`${r.created} handled objects were created again`);
      }
    } finally {
      const code = await server.stop();
      if (code !== 0) outcome.broken.push(`the start-up server exited with code ${code}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return outcome;
}

if (import.meta.main) {
  const outcome = await measureStartup();
  for (const b of outcome.broken) console.error(`bench broken: ${b}`);
  const results = Deno.env.get(RESULTS_ENV);
  if (results) await writeResults(results);
  Deno.exit(outcome.broken.length ? 1 : 0);
}
