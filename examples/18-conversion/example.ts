/**
 * Versions of a CRD: KopfExample is upgraded from v1 (`spec.field`) to v2 (`spec.message`)
 * while objects exist, and this operator converts between the two for the API server.
 *
 * The operator serves its converters over HTTPS (as admission webhooks are served) and, with
 * `settings.admission.managed`, sets the CRD's `spec.conversion` to them. The upgrade, against
 * the embedded API server (each step is run by tests/examples/18_conversion_test.ts):
 *
 *   deno task apiserver --port 0        # then, with the printed KUBECONFIG:
 *   kubectl apply -f examples/crd.yaml -f examples/obj.yaml     # v1 only; an object at v1
 *   deno run -A cli.ts run -A --verbose examples/18-conversion/example.ts
 *   kubectl apply -f examples/18-conversion/crd-v2.yaml         # 1. serve v2 (stored at v1)
 *   kubectl get kopfexamples.v2.kopf.dev                        #    v1 objects, read at v2
 *   kubectl apply -f examples/18-conversion/crd-v2-storage.yaml # 2. store new writes at v2
 *   kubectl get kopfexamples.v2.kopf.dev -A -o json | kubectl replace -f -
 *                                                               # 3. re-store every object at v2
 *   kubectl patch crd kopfexamples.kopf.dev --subresource=status --type=merge \
 *     -p '{"status":{"storedVersions":["v2"]}}'                 # 4. nothing is stored at v1
 *
 * Step 3 is the stored-version migration: an unchanged write of an object stored at an older
 * version stores it again at the storage version. After step 4, v1 can stop being served and
 * be removed from the CRD (the API server refuses that while `storedVersions` lists it). Keep
 * the operator (or another conversion webhook) running for as long as two versions are served.
 */
import * as kopf from "../../mod.ts";

kopf.on.startup(function config({ settings }) {
  settings.admission.server = new kopf.WebhookAutoServer({ port: 0 });
  settings.admission.managed = "conversion.kopf.dev";
});

// One converter per direction. Conversions must not lose anything: an object read at one
// version and written back must stay the same object at the other.
kopf.on.convert("kopfexamples", { from: "v1", to: "v2" }, function upgrade({ body }) {
  const { field, ...spec } = body.spec ?? {};
  return { ...body, spec: field === undefined ? spec : { ...spec, message: field } };
});

kopf.on.convert("kopfexamples", { from: "v2", to: "v1" }, function downgrade({ body }) {
  const { message, ...spec } = body.spec ?? {};
  return { ...body, spec: message === undefined ? spec : { ...spec, field: message } };
});

// Handlers written for v2 see v2 bodies, whatever version a client wrote them at — also the
// objects created at v1 before v2 existed (the operator starts serving v2 when the CRD has it).
kopf.on.create("kopfexamples.v2.kopf.dev", function greet({ spec, logger }) {
  logger.info(`Greeting for: ${spec.message}`);
  return { greeting: `hello, ${spec.message}` };
});

// Admission at v2: the API server converts a request at v1 for this v2 webhook (matchPolicy
// Equivalent), so a v1 client cannot slip an empty message past it.
kopf.on.validate("kopfexamples.v2.kopf.dev", function nonempty({ spec }) {
  if (spec.message === "") throw new kopf.AdmissionError("spec.message must not be empty.");
});
