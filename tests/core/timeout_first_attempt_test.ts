/**
 * A handler's `timeout` counts from its first attempt, not from each retry: a retried attempt
 * has only what is left of it. On a fake clock, so the second at which the retry is abandoned
 * is exact (issue 26: with the deadline reset on each retry, no other test failed).
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import { executeHandler, type Execution } from "../../src/core/actions/execution.ts";
import type { BaseHandler } from "../../src/core/actions/invocation.ts";
import { type LogRecord, OperatorLogger } from "../../src/core/actions/loggers.ts";
import { State } from "../../src/core/actions/progression.ts";

Deno.test("timeout: a retried attempt is abandoned when the timeout since the first attempt passes, not a full timeout later", async () => {
  const clock = new FakeClock();
  const lines: string[] = [];
  const sink = Object.assign((r: LogRecord) => void lines.push(`${r.level}: ${r.message}`), {
    level: "debug" as const,
  });
  const signals: AbortSignal[] = [];
  const ex: Execution<BaseHandler> = {
    state: new State("create"),
    kind: "changing",
    defaultErrors: "temporary",
    logger: new OperatorLogger(sink),
    clock,
    onResult: () => {},
    context: (_h, attempt) => ({
      get signal() {
        return attempt.signal;
      },
    }),
  };
  let calls = 0;
  const handler: BaseHandler = {
    id: "slow",
    param: undefined,
    errors: undefined,
    retries: undefined,
    backoff: undefined,
    timeout: 5,
    fn: (ctx: { signal: AbortSignal }) => {
      calls++;
      signals.push(ctx.signal);
      // The first attempt asks to be retried in 3 s; the second one hangs.
      if (calls === 1) throw new kopf.TemporaryError("not yet", { delay: 3 });
      return new Promise<void>(() => {});
    },
  };
  const first = await executeHandler(handler, ex);
  assert.equal(first.final, false);
  assert.equal(first.delay, 3);
  await clock.advance(3);

  const box: { outcome?: Awaited<ReturnType<typeof executeHandler>> } = {};
  const retried = executeHandler(handler, ex).then((o) => (box.outcome = o));
  await clock.advance(1.999);
  assert.equal(calls, 2);
  assert.equal(box.outcome, undefined, "still waiting, 4.999 s after the first attempt");
  assert.equal(signals[1]!.aborted, false);
  await clock.advance(0.001);
  await clock.advance(0);
  assert.ok(box.outcome, "abandoned 5 s after the first attempt (2 s into the retry)");
  const outcome = await retried;
  assert.equal(outcome.final, true);
  assert.ok(outcome.error instanceof kopf.HandlerTimeoutError);
  assert.equal(signals[1]!.aborted, true);
  assert.match(lines.at(-1)!, /failed permanently: Handler 'slow' has timed out after 5s\./);
});
