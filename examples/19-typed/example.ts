/**
 * Kopf's walkthrough, typed: the EphemeralVolumeClaim resource defined once with
 * `kopf.resource()`. Its handlers get `spec`, `status` and `patch` typed from the schemas (a typo
 * such as `spec.sise` fails `deno check`), and `kopf crd` prints its CRD from the same definition.
 * As in the walkthrough, each claim gets a PersistentVolumeClaim child, created through the
 * handlers' `api` (the operator's own credentials) and adopted, so it is deleted with its parent;
 * size changes are patched through to the child, and the claim's labels propagated to it.
 *
 * Run it (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`):
 *
 *     deno run -A cli.ts crd examples/19-typed/example.ts | kubectl apply -f -
 *     deno run -A cli.ts rbac -A examples/19-typed/example.ts   # the operator's RBAC, for a cluster
 *     deno run -A cli.ts run -A --verbose examples/19-typed/example.ts
 *     kubectl apply -f - <<< '{"apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim",
 *       "metadata": {"name": "my-claim"}, "spec": {"size": "1G"}}'
 *     kubectl get evc
 */
import * as kopf from "../../mod.ts";

const { Type } = kopf;

export const EphemeralVolumeClaim = kopf.resource({
  group: "kopf.dev",
  version: "v1",
  kind: "EphemeralVolumeClaim",
  plural: "ephemeralvolumeclaims",
  shortNames: ["evc"],
  scope: "Namespaced",
  spec: Type.Object({
    size: Type.String({ pattern: "^[0-9]+[KMGT]i?$", description: "The size, e.g. 1G or 10Mi." }),
  }),
  status: Type.Object({
    // Where Kopf keeps create_fn's result (status.<handler id>).
    create_fn: Type.Optional(Type.Object({ pvcName: Type.String() })),
    size: Type.Optional(Type.String()),
  }),
  printerColumns: [
    { name: "Size", type: "string", jsonPath: ".spec.size" },
    { name: "PVC", type: "string", jsonPath: ".status.create_fn.pvcName" },
  ],
});

// What the handlers do through `api` beyond Kopf's own requests: `kopf rbac` grants it.
kopf.uses("persistentvolumeclaims", ["create", "patch"]);

kopf.on.create(
  EphemeralVolumeClaim,
  async function create_fn({ spec, name, namespace, body, api, patch, logger }) {
    const pvc = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: `${name}-pvc`,
        annotations: { "volume.beta.kubernetes.io/storage-class": "standard" },
      },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: spec.size } }, // typed: spec.size is a string
      },
    };
    kopf.adopt(pvc, body); // owner reference, namespace and the claim's labels
    const made = await api.create("persistentvolumeclaims", pvc, { namespace });
    logger.info(`PVC child is created: ${made.metadata?.name} with ${spec.size}.`);
    patch.status.size = spec.size;
    return { pvcName: `${made.metadata?.name}` };
  },
);

// With a field known statically, old and new are that field's type (string | undefined).
kopf.on.field(
  EphemeralVolumeClaim,
  { field: "spec.size" },
  async function resize_fn({ old, new: size, status, namespace, api, patch, logger }) {
    if (old === undefined || size === undefined) return; // the creation: create_fn did it
    const pvcName = status.create_fn?.pvcName;
    if (!pvcName) throw new kopf.TemporaryError("The PVC is not created yet.", { delay: 1 });
    await api.patch("persistentvolumeclaims", pvcName, {
      spec: { resources: { requests: { storage: size } } },
    }, { namespace });
    patch.status.size = size;
    logger.info(`Resized from ${old} to ${size}.`);
  },
);

// The claim's labels go to the PVC: a removed label is removed there too (null in the patch).
kopf.on.field(
  EphemeralVolumeClaim,
  { field: "metadata.labels" },
  async function relabel({ old, new: labels, status, namespace, api }) {
    const pvcName = status.create_fn?.pvcName;
    if (!pvcName) return; // the creation: create_fn's adopt() copies the labels
    const patch: Record<string, string | null> = { ...labels };
    for (const key of Object.keys(old ?? {})) if (!(key in patch)) patch[key] = null;
    await api.patch("persistentvolumeclaims", pvcName, { metadata: { labels: patch } }, {
      namespace,
    });
  },
);
