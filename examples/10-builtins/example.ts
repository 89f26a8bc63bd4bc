/**
 * Built-in resources: handlers on Pods, the same as on custom resources.
 *
 * - Every pod that appears (or already exists when the operator starts) gets
 *   a "killer": it deletes the pod after 30 seconds (or after the seconds in
 *   its `kopf.dev/kill-after` annotation), unless the pod is gone before.
 * - A raw event handler sees every pod event; a `DELETED` event cancels the
 *   pod's killer, whoever deleted the pod. Another event handler reacts only
 *   to the pods labelled `application=kopf-example-10` (a labels filter).
 * - An optional deletion handler (`optional: true`) never blocks a deletion:
 *   no finalizer is put on pods for it; it runs only when the operator sees a
 *   deletion while the pod still exists for other reasons.
 * - A non-optional deletion handler for the pods labelled `kopf.dev/guarded`
 *   (any value): those pods get Kopf's finalizer and are not deleted before
 *   the handler has run.
 * - A cleanup handler cancels the killers when the operator stops, so no task
 *   is left behind.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/10-builtins/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl run pod1 --image=busybox --labels=application=kopf-example-10` and
 * `kubectl get pods -w` to see it go after 30 seconds.
 *
 * @module
 */
import * as kopf from "../../mod.ts";

/** The running killers by `namespace/name`: aborting one cancels it. */
const killers = new Map<string, AbortController>();

kopf.on.resume("", "v1", "pods", podInSight);
kopf.on.create("", "v1", "pods", podInSight);

/** A new (or existing) pod: start its killer, unless it is in a system namespace. */
function podInSight({ namespace, name, annotations, logger }: kopf.ChangingContext): void {
  if (namespace?.startsWith("kube-")) return;
  const key = `${namespace}/${name}`;
  if (killers.has(key)) return;
  const seconds = Number(annotations["kopf.dev/kill-after"] ?? 30);
  const stop = new AbortController();
  killers.set(key, stop);
  podKiller(namespace ?? "default", name, seconds, logger, stop.signal)
    .catch((e) => logger.exception("=== Pod killing failed.", e))
    .finally(() => {
      if (killers.get(key) === stop) killers.delete(key);
    });
}

/** Deletes the pod after some time, unless the signal aborts first. */
async function podKiller(
  namespace: string,
  name: string,
  seconds: number,
  logger: kopf.ObjectLogger,
  signal: AbortSignal,
): Promise<void> {
  logger.info(`=== Pod killing happens in ${seconds}s.`);
  if (!await kopf.sleep(seconds, signal)) {
    logger.info("=== Pod killing is cancelled!");
    return;
  }
  logger.info("=== Pod killing happens NOW!");
  // The operator's own client (a task started by a handler is inside the operator): its cluster.
  await kopf.api().delete("pods", name, { namespace, signal });
}

kopf.on.event("pods", function podEvent({ type, namespace, name }) {
  if (type === "DELETED") killers.get(`${namespace}/${name}`)?.abort();
});

kopf.on.event(
  "",
  "v1",
  "pods",
  { labels: { application: "kopf-example-10" } },
  function examplePodChange({ type, logger }) {
    logger.info(`This pod is special for us (${type ?? "listed"}).`);
  },
);

kopf.on.delete("", "v1", "pods", { optional: true }, function podDeleted({ logger }) {
  logger.info("The pod's deletion is noticed (not blocked by this handler).");
});

kopf.on.delete(
  "",
  "v1",
  "pods",
  { labels: { "kopf.dev/guarded": kopf.PRESENT } },
  function guardedPodDeleted({ logger }) {
    logger.info("A guarded pod is released.");
  },
);

kopf.on.cleanup(function cancelKillers({ logger }) {
  for (const stop of killers.values()) stop.abort();
  logger.info(`${killers.size} pod killer(s) cancelled.`);
});
