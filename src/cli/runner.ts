/**
 * The public `KopfRunner`: the kit's background runner bound to this CLI, so
 * a test runs exactly what `kopf run …` would run.
 *
 * @module
 */

import { BaseKopfRunner, type KopfRunnerOptions } from "../kits/runner.ts";
import { main } from "./entry.ts";

/**
 * Runs an operator in this process in the background, from `kopf` CLI
 * arguments; captures its output, exception and exit code; stops with
 * `await using`.
 *
 * @example
 * ```ts ignore
 * import { KopfRunner, startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * await using runner = await KopfRunner.start(["run", "-A", "--verbose", "examples/01-minimal/example.ts"], {
 *   kubeconfig: api.kubeconfig.path,
 * });
 * await runner.waitFor("Initial authentication has finished.");
 * ```
 */
export class KopfRunner extends BaseKopfRunner {
  /**
   * Prepares a runner of the `kopf` CLI; nothing runs until {@link BaseKopfRunner.start}.
   *
   * @param args The `kopf` arguments, e.g. `["run", "-A", "--verbose", "handlers.ts"]`.
   * @param options Registry, settings, kubeconfig, timeout, reraise, echo.
   */
  constructor(args: string[], options: KopfRunnerOptions = {}) {
    super(main, args, options);
  }

  /**
   * Starts a runner and waits until its operator is ready (or has ended).
   *
   * @param args The `kopf` arguments.
   * @param options The runner's options.
   * @returns The running runner.
   */
  static async start(args: string[], options: KopfRunnerOptions = {}): Promise<KopfRunner> {
    const runner = new KopfRunner(args, options);
    await runner.start();
    return runner;
  }
}
