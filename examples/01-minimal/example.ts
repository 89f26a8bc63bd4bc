/**
 * The minimal operator: one creation handler.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/01-minimal/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`).
 */
import * as kopf from "../../mod.ts";

kopf.on.create("kopfexamples", function createFn({ spec, name, logger }) {
  console.log(`And here we are! Created ${name} with spec: ${JSON.stringify(spec)}`);
  logger.info("A handler is called with body.");
  return { message: "hello world" }; // will be the new status
});
