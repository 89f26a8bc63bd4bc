/**
 * `KopfRunner`: runs an operator in this process, in the background, while a
 * test drives the cluster — as `kopf run` would run it, from the same
 * arguments — and captures its output (log lines and whatever handlers print
 * with `console.*`), its exception and its exit code. `await using` stops it.
 *
 * Output is captured per runner through an async context, so several runners
 * (or a runner and the test's own prints) do not mix their lines.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { format } from "node:util";
import type { Clock } from "../cogs/aio/clock.ts";
import type { OperatorSettings } from "../cogs/configs/settings.ts";
import type { OperatorRegistry } from "../core/intents/registry.ts";

/** What the runner calls to run `kopf` with arguments (the CLI's `main`). */
export type KopfEntry = (
  args: string[],
  controls: {
    signal: AbortSignal;
    write: (line: string) => void;
    onReady: () => void;
    throwErrors: boolean;
    registry?: OperatorRegistry;
    settings?: OperatorSettings;
    kubeconfig?: string;
    clock?: Clock;
  },
) => Promise<number>;

/** Options of a {@link KopfRunner}. */
export interface KopfRunnerOptions {
  /** Use this registry instead of loading the files named in the arguments. */
  registry?: OperatorRegistry;
  /** Use these settings. */
  settings?: OperatorSettings;
  /** The kubeconfig to log in with (e.g. the embedded API server's), instead of the default login. */
  kubeconfig?: string;
  /**
   * The operator's clock (default: the real one): with a `FakeClock`, the operator's daemons,
   * timers, retries and `kopf.sleep()` wait for the test's `clock.advance()`, not for the wall
   * clock. The runner's own waits (`waitFor`, `timeout`) stay on real time.
   */
  clock?: Clock;
  /** Seconds to wait for the operator to stop at the end (default 10). */
  timeout?: number;
  /** Throw the operator's exception when the runner stops (default true). */
  reraise?: boolean;
  /** Also print the captured lines to stderr (for debugging tests). */
  echo?: boolean;
}

interface Capture {
  write: (line: string) => void;
}

const captureScope = new AsyncLocalStorage<Capture>();
let hooked = false;

function hookConsole(): void {
  if (hooked) return;
  hooked = true;
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const capture = captureScope.getStore();
      if (capture) capture.write(format(...args));
      else original(...args);
    };
  }
}

/**
 * Runs an operator in the background for a test (the public `KopfRunner` binds it to the CLI).
 *
 * @example
 * ```ts ignore
 * import { KopfRunner, startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * {
 *   await using runner = await KopfRunner.start(["run", "-A", "--verbose", "examples/01-minimal/example.ts"], {
 *     kubeconfig: api.kubeconfig.path,
 *   });
 *   // … apply objects with kubectl, then:
 *   await runner.waitFor(/All handlers succeeded for creation/);
 * }
 * ```
 */
export class BaseKopfRunner implements AsyncDisposable {
  /** The arguments, as for `kopf`. */
  readonly args: string[];
  #options: KopfRunnerOptions;
  #entry: KopfEntry;
  #lines: string[] = [];
  #stop = new AbortController();
  #task: Promise<number> | undefined;
  #exitCode: number | undefined;
  #exception: unknown;
  #ready!: () => void;
  #readyPromise = new Promise<void>((resolve) => (this.#ready = resolve));
  #waiters = new Set<() => void>();

  /**
   * Prepares a runner; nothing runs until {@link BaseKopfRunner.start}.
   *
   * @param entry Runs `kopf` with arguments (the CLI's `main`).
   * @param args The `kopf` arguments, e.g. `["run", "-A", "--verbose", "handlers.ts"]`.
   * @param options Registry, settings, kubeconfig, timeout, reraise.
   */
  constructor(entry: KopfEntry, args: string[], options: KopfRunnerOptions = {}) {
    this.#entry = entry;
    this.args = args;
    this.#options = options;
  }

  /** Starts the operator; resolves when it is ready or has ended. */
  async start(): Promise<void> {
    if (this.#task) return;
    hookConsole();
    const capture: Capture = {
      write: (line) => {
        this.#lines.push(line);
        if (this.#options.echo) Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
        for (const w of this.#waiters) w();
      },
    };
    this.#task = captureScope.run(capture, async () => {
      try {
        return await this.#entry(this.args, {
          signal: this.#stop.signal,
          write: capture.write,
          onReady: () => this.#ready(),
          throwErrors: true,
          ...(this.#options.registry ? { registry: this.#options.registry } : {}),
          ...(this.#options.settings ? { settings: this.#options.settings } : {}),
          ...(this.#options.kubeconfig ? { kubeconfig: this.#options.kubeconfig } : {}),
          ...(this.#options.clock ? { clock: this.#options.clock } : {}),
        });
      } catch (e) {
        this.#exception = e;
        return 1;
      }
    }).then((code) => {
      this.#exitCode = code;
      this.#ready();
      for (const w of this.#waiters) w();
      return code;
    });
    await this.#readyPromise;
  }

  /** Everything the operator printed so far (log lines and console output), one line each. */
  get output(): string {
    return this.#lines.join("\n") + (this.#lines.length ? "\n" : "");
  }

  /** Alias of {@link KopfRunner.output}, as in Kopf. */
  get stdout(): string {
    return this.output;
  }

  /** The exit code, once stopped: 0 after a clean stop. */
  get exitCode(): number | undefined {
    return this.#exitCode;
  }

  /** The operator's fatal error, if any. */
  get exception(): unknown {
    return this.#exception;
  }

  /** Whether the operator has ended. */
  get finished(): boolean {
    return this.#exitCode !== undefined;
  }

  /**
   * Waits until the output matches (a substring or a pattern), or the operator ends.
   *
   * @param pattern What to wait for.
   * @param timeoutSeconds How long at most (default 10).
   * @returns The output so far.
   * @throws {Error} On timeout, with the output so far.
   */
  async waitFor(pattern: string | RegExp, timeoutSeconds = 10): Promise<string> {
    const matches = () =>
      typeof pattern === "string" ? this.output.includes(pattern) : pattern.test(this.output);
    if (matches()) return this.output;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(
          new Error(
            `KopfRunner: no ${pattern} in the output within ${timeoutSeconds}s. Output:\n${this.output}`,
          ),
        );
      }, timeoutSeconds * 1000);
      const check = () => {
        if (matches()) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          resolve();
        } else if (this.finished) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          reject(
            new Error(
              `KopfRunner: the operator ended (exit ${this.#exitCode}) without ${pattern}. Output:\n${this.output}`,
            ),
          );
        }
      };
      this.#waiters.add(check);
    });
    return this.output;
  }

  /**
   * Stops the operator and waits for it (up to the timeout).
   *
   * @throws The operator's exception, if `reraise` (the default).
   */
  async stop(): Promise<void> {
    if (!this.#task) return;
    this.#stop.abort();
    const timeout = (this.#options.timeout ?? 10) * 1000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((
      resolve,
    ) => (timer = setTimeout(() => resolve("timeout"), timeout)));
    const result = await Promise.race([this.#task, timedOut]);
    clearTimeout(timer);
    if (result === "timeout") {
      throw new Error(
        `KopfRunner: the operator did not stop within ${timeout / 1000}s. Output:\n${this.output}`,
      );
    }
    if ((this.#options.reraise ?? true) && this.#exception) throw this.#exception;
  }

  /** Stops the operator (`await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
