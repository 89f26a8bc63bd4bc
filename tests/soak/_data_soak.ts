/**
 * The data-directory soak, shared by `deno task soak:data` (full size) and
 * tests/apiserver/data_dir_soak_test.ts (a few rounds): `kopf apiserver --data-dir` as a child
 * process, concurrent writers over HTTP recording every write that got a 2xx answer, the server
 * killed with SIGKILL at random moments, and after each restart every acknowledged write checked.
 * Also a torn-line round (garbage without a newline appended to the log) and a full-disk round
 * (the data directory on a small tmpfs, filled up: real ENOSPC).
 *
 * @module
 */

const ROOT = new URL("../../", import.meta.url).pathname;
const CM = "/api/v1/namespaces/default/configmaps";

/** A running `kopf apiserver` child. */
export interface ServerProcess {
  url: string;
  child: Deno.ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr: () => string;
}

/**
 * Starts `kopf apiserver --data-dir dir` and waits for its URL.
 *
 * @throws {Error} With its stderr when it exits before listening (the data directory did not load).
 */
export function startServer(dataDir: string, extra: string[] = []): Promise<ServerProcess> {
  return spawnApiserver(`${dataDir}.kubeconfig`, ["--data-dir", dataDir, ...extra]);
}

/** Starts `kopf apiserver` with these flags and waits for its URL. */
async function spawnApiserver(kubeconfig: string, flags: string[]): Promise<ServerProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--config=${ROOT}deno.json`,
      `${ROOT}cli.ts`,
      "apiserver",
      "--port",
      "0",
      "--kubeconfig",
      kubeconfig,
      ...flags,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let err = "";
  void (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) err += chunk;
  })();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("export KUBECONFIG=")) {
    const { value, done } = await reader.read();
    if (done) {
      await child.status;
      throw new Error(`the server did not start (it did not load?): ${err.trim() || text}`);
    }
    text += value;
  }
  void (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  const url = /listening at (\S+)/.exec(text)![1]!;
  return { url, child, stderr: () => err };
}

/** Kills the server with SIGKILL and waits for it to be gone. */
export async function kill9(server: ServerProcess): Promise<void> {
  try {
    server.child.kill("SIGKILL");
  } catch { /* already gone */ }
  await server.child.status;
}

/** What the writers were told: the acknowledged state of every object they wrote. */
export class Ledger {
  /** name → the last acknowledged `data.n` ("deleted" once a delete was acknowledged). */
  acked = new Map<string, number | "deleted">();
  /** name → an operation sent but not answered (the server was killed): either outcome is fine. */
  inflight = new Map<string, number | "deleted">();
  /** Writes answered 2xx, in all. */
  acknowledged = 0;

  /**
   * Checks the server's objects against the acknowledged writes and adopts the outcome of the
   * writes in flight at the kill.
   *
   * @returns One line per lost write.
   */
  async verify(url: string): Promise<string[]> {
    const res = await fetch(`${url}${CM}`);
    if (!res.ok) throw new Error(`list: ${res.status} ${await res.text()}`);
    const list = await res.json() as {
      items: Array<{ metadata: { name: string }; data?: { n?: string } }>;
    };
    const present = new Map<string, number>();
    for (const item of list.items) present.set(item.metadata.name, Number(item.data?.n));
    const lost: string[] = [];
    for (const [name, want] of this.acked) {
      const have = present.get(name);
      const maybe = this.inflight.get(name);
      if (want === "deleted") {
        if (have !== undefined) lost.push(`${name}: deleted (acknowledged), but present`);
        continue;
      }
      if (have === undefined) {
        if (maybe !== "deleted") lost.push(`${name}: n=${want} acknowledged, but absent`);
        continue;
      }
      if (have !== want && have !== maybe) {
        lost.push(`${name}: n=${want} acknowledged, found n=${have}`);
      }
    }
    // The writes in flight: whichever happened is now the truth.
    for (const [name, maybe] of this.inflight) {
      const have = present.get(name);
      if (have !== undefined) this.acked.set(name, have);
      else if (maybe === "deleted" || this.acked.get(name) === undefined) {
        this.acked.set(name, "deleted");
      }
    }
    this.inflight.clear();
    return lost;
  }
}

/**
 * One writer: creates, updates (unconditionally, `data.n` + 1) and deletes its own ConfigMaps
 * until `stop()` says so or the server stops answering.
 *
 * @returns Unexpected answers (anything but 2xx before the server was killed).
 */
export async function writer(
  url: string,
  id: string,
  ledger: Ledger,
  stop: () => boolean,
  payloadBytes: number,
): Promise<string[]> {
  const errors: string[] = [];
  let serial = 0;
  const mine = () =>
    [...ledger.acked].filter(([n, v]) => n.startsWith(`${id}-`) && v !== "deleted");
  while (!stop()) {
    const live = mine();
    const roll = Math.random();
    let name: string, method: string, path: string, n: number | "deleted";
    // Up to 40 live objects per writer: creates, then mostly updates, deletes as many as creates.
    const create = live.length < 3 || (live.length < 40 ? roll < 0.4 : roll < 0.1);
    if (create) {
      name = `${id}-${Date.now().toString(36)}-${serial++}`;
      method = "POST";
      path = CM;
      n = 0;
    } else {
      const [pick, current] = live[Math.floor(Math.random() * live.length)]!;
      name = pick;
      if (roll < (live.length < 40 ? 0.9 : 0.8)) {
        method = "PUT";
        path = `${CM}/${name}`;
        n = (current as number) + 1;
      } else {
        method = "DELETE";
        path = `${CM}/${name}`;
        n = "deleted";
      }
    }
    const body = n === "deleted" ? undefined : JSON.stringify({
      metadata: { name },
      data: { n: String(n), pad: "p".repeat(Math.floor(Math.random() * payloadBytes)) },
    });
    ledger.inflight.set(name, n);
    let status: number;
    try {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body ? { body } : {}),
      });
      await res.body?.cancel();
      status = res.status;
    } catch (e) {
      if (stop()) return errors; // killed: the write stays in flight
      errors.push(`${method} ${name}: ${(e as Error).message}`);
      return errors;
    }
    ledger.inflight.delete(name);
    if (status >= 200 && status < 300) {
      ledger.acked.set(name, n);
      ledger.acknowledged++;
    } else {
      errors.push(`${method} ${name}: ${status}`);
    }
  }
  return errors;
}

/** Options of {@link runDataSoak}. */
export interface DataSoakOptions {
  /** Kill -9 rounds (each: write for a random while, kill, restart, verify). */
  rounds: number;
  /** Concurrent writers. */
  writers: number;
  /** The largest padding of an object (random 0..this), to drive compaction. */
  payloadBytes: number;
  /** The longest a round writes before the kill, in ms (a random moment up to this). */
  maxRoundMs: number;
  /** Extra `kopf apiserver` flags (e.g. `--data-dir-fsync write`). */
  flags?: string[];
  /** Progress lines. */
  log?: (line: string) => void;
}

/** The outcome of {@link runDataSoak}. */
export interface DataSoakReport {
  rounds: number;
  acknowledged: number;
  lost: string[];
  restartsLoaded: number;
  restarts: number;
  unexpected: string[];
  tornRound: string;
  fullDiskRound: string;
}

/**
 * Runs the kill -9 rounds, the torn-line round and the full-disk round.
 *
 * @returns What was acknowledged, lost and loaded.
 */
export async function runDataSoak(options: DataSoakOptions): Promise<DataSoakReport> {
  const log = options.log ?? (() => {});
  const flags = options.flags ?? [];
  const base = await Deno.makeTempDir({ prefix: "kopf-data-soak-" });
  const dir = `${base}/data`;
  const ledger = new Ledger();
  const report: DataSoakReport = {
    rounds: 0,
    acknowledged: 0,
    lost: [],
    restartsLoaded: 0,
    restarts: 0,
    unexpected: [],
    tornRound: "not run",
    fullDiskRound: "not run",
  };
  const restart = async (): Promise<ServerProcess> => {
    report.restarts++;
    const server = await startServer(dir, flags);
    report.restartsLoaded++;
    return server;
  };
  const writeUntilKill = async (server: ServerProcess, ms: number) => {
    let killed = false;
    const writers = Array.from(
      { length: options.writers },
      (_, i) => writer(server.url, `w${i}`, ledger, () => killed, options.payloadBytes),
    );
    await new Promise((r) => setTimeout(r, ms));
    killed = true;
    await kill9(server);
    for (const errors of await Promise.all(writers)) report.unexpected.push(...errors);
  };
  try {
    let server = await startServer(dir, flags);
    for (let round = 1; round <= options.rounds; round++) {
      await writeUntilKill(server, Math.floor(Math.random() * options.maxRoundMs));
      server = await restart();
      const lost = await ledger.verify(server.url);
      report.lost.push(...lost.map((l) => `round ${round}: ${l}`));
      report.rounds++;
      const size = (name: string) => {
        try {
          return Deno.statSync(`${dir}/${name}`).size;
        } catch {
          return 0;
        }
      };
      log(
        `round ${round}: ${ledger.acknowledged} acknowledged so far, lost ${lost.length}, ` +
          `log ${(size("changes.jsonl") / 2 ** 20).toFixed(1)} MiB, snapshot ${
            (size("snapshot.jsonl") / 2 ** 20).toFixed(1)
          } MiB`,
      );
    }
    // The torn-line round: a crash mid-append, then a write, a crash, a restart.
    await kill9(server);
    const file = await Deno.open(`${dir}/changes.jsonl`, { append: true });
    await file.write(new TextEncoder().encode('{"type":"MODIFIED","key":"configmaps","rv":12'));
    file.close();
    server = await restart();
    const tornLost = await ledger.verify(server.url);
    await writeUntilKill(server, 200);
    server = await restart();
    tornLost.push(...await ledger.verify(server.url));
    report.lost.push(...tornLost.map((l) => `torn round: ${l}`));
    report.tornRound = tornLost.length ? `lost ${tornLost.length}` : "loaded twice, nothing lost";
    log(`torn-line round: ${report.tornRound}`);
    await kill9(server);
    report.fullDiskRound = await fullDiskRound(base, flags, report);
    log(`full-disk round: ${report.fullDiskRound}`);
  } finally {
    report.acknowledged = ledger.acknowledged;
    await Deno.remove(base, { recursive: true }).catch(() => {});
  }
  return report;
}

async function run(cmd: string, args: string[]): Promise<boolean> {
  try {
    return (await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

/**
 * The data directory on a 2 MiB tmpfs, filled up with a file: a 300 KiB write must be refused
 * (500, never visible, before or after a kill -9 and restart), a small one must still work.
 */
async function fullDiskRound(
  base: string,
  flags: string[],
  report: DataSoakReport,
): Promise<string> {
  const mnt = `${base}/tmpfs`;
  await Deno.mkdir(mnt);
  if (!await run("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt])) {
    return "skipped: cannot mount a tmpfs here (needs root)";
  }
  const dir = `${mnt}/data`;
  const problems: string[] = [];
  let server: ServerProcess | undefined;
  try {
    server = await startServer(dir, flags);
    report.restarts++, report.restartsLoaded++;
    const post = async (name: string, pad: number) => {
      const res = await fetch(`${server!.url}${CM}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ metadata: { name }, data: { pad: "p".repeat(pad) } }),
      });
      return { status: res.status, text: await res.text() };
    };
    const get = async (name: string) => {
      const res = await fetch(`${server!.url}${CM}/${name}`);
      await res.body?.cancel();
      return res.status;
    };
    if ((await post("before", 10)).status !== 201) problems.push("the first write failed");
    const filler = await Deno.open(`${mnt}/filler`, { write: true, create: true });
    try {
      for (;;) await filler.write(new Uint8Array(64 * 1024));
    } catch { /* full */ }
    await filler.truncate((await filler.stat()).size - 64 * 1024);
    filler.close();
    const refused = await post("big", 300 * 1024);
    if (refused.status !== 500 || !refused.text.includes("No space left on device")) {
      problems.push(`the write on a full disk answered ${refused.status}: ${refused.text}`);
    }
    if (await get("big") !== 404) problems.push("the refused write is visible");
    const small = await post("after", 10);
    if (small.status !== 201) problems.push(`a small write after it: ${small.status}`);
    await kill9(server);
    server = await startServer(dir, flags);
    report.restarts++, report.restartsLoaded++;
    if (await get("big") !== 404) problems.push("the refused write is visible after the restart");
    if (await get("before") !== 200) problems.push("'before' lost");
    if (await get("after") !== 200) problems.push("'after' lost");
    await Deno.remove(`${mnt}/filler`);
    await kill9(server);
    server = undefined;
  } catch (e) {
    problems.push((e as Error).message);
  } finally {
    if (server) await kill9(server);
    await run("umount", ["-l", mnt]);
  }
  report.lost.push(...problems.map((p) => `full-disk round: ${p}`));
  return problems.length
    ? `FAILED: ${problems.join("; ")}`
    : "refused (500, ENOSPC on a 2 MiB tmpfs), never visible before or after the restart";
}

/**
 * Writes per second: `writers` concurrent clients, each creating then updating its ConfigMaps,
 * `total` writes in all, against a fresh `kopf apiserver` with the given flags.
 */
export async function benchWrites(
  flags: string[] | undefined,
  writers: number,
  total: number,
): Promise<number> {
  const base = await Deno.makeTempDir({ prefix: "kopf-data-bench-" });
  let server: ServerProcess | undefined;
  try {
    server = flags
      ? await startServer(`${base}/data`, flags)
      : await spawnApiserver(`${base}/kc`, []);
    const url = server.url;
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: writers }, async (_, w) => {
      let k = 0;
      while (next++ < total) {
        const name = `w${w}-${k % 20}`;
        const res = await fetch(`${url}${k < 20 ? CM : `${CM}/${name}`}`, {
          method: k < 20 ? "POST" : "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ metadata: { name }, data: { k: String(k) } }),
        });
        await res.body?.cancel();
        if (!res.ok) throw new Error(`bench write: ${res.status}`);
        k++;
      }
    }));
    return total / ((performance.now() - t0) / 1000);
  } finally {
    if (server) await kill9(server);
    await Deno.remove(base, { recursive: true }).catch(() => {});
  }
}
