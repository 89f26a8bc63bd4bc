/**
 * Exceptions: how a handler's errors are treated (Kopf's "Error handling").
 *
 * The creation handler fails three times in a row, differently each time:
 * 1. a `kopf.TemporaryError` — retried after its `delay` (1 s here);
 * 2. an arbitrary error — retried after the handler's `backoff` (1 s here;
 *    60 s by default), with the stack trace in the log;
 * 3. a `kopf.PermanentError` — the handler fails for good and is not retried.
 *
 * Between the attempts, the handler's progress (started, delayed, retries,
 * the last message) is kept on the object in the annotation
 * `kopf.zalando.org/create_fn`, so the retries survive an operator restart.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/03-exceptions/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml` and watch the log.
 */
import * as kopf from "../../mod.ts";

class MyException extends Error {
  override name = "MyException";
}

kopf.on.create("kopfexamples", { backoff: 1 }, function create_fn({ retry }) {
  console.log(`create_fn is called with retry=${retry}`);
  if (!retry) {
    throw new kopf.TemporaryError("First failure.", { delay: 1 });
  } else if (retry === 1) {
    throw new MyException("Second failure.");
  } else {
    throw new kopf.PermanentError("Third failure, the final one.");
  }
});
