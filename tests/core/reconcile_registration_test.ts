/**
 * Registering reconcilers (`kopf.on.reconcile`): the options table (owns, resync, debounce are
 * theirs alone; bad values refused in one line), `owns` in every resource form and the names of
 * `children`, the registry's selectors (owned resources are watched), and the typing of
 * `children` and of a typed parent (checked by `deno check` of this file).
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";

const { Type } = kopf;

Deno.test("kopf.on.reconcile: owns in every form; children are named as written (strings) or by plural", () => {
  const registry = new kopf.OperatorRegistry();
  const Evc = kopf.resource({
    group: "kopf.dev",
    version: "v1",
    kind: "EphemeralVolumeClaim",
    plural: "ephemeralvolumeclaims",
    scope: "Namespaced",
    spec: Type.Object({ size: Type.String() }),
    status: Type.Object({}),
  });
  kopf.on.reconcile("kopfexamples", {
    registry,
    owns: ["pods", "deployments.apps", { group: "batch", version: "v1", plural: "jobs" }, Evc],
    resync: 600,
    debounce: 0.5,
  }, function sync() {});
  const [h] = registry.reconcilingHandlers();
  assert.equal(h!.id, "sync");
  assert.deepEqual(h!.owns.map((o) => o.key), [
    "pods",
    "deployments.apps",
    "jobs",
    "ephemeralvolumeclaims",
  ]);
  assert.equal(h!.resync, 600);
  assert.equal(h!.debounce, 0.5);
  // The owned resources are watched too (their events reach their parents).
  assert.deepEqual(registry.selectors().map(String).sort(), [
    "deployments.apps",
    "ephemeralvolumeclaims.v1.kopf.dev",
    "jobs.v1.batch",
    "kopfexamples",
    "pods",
  ]);
  assert.equal(registry.isEmpty, false);
});

Deno.test("kopf.on.reconcile: defaults — no children, a 0.1 s debounce, no resync", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.reconcile("kopfexamples", { registry }, () => {});
  const [h] = registry.reconcilingHandlers();
  assert.deepEqual(h!.owns, []);
  assert.equal(h!.debounce, 0.1);
  assert.equal(h!.resync, undefined);
  assert.equal(h!.id, "reconcile_handler");
});

Deno.test("kopf.on.reconcile: bad options are refused in one line", () => {
  const registry = new kopf.OperatorRegistry();
  const cases: [unknown, RegExp][] = [
    [{ owns: "pods" }, /owns must be a non-empty list of resources/],
    [{ owns: [] }, /owns must be a non-empty list of resources/],
    [{ resync: 0 }, /resync must be a number above 0 \(seconds\), not 0/],
    [{ debounce: -1 }, /debounce must be a number of 0 or more/],
    [{ owns: ["pods", "pods"] }, /owns names "pods" twice/],
    [{ owns: [{ group: "apps" }] }, /owns has \{"group":"apps"\}, which is not a resource/],
    [{ interval: 60 }, /the option "interval" is not for reconcilers; it is for kopf.timer/],
  ];
  const reconcile = kopf.on.reconcile as unknown as (...args: unknown[]) => unknown;
  for (const [options, message] of cases) {
    assert.throws(
      () => reconcile("kopfexamples", { registry, ...(options as object) }, () => {}),
      (e: Error) => e.name === "RegistrationError" && message.test(e.message),
      String(message),
    );
  }
  assert.throws(
    () =>
      (kopf.on.create as unknown as (...args: unknown[]) => unknown)("kopfexamples", {
        registry,
        owns: ["pods"],
      }, () => {}),
    /the option "owns" is not for create handlers; it is for kopf.on.reconcile/,
  );
  kopf.on.reconcile("kopfexamples", { registry }, function same() {});
  assert.throws(
    () => kopf.on.reconcile("kopfexamples", { registry }, function same() {}),
    /a reconciler with id "same" is already registered/,
  );
});

Deno.test("kopf.reconcile is kopf.on.reconcile; children and a typed parent are typed", () => {
  assert.equal(kopf.reconcile, kopf.on.reconcile);
  const registry = new kopf.OperatorRegistry();
  const Evc = kopf.resource({
    group: "kopf.dev",
    version: "v1",
    kind: "EphemeralVolumeClaim",
    plural: "ephemeralvolumeclaims",
    scope: "Namespaced",
    spec: Type.Object({ size: Type.String() }),
    status: Type.Object({ pvcs: Type.Optional(Type.Number()) }),
  });
  kopf.on.reconcile(
    Evc,
    { registry, owns: ["persistentvolumeclaims"] },
    ({ spec, children, patch }) => {
      const size: string = spec.size; // the parent's spec, typed
      const pvcs: kopf.AnyObject[] = children.persistentvolumeclaims; // a list, never undefined
      patch.status.pvcs = pvcs.length; // the parent's status, typed
      return size;
    },
  );
  kopf.on.reconcile("kopfexamples", { registry, owns: ["pods", "configmaps"] }, ({ children }) => {
    const n: number = children.pods.length + children.configmaps.length;
    // @ts-expect-error: not owned, so not among the children
    void children.secrets.length;
    return n;
  });
  assert.equal(registry.reconcilingHandlers().length, 2);
});
