/**
 * The minimal operator: one creation handler.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/01-minimal/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`).
 */
import * as kopf from "../../mod.ts";

// The handler's id is its function's name: the result lands in `status.create_fn`, which the
// example CRD's MESSAGE column shows (`kubectl get kopfexamples`), as with Kopf's own example.
kopf.on.create("kopfexamples", function create_fn({ spec, name, logger }) {
  console.log(`And here we are! Created ${name} with spec: ${JSON.stringify(spec)}`);
  logger.info("A handler is called with body.");
  return { message: "hello world" }; // lands in status.create_fn
});
