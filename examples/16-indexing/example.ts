/**
 * Indexing: in-memory indices of pods, used by the handlers of kopfexamples
 * without asking the Kubernetes API (Kopf's "In-memory indexing").
 *
 * - `by_label` indexes pods by every `(label, value)` pair they have: the
 *   keys are tuples, so the function returns a `Map` (plain objects have only
 *   string keys); each key leads to a `kopf.Store` of pod names;
 * - `is_running` indexes pods by `(namespace, name)` with a flag as the value;
 * - the kopfexamples' handlers find both in `indices` by their names. They
 *   do not start before both indices hold every pod that existed when the
 *   operator started (the readiness rule); after that, every pod change is
 *   reflected in the indices before any handler sees it.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/16-indexing/example.ts`,
 * then `kubectl run pod-a --image=nginx --labels=somelabel=somevalue` and
 * `kubectl apply -f examples/obj.yaml`; the object's status shows the pods
 * that share its labels.
 */
import * as kopf from "../../mod.ts";

kopf.index("pods", function is_running({ namespace, name, status }) {
  return new Map([[[namespace, name], status.phase === "Running"]]);
});

kopf.index("pods", function by_label({ labels, name }) {
  return new Map(Object.entries(labels).map(([label, value]) => [[label, value], name]));
});

/** The names of the pods that share a label with the object, by label. */
function podsSharingLabels(
  labels: Record<string, string>,
  byLabel: kopf.Index<[string, string], string>,
): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const [label, value] of Object.entries(labels)) {
    result[`${label}=${value}`] = [...(byLabel.get([label, value]) ?? [])].sort();
  }
  return result;
}

kopf.on.create("kopfexamples", function create_fn({ labels, namespace, indices, logger }) {
  const byLabel = indices.by_label as kopf.Index<[string, string], string>;
  const isRunning = indices.is_running as kopf.Index<[string, string], boolean>;
  const pods = podsSharingLabels(labels, byLabel);
  for (const names of Object.values(pods)) {
    for (const name of names) {
      const [running] = isRunning.get([namespace!, name]) ?? [];
      logger.info(`Pod ${name} shares a label; running: ${running}.`);
    }
  }
  return { pods };
});

kopf.on.event("kopfexamples", function event_fn({ labels, indices, logger, type }) {
  if (type === "DELETED") return;
  const byLabel = indices.by_label as kopf.Index<[string, string], string>;
  logger.info(`Pods sharing the labels: ${JSON.stringify(podsSharingLabels(labels, byLabel))}`);
});
