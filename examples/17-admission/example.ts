/**
 * Admission webhooks: validation and mutation of KopfExamples before they are stored.
 *
 * The operator serves its handlers over HTTPS (a self-signed CA made at start-up) and
 * manages the ValidatingWebhookConfiguration and MutatingWebhookConfiguration named
 * `auto.kopf.dev` that point the API server at them. Against the embedded API server:
 *
 *   deno task apiserver --port 0        # then, with the printed KUBECONFIG:
 *   kubectl apply -f examples/crd.yaml
 *   deno run -A cli.ts run -A --verbose examples/17-admission/example.ts
 *   kubectl apply -f examples/obj.yaml  # admitted, with spec.injected = 123
 *   kubectl patch kex kopf-example-1 --type merge -p '{"spec":{"field":"wrong"}}'
 *   # → admission webhook "validate1.auto.kopf.dev" denied the request: Meh! …
 */
import * as kopf from "../../mod.ts";

kopf.on.startup(function config({ settings }) {
  // The auto server detects K3d and Minikube; elsewhere it listens on 127.0.0.1.
  // Port 0: any free port (the managed configurations carry the URL).
  settings.admission.server = new kopf.WebhookAutoServer({ port: 0 });
  settings.admission.managed = "auto.kopf.dev";
});

kopf.on.validate("kopfexamples", function authhook({ userinfo, warnings }) {
  warnings.push(`Admitted for ${userinfo.username ?? "nobody"}.`);
});

kopf.on.validate("kopfexamples", function validate1({ spec, dryrun }) {
  if (!dryrun && spec.field === "wrong") {
    throw new kopf.AdmissionError("Meh! I don't like it. Change the field.", 400);
  }
});

kopf.on.validate(
  "kopfexamples",
  { field: "spec.field", value: "not-allowed" },
  function validate2() {
    throw new kopf.AdmissionError("I'm too lazy anyway. Go away!", 555);
  },
);

kopf.on.mutate("kopfexamples", { labels: { somelabel: "somevalue" } }, function mutate1({ patch }) {
  patch.spec.injected = 123;
});

// A persistent webhook stays configured when the operator exits; with ignoreFailures, objects
// are admitted while the operator is away. Without it (the default), they would be refused.
kopf.on.validate(
  "kopfexamples",
  { persistent: true, ignoreFailures: true },
  function validateWhenAway() {},
);
