/**
 * Operator testing: the operator under test is deliberately tiny — one
 * creation handler that prints and logs. What this example shows is its test,
 * `tests/examples/09_testing_test.ts`, written the way the docs' "Operator
 * testing" section shows it: `KopfRunner` runs the operator in the background
 * (in this process, as `kopf run` would), the test drives the cluster with
 * kubectl, and after the runner stops the test checks its exit code, its
 * exception and its output.
 *
 * Run the operator: `deno run -A cli.ts run -A --verbose examples/09-testing/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`).
 * Run its test: `deno test -A tests/examples/09_testing_test.ts`.
 *
 * @module
 */
import * as kopf from "../../mod.ts";

kopf.on.create("kopf.dev", "v1", "kopfexamples", function createFn({ name, logger }) {
  console.log(`And here we are! Created ${name}.`);
  logger.info("Something was logged here.");
});
