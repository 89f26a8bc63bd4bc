/**
 * Children: the creation handler creates a Pod for each KopfExample and
 * adopts it — an owner reference (so Kubernetes deletes the pod together
 * with its parent), a name prefixed with the parent's name, the parent's
 * namespace and labels — with the handler's `api`: the operator's own client,
 * on the operator's credentials (the same cluster, also under `KopfRunner`).
 * The pods' names are returned and land in `status.create_fn.children`
 * (the "Children" column of `kubectl get kopfexamples`).
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/02-children/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml` and `kubectl get pods,kopfexamples`.
 */
import * as kopf from "../../mod.ts";

kopf.on.create("kopfexamples", async function create_fn({ spec, body, logger, api }) {
  // Render the pod with some spec fields used in the template.
  const pod = {
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

  // Actually create the object by requesting the Kubernetes API: the operator's own client,
  // so the same cluster and credentials as the operator's (in the namespace adopt() set).
  const created = await api.create("pods", pod);
  logger.info(`Pod child is created: ${created.metadata.name}`);

  // Update the parent's status.
  return { children: [created.metadata.name] };
});
