/**
 * The context a resource-changing handler receives, as one cycle (processEvent) builds it over
 * a fake object API: every field an own enumerable property in Kopf-for-Deno's order (a spread
 * `{ ...ctx }` sees them all, `signal` included), field handlers get their field's side of the
 * change, and filters' callbacks get the cause's context. No API server.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import type { ObjectApi } from "../../src/core/actions/application.ts";
import { newMemory, processEvent } from "../../src/core/reactor/processing.ts";
import { KEX, operatorContext as operator } from "./_cycle.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const KEYS = [
  "body",
  "spec",
  "meta",
  "status",
  "uid",
  "name",
  "namespace",
  "labels",
  "annotations",
  "resource",
  "patch",
  "logger",
  "memo",
  "settings",
  "indices",
  "api",
  "clock",
  "param",
  "retry",
  "started",
  "runtime",
  "signal",
  "reason",
  "diff",
  "old",
  "new",
];

Deno.test("changing handlers: every context field is own and enumerable, in order; a spread sees them all", async () => {
  const registry = new kopf.OperatorRegistry();
  const seen: Obj[] = [];
  const keys: string[][] = [];
  kopf.on.create("kopfexamples", { registry, id: "whole", param: "p" }, (ctx: Obj) => {
    keys.push(Object.keys(ctx));
    seen.push({ ...ctx });
    return { done: true };
  });
  kopf.on.create("kopfexamples", { registry, id: "field", field: "spec.size" }, (ctx: Obj) => {
    seen.push({ ...ctx });
  });
  const body = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "a", namespace: "ns", uid: "u1", resourceVersion: "1", labels: { x: "y" } },
    spec: { size: 3, other: 1 },
  };
  const api: ObjectApi = {
    patch: (_name, _ns, patch) =>
      Promise.resolve({
        ...body,
        ...(patch as Obj),
        metadata: { ...body.metadata, resourceVersion: "2" },
      }),
    get: () => Promise.resolve(body),
  };
  await processEvent(operator(registry), KEX, api, { type: "ADDED", object: body }, newMemory());
  assert.equal(seen.length, 2);
  assert.deepEqual(keys[0], KEYS);
  const [whole, field] = seen as [Obj, Obj];
  assert.deepEqual(Object.keys(whole), KEYS, "a spread copies every field, signal included");
  assert.ok(whole.signal instanceof AbortSignal);
  assert.equal(whole.signal.aborted, false);
  assert.equal(whole.body, body);
  assert.equal(whole.meta, body.metadata);
  assert.deepEqual(whole.labels, { x: "y" });
  assert.equal(whole.name, "a");
  assert.equal(whole.namespace, "ns");
  assert.equal(whole.uid, "u1");
  assert.deepEqual(whole.spec, body.spec);
  assert.deepEqual(whole.status, {});
  assert.equal(whole.resource, KEX);
  assert.equal(whole.param, "p");
  assert.equal(whole.retry, 0);
  assert.equal(whole.reason, "create");
  assert.equal(whole.old, undefined);
  const essence = { metadata: { labels: { x: "y" } }, spec: { size: 3, other: 1 } };
  assert.deepEqual(whole.new, essence);
  assert.deepEqual(whole.diff, [["add", [], null, essence]]);
  // A field handler: its field's side of the change.
  assert.deepEqual(Object.keys(field), KEYS);
  assert.equal(field.param, undefined);
  assert.equal(field.old, undefined);
  assert.equal(field.new, 3);
  assert.deepEqual(field.diff, [["add", [], null, 3]]);
});

Deno.test("changing handlers: filter callbacks get the cause's context; without callbacks the handlers still run", async () => {
  const registry = new kopf.OperatorRegistry();
  const filtered: Obj[] = [];
  let ran = 0;
  kopf.on.create("kopfexamples", {
    registry,
    id: "picky",
    when: (ctx: Obj) => (filtered.push(ctx), ctx.spec.size === 3),
  }, () => void ran++);
  const body = {
    metadata: { name: "a", uid: "u1", resourceVersion: "1" },
    spec: { size: 3 },
  };
  const api: ObjectApi = {
    patch: (_name, _ns, _patch) =>
      Promise.resolve({ ...body, metadata: { ...body.metadata, resourceVersion: "2" } }),
    get: () => Promise.resolve(body),
  };
  assert.equal(registry.filterCallbacks(KEX), true);
  await processEvent(operator(registry), KEX, api, { type: "ADDED", object: body }, newMemory());
  assert.equal(ran, 1);
  assert.ok(filtered.length > 0);
  for (const ctx of filtered) {
    assert.equal(ctx.reason, "create");
    assert.equal(ctx.body, body);
    assert.deepEqual(ctx.new, { spec: { size: 3 } });
    assert.ok(ctx.signal instanceof AbortSignal);
  }
});
