/**
 * Daemons: long-running functions that accompany each object while it exists.
 *
 * - `backgroundAsync` loops until its signal aborts; `kopf.sleep(seconds, signal)` ends early
 *   on the stop, so the object's deletion is not held up for long.
 * - `backgroundSync` is a sync function. JavaScript cannot run it in a thread as Kopf does, so
 *   a sync daemon does one step per call: it checks `stopped.isSet()`, does its work, and asks
 *   to be called again by raising `kopf.TemporaryError` with a delay (Kopf's way to restart a
 *   daemon). Its first calls fail on purpose, with a message in the status.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/14-daemons/example.ts`
 * then `kubectl apply -f examples/obj.yaml` and, later, `kubectl delete -f examples/obj.yaml`.
 */
import * as kopf from "../../mod.ts";

kopf.daemon(
  "kopfexamples",
  { backoff: 3 },
  async function backgroundAsync({ spec, logger, signal }) {
    while (!signal.aborted) {
      logger.info(`=> Ping from an async daemon: field=${JSON.stringify(spec.field)}`);
      await kopf.sleep(1, signal);
    }
  },
);

kopf.daemon(
  "kopfexamples",
  { cancellationBackoff: 1.0, cancellationTimeout: 0.5 },
  function backgroundSync({ spec, stopped, logger, retry, patch }) {
    if (retry < 3) {
      patch.status.message = `Failed ${retry + 1} times.`;
      throw new kopf.TemporaryError("Simulated failure.", { delay: 1 });
    }
    if (stopped.isSet()) return;
    logger.info(`=> Ping from a sync daemon: field=${JSON.stringify(spec.field)}, retry=${retry}`);
    throw new kopf.TemporaryError("Pinged; the next ping is in a second.", { delay: 1 });
  },
);
