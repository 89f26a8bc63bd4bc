/**
 * A typed resource: the EphemeralVolumeClaim of Kopf's walkthrough, defined once with
 * `kopf.resource()`. Its handlers get `spec`, `status` and `patch` typed from the schemas (a typo
 * such as `spec.sise` fails `deno check`), and `kopf crd` prints its CRD from the same definition.
 *
 * Run it (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`):
 *
 *     deno run -A cli.ts crd examples/19-typed/example.ts | kubectl apply -f -
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
    pvcName: Type.Optional(Type.String()),
    size: Type.Optional(Type.String()),
  }),
  printerColumns: [
    { name: "Size", type: "string", jsonPath: ".spec.size" },
    { name: "PVC", type: "string", jsonPath: ".status.pvcName" },
  ],
});

kopf.on.create(EphemeralVolumeClaim, function create_fn({ spec, name, patch, logger }) {
  const size: string = spec.size; // typed: the schema says spec.size is a string
  patch.status.pvcName = `${name}-pvc`;
  patch.status.size = size;
  logger.info(`Claimed ${size} for ${name}.`);
});

// With a field known statically, old and new are that field's type (string | undefined).
kopf.on.field(
  EphemeralVolumeClaim,
  { field: "spec.size" },
  function resize_fn({ old, new: size, patch, logger }) {
    if (old === undefined || size === undefined) return; // the creation: create_fn did it
    patch.status.size = size;
    logger.info(`Resized from ${old} to ${size}.`);
  },
);
