/**
 * Memos ("In-memory containers"): the operator memo (`kopf.Memo`, filled in
 * startup handlers, passed to all handlers) and the per-object memo: one
 * container per object kept across events and shared by its handlers, made
 * as a shallow copy of the operator memo on the object's first event, and
 * re-created for a deleted and re-created object.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { copyMemo, objectMemo } from "../../src/core/engines/memos.ts";
import { newMemory } from "../../src/core/reactor/cycle_types.ts";
import { cluster, delay, until } from "../reactor/_setup.ts";

Deno.test("memos: per-object memos are kept across events, shared by an object's handlers, apart per object", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const shared: string[] = [];
  const seen = new Map<string, kopf.Memo>();
  let operatorMemo: kopf.Memo | undefined;
  kopf.on.startup({ registry }, function fill({ memo }) {
    operatorMemo = memo;
    memo.greeting = "hello";
    memo.shared = shared;
  });
  kopf.on.event("kopfexamples", { registry }, function count({ memo, name, type }) {
    if (type === "DELETED") return;
    memo.events = (memo.events ?? 0) + 1;
    seen.set(name, memo);
  });
  kopf.on.create("kopfexamples", { registry }, function created({ memo, name }) {
    memo.created = true;
    memo.shared.push(name);
    memo.greeting = `hi ${name}`; // the object's own copy; the operator memo keeps "hello"
  });
  kopf.on.update("kopfexamples", { registry }, function updated({ memo }) {
    memo.updatedAfterCreation = memo.created === true;
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "a");
    await c.createKex("default", "b");
    await until(() => shared.length === 2, "creation");
    const r = await fetch(`${c.api.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/a`, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json" },
      body: JSON.stringify({ spec: { field: "changed" } }),
    });
    await r.body?.cancel();
    assert.equal(r.status, 200);
    await until(() => seen.get("a")?.updatedAfterCreation === true, "the update");
    const a = seen.get("a")!, b = seen.get("b")!;
    assert.notEqual(a, b);
    assert.ok(a.events >= 2, `events: ${a.events}`);
    assert.equal(a.greeting, "hi a");
    assert.equal(b.greeting, "hi b");
    assert.equal(operatorMemo?.greeting, "hello");
    assert.equal(a.shared, shared, "mutable values are shared (shallow copies)");
    assert.ok(a instanceof kopf.Memo, "the copy keeps the memo's class");
    assert.equal(b.updatedAfterCreation, undefined);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});

Deno.test("memos: a deleted and re-created object gets a new memo", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  const memos: kopf.Memo[] = [];
  kopf.on.create("kopfexamples", { registry }, function created({ memo }) {
    memo.generation = memos.length;
    memos.push(memo);
  });
  kopf.on.delete("kopfexamples", { registry }, function deleted() {});
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "x");
    await until(() => memos.length === 1, "the first creation");
    await delay(100);
    await c.call("DELETE", "/apis/kopf.dev/v1/namespaces/default/kopfexamples/x");
    await until(async () => (await c.getKex("default", "x")) === undefined, "the deletion");
    await delay(100);
    await c.createKex("default", "x");
    await until(() => memos.length === 2, "the second creation");
    assert.notEqual(memos[0], memos[1]);
    assert.equal(memos[1]!.generation, 1);
  } finally {
    await runner.stop();
  }
});

Deno.test("copyMemo(): shallow, keeps the class; Symbol.for('kopf.copy') makes custom (or global) memos", () => {
  const inner = { n: 1 };
  const memo = new kopf.Memo();
  memo.inner = inner;
  const copy = copyMemo(memo);
  assert.ok(copy instanceof kopf.Memo);
  assert.notEqual(copy, memo);
  assert.equal(copy.inner, inner);

  class Global {
    template = "Hello, {name}!";
    [Symbol.for("kopf.copy")]() {
      return this;
    }
  }
  const global = new Global();
  assert.equal(copyMemo(global), global);
  const memory = { memo: {} };
  assert.equal(objectMemo(memory, global), global, "one global memo for all objects");
});

Deno.test("objectMemo(): copies once, keeps what was already in the object's memo", () => {
  const memory = { memo: { early: 1 } as Record<string, unknown> };
  const op = { a: 1 };
  const memo = objectMemo(memory, op);
  assert.deepEqual({ ...memo }, { a: 1, early: 1 });
  op.a = 2; // later changes of the operator memo are not replicated
  assert.equal(objectMemo(memory, op).a, 1);
  assert.equal(objectMemo(memory, op), memo);
});

Deno.test("objectMemo: a memory started afresh (as a released object's is: newMemory() assigned over it) makes its memo anew from the operator's", () => {
  const memory = newMemory();
  const operatorMemo = { greeting: "hi" };
  objectMemo(memory, operatorMemo).counter = 1;
  Object.assign(memory, newMemory());
  assert.deepEqual(objectMemo(memory, operatorMemo), { greeting: "hi" });
  // Made once: the same container on later calls, with what the handlers put in it.
  objectMemo(memory, operatorMemo).counter = 2;
  assert.deepEqual(objectMemo(memory, { other: true }), { greeting: "hi", counter: 2 });
});
