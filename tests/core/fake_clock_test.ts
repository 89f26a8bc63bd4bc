/**
 * A whole operator on a fake clock, against the embedded API server: a
 * handler's retry delay of a minute passes when the test says so, not after
 * a minute of waiting — what docs/testing.md promises for `operator({ clock })`.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import { setup } from "./_handling.ts";

Deno.test("fake clock: a 60 s retry delay passes on clock.advance(60), not before", async () => {
  await using env = await setup();
  const clock = new FakeClock();
  const registry = new kopf.OperatorRegistry();
  const attempts: number[] = [];
  kopf.on.create("kopfexamples", { registry }, function slowly({ retry }) {
    attempts.push(retry);
    if (retry < 1) throw new kopf.TemporaryError("in a minute", { delay: 60 });
  });
  const stop = new AbortController();
  const lines: string[] = [];
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const running = kopf.operator({
    registry,
    clock,
    clusterwide: true,
    kubeconfig: env.api.kubeconfig.path,
    signal: stop.signal,
    sink: (r) => void lines.push(r.message),
    onReady: () => ready(),
  });
  try {
    await started;
    await env.create("kex");
    const until = async (check: () => boolean, what: string) => {
      for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(check(), `${what}: ${JSON.stringify(lines)}`);
    };
    await until(() => lines.some((l) => l.startsWith("Processing is postponed")), "postponed");
    assert.deepEqual(attempts, [0]);
    assert.ok(lines.includes("Processing is postponed: handler 'slowly' will run in 60s."));
    await clock.advance(59);
    assert.deepEqual(attempts, [0], "not before the minute has passed");
    await clock.advance(1);
    await until(() => attempts.length === 2, "retried");
    await until(() => lines.includes("All handlers succeeded for creation."), "done");
    assert.deepEqual(attempts, [0, 1]);
  } finally {
    stop.abort();
    await clock.advance(10); // the exit's grace periods run on the fake clock too
    await running;
  }
});
