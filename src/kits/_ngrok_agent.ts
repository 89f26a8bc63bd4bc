/**
 * The ngrok agent as a child process, for `WebhookNgrokTunnel`: started as
 * `<binary> http <target> --log=stdout --log-format=json [--region=…]`
 * (the token goes in the child's environment as `NGROK_AUTHTOKEN`, so it is
 * neither written to ngrok's config file, as Kopf's pyngrok does, nor shown
 * in the process list), and asked for the public URL through its local API
 * (`GET http://<web addr>/api/tunnels`).
 *
 * Why a process and its API rather than a library: the agent is the one
 * thing that knows how to talk to ngrok's service, and we download nothing at
 * run time (pyngrok would fetch the binary). The agent reports where its API
 * listens in its JSON log ("starting web service", `addr`: 127.0.0.1:4040
 * unless that port is taken, then 4041…); until it says so, and when it never
 * does, the default address is asked once the tunnel is reported started.
 *
 * Stopping: SIGTERM, then SIGKILL after a grace period; the output readers
 * end when the process does and are awaited, so nothing is left behind. An
 * exit that skips the graceful stop (`Deno.exit()`, e.g. on a second Ctrl-C)
 * still sends SIGTERM from the `unload` event; only a killed operator leaves
 * its agent running.
 *
 * Hostile input: the agent's output is read line by line with a cap on the
 * line length (longer lines are cut, not buffered), non-JSON lines are kept
 * only as the last error text; the API's answer is checked for its shape.
 *
 * @module
 */

/** The ngrok agent's local API when it does not report one. */
export const DEFAULT_WEB_ADDR = "127.0.0.1:4040";

/** The longest output line kept (ngrok's lines are a few hundred bytes). */
export const MAX_LINE = 16 * 1024;

/** Where the agent's lines go (a subset of the operator's logger). */
export interface AgentLogger {
  /** Routine lines. */
  debug(message: string): void;
  /** Errors the agent reports. */
  warning(message: string): void;
}

/** How to start the agent. */
export interface NgrokAgentOptions {
  /** The executable (a name on PATH or a path). */
  binary: string;
  /** What to tunnel to, e.g. `http://127.0.0.1:8080`. */
  target: string;
  /** The authtoken (into the child's environment as `NGROK_AUTHTOKEN`). */
  token?: string | undefined;
  /** The region (`--region=…`). */
  region?: string | undefined;
  /** How long to wait for the public URL, in seconds. */
  startupTimeout: number;
  /** Aborted when the operator exits (the start is cancelled; the agent is stopped). */
  signal: AbortSignal;
  /** Where the agent's log lines go. */
  logger?: AgentLogger | undefined;
}

/** A running agent with its tunnel. */
export interface NgrokAgent {
  /** The tunnel's public URL, e.g. `https://e5fc05f6494b.ngrok-free.app`. */
  readonly publicUrl: string;
  /** The agent's local API, e.g. `http://127.0.0.1:4040`. */
  readonly apiUrl: string;
  /** Settles when the process has exited (with its exit code). */
  readonly exited: Promise<number>;
  /** The last error the agent reported (log or stderr), if any. */
  lastError(): string | undefined;
  /** Stops the process (SIGTERM, then SIGKILL) and awaits its end and its output. */
  stop(): Promise<void>;
}

/** The agent cannot be run or gave no tunnel; `missing` when the executable is not there. */
export class NgrokAgentError extends Error {
  /** Always `"NgrokAgentError"`. */
  override name = "NgrokAgentError";
  /** The executable was not found. */
  readonly missing: boolean;

