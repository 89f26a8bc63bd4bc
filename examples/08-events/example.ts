/**
 * Raw events: `kopf.on.event` handlers see every watch event of the objects
 * (`ADDED`, `MODIFIED`, `DELETED`, and `undefined` for the objects listed at
 * start-up) — no finalizers, no retries, no progress stored on the objects.
 * An error in one is logged and ignored: the other handlers still run, and
 * the next event comes as usual (Kopf's 08-events example). Kubernetes Events
 * posted from handlers (`kopf.event/info/warn/exception`) are in 04-events.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/08-events/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml`.
 */
import * as kopf from "../../mod.ts";

kopf.on.event("kopfexamples", function event_fn_with_error() {
  throw new Error("Oops!");
});

kopf.on.event("kopfexamples", function normal_event_fn({ type, name }) {
  console.log(`Event received: ${type} ${name}`);
});
