/**
 * Typed resources with several versions: `kopf.resource({ versions, storage })` is one CRD with
 * every version (served, storage, deprecation, schema, status subresource and printer columns
 * per version) and one typed resource per version (`Evc.v1`, `Evc.v2`) to register handlers on;
 * converters are registered on the resource, typed from one version to the other. End to end:
 * `kopf crd` prints the CRD (with a note on conversion), kubectl applies it on the embedded API
 * server, the operator sets the CRD's conversion webhook (kept by a re-apply), and an object
 * written at v1 is handled at v2 and read back at both versions.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner, startApiServer } from "../../testing.ts";
import { validateCrdSchemas } from "../../src/apiserver/schemas/crd_schema.ts";
import { findKubectls, Kubectl, testWithKubectl } from "../apiserver/_kubectl.ts";
import { ROOT } from "./_type_check.ts";

// deno-lint-ignore no-explicit-any
type Obj = any;

const T = kopf.Type;
const OPERATOR = `${ROOT}tests/core/_versioned_operator.ts`;

function evc(registry?: kopf.OperatorRegistry) {
  const Evc = kopf.resource({
    group: "kopf.dev",
    kind: "EphemeralVolumeClaim",
    plural: "ephemeralvolumeclaims",
    scope: "Namespaced",
    storage: "v2",
    versions: {
      v1: {
        spec: T.Object({ size: T.String() }),
        printerColumns: [{ name: "Size", type: "string", jsonPath: ".spec.size" }],
        deprecated: true,
        deprecationWarning: "use v2",
      },
      v2: {
        spec: T.Object({ storage: T.Object({ size: T.String() }) }),
        status: T.Object({ phase: T.Optional(T.String()) }),
      },
      v3alpha1: { spec: T.Object({}), served: false },
    },
  });
  if (registry) kopf.on.create(Evc.v2, { registry }, function fn() {});
  return Evc;
}

Deno.test("kopf.resource({ versions }): one CRD with each version's schema, served/storage, deprecation, subresources and columns", () => {
  const Evc = evc();
  const crd: Obj = Evc.crd();
  assert.equal(crd.metadata.name, "ephemeralvolumeclaims.kopf.dev");
  assert.equal(crd.spec.conversion, undefined, "the operator sets it, not the CRD's file");
  assert.deepEqual(validateCrdSchemas(crd.spec.versions), []);
  const [v1, v2, v3] = crd.spec.versions;
  assert.deepEqual(
    crd.spec.versions.map((v: Obj) => [v.name, v.served, v.storage]),
    [["v1", true, false], ["v2", true, true], ["v3alpha1", false, false]],
  );
  assert.equal(v1.deprecated, true);
  assert.equal(v1.deprecationWarning, "use v2");
  assert.equal(v2.deprecated, undefined);
  assert.deepEqual(v1.additionalPrinterColumns, [
    { name: "Size", type: "string", jsonPath: ".spec.size" },
  ]);
  assert.equal(v2.additionalPrinterColumns, undefined);
  assert.equal(v1.subresources, undefined);
  assert.deepEqual(v2.subresources, { status: {} });
  assert.deepEqual(v1.schema.openAPIV3Schema.properties.spec.required, ["size"]);
  assert.deepEqual(v2.schema.openAPIV3Schema.properties.spec.properties.storage.required, ["size"]);
  assert.equal(v3.schema.openAPIV3Schema.required, undefined);

  // Each version is a typed resource of its own version, whose CRD is the whole one.
  assert.ok(Evc.v1 instanceof kopf.TypedResource);
  assert.deepEqual(Evc.versions.map((v) => v.apiVersion), [
    "kopf.dev/v1",
    "kopf.dev/v2",
    "kopf.dev/v3alpha1",
  ]);
  assert.equal(Evc.storage, "v2");
  assert.equal(Evc.v2.storage, true);
  assert.equal(Evc.v1.versionOf, Evc);
  assert.deepEqual(Evc.v1.crd(), crd);
  assert.equal(
    JSON.stringify(Evc),
    '{"group":"kopf.dev","kind":"EphemeralVolumeClaim","plural":"ephemeralvolumeclaims",' +
      '"versions":["v1","v2","v3alpha1"],"storage":"v2"}',
  );
  const issues = Evc.v1.validate({ spec: { storage: {} } });
  assert.deepEqual([...new Set(issues.map((i) => i.path))], ["spec.size"]);
  assert.deepEqual(Evc.v2.validate({ spec: { storage: { size: "1G" } } }), []);
});

Deno.test("kopf.resource({ versions }): what Kubernetes would refuse is refused at definition, in one line", () => {
  const define = (versions: Obj, more: Obj = {}) => () =>
    kopf.resource({
      group: "kopf.dev",
      kind: "Evc",
      plural: "evcs",
      scope: "Namespaced",
      versions,
      ...more,
    });
  const spec = T.Object({});
  assert.throws(define({}), /needs at least one version: versions: \{ v1: \{ spec \} \}$/);
  assert.throws(
    define({ v1: { spec }, stable: { spec } }, { storage: "v1" }),
    /the version "stable" is not a Kubernetes version name \(v1, v2beta1, v1alpha3\)$/,
  );
  assert.throws(
    define({ v1: { spec }, v2: { spec } }),
    /needs storage: the version objects are stored at \(one of v1, v2\)$/,
  );
  assert.throws(
    define({ v1: { spec }, v2: { spec } }, { storage: "v3" }),
    /needs storage: the version objects are stored at \(one of v1, v2\), not "v3"$/,
  );
  assert.throws(
    define({ v1: { spec, served: false } }),
    /no version is served \(served: false on all of them\)$/,
  );
  assert.throws(
    define({ v1: { spec, deprecationWarning: "old" } }),
    /v1 has a deprecationWarning but is not deprecated$/,
  );
  assert.throws(
    define({ v1: { spec }, v2: { spec: T.Object({ x: T.Union([T.Object({}), T.String()]) }) } }, {
      storage: "v1",
    }),
    (e: Error) => e instanceof kopf.StructuralSchemaError && e.message.startsWith("v2: spec.x: "),
  );
  // One version: it is the storage version without saying so.
  const One = define({ v1: { spec } })();
  assert.equal(One.storage, "v1");
});

Deno.test("handlers register on a version; converters on the resource (from/to its versions); kopf.crds() lists it once", () => {
  const registry = new kopf.OperatorRegistry();
  const Evc = evc(registry);
  kopf.on.event(Evc.v1, { registry }, function seen() {});
  kopf.on.convert(Evc, { registry, from: "v1", to: "v2" }, function up({ body }) {
    return { ...body, spec: { storage: { size: body.spec.size } } };
  });
  const handlers = registry.changingHandlers(
    new kopf.Resource("kopf.dev", "v2", "ephemeralvolumeclaims"),
  );
  assert.deepEqual(handlers.map((h) => [h.id, h.selector.version]), [["fn", "v2"]]);
  const [up] = registry.converterHandlers();
  assert.deepEqual([up?.id, up?.from, up?.to], ["up", "v1", "v2"]);
  assert.equal(up?.selector.group, "kopf.dev");
  assert.equal(up?.selector.plural, "ephemeralvolumeclaims");
  assert.equal(up?.selector.version, undefined);
  assert.deepEqual(
    kopf.crds(registry).map((c: Obj) => [c.metadata.name, c.spec.versions.length]),
    [["ephemeralvolumeclaims.kopf.dev", 3]],
  );

  // Handlers keeping state on objects are all at one version (here v2, of `fn`); others at any.
  kopf.index(Evc.v1, { registry }, function byName({ name }) {
    return name;
  });
  kopf.on.update(Evc.v2, { registry }, function again() {});
  const refusal = "ephemeralvolumeclaims.kopf.dev has handlers keeping state on its objects " +
    "(create/update/delete/resume/field, daemons, timers) at v2 already: register them all at " +
    "one version (objects have one finalizer and one last-handled state; at two versions, each " +
    "would take the other's state for a change)";
  assert.throws(
    () => kopf.on.update(Evc.v1, { registry }, () => {}),
    new kopf.RegistrationError(`kopf.on.update(...): ${refusal}`),
  );
  assert.throws(
    () => kopf.daemon(Evc.v1, { registry }, () => {}),
    new kopf.RegistrationError(`kopf.daemon(...): ${refusal}`),
  );
  assert.equal(
    registry.changingHandlers(new kopf.Resource("kopf.dev", "v1", "ephemeralvolumeclaims")).length,
    0,
  );

  // What TypeScript refuses, said in one line for JavaScript (or `as never`) callers.
  assert.throws(
    () => kopf.on.create(Evc as never, { registry }, () => {}),
    new kopf.RegistrationError(
      "kopf.on.create(...): ephemeralvolumeclaims.kopf.dev has several versions: register on " +
        "one of them, e.g. kopf.on.create(EphemeralVolumeClaim.v1, fn) (versions: v1, v2, v3alpha1)",
    ),
  );
  assert.throws(
    () => kopf.on.convert(Evc, { registry, from: "v1", to: "v4" as never }, () => {}),
    new kopf.RegistrationError(
      "kopf.on.convert(...): ephemeralvolumeclaims.kopf.dev has no version v4 " +
        "(versions: v1, v2, v3alpha1)",
    ),
  );
  assert.throws(
    () => kopf.on.convert(Evc.v1 as never, { registry, from: "v1", to: "v2" }, () => {}),
    /converters are registered on a resource with several versions \(kopf\.resource\(\{ versions \}\)\), not on one version \(ephemeralvolumeclaims\.v1\.kopf\.dev\)$/,
  );

  // Two definitions of one CRD cannot both be printed.
  const Other = kopf.resource({
    group: "kopf.dev",
    version: "v1",
    kind: "EphemeralVolumeClaim",
    plural: "ephemeralvolumeclaims",
    scope: "Namespaced",
    spec: T.Object({}),
  });
  kopf.on.create(Other, { registry }, () => {});
  assert.throws(
    () => kopf.crds(registry),
    /two kopf\.resource\(\) definitions of the CRD ephemeralvolumeclaims\.kopf\.dev: define all its versions in one/,
  );
});

/** Runs the CLI and returns its code and output. */
async function kopfCli(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("kopf crd: versions without converters are noted; two definitions of one CRD are one line, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-crd-versions-" });
  try {
    const mod = new URL("../../mod.ts", import.meta.url).href;
    const define = (versions: string) =>
      `import * as kopf from ${JSON.stringify(mod)};\n` +
      `const s = kopf.Type.Object({});\n` +
      `export const Evc = kopf.resource({ group: "kopf.dev", kind: "Evc", plural: "evcs", ` +
      `scope: "Namespaced", ${versions} });\n`;
    await Deno.writeTextFile(
      `${dir}/none.ts`,
      define(`storage: "v1", versions: { v1: { spec: s }, v2beta1: { spec: s } }`) +
        `kopf.on.create(Evc.v2beta1, () => {});\n`,
    );
    const none = await kopfCli("crd", `${dir}/none.ts`);
    assert.equal(none.code, 0, none.stderr);
    assert.ok(
      none.stdout.startsWith(
        "# evcs.kopf.dev: no converters (kopf.on.convert) are registered: the API server converts\n" +
          "# between v1, v2beta1 by changing only the apiVersion (strategy None).\n" +
          "apiVersion: apiextensions.k8s.io/v1\n",
      ),
      none.stdout,
    );
    await Deno.writeTextFile(
      `${dir}/twice.ts`,
      define(`versions: { v1: { spec: s } }`) + `kopf.on.create(Evc.v1, () => {});\n` +
        `const Again = kopf.resource({ group: "kopf.dev", version: "v2", kind: "Evc", ` +
        `plural: "evcs", scope: "Namespaced", spec: s });\n` +
        `kopf.on.create(Again, () => {});\n`,
    );
    const twice = await kopfCli("crd", `${dir}/twice.ts`);
    assert.equal(twice.code, 1);
    assert.equal(twice.stdout, "");
    assert.equal(
      twice.stderr.trim(),
      "kopf: two kopf.resource() definitions of the CRD evcs.kopf.dev: define all its versions " +
        "in one, kopf.resource({ versions: { v1: {...}, v2: {...} }, storage })",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function eventually<T>(
  what: string,
  get: () => Promise<T>,
  ok: (v: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 15_000;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await get();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}: not reached in 15 s; last: ${JSON.stringify(last)}`);
}

testWithKubectl(
  "kopf crd of two versions applies with kubectl; the operator sets its conversion webhook; an object written at v1 is handled at v2",
  async () => {
    // The CRD as a user gets it: `kopf crd handlers.ts | kubectl apply -f -`.
    const printed = await kopfCli("crd", OPERATOR);
    assert.equal(printed.code, 0, printed.stderr);
    const [comments] = printed.stdout.split("apiVersion: apiextensions.k8s.io/v1");
    assert.equal(
      comments,
      [
        "# ephemeralvolumeclaims.kopf.dev: converted by the operator (kopf.on.convert: v1→v2, v2→v1).",
        "# spec.conversion is not here: the operator sets it to its webhook when it runs with",
        "# settings.admission.server and settings.admission.managed. Re-applying this file with",
        "# kubectl apply keeps it; kubectl replace or create would drop it (then restart the",
        "# operator). Until it is set, the API server changes only the apiVersion (strategy None).",
        "",
      ].join("\n"),
    );

    await using api = await startApiServer();
    const [binary] = findKubectls(["1.33"]);
    assert.ok(binary, "a kubectl binary");
    await using k = await Kubectl.create(binary, api.kubeconfig.path);
    const json = async (...args: string[]): Promise<Obj> =>
      JSON.parse(await k.ok(["get", ...args, "-o", "json"]));
    assert.match(
      await k.ok(["apply", "-f", "-"], { stdin: printed.stdout }),
      /customresourcedefinition\.apiextensions\.k8s\.io\/ephemeralvolumeclaims\.kopf\.dev created/,
    );
    const crd = await json("crd", "ephemeralvolumeclaims.kopf.dev");
    assert.deepEqual(
      crd.spec.versions.map((v: Obj) => [v.name, v.served, v.storage, v.deprecated ?? false]),
      [["v1", true, false, true], ["v2", true, true, false]],
    );
    assert.equal(crd.spec.conversion?.strategy ?? "None", "None");

    const runner = await KopfRunner.start(
      ["run", "--standalone", "-n", "default", "--verbose", OPERATOR],
      { kubeconfig: api.kubeconfig.path },
    );
    try {
      const webhooked = await eventually(
        "the CRD's conversion set to the operator's webhook",
        () => json("crd", "ephemeralvolumeclaims.kopf.dev"),
        (c) => c.spec.conversion?.strategy === "Webhook",
      );
      assert.match(
        webhooked.spec.conversion.webhook.clientConfig.url,
        /\/convert\/ephemeralvolumeclaims\.kopf\.dev$/,
      );
      // Re-applying the printed CRD keeps the operator's conversion (the file does not have it).
      assert.match(
        await k.ok(["apply", "-f", "-"], { stdin: printed.stdout }),
        /ephemeralvolumeclaims\.kopf\.dev (unchanged|configured)/,
      );
      const reapplied = await json("crd", "ephemeralvolumeclaims.kopf.dev");
      assert.deepEqual(reapplied.spec.conversion, webhooked.spec.conversion);

      // Written at v1 (the deprecated version); handled at v2 by the typed handler.
      await k.ok(["apply", "-f", "-"], {
        stdin: JSON.stringify({
          apiVersion: "kopf.dev/v1",
          kind: "EphemeralVolumeClaim",
          metadata: { name: "old-client", namespace: "default" },
          spec: { size: "1G" },
        }),
      });
      const handled = await eventually(
        "the v2 handler's result",
        () => json("ephemeralvolumeclaims.v2.kopf.dev", "old-client"),
        (o) => o.status?.provision !== undefined,
      );
      assert.equal(handled.apiVersion, "kopf.dev/v2");
      assert.deepEqual(handled.spec, { storage: { size: "1G" } });
      assert.deepEqual(handled.status.provision, { size: "1G", sameSize: ["old-client"] });
      assert.equal(handled.status.phase, "Provisioned");

      // Written at v2; read at v1 through the downgrade converter.
      await k.ok(["apply", "-f", "-"], {
        stdin: JSON.stringify({
          apiVersion: "kopf.dev/v2",
          kind: "EphemeralVolumeClaim",
          metadata: { name: "new-client", namespace: "default" },
          spec: { storage: { size: "1G" } },
        }),
      });
      const atV1 = await json("ephemeralvolumeclaims.v1.kopf.dev", "new-client");
      assert.equal(atV1.apiVersion, "kopf.dev/v1");
      assert.deepEqual(atV1.spec, { size: "1G" });
      const second = await eventually(
        "the v2 handler's result on the second object",
        () => json("ephemeralvolumeclaims.v2.kopf.dev", "new-client"),
        (o) => o.status?.provision !== undefined,
      );
      assert.deepEqual(second.status.provision, {
        size: "1G",
        sameSize: ["new-client", "old-client"],
      });

      // Each version's printer columns.
      assert.match(
        await k.ok(["get", "ephemeralvolumeclaims.v1.kopf.dev"]),
        /^NAME\s+SIZE\nnew-client\s+1G\nold-client\s+1G\n/,
      );
      assert.match(
        await k.ok(["get", "ephemeralvolumeclaims.v2.kopf.dev"]),
        /^NAME\s+SIZE\s+PHASE\nnew-client\s+1G\s+Provisioned\nold-client\s+1G\s+Provisioned\n/,
      );
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0, runner.output);
    assert.match(
      runner.output,
      /Reconfiguring the conversion webhook of ephemeralvolumeclaims\.kopf\.dev\./,
    );
    assert.equal(runner.output.match(/Handler 'provision' succeeded/g)?.length, 2, runner.output);
  },
);
