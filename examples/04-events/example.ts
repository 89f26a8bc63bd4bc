/**
 * Events: report what happens to an object as Kubernetes Events, shown by
 * `kubectl describe kopfexample kopf-example-1` (Kopf's "Events").
 *
 * - `kopf.event()` posts an event of any type, reason and message;
 * - `kopf.info()`, `kopf.warn()`, `kopf.exception()` are the shortcuts for
 *   the types `Normal`, `Warning` and `Error` (the latter with the error's
 *   text appended to the message);
 * - the handler's `logger` also posts its records at or above
 *   `settings.posting.level` (`info` by default) with the reason `Logging`,
 *   and so do the framework's own messages about the object.
 *
 * Posting is queued: handlers never wait for it, and a failed post never
 * fails a handler.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/04-events/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml` and `kubectl describe -f examples/obj.yaml`.
 */
import * as kopf from "../../mod.ts";

kopf.on.create("kopfexamples", function create_fn({ body, logger }) {
  // The all-purpose function for the event creation.
  kopf.event(body, { type: "SomeType", reason: "SomeReason", message: "Some message" });

  // The shortcuts for the conventional events and common cases.
  kopf.info(body, { reason: "SomeReason", message: "Some message" });
  kopf.warn(body, { reason: "SomeReason", message: "Some message" });

  try {
    throw new Error("Exception text.");
  } catch (error) {
    kopf.exception(body, { reason: "SomeReason", message: "Some exception:", error });
  }

  // The object's logger: records at the posting level and above become events too.
  logger.debug("A debug message: only in the log.");
  logger.info("An info message: also an event of type Normal.");
  logger.warning("A warning message: also an event of type Warning.");
});
