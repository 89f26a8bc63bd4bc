/**
 * An embedded operator: the application runs its own main job, and the
 * operator runs next to it in the same process — started with
 * `kopf.spawnTasks()`, awaited with `kopf.runTasks()`, and stopped cleanly
 * through an `AbortSignal` when the main job is done (or on Ctrl-C).
 *
 * Run it: `KUBECONFIG=… deno run -A examples/12-embedded/example.ts`
 * (it is an application of its own, not a handlers file for `kopf run`).
 */
import * as kopf from "../../mod.ts";

/** What the operator has seen so far: the application's in-memory state. */
const handled = new Set<string>();

kopf.on.create("kopfexamples", function createFn({ name, logger }) {
  handled.add(name!);
  logger.info("Handled by the embedded operator.");
});

/**
 * The application: starts the operator, does its main job in steps, then stops the operator.
 *
 * @param steps How many steps of the main job (a second each).
 * @returns When the operator has stopped.
 *
 * @example
 * ```ts ignore
 * import { main } from "./example.ts";
 * await main(3);
 * ```
 */
export async function main(steps = 3): Promise<void> {
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSigint);
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  try {
    const tasks = await kopf.spawnTasks({
      clusterwide: true,
      standalone: true,
      signal: stop.signal,
      onReady: ready,
    });
    const operator = kopf.runTasks(tasks, stop.signal);
    await Promise.race([isReady, operator]);
    console.log("Ready to do the main job.");
    for (let step = 0; step < steps && !stop.signal.aborted; step++) {
      const seen = [...handled].join(", ") || "nothing";
      console.log(`Doing the main job on step ${step}; the operator has handled: ${seen}.`);
      await kopf.sleep(1, stop.signal);
    }
    stop.abort();
    await operator;
    console.log("The operator has stopped. Exiting.");
  } finally {
    Deno.removeSignalListener("SIGINT", onSigint);
  }
}

if (import.meta.main) await main(Number(Deno.env.get("STEPS") ?? 3));
