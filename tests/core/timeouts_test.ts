/**
 * `timeout` interrupts a running handler: its context's `signal` aborts when
 * the timeout passes, and the operator stops waiting for it — the attempt is
 * abandoned with Kopf's HandlerTimeoutError outcome, whatever the function
 * does later (its late end is logged at debug level and ignored).
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { setup, sleep } from "./_handling.ts";

Deno.test("timeouts: a handler with timeout 1 that sleeps 10 s is abandoned at ~1 s, its signal aborted", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let signal: AbortSignal | undefined;
  let started = 0;
  let calls = 0;
  kopf.on.create("kopfexamples", { registry, timeout: 1 }, async function slow(ctx) {
    calls++;
    signal = ctx.signal;
    started = performance.now();
    // Ignores its signal on purpose: the operator must not wait for it.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  });
  kopf.on.create("kopfexamples", { registry }, function after() {});
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor(
    "[default/kex] Handler 'slow' failed permanently: Handler 'slow' has timed out after 1s.",
    8,
  );
  const abandonedAfter = (performance.now() - started) / 1000;
  await runner.waitFor("[default/kex] Creation is processed: 1 succeeded; 1 failed.", 5);
  assert.ok(abandonedAfter < 5, `abandoned only after ${abandonedAfter}s`);
  assert.equal(signal?.aborted, true);
  assert.equal((signal?.reason as Error)?.name, "HandlerTimeoutError");
  await sleep(0.5);
  await runner.stop();
  assert.equal(calls, 1);
  assert.equal(runner.exitCode, 0);
});
