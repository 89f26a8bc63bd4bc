/**
 * Update and deletion handlers for the demo, next to the minimal example's
 * creation handler: `kopf run -A examples/01-minimal/example.ts examples/demo/lifecycle.ts`.
 */
import * as kopf from "../../mod.ts";

kopf.on.update("kopfexamples", function updateFn({ diff, logger }) {
  logger.info(`Updated: ${JSON.stringify(diff)}`);
});

kopf.on.delete("kopfexamples", function deleteFn({ name, logger }) {
  logger.info(`Deleting ${name}: cleaning up.`);
});
