/**
 * Children: the creation handler creates a Pod for each KopfExample and
 * adopts it — an owner reference (so Kubernetes deletes the pod together
 * with its parent), a name prefixed with the parent's name, the parent's
 * namespace and labels — using the official `@kubernetes/client-node`.
 * The pods' names are returned and land in `status.create_fn.children`
 * (the "Children" column of `kubectl get kopfexamples`).
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/02-children/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml` and `kubectl get pods,kopfexamples`.
 */
import * as k8s from "@kubernetes/client-node";
import * as kopf from "../../mod.ts";

kopf.on.create("kopfexamples", async function create_fn({ spec, body, namespace, logger }) {
  // Render the pod with some spec fields used in the template.
  const pod: k8s.V1Pod = {
    apiVersion: "v1",
    kind: "Pod",
    spec: {
      containers: [{
        name: "the-only-one",
        image: "busybox",
        command: ["sh", "-x", "-c"],
        args: [`echo "FIELD=$FIELD"\nsleep ${spec.duration ?? 0}\n`],
        env: [{ name: "FIELD", value: String(spec.field ?? "default-value") }],
      }],
    },
  };

  // Make it our child: the owner reference, the name prefix, the namespace, the labels.
  kopf.adopt(pod, body);

  // Actually create the object by requesting the Kubernetes API
  // (the same cluster as the operator's: the kubeconfig from KUBECONFIG or ~/.kube/config).
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const created = await core.createNamespacedPod({
    namespace: pod.metadata?.namespace ?? namespace ?? "default",
    body: pod,
  });
  logger.info(`Pod child is created: ${created.metadata?.name}`);

  // Update the parent's status.
  return { children: [created.metadata?.name] };
});
