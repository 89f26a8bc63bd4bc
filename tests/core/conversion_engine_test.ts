/**
 * The conversion engine (`kopf.on.convert`): ConversionReview v1 in and out, without a
 * server — single steps, chains, objects already at the desired version, metadata rules,
 * the `patch` form, failures that name the converter and the object, and registration.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { serveConversion } from "../../src/core/engines/conversion.ts";

const settings = new kopf.OperatorSettings();

function review(desired: string, ...objects: kopf.AnyObject[]): kopf.AnyObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid: "uid-1", desiredAPIVersion: desired, objects },
  };
}

function kex(
  version: string,
  name: string,
  spec: kopf.AnyObject,
  meta: kopf.AnyObject = {},
): kopf.AnyObject {
  return {
    apiVersion: `kopf.dev/${version}`,
    kind: "KopfExample",
    metadata: { name, namespace: "default", uid: `u-${name}`, ...meta },
    spec,
  };
}

/** v1 `spec.field` ⇄ v2 `spec.renamed`; v2 ⇄ v3 `spec.items` (a list). */
function registry3(): kopf.OperatorRegistry {
  const registry = new kopf.OperatorRegistry();
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, function up1({ body }) {
    const { field, ...spec } = body.spec;
    return { ...body, spec: { ...spec, renamed: field } };
  });
  kopf.on.convert(
    "kopfexamples",
    { registry, from: "v2", to: "v1" },
    function down2({ spec, patch }) {
      patch.spec.field = spec.renamed;
      patch.spec.renamed = null;
    },
  );
  kopf.on.convert("kopfexamples", { registry, from: "v2", to: "v3" }, function up2({ body }) {
    body.spec.items = [body.spec.renamed];
    delete body.spec.renamed;
  });
  kopf.on.convert("kopfexamples", { registry, from: "v3", to: "v2" }, function down3({ body }) {
    return { ...body, spec: { renamed: body.spec.items[0] } };
  });
  return registry;
}

const serve = (registry: kopf.OperatorRegistry, r: kopf.AnyObject, webhook?: string) =>
  serveConversion(r, { registry, settings, memo: {}, sink: () => {} }, { webhook });

Deno.test("conversion: one step, both directions; apiVersion set, kind and metadata kept", async () => {
  const registry = registry3();
  const up = await serve(
    registry,
    review("kopf.dev/v2", kex("v1", "a", { field: "x", size: 1 })),
    "convert/kopfexamples.kopf.dev",
  );
  assert.deepEqual(up, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    response: {
      uid: "uid-1",
      convertedObjects: [kex("v2", "a", { size: 1, renamed: "x" })],
      result: { status: "Success" },
    },
  });
  const down = await serve(registry, review("kopf.dev/v1", kex("v2", "b", { renamed: "y" })));
  assert.deepEqual(down.response.convertedObjects, [kex("v1", "b", { field: "y" })]);
});

Deno.test("conversion: chains of steps (v1 → v2 → v3 and back); objects at the desired version pass unchanged", async () => {
  const registry = registry3();
  const same = kex("v3", "c", { items: ["z"] });
  const r = await serve(
    registry,
    review("kopf.dev/v3", kex("v1", "a", { field: "x" }), same, kex("v2", "b", { renamed: "y" })),
  );
  assert.equal(r.response.result.status, "Success");
  assert.deepEqual(r.response.convertedObjects, [
    kex("v3", "a", { items: ["x"] }),
    same,
    kex("v3", "b", { items: ["y"] }),
  ]);
  assert.equal(r.response.convertedObjects[1], same, "the very object, untouched");
  const back = await serve(registry, review("kopf.dev/v1", kex("v3", "d", { items: ["w"] })));
  assert.deepEqual(back.response.convertedObjects, [kex("v1", "d", { field: "w" })]);
});

Deno.test("conversion: only labels and annotations of the result's metadata are taken", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.convert("kopfexamples.kopf.dev", { registry, from: "v1", to: "v2" }, ({ body }) => ({
    apiVersion: "whatever/v9",
    spec: body.spec,
    metadata: { name: "renamed", labels: { converted: "yes" }, annotations: null },
  }));
  const given = kex("v1", "a", { x: 1 }, { labels: { a: "b" }, annotations: { n: "o" } });
  const r = await serve(registry, review("kopf.dev/v2", given));
  assert.deepEqual(r.response.convertedObjects, [{
    apiVersion: "kopf.dev/v2",
    kind: "KopfExample",
    metadata: { name: "a", namespace: "default", uid: "u-a", labels: { converted: "yes" } },
    spec: { x: 1 },
  }]);
  assert.deepEqual(given.metadata.labels, { a: "b" }, "the request's object is not changed");
});

Deno.test("conversion: failures name the converter and the object; nothing is converted", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, function picky({ spec }) {
    if (spec.bad) throw new Error("spec.bad cannot be converted");
    return undefined;
  });
  const r = await serve(
    registry,
    review("kopf.dev/v2", kex("v1", "ok", {}), kex("v1", "wrong", { bad: true })),
  );
  assert.deepEqual(r.response, {
    uid: "uid-1",
    result: {
      status: "Failure",
      message: "Converter 'picky' failed to convert KopfExample default/wrong (kopf.dev/v1) " +
        "from v1 to v2: spec.bad cannot be converted",
    },
  });
  const none = await serve(registry, review("kopf.dev/v3", kex("v1", "a", {})));
  assert.equal(
    none.response.result.message,
    "Cannot convert KopfExample default/a (kopf.dev/v1) from v1 to v3: no converter or chain " +
      "of converters of kopfexamples.kopf.dev does it (registered steps: v1→v2).",
  );
  const other = await serve(
    registry,
    review("kopf.dev/v2", kex("v1", "a", {})),
    "convert/other.x.io",
  );
  assert.equal(other.response.result.status, "Failure", "another CRD's path: no converter");
  await assert.rejects(
    () => serve(registry, { request: { uid: "u" } }),
    (e: Error) => e instanceof kopf.MissingDataError,
  );
});

Deno.test("kopf.on.convert: registration refuses duplicates, same versions, versioned resources, retries", () => {
  const registry = new kopf.OperatorRegistry();
  const fn = () => undefined;
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, fn);
  kopf.on.convert("kopfexamples", { registry, from: "kopf.dev/v2", to: "v1" }, fn);
  assert.deepEqual(registry.converterHandlers().map((h) => [h.id, h.from, h.to]), [
    ["fn", "v1", "v2"],
    ["fn", "v2", "v1"],
  ]);
  assert.throws(
    () => kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, fn),
    /kopfexamples has a converter from v1 to v2 already \("fn"\): one converter per step/,
  );
  assert.throws(
    () => kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v1" }, fn),
    /from and to are the same version \(v1\)/,
  );
  assert.throws(
    () => kopf.on.convert("kopf.dev", "v1", "kopfexamples", { registry, from: "v1", to: "v3" }, fn),
    /needs one resource without a version/,
  );
  assert.throws(
    // @ts-expect-error: converters are not retried.
    () => kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v3", retries: 3 }, fn),
    /the option "retries" is not for converters/,
  );
  assert.throws(
    // @ts-expect-error: the versions are required.
    () => kopf.on.convert("kopfexamples", { registry }, fn),
    /needs the versions/,
  );
  assert.ok(!registry.isEmpty);
});
