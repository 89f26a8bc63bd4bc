/**
 * "Filtering" as pure logic: `matchesObject` (labels/annotations with values,
 * PRESENT/ABSENT, callbacks; field/value; `when`), `matchesChange` (field
 * changes, `value` on either side, `old`/`new`), and `selectForCause` (which
 * handlers a cause runs: resume handlers only in the first cycle and not
 * during deletion unless `deleted: true`, field handlers only when the field
 * changed). Handlers are made with the public `kopf.on.*` calls.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { diff } from "../../src/cogs/structs/diffs.ts";
import { matchesChange, matchesObject } from "../../src/core/intents/filters.ts";
import { selectForCause } from "../../src/core/intents/registry.ts";
import type { AnyObject, ChangingHandler } from "../../src/core/intents/handlers.ts";

const KEX = new kopf.Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  namespaced: true,
});

type Registrar = (registry: kopf.OperatorRegistry) => void;

/** The changing handlers registered by `fn`, in order. */
function changing(fn: Registrar): readonly ChangingHandler[] {
  const registry = new kopf.OperatorRegistry();
  fn(registry);
  return registry.changingHandlers(KEX);
}

/** The one changing handler registered by `fn`. */
function one(fn: Registrar): ChangingHandler {
  return changing(fn)[0]!;
}

function body(meta: AnyObject = {}, spec: AnyObject = {}): AnyObject {
  return { metadata: { name: "kex", namespace: "default", ...meta }, spec };
}

/** An update cause from spec `a` to spec `b`. */
function update(a: AnyObject, b: AnyObject, meta: AnyObject = {}) {
  const old = { spec: a };
  const now = { spec: b };
  return { reason: "update", body: body(meta, b), old, new: now, diff: diff(old, now) };
}

const noop = () => {};
const CTX = { marker: "context" };

Deno.test("matchesObject(): labels by exact value, PRESENT, ABSENT and callbacks; all must match", () => {
  const exact = one((registry) =>
    kopf.on.create("kopfexamples", { registry, labels: { app: "x" } }, noop)
  );
  assert.equal(matchesObject(exact, body({ labels: { app: "x" } }), CTX), true);
  assert.equal(matchesObject(exact, body({ labels: { app: "y" } }), CTX), false);
  assert.equal(matchesObject(exact, body(), CTX), false);

  const present = one((registry) =>
    kopf.on.create("kopfexamples", { registry, labels: { app: kopf.PRESENT } }, noop)
  );
  assert.equal(matchesObject(present, body({ labels: { app: "" } }), CTX), true);
  assert.equal(matchesObject(present, body({ labels: { other: "x" } }), CTX), false);

  const absent = one((registry) =>
    kopf.on.create("kopfexamples", { registry, labels: { app: kopf.ABSENT } }, noop)
  );
  assert.equal(matchesObject(absent, body(), CTX), true);
  assert.equal(matchesObject(absent, body({ labels: { app: "x" } }), CTX), false);

  const seen: unknown[] = [];
  const callback = one((registry) =>
    kopf.on.create("kopfexamples", {
      registry,
      labels: {
        app: (value: unknown, ctx: unknown) => {
          seen.push([value, ctx]);
          return value === "ok";
        },
      },
    }, noop)
  );
  assert.equal(matchesObject(callback, body({ labels: { app: "ok" } }), CTX), true);
  assert.equal(matchesObject(callback, body({ labels: { app: "no" } }), CTX), false);
  assert.deepEqual(seen, [["ok", CTX], ["no", CTX]]);

  const both = one((registry) =>
    kopf.on.create("kopfexamples", { registry, labels: { a: "1", b: kopf.PRESENT } }, noop)
  );
  assert.equal(matchesObject(both, body({ labels: { a: "1", b: "2" } }), CTX), true);
  assert.equal(matchesObject(both, body({ labels: { a: "1" } }), CTX), false);
});

Deno.test("matchesObject(): annotations filter the same way", () => {
  const h = one((registry) =>
    kopf.on.create("kopfexamples", {
      registry,
      annotations: { "example.com/a": "v", "example.com/b": kopf.ABSENT },
    }, noop)
  );
  assert.equal(matchesObject(h, body({ annotations: { "example.com/a": "v" } }), CTX), true);
  assert.equal(
    matchesObject(h, body({ annotations: { "example.com/a": "v", "example.com/b": "" } }), CTX),
    false,
  );
  assert.equal(matchesObject(h, body({ labels: { "example.com/a": "v" } }), CTX), false);
});

