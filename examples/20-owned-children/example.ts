/**
 * Owned children (beyond Kopf): a level-based reconciler keeps one ConfigMap per KopfExample,
 * as the README's "Owned children" shows. It is called with the KopfExample as it is now and the
 * ConfigMaps it owns as they are now — when the KopfExample changes, when its ConfigMap is
 * created, changed or deleted (by anyone), and every 10 minutes anyway.
 *
 * Run it (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`):
 *
 *     kubectl apply -f examples/crd.yaml
 *     deno run -A cli.ts run -A --verbose examples/20-owned-children/example.ts
 *     kubectl apply -f examples/obj.yaml
 *     kubectl delete configmap kopf-example-1-config      # re-created within a second
 *     kubectl delete -f examples/obj.yaml                 # the ConfigMap goes with it
 */
// README: Owned children
import * as kopf from "../../mod.ts"; // "./mod.ts" from the repository's root

kopf.on.reconcile(
  "kopfexamples",
  { owns: ["configmaps"], resync: 600 },
  async function ensureConfig({ body, name, namespace, spec, children, api, patch, logger }) {
    const data = { field: String(spec.field) };
    const config = children.configmaps[0];
    if (!config) {
      const cm = { metadata: { name: `${name}-config` }, data };
      kopf.adopt(cm, body); // owned by the KopfExample: its child, deleted with it
      try {
        await api.create("configmaps", cm);
        logger.info(`Created ${name}-config.`);
      } catch (error) {
        // The children are what the watch has delivered: a create may be seen a moment later.
        if (!(error instanceof kopf.AlreadyExistsError)) throw error;
      }
    } else if (config.data?.field !== data.field) {
      await api.patch("configmaps", config.metadata.name, { data }, { namespace });
      logger.info(`Repaired ${config.metadata.name}.`);
    }
    patch.status.config = `${name}-config`;
  },
);
// README: end