  /**
   * Creates the error.
   *
   * @param message One line: what went wrong and what to do.
   * @param options The cause, and whether the executable is missing.
   */
  constructor(message: string, options: { cause?: unknown; missing?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.missing = options.missing ?? false;
  }
}

/**
 * Starts the agent and waits for its tunnel's public URL (https preferred).
 *
 * @param o The executable, the target and the options.
 * @returns The running agent.
 * @throws {NgrokAgentError} When it cannot be run, exits, reports an error or times out; the
 *   process is stopped first.
 */
export async function startNgrokAgent(o: NgrokAgentOptions): Promise<NgrokAgent> {
  const args = ["http", o.target, "--log=stdout", "--log-format=json"];
  if (o.region) args.push(`--region=${o.region}`);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(o.binary, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      ...(o.token ? { env: { NGROK_AUTHTOKEN: o.token } } : {}),
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new NgrokAgentError(
        `The ngrok agent ${JSON.stringify(o.binary)} was not found: install ngrok ` +
          `(https://ngrok.com/download) and put it on PATH, or give its path as ` +
          `new kopf.WebhookNgrokTunnel({ binary: "/path/to/ngrok" }).`,
        { cause: e, missing: true },
      );
    }
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new NgrokAgentError(
        `Running the ngrok agent needs a permission: --allow-run=${o.binary}.`,
        { cause: e },
      );
    }
    throw new NgrokAgentError(
      `The ngrok agent ${JSON.stringify(o.binary)} cannot be run: ${(e as Error).message}`,
      { cause: e },
    );
  }

  let webAddr: string | undefined;
  let tunnelStarted = false;
  let lastError: string | undefined;
  const changed = new EventTarget();
  const readers = [
    readLines(child.stdout, (line) => {
      const entry = parseJsonLine(line);
      if (!entry) {
        if (line.trim()) o.logger?.debug(`ngrok: ${line}`);
        return;
      }
      const msg = typeof entry.msg === "string" ? entry.msg : "";
      const lvl = typeof entry.lvl === "string" ? entry.lvl : "";
      if (lvl === "eror" || lvl === "crit" || lvl === "error") {
        lastError = typeof entry.err === "string" && entry.err ? entry.err : msg;
        o.logger?.warning(`ngrok: ${lastError}`);
      } else {
        o.logger?.debug(`ngrok: ${msg}`);
      }
      if (msg === "starting web service" && typeof entry.addr === "string") {
        webAddr = validWebAddr(entry.addr) ?? webAddr;
      }
      if (msg === "started tunnel") tunnelStarted = true;
      changed.dispatchEvent(new Event("change"));
    }),
    readLines(child.stderr, (line) => {
      if (!line.trim()) return;
      lastError = line.replace(/^ERROR:\s*/, "").trim();
      o.logger?.warning(`ngrok: ${line}`);
      changed.dispatchEvent(new Event("change"));
    }),
  ];
  const exited = child.status.then((s) => s.code);
  // An exit that skips the graceful stop (Deno.exit on a second Ctrl-C) still ends the agent.
  const onUnload = () => killQuietly(child, "SIGTERM");
  globalThis.addEventListener("unload", onUnload);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    stopping ??= (async () => {
      globalThis.removeEventListener("unload", onUnload);
      killQuietly(child, "SIGTERM");
      const timer = setTimeout(() => killQuietly(child, "SIGKILL"), 5000);
      try {
        await exited;
        await Promise.all(readers);
      } finally {
        clearTimeout(timer);
      }
    })();

  const failed = (why: string): never => {
    throw new NgrokAgentError(`The ngrok agent gave no tunnel: ${why}`);
  };
  const deadline = Date.now() + o.startupTimeout * 1000;
  let exitCode: number | undefined;
  void exited.then((code) => {
    exitCode = code;
    changed.dispatchEvent(new Event("change"));
  });
  try {
    while (true) {
      if (o.signal.aborted) throw o.signal.reason;
      if (exitCode !== undefined) {
        failed(`it exited with code ${exitCode}${lastError ? `: ${lastError}` : "."}`);
      }
      const addr = webAddr ?? (tunnelStarted ? DEFAULT_WEB_ADDR : undefined);
      if (addr) {
        const publicUrl = await askPublicUrl(`http://${addr}`, o.target, o.signal);
        if (publicUrl) {
          return {
            publicUrl,
            apiUrl: `http://${addr}`,
            exited,
            lastError: () => lastError,
            stop,
          };
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        failed(
          `none in ${o.startupTimeout}s${lastError ? `; its last error: ${lastError}` : ""}.`,
        );
      }
      await waitFor(changed, addr ? Math.min(left, 200) : left, o.signal);
    }
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The public URL of the tunnel to `target`, from the agent's API; undefined while there is none
 * (or the API does not answer yet). An https URL wins over an http one.
 */
async function askPublicUrl(
  api: string,
  target: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  let body: unknown;
  try {
    const response = await fetch(`${api}/api/tunnels`, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(5000)]),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    body = await response.json();
  } catch {
    if (signal.aborted) throw signal.reason;
    return undefined;
  }
  const tunnels = (body as { tunnels?: unknown })?.tunnels;
  if (!Array.isArray(tunnels)) return undefined;
  const port = new URL(target).port;
  const urls = tunnels
    .filter((t) => {
      const addr = t?.config?.addr;
      return typeof addr !== "string" || addr.endsWith(`:${port}`) || addr === port;
    })
    .map((t) => t?.public_url)
    .filter((u): u is string => typeof u === "string" && /^https?:\/\/[^/]/.test(u));
  return urls.find((u) => u.startsWith("https://")) ?? urls[0];
}

function validWebAddr(addr: string): string | undefined {
  try {
    const url = new URL(`http://${addr}`);
    return url.host && url.pathname === "/" ? url.host : undefined;
  } catch {
    return undefined;
  }
}

function parseJsonLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line);
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `onLine` for each line of the stream (cut at {@link MAX_LINE} characters) until it ends.
 *
 * @param stream The output of the agent.
 * @param onLine Called with each line, without its line break.
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let buffer = "";
  let cut = false;
  try {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      let text = chunk;
      let nl: number;
      while ((nl = text.indexOf("\n")) >= 0) {
        const room = Math.max(0, MAX_LINE - buffer.length);
        const line = cut ? buffer : buffer + text.slice(0, Math.min(nl, room));
        buffer = "";
        cut = false;
        onLine(line.replace(/\r$/, ""));
        text = text.slice(nl + 1);
      }
      if (!cut) {
        buffer += text.slice(0, MAX_LINE - buffer.length);
        cut = buffer.length >= MAX_LINE;
      }
    }
  } catch {
    // The process is gone; what was read is what there is.
  }
  if (buffer) onLine(buffer);
}

function waitFor(target: EventTarget, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      target.removeEventListener("change", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    target.addEventListener("change", done, { once: true });
    signal.addEventListener("abort", done, { once: true });
  });
}

function killQuietly(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // Already exited.
  }
}