Deno.test("matchesObject(): `when` gets the handler context; field/value of event handlers check the object", () => {
  const contexts: unknown[] = [];
  const when = one((registry) =>
    kopf.on.create("kopfexamples", {
      registry,
      when: (ctx: AnyObject) => {
        contexts.push(ctx);
        return ctx.marker === "context";
      },
    }, noop)
  );
  assert.equal(matchesObject(when, body(), CTX), true);
  assert.equal(matchesObject(when, body(), { marker: "other" }), false);
  assert.deepEqual(contexts, [CTX, { marker: "other" }]);

  const registry = new kopf.OperatorRegistry();
  kopf.on.event("kopfexamples", { registry, field: "spec.size" }, function present() {});
  kopf.on.event("kopfexamples", { registry, field: "spec.size", value: 2 }, function value() {});
  kopf.on.event(
    "kopfexamples",
    { registry, field: "spec.size", value: kopf.ABSENT },
    function absent() {},
  );
  const ids = (b: AnyObject) => registry.watchingHandlers(KEX, b, CTX).map((h) => h.id);
  assert.deepEqual(ids(body({}, { size: 1 })), ["present/spec.size"]);
  assert.deepEqual(ids(body({}, { size: 2 })), ["present/spec.size", "value/spec.size"]);
  assert.deepEqual(ids(body({}, {})), ["absent/spec.size"]);
});

Deno.test("matchesChange(): an update handler with a field needs that field changed (added, removed, modified, or deeper)", () => {
  const h = one((registry) =>
    kopf.on.update("kopfexamples", { registry, field: "spec.size" }, noop)
  );
  assert.equal(matchesChange(h, update({ size: 1 }, { size: 2 }), CTX), true);
  assert.equal(matchesChange(h, update({}, { size: 2 }), CTX), true);
  assert.equal(matchesChange(h, update({ size: 1 }, {}), CTX), true);
  assert.equal(matchesChange(h, update({ size: { a: 1 } }, { size: { a: 2 } }), CTX), true);
  assert.equal(matchesChange(h, update({ size: 1, x: 1 }, { size: 1, x: 2 }), CTX), false);
  const whole = one((registry) => kopf.on.update("kopfexamples", { registry }, noop));
  assert.equal(matchesChange(whole, update({ x: 1 }, { x: 2 }), CTX), true);
});

Deno.test("matchesChange(): `value` matches either side of the change; `old`/`new` their own side", () => {
  const value = one((registry) =>
    kopf.on.update("kopfexamples", { registry, field: "spec.phase", value: "Ready" }, noop)
  );
  assert.equal(matchesChange(value, update({ phase: "Ready" }, { phase: "Gone" }), CTX), true);
  assert.equal(matchesChange(value, update({ phase: "New" }, { phase: "Ready" }), CTX), true);
  assert.equal(matchesChange(value, update({ phase: "New" }, { phase: "Gone" }), CTX), false);

  const oldNew = one((registry) =>
    kopf.on.update(
      "kopfexamples",
      { registry, field: "spec.phase", old: "New", new: "Ready" },
      noop,
    )
  );
  assert.equal(matchesChange(oldNew, update({ phase: "New" }, { phase: "Ready" }), CTX), true);
  assert.equal(matchesChange(oldNew, update({ phase: "Ready" }, { phase: "New" }), CTX), false);
  assert.equal(matchesChange(oldNew, update({ phase: "Other" }, { phase: "Ready" }), CTX), false);

  const appears = one((registry) =>
    kopf.on.update("kopfexamples", {
      registry,
      field: "spec.phase",
      old: kopf.ABSENT,
      new: kopf.PRESENT,
    }, noop)
  );
  assert.equal(matchesChange(appears, update({}, { phase: "New" }), CTX), true);
  assert.equal(matchesChange(appears, update({ phase: "A" }, { phase: "B" }), CTX), false);
  assert.equal(matchesChange(appears, update({ phase: "A" }, {}), CTX), false);

  const seen: unknown[] = [];
  const callbacks = one((registry) =>
    kopf.on.update("kopfexamples", {
      registry,
      field: "spec.size",
      old: (v: number) => (seen.push(["old", v]), v < 10),
      new: (v: number) => (seen.push(["new", v]), v >= 10),
    }, noop)
  );
  assert.equal(matchesChange(callbacks, update({ size: 5 }, { size: 15 }), CTX), true);
  assert.equal(matchesChange(callbacks, update({ size: 5 }, { size: 6 }), CTX), false);
  assert.deepEqual(seen, [["old", 5], ["new", 15], ["old", 5], ["new", 6]]);
});

