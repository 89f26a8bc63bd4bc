/**
 * The API server under test, in a process of its own: `kopf apiserver` is
 * started with `deno run`, its URL is read from the readiness line it prints,
 * and its RSS and CPU time are read from `/proc/<pid>`, so the figures are the
 * server's alone and not mixed with the load generator's.
 *
 * @module
 */

const READY = /listening at (https?:\/\/\S+)/;

/** A running `kopf apiserver` child process. */
export interface ServerProcess extends AsyncDisposable {
  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The process id (of the Deno process that serves). */
  readonly pid: number;
  /** The kubeconfig file the server wrote (removed when it stops). */
  readonly kubeconfig: string;
  /** Resident set size now, in bytes (`VmRSS` of `/proc/<pid>/status`). */
  rss(): Promise<number>;
  /** CPU time used so far (user + system), in seconds. */
  cpuSeconds(): Promise<number>;
  /** Stops it with SIGTERM (SIGKILL if it lingers) and returns its exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `deno run -A cli.ts apiserver --port 0` and waits for its URL.
 *
 * @param options Where the repository is and how long to wait for readiness.
 * @returns The running process.
 * @throws {Error} If the server exits or stays silent before it is ready.
 */
export async function startServerProcess(
  options: {
    root: URL;
    readyTimeoutMs?: number;
    signal?: AbortSignal;
    /** More `kopf apiserver` flags, e.g. `["--data-dir", dir]`. */
    args?: string[];
  },
): Promise<ServerProcess> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-bench-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("cli.ts", options.root).pathname,
      "apiserver",
      "--port",
      "0",
      "--kubeconfig",
      `${dir}/kubeconfig`,
      ...(options.args ?? []),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const status = child.status;
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let url: string | undefined;
  const deadline = AbortSignal.any([
    AbortSignal.timeout(options.readyTimeoutMs ?? 60_000),
    ...(options.signal ? [options.signal] : []),
  ]);
  const onAbort = () => child.kill("SIGKILL");
  deadline.addEventListener("abort", onAbort, { once: true });
  try {
    while (!url) {
      const { value, done } = await lines.read();
      if (done) break;
      buffered += value;
      url = READY.exec(buffered)?.[1];
    }
  } finally {
    deadline.removeEventListener("abort", onAbort);
  }
  if (!url) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    const { code } = await status;
    throw new Error(
      `the API server exited (code ${code}) before printing its URL; run it by hand: deno run -A cli.ts apiserver --port 0`,
    );
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  const drained = (async () => {
    try {
      while (!(await lines.read()).done) { /* discard */ }
    } catch { /* the pipe closed */ }
  })();
  const pid = child.pid;
  let stopped: Promise<number> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, 10_000);
      const { code } = await status;
      clearTimeout(timer);
      await drained;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      return code;
    })();
  return {
    url,
    pid,
    kubeconfig: `${dir}/kubeconfig`,
    rss: () => readRss(pid),
    cpuSeconds: () => readCpuSeconds(pid),
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  };
}

/** A `kB` line of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in bytes. */
async function statusBytes(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const text = await Deno.readTextFile(`/proc/${pid}/status`);
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(text);
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status: RSS is measured on Linux only`);
  return Number(m[1]) * 1024;
}

/**
 * Reads `VmRSS` of a process.
 *
 * @param pid The process id.
 * @returns The resident set size in bytes.
 * @throws {Error} If `/proc/<pid>/status` has no `VmRSS` line (not Linux, or the process is gone).
 */
export function readRss(pid: number): Promise<number> {
  return statusBytes(pid, "VmRSS");
}

/**
 * Reads `VmHWM` of a process: the peak resident set size since it started.
 *
 * @param pid The process id.
 * @returns The peak RSS in bytes.
 * @throws {Error} If `/proc/<pid>/status` has no `VmHWM` line (not Linux, or the process is gone).
 */
export function readPeakRss(pid: number): Promise<number> {
  return statusBytes(pid, "VmHWM");
}

/** User + system CPU seconds of a `/proc/.../stat` file (of a process or of one thread). */
async function statSeconds(path: string): Promise<number> {
  const text = await Deno.readTextFile(path);
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100; // USER_HZ is 100 on Linux
}

/**
 * Reads the CPU time of a process (user + system).
 *
 * @param pid The process id.
 * @returns Seconds of CPU time used so far.
 * @throws {Error} If `/proc/<pid>/stat` cannot be read.
 */
export function readCpuSeconds(pid: number): Promise<number> {
  return statSeconds(`/proc/${pid}/stat`);
}

/**
 * Reads the CPU time of a process's main thread (user + system).
 *
 * @param pid The process id (which is its main thread's id too).
 * @returns Seconds of CPU time used so far by that thread.
 * @throws {Error} If `/proc/<pid>/task/<pid>/stat` cannot be read.
 */
export function readMainThreadCpuSeconds(pid: number): Promise<number> {
  return statSeconds(`/proc/${pid}/task/${pid}/stat`);
}
