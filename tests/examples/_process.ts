/**
 * The operator as `kopf run` in a child process, for the example tests.
 *
 * Some examples build their `@kubernetes/client-node` clients from the
 * default kubeconfig, i.e. `KUBECONFIG`. The environment of the test process
 * is shared by the test modules that run in parallel (and some of them set or
 * read `KUBECONFIG`), so such an operator runs in a process of its own, with
 * its own environment, instead of in a KopfRunner.
 *
 * @module
 */

import { ROOT } from "./_setup.ts";

/** `kopf run` in a child process, with its output collected and awaited as KopfRunner does. */
export class OperatorProcess {
  #child: Deno.ChildProcess;
  #text = "";
  #waiters = new Set<() => void>();
  #pumps: Promise<void>[];
  #ended = false;

  /**
   * Starts `cli.ts` with these arguments.
   *
   * @param args The CLI's arguments, e.g. `["run", "-A", "--verbose", file]`.
   * @param env The child's environment on top of this process's, e.g. its own `KUBECONFIG`.
   */
  constructor(args: string[], env: Record<string, string>) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}cli.ts`, ...args],
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#pumps = [this.#pump(this.#child.stdout), this.#pump(this.#child.stderr)];
    this.#child.status.then(() => {
      this.#ended = true;
      for (const w of this.#waiters) w();
    });
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      this.#text += chunk;
      for (const w of this.#waiters) w();
    }
  }

  /** The output so far (stdout and stderr, as they came). */
  get output(): string {
    return this.#text;
  }

  /**
   * Waits until the output has the text.
   *
   * @param text The text to wait for.
   * @param seconds How long to wait at most.
   * @throws {Error} When the process exits or the time is up without the text.
   */
  waitFor(text: string, seconds = 10): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.#text.includes(text)) done(resolve);
        else if (this.#ended) {
          done(() => reject(new Error(`exited without ${text}:\n${this.#text}`)));
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no ${text} within ${seconds}s:\n${this.#text}`))),
        seconds * 1000,
      );
      const done = (then: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        then();
      };
      this.#waiters.add(check);
      check();
    });
  }

  /**
   * Stops it with a signal (unless it has exited), and waits for its exit and all its output.
   *
   * @param signal SIGTERM as Kubernetes sends it (the default), or SIGINT as Ctrl-C does.
   * @returns The exit code.
   */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<number> {
    if (!this.#ended) {
      try {
        this.#child.kill(signal);
      } catch { /* exited meanwhile */ }
    }
    const status = await this.#child.status;
    await Promise.all(this.#pumps);
    return status.code;
  }
}