Deno.test("matchesChange(): create/delete/resume handlers with a field check its current value", () => {
  const create = one((registry) =>
    kopf.on.create("kopfexamples", { registry, field: "spec.size", value: 1 }, noop)
  );
  const created = (spec: AnyObject) => ({
    reason: "create",
    body: body({}, spec),
    old: undefined,
    new: { spec },
    diff: diff(undefined, { spec }),
  });
  assert.equal(matchesChange(create, created({ size: 1 }), CTX), true);
  assert.equal(matchesChange(create, created({ size: 2 }), CTX), false);
  assert.equal(matchesChange(create, created({}), CTX), false);
  const field = one((registry) =>
    kopf.on.field("kopfexamples", { registry, field: "spec.size" }, noop)
  );
  assert.equal(matchesChange(field, created({ size: 1 }), CTX), true, "appeared on creation");
  assert.equal(matchesChange(field, created({ other: 1 }), CTX), false);
});

Deno.test("selectForCause(): each cause runs its own handlers, in registration order", () => {
  const handlers = changing((registry) => {
    kopf.on.create("kopfexamples", { registry, id: "create1" }, noop);
    kopf.on.update("kopfexamples", { registry, id: "update" }, noop);
    kopf.on.delete("kopfexamples", { registry, id: "delete" }, noop);
    kopf.on.create("kopfexamples", { registry, id: "create2" }, noop);
  });
  const select = (reason: string, old: unknown, now: unknown, deleting = false) =>
    selectForCause(handlers, {
      reason,
      initial: false,
      body: body(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
      old,
      new: now,
      diff: diff(old, now),
    }, CTX).map((h) => h.id);
  assert.deepEqual(select("create", undefined, { spec: {} }), ["create1", "create2"]);
  assert.deepEqual(select("update", { spec: { a: 1 } }, { spec: { a: 2 } }), ["update"]);
  assert.deepEqual(select("delete", { spec: {} }, { spec: {} }, true), ["delete"]);
  assert.deepEqual(select("noop", { spec: {} }, { spec: {} }), []);
});

Deno.test("selectForCause(): resume handlers only in the first cycle (creation included), not during deletion unless deleted=true", () => {
  const handlers = changing((registry) => {
    kopf.on.resume("kopfexamples", { registry, id: "resume" }, noop);
    kopf.on.resume("kopfexamples", { registry, id: "resume_deleted", deleted: true }, noop);
    kopf.on.update("kopfexamples", { registry, id: "update" }, noop);
    kopf.on.delete("kopfexamples", { registry, id: "delete" }, noop);
  });
  const same = { spec: { a: 1 } };
  const changed = { spec: { a: 2 } };
  const select = (reason: string, initial: boolean, now: unknown = same) =>
    selectForCause(handlers, {
      reason,
      initial,
      body: body(reason === "delete" ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
      old: reason === "create" ? undefined : same,
      new: now,
      diff: diff(reason === "create" ? undefined : same, now),
    }, CTX).map((h) => h.id);
  assert.deepEqual(select("resume", true), ["resume", "resume_deleted"]);
  assert.deepEqual(select("update", true, changed), ["resume", "resume_deleted", "update"]);
  assert.deepEqual(select("update", false, changed), ["update"]);
  assert.deepEqual(select("create", false), []);
  assert.deepEqual(select("create", true), ["resume", "resume_deleted"]);
  assert.deepEqual(select("delete", true), ["resume_deleted", "delete"]);
  assert.deepEqual(select("delete", false), ["delete"]);
});

Deno.test("selectForCause(): one function under one id runs once per cycle (create + resume)", () => {
  const handlers = changing((registry) => {
    function both() {}
    kopf.on.resume("kopfexamples", { registry }, both);
    kopf.on.create("kopfexamples", { registry }, both);
    kopf.on.create("kopfexamples", { registry, id: "other" }, both);
  });
  const ids = selectForCause(handlers, {
    reason: "create",
    initial: true,
    body: body({}),
    old: undefined,
    new: { spec: {} },
    diff: diff(undefined, { spec: {} }),
  }, CTX).map((h) => h.id);
  assert.deepEqual(ids, ["both", "other"]);
});

Deno.test("selectForCause(): field handlers run only when their field changed (on creation: when it appeared)", () => {
  const handlers = changing((registry) => {
    kopf.on.field("kopfexamples", { registry, field: "spec.size" }, function size() {});
    kopf.on.update("kopfexamples", { registry, field: "spec.size" }, function upd() {});
    kopf.on.update("kopfexamples", { registry, field: "spec.other" }, function upd() {});
  });
  const select = (reason: string, old: AnyObject | undefined, now: AnyObject, initial = false) =>
    selectForCause(handlers, {
      reason,
      initial,
      body: body({}, now.spec),
      old,
      new: now,
      diff: diff(old, now),
    }, CTX).map((h) => h.id);
  assert.deepEqual(select("update", { spec: { size: 1 } }, { spec: { size: 2 } }), [
    "size/spec.size",
    "upd/spec.size",
  ]);
  assert.deepEqual(
    select("update", { spec: { size: 1, other: 1 } }, { spec: { size: 1, other: 2 } }),
    [
      "upd/spec.other",
    ],
  );
  assert.deepEqual(select("create", undefined, { spec: { size: 1 } }), ["size/spec.size"]);
  assert.deepEqual(select("create", undefined, { spec: { other: 1 } }), []);
  assert.deepEqual(select("resume", { spec: { size: 1 } }, { spec: { size: 1 } }, true), []);
});

// Kopf appends the field to the handler id even when an id is given ("Since the field name is
// part of the handler id (e.g., "fn/spec.field")"), so records of Kopf's `id="upd", field="spec.size"`
// handler (key `upd/spec.size`) are found on takeover.
Deno.test({
  name:
    "handler ids: the field is part of the id, also with an explicit id (takeover of Kopf's records)",
  fn: () => {
    const ids = changing((registry) => {
      kopf.on.update("kopfexamples", { registry, id: "upd", field: "spec.size" }, noop);
      kopf.on.field("kopfexamples", { registry, id: "fld", field: ["spec", "items"] }, noop);
    }).map((h) => h.id);
    assert.deepEqual(ids, ["upd/spec.size", "fld/spec.items"]);
  },
});

Deno.test("registry: the handlers of a resource are computed once, and anew after a registration", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopf.dev", "v1", "kopfexamples", { registry, id: "a" }, () => {});
  const first = registry.changingHandlers(KEX);
  assert.equal(registry.changingHandlers(KEX), first, "the same array while nothing is registered");
  assert.ok(Object.isFrozen(first));
  kopf.on.update("kopf.dev", "v1", "kopfexamples", { registry, id: "b" }, () => {});
  kopf.daemon("kopf.dev", "v1", "kopfexamples", { registry, id: "d" }, async () => {});
  assert.deepEqual(registry.changingHandlers(KEX).map((h) => h.id), ["a", "b"]);
  assert.deepEqual(registry.spawningHandlers(KEX).map((h) => h.id), ["d"]);
});

Deno.test("registry: raw-event handlers of a resource are kept; their filters are applied per body", () => {
  const registry = new kopf.OperatorRegistry();
  assert.deepEqual(registry.watchingHandlers(KEX), []);
  kopf.on.event("kopf.dev", "v1", "kopfexamples", { registry, id: "all" }, () => {});
  kopf.on.event(
    "kopf.dev",
    "v1",
    "kopfexamples",
    { registry, id: "x", labels: { x: "1" } },
    () => {},
  );
  assert.deepEqual(registry.watchingHandlers(KEX).map((h) => h.id), ["all", "x"]);
  assert.equal(registry.watchingHandlers(KEX), registry.watchingHandlers(KEX));
  const body = { metadata: { name: "n", labels: { x: "2" } } };
  assert.deepEqual(registry.watchingHandlers(KEX, body, {}).map((h) => h.id), ["all"]);
});
