/**
 * What one processing cycle writes, over a fake object API that records every call: our own
 * write's echo writes nothing and resolves at once; an echo that still has something to do —
 * a finalizer no handler needs any more, raw-event handlers' edits, another writer's spelling
 * of the same essence — is not taken for a no-op by the shortcut. No API server.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import type { ObjectApi } from "../../src/core/actions/application.ts";
import { newMemory, processEvent, type RawEvent } from "../../src/core/reactor/processing.ts";
import { KEX, operatorContext as operator } from "./_cycle.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";
const NOOP = "Something has changed, but we are not interested (the essence is the same).";

/** A stand-in API over one stored object: patches apply (and bump the version), all recorded. */
function fakeApi(initial: Obj) {
  let stored = structuredClone(initial);
  let rv = Number(initial.metadata.resourceVersion);
  const calls: Array<{ type: string; body: unknown }> = [];
  const api: ObjectApi = {
    patch(_name, _ns, body, type) {
      calls.push({ type, body: structuredClone(body) });
      const next = structuredClone(stored);
      if (type === "json") {
        for (const op of body as Obj[]) {
          if (op.op === "test") continue;
          if (op.path === "/metadata/finalizers") next.metadata.finalizers = op.value;
          else if (op.path === "/metadata/finalizers/-") next.metadata.finalizers.push(op.value);
          else next.metadata.finalizers.splice(Number(op.path.split("/").pop()), 1);
        }
      } else {
        merge(next, body as Obj);
      }
      next.metadata.resourceVersion = String(++rv);
      stored = next;
      return Promise.resolve(structuredClone(next));
    },
    get: () => Promise.resolve(structuredClone(stored)),
  };
  return { api, calls, stored: () => structuredClone(stored) };
}

function merge(into: Obj, patch: Obj): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete into[k];
    else if (typeof v === "object" && !Array.isArray(v) && typeof into[k] === "object") {
      merge(into[k], v);
    } else into[k] = structuredClone(v);
  }
}

function body(extra: Obj = {}): Obj {
  return {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex", namespace: "ns", uid: "u-1", resourceVersion: "1", ...extra },
    spec: { field: "v" },
  };
}

Deno.test("cycle: the creation writes once (finalizer, then result and diff-base); its echo writes nothing, logs the no-op line, resolves at once", async () => {
  const registry = new kopf.OperatorRegistry();
  let created = 0;
  kopf.on.create("kopfexamples", { registry, id: "create_fn" }, () => ({ n: ++created }));
  kopf.on.delete("kopfexamples", { registry, id: "delete_fn" }, () => {});
  const lines: string[] = [];
  const op = operator(registry, lines);
  const { api, calls, stored } = fakeApi(body());
  const memory = newMemory();
  await processEvent(op, KEX, api, { type: "ADDED", object: stored() }, memory);
  assert.deepEqual(calls.map((c) => c.type), ["json", "merge"]);
  assert.deepEqual((calls[1]!.body as Obj).status, { create_fn: { n: 1 } });
  assert.equal(
    (calls[1]!.body as Obj).metadata.annotations[LAST_HANDLED],
    '{"spec":{"field":"v"}}\n',
  );
  assert.equal(memory.fullyHandledOnce, true);

  // The echo: nothing to do, decided without waiting (resolved before a macrotask).
  memory.fullyHandledOnce = false;
  lines.length = 0;
  const echo = processEvent(op, KEX, api, { type: "MODIFIED", object: stored() }, memory);
  let settled = false;
  echo.then(() => (settled = true));
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(settled, true);
  assert.deepEqual(await echo, { patched: undefined });
  assert.equal(calls.length, 2);
  assert.deepEqual(lines, [NOOP]);
  assert.equal(memory.fullyHandledOnce, true);
  assert.equal(created, 1);
});

Deno.test("cycle: an unchanged object with a finalizer that no handler needs any more gets it removed", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry, id: "create_fn" }, () => {});
  const lines: string[] = [];
  const stamped = body({
    finalizers: [FINALIZER],
    annotations: { [LAST_HANDLED]: '{"spec":{"field":"v"}}\n' },
  });
  const { api, calls, stored } = fakeApi(stamped);
  await processEvent(
    operator(registry, lines),
    KEX,
    api,
    { type: "MODIFIED", object: stored() },
    newMemory(),
  );
  assert.deepEqual(calls.map((c) => c.type), ["json"]);
  assert.deepEqual(stored().metadata.finalizers, []);
  assert.ok(lines.includes("Removing the finalizer, as there are no handlers requiring it."));
});

Deno.test("cycle: raw-event handlers' edits of an unchanged object are written; no changing handler runs", async () => {
  const registry = new kopf.OperatorRegistry();
  let updated = 0;
  kopf.on.update("kopfexamples", { registry, id: "update_fn" }, () => void updated++);
  kopf.on.event("kopfexamples", { registry, id: "seen" }, ({ patch }: Obj) => {
    patch.status.seen = true;
  });
  const lines: string[] = [];
  const stamped = body({ annotations: { [LAST_HANDLED]: '{"spec":{"field":"v"}}\n' } });
  const { api, calls, stored } = fakeApi(stamped);
  const event: RawEvent = { type: "MODIFIED", object: stored() };
  await processEvent(operator(registry, lines), KEX, api, event, newMemory());
  assert.deepEqual(calls.map((c) => [c.type, c.body]), [["merge", { status: { seen: true } }]]);
  assert.equal(updated, 0);
  assert.ok(lines.includes(NOOP));
});

