/**
 * An operator run in this test's process, as the admission and conversion tests start it:
 * standalone, cluster-wide, with its own registry, its log lines kept, started once it is ready,
 * and stopped (awaited) when the test's scope ends.
 *
 * @module
 */

import * as kopf from "../../mod.ts";

/** A running in-process operator; `await using` stops it at the end of the scope. */
export interface InProcessOperator extends AsyncDisposable {
  /** The operator's log lines (plain format), as they come. */
  readonly lines: string[];
  /** Stops the operator and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `kopf.operator()` with the registry against a kubeconfig and waits until it is ready.
 *
 * @param kubeconfig The kubeconfig's path (e.g. the embedded server's).
 * @param registry The handlers.
 * @param options Anything else for `kopf.operator()` (it overrides the defaults here).
 */
export async function startInProcess(
  kubeconfig: string,
  registry: kopf.OperatorRegistry,
  options: Partial<kopf.OperatorOptions> = {},
): Promise<InProcessOperator> {
  const abort = new AbortController();
  const lines: string[] = [];
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const running = kopf.operator({
    kubeconfig,
    standalone: true,
    clusterwide: true,
    registry,
    signal: abort.signal,
    onReady: ready,
    logging: { format: "plain", level: "info", write: (line) => lines.push(line) },
    ...options,
  });
  // An operator that fails before it is ready fails the start, instead of hanging it.
  await Promise.race([
    started,
    running.then(() => {
      throw new Error(`the operator exited before it was ready:\n${lines.join("\n")}`);
    }),
  ]);
  const stop = async () => {
    abort.abort();
    await running;
  };
  return { lines, stop, [Symbol.asyncDispose]: stop };
}
