import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { validateCrdSchemas } from "../../src/apiserver/schemas/crd_schema.ts";

const Evc = kopf.resource({
  group: "kopf.dev",
  version: "v1",
  kind: "EphemeralVolumeClaim",
  plural: "ephemeralvolumeclaims",
  shortNames: ["evc"],
  categories: ["all"],
  scope: "Namespaced",
  spec: kopf.Type.Object({
    size: kopf.Type.String({ description: "The size, e.g. 1G." }),
    replicas: kopf.Type.Optional(kopf.Type.Integer({ minimum: 1, default: 1 })),
    port: kopf.Type.Optional(kopf.Type.Union([kopf.Type.Integer(), kopf.Type.String()])),
    labels: kopf.Type.Optional(kopf.Type.Record(kopf.Type.String(), kopf.Type.String())),
    mode: kopf.Type.Optional(
      kopf.Type.Union([kopf.Type.Literal("fast"), kopf.Type.Literal("slow")]),
    ),
    extra: kopf.Type.Optional(kopf.Type.Unknown()),
    ratio: kopf.Type.Optional(kopf.Type.Number({ exclusiveMinimum: 0 })),
    items: kopf.Type.Optional(
      kopf.Type.Array(
        kopf.Type.Object({ name: kopf.Type.String() }, { additionalProperties: false }),
      ),
    ),
    note: kopf.Type.Optional(kopf.Type.Union([kopf.Type.String(), kopf.Type.Null()])),
  }),
  status: kopf.Type.Object({ pvcName: kopf.Type.Optional(kopf.Type.String()) }),
  printerColumns: [{ name: "Size", type: "string", jsonPath: ".spec.size" }],
});

// deno-lint-ignore no-explicit-any
type Obj = any;

Deno.test("kopf.resource(): the CRD's schema is structural (the API server's own check accepts it)", () => {
  const crd: Obj = Evc.crd();
  assert.equal(crd.metadata.name, "ephemeralvolumeclaims.kopf.dev");
  assert.deepEqual(crd.spec.names, {
    kind: "EphemeralVolumeClaim",
    listKind: "EphemeralVolumeClaimList",
    plural: "ephemeralvolumeclaims",
    singular: "ephemeralvolumeclaim",
    shortNames: ["evc"],
    categories: ["all"],
  });
  assert.deepEqual(validateCrdSchemas(crd.spec.versions), []);
  const [version] = crd.spec.versions;
  assert.deepEqual(version.subresources, { status: {} });
  assert.deepEqual(version.additionalPrinterColumns, [
    { name: "Size", type: "string", jsonPath: ".spec.size" },
  ]);
  const root = version.schema.openAPIV3Schema;
  assert.deepEqual(root.required, ["spec"]);
  const spec = root.properties.spec;
  assert.deepEqual(spec.required, ["size"]);
  assert.deepEqual(spec.properties.size, { type: "string", description: "The size, e.g. 1G." });
  assert.deepEqual(spec.properties.port, {
    "x-kubernetes-int-or-string": true,
    anyOf: [{ type: "integer" }, { type: "string" }],
  });
  assert.deepEqual(spec.properties.labels, {
    type: "object",
    additionalProperties: { type: "string" },
  });
  assert.deepEqual(spec.properties.mode, { type: "string", enum: ["fast", "slow"] });
  assert.deepEqual(spec.properties.extra, { "x-kubernetes-preserve-unknown-fields": true });
  assert.deepEqual(spec.properties.ratio, { type: "number", minimum: 0, exclusiveMinimum: true });
  assert.equal(spec.properties.items.items.additionalProperties, undefined);
  assert.deepEqual(spec.properties.note, { type: "string", nullable: true });
  // Kopf's handler results and progress live in status: it keeps unknown fields.
  assert.equal(root.properties.status["x-kubernetes-preserve-unknown-fields"], true);
});

Deno.test("kopf.resource(): no status schema, no status subresource; optional-only spec is not required", () => {
  const Free = kopf.resource({
    group: "kopf.dev",
    version: "v1",
    kind: "Free",
    plural: "frees",
    scope: "Cluster",
    spec: kopf.Type.Object({ x: kopf.Type.Optional(kopf.Type.String()) }),
  });
  const crd: Obj = Free.crd();
  assert.equal(crd.spec.versions[0].subresources, undefined);
  assert.equal(crd.spec.versions[0].schema.openAPIV3Schema.required, undefined);
  assert.deepEqual(validateCrdSchemas(crd.spec.versions), []);
});

Deno.test("kopf.resource(): a schema with no structural form is refused at definition, naming the path", () => {
  assert.throws(
    () =>
      kopf.resource({
        group: "kopf.dev",
        version: "v1",
        kind: "Bad",
        plural: "bads",
        scope: "Namespaced",
        spec: kopf.Type.Object({
          either: kopf.Type.Union([
            kopf.Type.Object({ a: kopf.Type.String() }),
            kopf.Type.Object({ b: kopf.Type.String() }),
          ]),
        }),
      }),
    (e: Error) =>
      e instanceof kopf.StructuralSchemaError && e.message.startsWith("spec.either: ") &&
      e.message.includes("unions"),
  );
  assert.throws(
    () =>
      kopf.resource({
        group: "kopf.dev",
        version: "",
        kind: "Bad",
        plural: "bads",
        scope: "Namespaced",
        spec: kopf.Type.Object({}),
      }),
    /needs a non-empty version/,
  );
});

Deno.test("TypedResource.validate() reports what the schema refuses, by path", () => {
  assert.deepEqual(Evc.validate({ spec: { size: "1G" } }), []);
  assert.equal(Evc.is({ spec: { size: "1G" }, status: { pvcName: "p" } }), true);
  const issues = Evc.validate({ spec: { size: 1, replicas: 0 }, status: { pvcName: 5 } });
  assert.deepEqual(issues.map((i) => i.path), ["spec.size", "spec.replicas", "status.pvcName"]);
});

Deno.test("handlers on a typed resource register on its group/version/plural; kopf.crds() lists it once", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create(Evc, { registry }, function createFn({ spec, patch }) {
    patch.status.pvcName = spec.size;
  });
  kopf.on.field(Evc, { registry, field: "spec.size" }, function sizeFn() {});
  kopf.daemon(Evc, { registry }, async function watchFn({ signal }) {
    await kopf.sleep(1, signal);
  });
  kopf.on.create("kopfexamples", { registry }, function untyped() {});
  const handlers = registry.changingHandlers(
    new kopf.Resource("kopf.dev", "v1", "ephemeralvolumeclaims"),
  );
  const typed = handlers.find((h) => h.id === "createFn")!;
  assert.equal(handlers.length, 2); // not the kopfexamples handler
  assert.equal(typed.selector.group, "kopf.dev");
  assert.equal(typed.selector.version, "v1");
  assert.equal(typed.selector.plural, "ephemeralvolumeclaims");
  assert.deepEqual(handlers.find((h) => h.id === "sizeFn/spec.size")?.field, ["spec", "size"]);
  assert.deepEqual(
    kopf.crds(registry).map((c: Obj) => c.metadata.name),
    ["ephemeralvolumeclaims.kopf.dev"],
  );
  assert.throws(
    () => kopf.on.create("kopf.dev", Evc as never, () => {}),
    /give a typed resource alone/,
  );
});
