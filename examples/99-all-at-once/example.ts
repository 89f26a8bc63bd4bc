/**
 * All the features at once (for debugging and testing): startup and cleanup
 * activities with retries, a probe, several creation handlers (one posts
 * events, one fails once and is retried by the framework, one creates an
 * adopted child pod with the handler's `api`), update and field
 * handlers with diffs, sub-handlers, a deletion handler, results and patches
 * in the status, and a raw event handler for the children pods only.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/99-all-at-once/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml`,
 * `kubectl patch kex kopf-example-1 --type=merge -p '{"spec":{"lst":["a","b"]}}'`,
 * `kubectl get kex,pods`, and `kubectl delete -f examples/obj.yaml`.
 *
 * @module
 */
import * as kopf from "../../mod.ts";

kopf.on.startup(async function startupFnSimple({ logger, memo }) {
  logger.info("Starting in 0.5s...");
  await kopf.sleep(0.5);
  // Resource handlers get per-object shallow copies of this memo: a shared container
  // (not a bare number) is what they all see and change.
  memo.counters = { createdPods: 0 };
});

kopf.on.startup(function startupFnRetried({ retry, logger }) {
  if (retry < 3) {
    throw new kopf.TemporaryError(`Going to succeed in ${3 - retry} more attempt(s).`, {
      delay: 0.2,
    });
  }
  logger.info("Starting retried...");
  // throw new kopf.PermanentError("Unable to start!");
});

kopf.on.cleanup(async function cleanupFn({ logger, memo }) {
  logger.info(`Cleaning up in 0.5s... (${memo.counters.createdPods} pods were created)`);
  await kopf.sleep(0.5);
});

kopf.on.probe({ id: "createdPods" }, function createdPods({ memo }) {
  return memo.counters.createdPods;
});

kopf.on.create("kopfexamples", function create1({ body, patch }) {
  const children = createChildren(body);

  kopf.info(body, { reason: "AnyReason" });
  kopf.event(body, { type: "Warning", reason: "SomeReason", message: "Cannot do something" });
  kopf.event(children, {
    type: "Normal",
    reason: "SomeReason",
    message: "Created as part of the job1step",
  });

  patch.status.phase = "Created";
  return { "job1-status": 100 };
});

kopf.on.create("kopfexamples", { backoff: 1 }, async function create2({ retry }) {
  await waitForSomething(); // specific for job2, e.g. an external API poller

  if (!retry) {
    // Will be retried by the framework (after `backoff` seconds), even if it has been restarted.
    throw new Error("Whoops!");
  }
  return { "job2-status": 100 };
});

kopf.on.create("kopfexamples", async function createPod({ body, logger, memo, api }) {
  // Render the pod with some spec fields used in the template.
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    spec: {
      containers: [{
        name: "the-only-one",
        image: "busybox",
        command: ["sh", "-x", "-c", "sleep 1"],
      }],
    },
  };

  // Make it our child: the namespace, the name, the labels, the owner reference.
  kopf.adopt(pod, body);
  kopf.label(pod, { application: "kopf-example-10" });

  // Actually create the object with the operator's own API client (its cluster and credentials).
  const created = await api.create("pods", pod);
  memo.counters.createdPods += 1;
  logger.info(`Pod child is created: ${created.metadata.name}`);
  return { pod: created.metadata.name };
});

kopf.on.update("kopfexamples", function update({ diff, patch }) {
  console.log("Handling the diff");
  for (const [op, field, old, now] of diff) {
    console.log(`  ${op} ${field.join(".")}: ${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
  }
  patch.status.phase = "Updated";
});

kopf.on.field("kopfexamples", { field: "spec.lst" }, function updateLst({ old, new: now }) {
  console.log(`Handling the FIELD = ${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
  // Sub-handlers: one per item, each with its own id, retries and progress.
  for (const item of (now ?? []) as string[]) {
    kopf.register(function handleItem({ logger }) {
      logger.info(`Handling the item ${item}.`);
    }, { id: `item-${item}` });
  }
});

kopf.on.delete("kopfexamples", function deleteFn({ name, logger }) {
  logger.info(`Deleting ${name}: the children pods go with it (they are owned).`);
});

kopf.on.event("pods", { labels: { application: "kopf-example-10" } }, function examplePodChange({
  logger,
}) {
  logger.info("This pod is special for us.");
});

function createChildren(_owner: kopf.AnyObject): kopf.AnyObject[] {
  return [];
}

async function waitForSomething(): Promise<void> {
  await kopf.sleep(1);
}
