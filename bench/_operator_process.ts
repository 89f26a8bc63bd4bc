/**
 * The operator benchmark's handle on its operator under test, a child process
 * (`_bench_operator.ts`) started with `deno run -A` once per phase or burst:
 * a fresh process each time, so that its peak RSS (`VmHWM`) is that burst's
 * alone, and its CPU time (`/proc/<pid>/stat`, all threads; its main thread
 * from `/proc/<pid>/task/<pid>/stat`) is the operator's and nobody else's.
 *
 * The child's stdout is a line protocol of JSON objects; a `report` line on
 * its stdin asks for its counters now, and SIGTERM stops it, after which it
 * prints its final counters (the events flushed or dropped at the exit) as its
 * last line.
 *
 * @module
 */

import type { ChildOptions, ChildReport } from "./_bench_operator.ts";
import {
  readCpuSeconds,
  readMainThreadCpuSeconds,
  readPeakRss,
  readRss,
} from "./_server_process.ts";

export type { ChildOptions, ChildReport };

/** How long the operator may take to be ready (imports, login, the first listings). */
const READY_TIMEOUT_MS = 60_000;
/** How long it may take to stop after SIGTERM (the events' flush has a deadline of its own). */
const STOP_TIMEOUT_MS = 30_000;

/**
 * The V8 flags of the operator processes, as a `--v8-flags=…` argument (none for Deno's
 * defaults): `KOPF_BENCH_V8_FLAGS` when set (`none` for Deno's defaults), else those `kopf run`
 * ships with — the `--v8-flags=` of the image's entry point, `deploy/entrypoint.sh`, read from
 * the tree under test — so that the figures are the deployed operator's, and `compare.ts`
 * runs each commit with its own.
 *
 * @returns The arguments to put before the script.
 */
export function operatorV8Flags(): string[] {
  const given = Deno.env.get("KOPF_BENCH_V8_FLAGS");
  if (given !== undefined) return given === "none" || !given ? [] : [`--v8-flags=${given}`];
  let script = "";
  try {
    script = Deno.readTextFileSync(new URL("../deploy/entrypoint.sh", import.meta.url));
  } catch { /* an older tree without it: Deno's defaults */ }
  const flags = script.match(/^\s*--v8-flags=(\S+)/m)?.[1];
  return flags ? [`--v8-flags=${flags}`] : [];
}

/**
 * The Deno flags of the operator processes: {@link operatorV8Flags}, and `--no-code-cache` when
 * `kopf run` ships with it (the image's entry point, `deploy/entrypoint.sh`, of the tree under
 * test) — unless `KOPF_BENCH_CODE_CACHE=1` asks for Deno's default (the code cache on).
 *
 * @returns The arguments to put before the script.
 */
export function operatorRunFlags(): string[] {
  let script = "";
  try {
    script = Deno.readTextFileSync(new URL("../deploy/entrypoint.sh", import.meta.url));
  } catch { /* an older tree without it: Deno's defaults */ }
  const noCodeCache = /^exec deno run .*--no-code-cache/m.test(script) &&
    Deno.env.get("KOPF_BENCH_CODE_CACHE") !== "1";
  return [...operatorV8Flags(), ...(noCodeCache ? ["--no-code-cache"] : [])];
}

/**
 * Whether the operator processes run from a bundle, as the image runs `kopf run`: its entry
 * point (`deploy/entrypoint.sh` of the tree under test) runs `dist/main.js`, which `kopf bundle`
 * wrote — unless `KOPF_BENCH_BUNDLE=0` asks for the sources (`deno run … script.ts`).
 *
 * @returns Whether to bundle the operator's (and the floor's) script before running it.
 */
export function operatorBundled(): boolean {
  if (Deno.env.get("KOPF_BENCH_BUNDLE") === "0") return false;
  let script = "";
  try {
    script = Deno.readTextFileSync(new URL("../deploy/entrypoint.sh", import.meta.url));
  } catch { /* an older tree without it: the sources */ }
  return /^\s*dist\/main\.js\b/m.test(script);
}

const bundles = new Map<string, Promise<string>>();
let bundleRoot: string | undefined;

/**
 * A script bundled as `kopf bundle` bundles (`bundleModule()` of `src/cli/bundle.ts`: minified,
 * names kept, chunks split, their imports unanalysable, every file cached), once per process,
 * into a temporary directory removed at the exit.
 *
 * @param path The script's path.
 * @returns The bundle's entry (a path).
 */
export function bundledScript(path: string): Promise<string> {
  let made = bundles.get(path);
  if (!made) {
    if (!bundleRoot) {
      const root = bundleRoot = Deno.makeTempDirSync({ prefix: "kopf-bench-bundle-" });
      globalThis.addEventListener("unload", () => {
        try {
          Deno.removeSync(root, { recursive: true });
        } catch { /* gone already */ }
      });
    }
    const dir = `${bundleRoot}/${bundles.size}`;
    made = import("../src/cli/bundle.ts").then(async ({ bundleModule }) =>
      (await bundleModule(path, dir)).entry
    );
    bundles.set(path, made);
  }
  return made;
}

