/**
 * "Sub-handlers", end to end: `kopf.subhandler` (declarative),
 * `kopf.register` and `kopf.execute` (imperative) — children with ids
 * `parent/child`, their own retries and progress records (annotations
 * `kopf.zalando.org/parent.child`, the parent's `subrefs`), the parent
 * re-run until its children are finished, finished children never re-run,
 * everything purged at the end.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { annotations, kopfAnnotations, LAST_HANDLED, setup } from "./_handling.ts";

Deno.test("sub-handlers: kopf.subhandler children get ids parent/child, own retries; the parent is re-run until they finish", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: Record<string, number[]> = { parent: [] };
  kopf.on.create("kopfexamples", { registry }, function create_fn({ spec, retry }) {
    calls.parent!.push(retry);
    for (const item of spec.items as string[]) {
      kopf.subhandler({ id: item }, ({ retry }) => {
        (calls[item] ??= []).push(retry);
        if (item === "item2" && retry === 0) {
          throw new kopf.TemporaryError("not yet", { delay: 0.5 });
        }
        return { item };
      });
    }
  });
  const runner = await env.operator(registry);
  await env.create("kex", { items: ["item1", "item2"] });

  const midway = await env.waitFor("kex", (o) => !!kopfAnnotations(o)["create_fn.item2"]);
  const records = Object.fromEntries(
    Object.entries(kopfAnnotations(midway)).map(([k, v]) => [k, JSON.parse(v)]),
  );
  assert.deepEqual(records.create_fn.subrefs, ["create_fn/item1", "create_fn/item2"]);
  assert.equal(records.create_fn.success, false);
  assert.equal(records["create_fn.item1"].success, true, "the finished child is remembered");
  assert.equal(records["create_fn.item2"].message, "not yet");

  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(calls, { parent: [0, 1], item1: [0], item2: [0, 1] });
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
  assert.deepEqual(done.status["create_fn/item1"], { item: "item1" });
  assert.deepEqual(done.status["create_fn/item2"], { item: "item2" });
  assert.match(runner.output, /\[default\/kex\] Handler 'create_fn\/item1' succeeded\./);
  assert.match(
    runner.output,
    /\[default\/kex\] Handler 'create_fn\/item2' failed temporarily: not yet/,
  );
});

Deno.test("sub-handlers: kopf.register with options (retries, errors) per child", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    calls.push("parent");
    kopf.register(function flaky() {
      calls.push("flaky");
      throw new Error("always");
    }, { retries: 2, backoff: 0.1 });
    kopf.register(function tolerant() {
      calls.push("tolerant");
      throw new Error("ignored");
    }, { id: "tolerant", errors: "ignored" });
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor(
    /\[default\/kex\] (All handlers succeeded for creation|Creation is processed)/,
  );
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  // The child with retries=2 runs twice and fails for good; the ignored one runs once.
  assert.equal(calls.filter((c) => c === "flaky").length, 2);
  assert.equal(calls.filter((c) => c === "tolerant").length, 1);
  assert.match(
    runner.output,
    /Handler 'create_fn\/flaky' failed permanently: Handler 'create_fn\/flaky' has exceeded 2 retries\./,
  );
  assert.match(
    runner.output,
    /Handler 'create_fn\/tolerant' failed with an exception\. Will ignore\./,
  );
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
});

Deno.test("sub-handlers: kopf.execute runs children inside the handler; code after it runs once they all finished", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, async function create_fn() {
    calls.push("parent");
    await kopf.execute({
      fns: {
        a: () => {
          calls.push("a");
        },
        b: ({ retry }: { retry: number }) => {
          calls.push(`b${retry}`);
          if (retry === 0) throw new kopf.TemporaryError("later", { delay: 0.3 });
        },
      },
    });
    calls.push("after");
    return { after: true };
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(calls, ["parent", "a", "b0", "parent", "b1", "after"]);
  assert.deepEqual(done.status.create_fn, { after: true });
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
});

Deno.test("sub-handlers: nested levels get ids parent/child/grandchild and are all purged", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    calls.push("parent");
    kopf.subhandler({ id: "child" }, () => {
      calls.push("child");
      kopf.subhandler({ id: "grand" }, ({ retry }: { retry: number }) => {
        calls.push(`grand${retry}`);
        if (retry === 0) throw new kopf.TemporaryError("wait", { delay: 0.5 });
      });
    });
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  const midway = await env.waitFor("kex", (o) => !!kopfAnnotations(o)["create_fn.child.grand"]);
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(calls, ["parent", "child", "grand0", "parent", "child", "grand1"]);
  assert.ok(kopfAnnotations(midway)["create_fn.child"]);
  assert.match(runner.output, /Handler 'create_fn\/child\/grand' succeeded\./);
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
});
