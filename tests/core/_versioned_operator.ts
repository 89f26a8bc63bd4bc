/**
 * The operator of tests/core/typed_versions_test.ts: a typed resource with two versions — v1
 * has `spec.size`, v2 moved it to `spec.storage.size` — converted both ways by typed
 * converters, handled at v2 (whatever version a client writes at), with a typed index at v2.
 * Its CRD comes from `kopf crd` on this file; the operator sets the CRD's conversion webhook.
 */
import * as kopf from "../../mod.ts";

const T = kopf.Type;

export const Evc = kopf.resource({
  group: "kopf.dev",
  kind: "EphemeralVolumeClaim",
  plural: "ephemeralvolumeclaims",
  shortNames: ["evc"],
  scope: "Namespaced",
  storage: "v2",
  versions: {
    v1: {
      spec: T.Object({ size: T.String() }),
      status: T.Object({ phase: T.Optional(T.String()) }),
      printerColumns: [{ name: "Size", type: "string", jsonPath: ".spec.size" }],
      deprecated: true,
      deprecationWarning: "kopf.dev/v1 EphemeralVolumeClaim is deprecated; use kopf.dev/v2",
    },
    v2: {
      spec: T.Object({
        storage: T.Object({ size: T.String(), class: T.Optional(T.String()) }),
      }),
      status: T.Object({ phase: T.Optional(T.String()) }),
      printerColumns: [
        { name: "Size", type: "string", jsonPath: ".spec.storage.size" },
        { name: "Phase", type: "string", jsonPath: ".status.phase" },
      ],
    },
  },
});

kopf.on.startup(function config({ settings }) {
  settings.admission.server = new kopf.WebhookServer({ port: 0 });
  settings.admission.managed = "versions.kopf.dev";
  settings.watching.reconnectBackoff = 0.1;
});

kopf.on.convert(Evc, { from: "v1", to: "v2" }, function upgrade({ body }) {
  const { size } = body.spec;
  return { ...body, spec: { storage: { size } } };
});

kopf.on.convert(Evc, { from: "v2", to: "v1" }, function downgrade({ spec, patch }) {
  patch.spec.size = spec.storage.size;
  patch.spec.storage = null;
});

const bySize = kopf.index(Evc.v2, function bySize({ spec, name }) {
  return { [spec.storage.size]: name };
});

kopf.on.create(Evc.v2, function provision({ spec, name, indices, patch, logger }) {
  const same = [...(bySize.of(indices).get(spec.storage.size) ?? [])].sort();
  logger.info(`Provisioning ${name} of ${spec.storage.size}, as ${same.join(", ")}.`);
  patch.status.phase = "Provisioned";
  return { size: spec.storage.size, sameSize: same };
});