/** The operator under test, running in a child process. */
export class OperatorProcess implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: Promise<void>;
  #waiters: Array<{ event: string; resolve: (r: ChildReport) => void }> = [];
  #ready!: () => void;
  readonly #readiness = new Promise<void>((resolve) => (this.#ready = resolve));
  #final: ChildReport | undefined;
  #stopped: Promise<ChildReport> | undefined;

  private constructor(
    kubeconfig: string,
    options: ChildOptions,
    script: string,
    env: Record<string, string>,
  ) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        ...operatorRunFlags(),
        // E.g. KOPF_BENCH_OPERATOR_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
        ...(Deno.env.get("KOPF_BENCH_OPERATOR_FLAGS")?.split(" ").filter(Boolean) ?? []),
        script,
        kubeconfig,
        JSON.stringify(options),
      ],
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#lines = this.#read();
  }

  /**
   * Starts the operator and waits until it watches.
   *
   * @param kubeconfig The server's kubeconfig.
   * @param options What the phase needs of it.
   * @param script The child to run, relative to this file: the operator, or the floor
   *   (`./_floor_operator.ts`, which takes no options).
   * @param env More environment variables of the process (e.g. `OTEL_DENO`).
   * @param bundled Run it from its bundle ({@link bundledScript}; default: as the image does,
   *   {@link operatorBundled}).
   * @returns The running operator.
   * @throws {Error} If it exits or stays silent before it is ready.
   */
  static async start(
    kubeconfig: string,
    options: ChildOptions = {},
    script = "./_bench_operator.ts",
    env: Record<string, string> = {},
    bundled: boolean = operatorBundled(),
  ): Promise<OperatorProcess> {
    const path = new URL(script, import.meta.url).pathname;
    const op = new OperatorProcess(
      kubeconfig,
      options,
      bundled ? await bundledScript(path) : path,
      env,
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        op.#readiness,
        op.#child.status.then(({ code }) => {
          throw new Error(`the operator stopped (exit code ${code}) before it was ready`);
        }),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the operator was not ready in ${READY_TIMEOUT_MS / 1000} s`)),
            READY_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (e) {
      await op.stop().catch(() => {});
      throw e;
    } finally {
      clearTimeout(timer);
    }
    return op;
  }

  /** The child's process id. */
  get pid(): number {
    return this.#child.pid;
  }

  async #read(): Promise<void> {
    let buffer = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let message: { event?: string };
        try {
          message = JSON.parse(line);
        } catch {
          if (line.trim()) console.error(`  [operator] ${line}`);
          continue;
        }
        if (message.event === "ready") this.#ready();
        if (message.event === "stopped") this.#final = message as ChildReport;
        const at = this.#waiters.findIndex((w) => w.event === message.event);
        if (at >= 0) this.#waiters.splice(at, 1)[0]!.resolve(message as ChildReport);
      }
    }
  }

  /** CPU seconds so far, all the operator's threads. */
  cpuSeconds(): Promise<number> {
    return readCpuSeconds(this.pid);
  }

  /** CPU seconds so far, the operator's main thread (its event loop). */
  mainThreadCpuSeconds(): Promise<number> {
    return readMainThreadCpuSeconds(this.pid);
  }

  /** Resident set size now, in bytes (`VmRSS`). */
  rss(): Promise<number> {
    return readRss(this.pid);
  }

  /** The peak resident set size since the process started, in bytes (`VmHWM`). */
  peakRss(): Promise<number> {
    return readPeakRss(this.pid);
  }

  /**
   * Asks the operator for its counters now.
   *
   * @returns Its report.
   * @throws {Error} If the operator exits before it answers.
   */
  async report(): Promise<ChildReport> {
    const answer = new Promise<ChildReport>((resolve) => {
      this.#waiters.push({ event: "report", resolve });
    });
    await this.#stdin.write(new TextEncoder().encode("report\n"));
    return await Promise.race([
      answer,
      this.#child.status.then(({ code }) => {
        throw new Error(`the operator exited (code ${code}) before it reported its counters`);
      }),
    ]);
  }

  /**
   * Stops the operator with SIGTERM (SIGKILL if it lingers) and waits for its exit.
   *
   * @returns Its final counters, printed after the operator stopped.
   * @throws {Error} If it exits without them (killed, or failed).
   */
  stop(): Promise<ChildReport> {
    return this.#stopped ??= (async () => {
      try {
        this.#child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          this.#child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, STOP_TIMEOUT_MS);
      const { code } = await this.#child.status;
      clearTimeout(timer);
      await this.#stdin.close().catch(() => {});
      await this.#lines.catch(() => {});
      if (code !== 0) throw new Error(`the operator exited with code ${code}`);
      if (!this.#final) throw new Error("the operator exited without its final report");
      return this.#final;
    })();
  }

  /** Stops the operator (its failures to stop are not thrown here: see {@link stop}). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop().catch(() => {});
  }
}