Deno.test("cycle: the same essence in another writer's spelling is no change either; a real change runs the update", async () => {
  const registry = new kopf.OperatorRegistry();
  const diffs: unknown[] = [];
  kopf.on.update("kopfexamples", { registry, id: "update_fn" }, ({ diff }: Obj) => {
    diffs.push(diff);
  });
  const lines: string[] = [];
  const respelt = body({ annotations: { [LAST_HANDLED]: '{ "spec": { "field": "v" } }' } });
  const { api, calls, stored } = fakeApi(respelt);
  const op = operator(registry, lines);
  await processEvent(op, KEX, api, { type: "MODIFIED", object: stored() }, newMemory());
  assert.deepEqual([calls.length, diffs.length], [0, 0]);
  assert.deepEqual(lines, [NOOP]);
  const changed = { ...stored(), spec: { field: "w" } };
  await processEvent(op, KEX, api, { type: "MODIFIED", object: changed }, newMemory());
  assert.deepEqual(diffs, [[["change", ["spec", "field"], "v", "w"]]]);
  assert.equal(calls.length, 1);
});

Deno.test("cycle: the creation gives its write's echo a check — true for that echo (the no-op line, as its cycle), false for what a cycle must see", async () => {
  const registry = new kopf.OperatorRegistry();
  let updated = 0;
  kopf.on.create("kopfexamples", { registry, id: "create_fn" }, () => ({ ok: true }));
  kopf.on.update("kopfexamples", { registry, id: "update_fn" }, () => void updated++);
  kopf.on.delete("kopfexamples", { registry, id: "delete_fn" }, () => {});
  const lines: string[] = [];
  const op = operator(registry, lines);
  const { api, stored } = fakeApi(body());
  const memory = newMemory();
  const result = await processEvent(op, KEX, api, { type: "ADDED", object: stored() }, memory);
  assert.equal(result.patched?.metadata.resourceVersion, stored().metadata.resourceVersion);
  const echo = result.echo!;
  assert.equal(typeof echo, "function");

  // What a cycle must see is no echo of ours: another writer's change carried by our write's
  // response (a merge patch applies on top of it), a deletion, a finalizer taken away.
  lines.length = 0;
  assert.equal(echo({ ...stored(), spec: { field: "w" } }), false);
  const deleting = stored();
  deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  assert.equal(echo(deleting), false);
  const unfinalized = stored();
  unfinalized.metadata.finalizers = [];
  assert.equal(echo(unfinalized), false);
  assert.deepEqual(lines, []);

  // The echo itself: nothing to do — what its cycle would say, and the cycle agrees.
  memory.fullyHandledOnce = false;
  assert.equal(echo(stored()), true);
  assert.deepEqual(lines, [NOOP]);
  assert.equal(memory.fullyHandledOnce, true);
  const cycle = await processEvent(op, KEX, api, { type: "MODIFIED", object: stored() }, memory);
  assert.deepEqual([cycle, updated], [{ patched: undefined }, 0]);

  // Someone else's change: the update's cycle, whose write's echo needs nothing again.
  await api.patch("kex", "ns", { spec: { field: "x" } }, "merge");
  const edited = await processEvent(op, KEX, api, { type: "MODIFIED", object: stored() }, memory);
  assert.equal(updated, 1);
  assert.equal(edited.echo!(stored()), true);
});

Deno.test("cycle: no echo check where every event matters — raw-event handlers, the deletion, filters with callbacks", async () => {
  const watched = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry: watched, id: "create_fn" }, () => ({ ok: true }));
  kopf.on.event("kopfexamples", { registry: watched, id: "seen" }, () => {});
  let fx = fakeApi(body());
  let result = await processEvent(
    operator(watched),
    KEX,
    fx.api,
    { type: "ADDED", object: fx.stored() },
    newMemory(),
  );
  assert.ok(result.patched !== undefined && result.echo === undefined);

  const filtered = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", {
    registry: filtered,
    id: "create_fn",
    when: ({ spec }: Obj) => spec.field === "v",
  }, () => ({ ok: true }));
  kopf.on.delete("kopfexamples", { registry: filtered, id: "delete_fn" }, () => {});
  const op = operator(filtered);
  fx = fakeApi(body());
  const memory = newMemory();
  result = await processEvent(op, KEX, fx.api, { type: "ADDED", object: fx.stored() }, memory);
  assert.equal(result.echo!(fx.stored()), false, "a callback filter reads a context: a cycle");

  const deleting = fx.stored();
  deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  result = await processEvent(op, KEX, fx.api, { type: "MODIFIED", object: deleting }, memory);
  assert.equal(result.echo, undefined);
});
