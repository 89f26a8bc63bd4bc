/**
 * Hooks of the operator's life: startup, login, probes, cleanup.
 *
 * - `on.startup` handlers run before anything is watched: one prepares the
 *   operator's memo (shared by all handlers) and changes the settings (only
 *   warnings and errors of handlers become Kubernetes events); another one
 *   fails temporarily a few times, and the operator waits for it.
 * - `on.login` returns the credentials: here, those of the kubeconfig
 *   (`KUBECONFIG`, `~/.kube/config`, or the one given to the operator), with
 *   an expiration, after which the operator logs in again.
 * - `on.probe` handlers fill the liveness endpoint's JSON (`--liveness`).
 * - `on.cleanup` runs when the operator stops: it stops the background tasks.
 *
 * Each pod gets a background task that says "Served by the background task."
 * now and then until the pod is deleted or the operator stops.
 *
 * Run it: `deno run -A cli.ts run -A --verbose --liveness=http://127.0.0.1:8080/healthz examples/13-hooks/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl run pod1 --image=busybox`, `curl http://127.0.0.1:8080/healthz`, and Ctrl-C.
 *
 * @module
 */
import * as kopf from "../../mod.ts";

/** What the startup handler puts into the memo: per-pod stoppers and tasks. */
interface PodTasks {
  stoppers: Map<string, AbortController>; // by "namespace/name"
  tasks: Set<Promise<void>>;
}

kopf.on.startup(function startupFnSimple({ logger, memo, settings }) {
  logger.info("Initialising the pod-tasks registry...");
  const podTasks: PodTasks = { stoppers: new Map(), tasks: new Set() };
  memo.podTasks = podTasks;
  settings.posting.level = "warning";
});

kopf.on.startup(function startupFnRetried({ retry, logger }) {
  if (retry < 3) {
    throw new kopf.TemporaryError(`Going to succeed in ${3 - retry} more attempt(s).`, {
      delay: 0.1,
    });
  }
  logger.info("Starting retried...");
  // throw new kopf.PermanentError("Unable to start!");  // would stop the operator at once.
});

kopf.on.cleanup(async function cleanupFn({ logger, memo }) {
  logger.info("Cleaning up...");
  const { stoppers, tasks } = memo.podTasks as PodTasks;
  for (const stopper of stoppers.values()) stopper.abort();
  logger.info("All pod-tasks are requested to stop...");
  await Promise.all(tasks);
});

kopf.on.login({ errors: "permanent" }, async function loginFn({ logger }) {
  logger.info("Logging in in 0.5s...");
  await kopf.sleep(0.5);

  // The same as the default login, but with an expiration, for demo purposes.
  const info = await kopf.loginWithKubeconfig();
  if (!info) throw new kopf.PermanentError("No kubeconfig: set KUBECONFIG.");
  return new kopf.ConnectionInfo({ ...info, expiration: new Date(Date.now() + 30_000) });
});

kopf.on.probe(function tasksCount({ memo }) {
  return (memo.podTasks as PodTasks).stoppers.size;
});

kopf.on.probe(function monitoredObjects({ memo }) {
  const result: Record<string, string[]> = {};
  for (const key of (memo.podTasks as PodTasks).stoppers.keys()) {
    const [namespace, name] = key.split("/") as [string, string];
    (result[namespace] ??= []).push(name);
  }
  for (const names of Object.values(result)) names.sort();
  return result;
});

kopf.on.probe({ id: "now" }, function getCurrentTimestamp() {
  return new Date().toISOString();
});

kopf.on.event("pods", function podTask({ type, namespace, name, logger, memo }) {
  const { stoppers, tasks } = memo.podTasks as PodTasks;
  const key = `${namespace}/${name}`;
  if (type === "DELETED") {
    const stopper = stoppers.get(key);
    if (stopper) {
      stoppers.delete(key);
      stopper.abort();
      logger.warning("The pod is gone: its background task is stopped.");
    }
  } else if (!stoppers.has(key)) {
    const stopper = new AbortController();
    stoppers.set(key, stopper);
    logger.info("A background task is started.");
    const task = serve(logger, stopper.signal);
    tasks.add(task);
    task.finally(() => tasks.delete(task));
  }
});

async function serve(logger: kopf.ObjectLogger, signal: AbortSignal): Promise<void> {
  while (await kopf.sleep(0.5 + Math.random(), signal)) {
    logger.info("Served by the background task.");
  }
  logger.info("Serving is finished by request.");
}
