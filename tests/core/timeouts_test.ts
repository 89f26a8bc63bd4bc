/**
 * `timeout` interrupts a running handler: its context's `signal` aborts when
 * the timeout passes, and the operator stops waiting for it — the attempt is
 * abandoned with Kopf's HandlerTimeoutError outcome, whatever the function
 * does later (its late end is logged at debug level and ignored).
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { clocked, setup } from "./_handling.ts";

Deno.test("timeouts: a handler with timeout 1 that sleeps 10 s is abandoned at 1 s, its signal aborted", async () => {
  await using env = await setup();
  const t = clocked(); // the operator's time: the handler's timeout and its sleep are on it
  const registry = new kopf.OperatorRegistry();
  let signal: AbortSignal | undefined;
  let started = 0;
  let calls = 0;
  kopf.on.create("kopfexamples", { registry, timeout: 1 }, async function slow(ctx) {
    calls++;
    signal = ctx.signal;
    started = t.clock.now();
    // Ignores its signal on purpose: the operator must not wait for it.
    await ctx.clock.sleep(10);
  });
  kopf.on.create("kopfexamples", { registry }, function after() {});
  const runner = await env.operator(registry, undefined, { clock: t.clock });
  await env.create("kex");
  const timedOut =
    "[default/kex] Handler 'slow' failed permanently: Handler 'slow' has timed out after 1s.";
  await t.until(() => runner.output.includes(timedOut), "the timeout");
  const abandonedAfter = (t.clock.now() - started) / 1000;
  const processed = "[default/kex] Creation is processed: 1 succeeded; 1 failed.";
  await t.until(() => runner.output.includes(processed), "the creation processed");
  // At its timeout (to within the 10 ms step that saw the line), not when it ends at 10 s.
  assert.ok(abandonedAfter >= 1 && abandonedAfter < 1.02, `abandoned after ${abandonedAfter}s`);
  assert.equal(signal?.aborted, true);
  assert.equal((signal?.reason as Error)?.name, "HandlerTimeoutError");
  await t.clock.advanceUntil(() => false, 10); // its late end (at 10 s) changes nothing
  await t.stop(runner);
  assert.equal(calls, 1);
  assert.equal(runner.exitCode, 0);
});
