/**
 * Exactly-once while the watch is silent. A handler waits out a retry delay
 * and no watch event comes (a stalled stream): the operator must go on from
 * the body its own last write returned (or a fresh read), never from the older
 * body its previous cycle started from — else finished handlers run again at
 * the same resourceVersion and the retrying handler's `retry` never advances.
 * This is the fault soak's finding, reproduced with the API server's stall
 * switch on a real server over HTTP.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FINALIZER, setup, sleep } from "./_handling.ts";

Deno.test("exactly once: a stalled watch while a handler waits out its delay re-runs nothing and the retries count up", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const firstCalls: string[] = [];
  const secondCalls: Array<{ retry: number; rv: number }> = [];
  let healed = false;
  kopf.on.create("kopfexamples", { registry }, function first({ body }) {
    firstCalls.push(body.metadata.resourceVersion);
  });
  kopf.on.create("kopfexamples", { registry }, function second({ retry, body }) {
    secondCalls.push({ retry, rv: Number(body.metadata.resourceVersion) });
    if (!healed) throw new kopf.TemporaryError("not yet", { delay: 1 });
  });
  kopf.on.delete("kopfexamples", { registry }, function cleanup() {});
  const settings = new kopf.OperatorSettings();
  settings.persistence.consistencyTimeout = 1;
  // A silent stream is reopened after 2 s (and stalls again while the switch is on).
  settings.watching.inactivityTimeout = 2;
  const runner = await env.operator(registry, settings);
  // The finalizer is already on: the first cycle runs the handlers at once.
  await env.create("kex", {}, { finalizers: [FINALIZER] });
  await runner.waitFor("[default/kex] Handler 'first' succeeded.");
  env.api.setFaults({ stallWatches: true });
  // Three more attempts (a second apart) while the watch is silent — a stalled stream reopened
  // after its 2 s of inactivity, and stalled again, among them — then the stream heals.
  const before = secondCalls.length;
  const deadline = Date.now() + 15_000;
  while (
    !(secondCalls.length >= before + 3 && env.api.faultCounts.watchStalled >= 2) &&
    Date.now() < deadline
  ) await sleep(0.05);
  assert.ok(
    secondCalls.length >= before + 3 && env.api.faultCounts.watchStalled >= 2,
    `three attempts and a reopened stall: ${JSON.stringify(secondCalls)} ${
      JSON.stringify(env.api.faultCounts)
    }`,
  );
  env.api.setFaults({ stallWatches: null });
  healed = true;
  await runner.waitFor("[default/kex] All handlers succeeded for creation.", 10);
  assert.ok(env.api.faultCounts.watchStalled >= 1, JSON.stringify(env.api.faultCounts));

  assert.equal(firstCalls.length, 1, `the succeeded handler ran again: ${firstCalls}`);
  assert.ok(secondCalls.length >= 3, `too few retries: ${JSON.stringify(secondCalls)}`);
  // Its retries count up by one, and each attempt sees a body newer than the one before
  // (our own last write), never the same or an older one.
  assert.deepEqual(secondCalls.map((c) => c.retry), secondCalls.map((_, i) => i));
  for (let i = 1; i < secondCalls.length; i++) {
    assert.ok(
      secondCalls[i]!.rv > secondCalls[i - 1]!.rv,
      `attempt ${i} saw an old body: ${JSON.stringify(secondCalls)}`,
    );
  }
  // The waiting is said, naming the handler.
  assert.match(
    runner.output,
    /\[default\/kex\] Processing is postponed: handler 'second' will run in 1s\./,
  );

  // Deletion: the delete handler once, the finalizer released, nothing handled after it is gone.
  await env.remove("kex");
  await env.waitGone("kex");
  await sleep(1.5);
  await runner.stop();
  assert.equal(firstCalls.length, 1);
  assert.equal(runner.exitCode, 0);
  assert.equal(
    runner.output.split("Handler 'cleanup' succeeded.").length - 1,
    1,
    "the delete handler ran once",
  );
});
