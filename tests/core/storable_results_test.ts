/**
 * Results that cannot be stored fail safely. A handler returning a BigInt, a
 * cyclic object or a result too big for the object fails once, permanently,
 * with a line naming the handler and the path of the bad value; the other
 * handlers' success is stored; nothing runs again because of it; the object
 * stays processable; and nothing spins afterwards. A write that the API
 * refuses (422) is logged once with the API's causes and posted as a Warning
 * event, and the handlers' outcomes are stored without the refused part.
 *
 * "Nothing runs again" is judged over ten minutes of the operator's time (a `FakeClock`, moved
 * along by a pump while objects are handled, then advanced at once: retries, backoffs and
 * throttling all wait on it) and a real second after it (a loop through the watch needs no
 * timer).
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import { count, type Obj, pumped, setup, sleep } from "./_handling.ts";

Deno.test("results: a BigInt, a cyclic object and a 300 KiB string each fail their handler once; nothing re-runs, nothing spins", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const calls: Record<string, number> = {};
  const bump = (id: string) => void (calls[id] = (calls[id] ?? 0) + 1);
  const kinds = ["bigint", "cyclic", "huge"] as const;
  kopf.on.create("kopfexamples", { registry, labels: { bad: "bigint" } }, function bigint_fn() {
    bump("bigint_fn");
    return { count: 10n };
  });
  kopf.on.create("kopfexamples", { registry, labels: { bad: "cyclic" } }, function cyclic_fn() {
    bump("cyclic_fn");
    const tree: Record<string, unknown> = { children: [{ name: "leaf" }] };
    (tree.children as Array<Record<string, unknown>>)[0]!.parent = tree;
    return tree;
  });
  kopf.on.create("kopfexamples", { registry, labels: { bad: "huge" } }, function huge_fn() {
    bump("huge_fn");
    return "x".repeat(300 * 1024);
  });
  kopf.on.create("kopfexamples", { registry }, function fine_fn({ name }) {
    bump(`fine_fn/${name}`);
    return { ok: true, dropped: () => {} };
  });
  kopf.on.update("kopfexamples", { registry }, function update_fn({ name }) {
    bump(`update_fn/${name}`);
  });
  const clock = new FakeClock({ start: new Date() });
  const runner = await env.operator(registry, undefined, { clock });
  let pump = pumped(clock);
  for (const kind of kinds) await env.create(kind, {}, { labels: { bad: kind } });
  for (const kind of kinds) {
    await runner.waitFor(`[default/${kind}] Creation is processed: 1 succeeded; 1 failed.`);
  }
  assert.match(
    runner.output,
    /\[default\/bigint\] Handler 'bigint_fn' failed permanently: Handler 'bigint_fn' returned a result that cannot be stored: result\.count is a BigInt/,
  );
  assert.match(
    runner.output,
    /\[default\/cyclic\] Handler 'cyclic_fn' failed permanently: .*result\.children\[0\]\.parent is a cycle/,
  );
  assert.match(
    runner.output,
    /\[default\/huge\] Handler 'huge_fn' failed permanently: .*result is 300(\.\d)? KiB of JSON, more than the 256 KiB/,
  );
  // The other handler's result is stored (without what JSON drops); the bad ones are not.
  const bigint = await env.get("bigint");
  assert.deepEqual(bigint?.status, { fine_fn: { ok: true } });

  // Idle afterwards: no handler runs again, no writes (counted over ten minutes of the operator's
  // time and a real second, after the cycles' last writes, which follow their log lines).
  await sleep(1);
  await pump[Symbol.asyncDispose]();
  const patches = env.patches();
  const before = { ...calls };
  await clock.advance(600);
  await sleep(1);
  assert.deepEqual(calls, before);
  assert.equal(env.patches(), patches, "no writes while idle");
  for (const kind of kinds) assert.equal(calls[`fine_fn/${kind}`], 1);
  assert.deepEqual([calls.bigint_fn, calls.cyclic_fn, calls.huge_fn], [1, 1, 1]);

  // Still processable: a change runs the update handler once.
  pump = pumped(clock);
  for (const kind of kinds) await env.patch(kind, { spec: { touched: true } });
  for (const kind of kinds) {
    await runner.waitFor(`[default/${kind}] Handler 'update_fn' succeeded.`);
  }
  await sleep(1);
  await runner.stop();
  await pump[Symbol.asyncDispose]();
  for (const kind of kinds) assert.equal(calls[`update_fn/${kind}`], 1);
  assert.equal(count(runner.output, "failed permanently"), 3, "each fails once");
});

Deno.test("results: a write the API refuses (422) is said once with its causes and a Warning event; outcomes are stored, nothing re-runs", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let calls = 0;
  kopf.on.create("kopfexamples", { registry }, function labeller({ patch }) {
    calls++;
    // An invalid label: the API refuses the whole patch with 422.
    patch.metadata.labels = { "not a valid key!": "x" };
    return "done";
  });
  const clock = new FakeClock({ start: new Date() });
  const runner = await env.operator(registry, undefined, { clock });
  let pump = pumped(clock);
  const created = await env.create("kex");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  await runner.waitFor(/The API refused the patch as invalid \(422: .*not a valid key!/);
  await sleep(1);
  await pump[Symbol.asyncDispose]();
  const patches = env.patches();
  await clock.advance(600);
  await sleep(1);
  assert.equal(calls, 1, "the handler is not re-run");
  assert.equal(env.patches(), patches, "no writes while idle");
  pump = pumped(clock);
  await runner.stop();
  await pump[Symbol.asyncDispose]();
  assert.equal(count(runner.output, "The API refused the patch"), 1, "said once");
  // The outcome is stored (the diff-base marks the creation as handled); the edits are not.
  const obj = await env.get("kex");
  assert.ok(obj?.metadata?.annotations?.["kopf.zalando.org/last-handled-configuration"]);
  assert.equal(obj?.metadata?.labels?.["not a valid key!"], undefined);
  // The warning is posted as a Kubernetes Event of type Warning.
  const res = await fetch(`${env.api.url}/api/v1/namespaces/default/events`);
  const events = (await res.json()).items as Obj[];
  const warnings = events.filter((e) =>
    e.involvedObject?.uid === created.metadata.uid && e.type === "Warning"
  );
  assert.equal(warnings.length, 1, JSON.stringify(events.map((e) => e.message)));
  assert.match(warnings[0]!.message, /refused the patch as invalid/);
});
