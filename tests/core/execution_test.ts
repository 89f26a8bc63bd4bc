/**
 * The one handler protocol, unit by unit, on a fake clock: the outcome of
 * each error type in each errors mode, the kinds' defaults, retries and
 * timeouts before an attempt, a timeout during an attempt (abandoned at the
 * exact second, its signal aborted, its late end ignored), the operator's
 * signal, results that cannot be stored, lifecycles — no API server.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import {
  executeHandler,
  executeHandlers,
  type Execution,
} from "../../src/core/actions/execution.ts";
import type { BaseHandler, ErrorsMode, HandlerFn } from "../../src/core/actions/invocation.ts";
import { type LogRecord, OperatorLogger } from "../../src/core/actions/loggers.ts";
import { State } from "../../src/core/actions/progression.ts";

function handler(id: string, fn: HandlerFn, options: Partial<BaseHandler> = {}): BaseHandler {
  return {
    id,
    fn,
    param: undefined,
    errors: undefined,
    timeout: undefined,
    retries: undefined,
    backoff: undefined,
    ...options,
  };
}

interface Harness {
  clock: FakeClock;
  state: State;
  lines: string[];
  results: Map<string, unknown>;
  contexts: Array<Record<string, unknown>>;
  ex: Execution<BaseHandler>;
}

function harness(
  defaultErrors: ErrorsMode = "temporary",
  extra: Partial<Execution<BaseHandler>> = {},
): Harness {
  const clock = new FakeClock();
  const state = new State("create");
  const lines: string[] = [];
  const results = new Map<string, unknown>();
  const contexts: Array<Record<string, unknown>> = [];
  const sink = Object.assign((r: LogRecord) => void lines.push(`${r.level}: ${r.message}`), {
    level: "debug" as const,
  });
  const logger = new OperatorLogger(sink);
  const ex: Execution<BaseHandler> = {
    state,
    kind: "changing",
    defaultErrors,
    logger,
    clock,
    onResult: (h, v) => void results.set(h.id, v),
    context: (_h, attempt) => {
      const ctx = {
        retry: attempt.retry,
        runtime: attempt.runtime,
        get signal() {
          return attempt.signal;
        },
      };
      contexts.push(ctx);
      return ctx;
    },
    ...extra,
  };
  return { clock, state, lines, results, contexts, ex };
}

Deno.test("protocol: success passes the result on and logs 'succeeded' (info, or debug for kinds that say so)", async () => {
  const h = harness();
  const outcome = await executeHandler(handler("fn", () => 42), h.ex);
  assert.deepEqual(outcome, { final: true, result: 42 });
  assert.equal(h.results.get("fn"), 42);
  assert.deepEqual(h.lines, ["info: Handler 'fn' succeeded."]);
  assert.equal(h.state.get("fn")?.success, true);
  const quiet = harness("ignored", { successLevel: "debug", noun: "Indexing handler" });
  await executeHandler(handler("ix", () => null), quiet.ex);
  assert.deepEqual(quiet.lines, ["debug: Indexing handler 'ix' succeeded."]);
  assert.equal(quiet.results.size, 0, "null results are not passed on");
});

Deno.test("protocol: TemporaryError retries after its delay (null: at once), in any errors mode", async () => {
  for (const mode of ["temporary", "permanent", "ignored"] as const) {
    const h = harness(mode);
    const outcome = await executeHandler(
      handler("fn", () => {
        throw new kopf.TemporaryError("not yet", { delay: 7 });
      }),
      h.ex,
    );
    assert.equal(outcome.final, false, mode);
    assert.equal(outcome.delay, 7);
    assert.deepEqual(h.state.delays(["fn"], h.clock.date()), [7]);
    assert.deepEqual(h.lines, ["error: Handler 'fn' failed temporarily: not yet"]);
  }
  const h = harness();
  const outcome = await executeHandler(
    handler("fn", () => {
      throw new kopf.TemporaryError("again", { delay: null });
    }),
    h.ex,
  );
  assert.equal(outcome.delay, 0);
});

Deno.test("protocol: PermanentError fails for good, in any errors mode", async () => {
  for (const mode of ["temporary", "permanent", "ignored"] as const) {
    const h = harness(mode);
    const outcome = await executeHandler(
      handler("fn", () => {
        throw new kopf.PermanentError("wrong spec");
      }),
      h.ex,
    );
    assert.equal(outcome.final, true);
    assert.ok(outcome.error instanceof kopf.PermanentError);
    assert.equal(h.state.get("fn")?.failure, true);
    assert.deepEqual(h.lines, ["error: Handler 'fn' failed permanently: wrong spec"]);
  }
});

Deno.test("protocol: arbitrary errors follow the handler's errors mode, else the kind's default", async () => {
  const boom = () => {
    throw new Error("boom");
  };
  // The kind's default: changing handlers retry, event and indexing handlers ignore.
  const changing = harness("temporary");
  const retried = await executeHandler(handler("fn", boom), changing.ex);
  assert.deepEqual([retried.final, retried.delay], [false, 60], "default backoff: 60 s");
  assert.match(changing.lines[0]!, /^error: Handler 'fn' failed with an exception\. Will retry\./);
  const events = harness("ignored");
  const ignored = await executeHandler(handler("fn", boom), events.ex);
  assert.deepEqual(ignored, { final: true });
  assert.match(events.lines[0]!, /Will ignore\./);
  // The handler's own mode wins over the kind's.
  const stopped = harness("ignored");
  const outcome = await executeHandler(handler("fn", boom, { errors: "permanent" }), stopped.ex);
  assert.equal(outcome.final, true);
  assert.ok(outcome.error instanceof Error);
  assert.match(stopped.lines[0]!, /Will stop\./);
  // Backoff: the handler's, else the kind's (settings.execution.defaultBackoff), else 60.
  const own = harness("temporary", { defaultBackoff: 5 });
  assert.equal((await executeHandler(handler("a", boom, { backoff: 2 }), own.ex)).delay, 2);
  assert.equal((await executeHandler(handler("b", boom), own.ex)).delay, 5);
});

Deno.test("protocol: retries and timeout are checked before an attempt (the function is not called)", async () => {
  const h = harness();
  let calls = 0;
  const fn = () => {
    calls++;
    throw new kopf.TemporaryError("again", { delay: 1 });
  };
  const limited = handler("fn", fn, { retries: 2 });
  await executeHandler(limited, h.ex);
  await h.clock.advance(1);
  await executeHandler(limited, h.ex);
  await h.clock.advance(1);
  const third = await executeHandler(limited, h.ex);
  assert.equal(calls, 2);
  assert.ok(third.error instanceof kopf.HandlerRetriesError);
  assert.equal(third.final, true);
  assert.match(h.lines.at(-1)!, /failed permanently: Handler 'fn' has exceeded 2 retries\./);

  const t = harness();
  const timed = handler("slow", fn, { timeout: 10 });
  await executeHandler(timed, t.ex);
  await t.clock.advance(10.5);
  const late = await executeHandler(timed, t.ex);
  assert.ok(late.error instanceof kopf.HandlerTimeoutError);
  assert.match(t.lines.at(-1)!, /Handler 'slow' has timed out after 10\.5s\./);
});

Deno.test("protocol: a timeout during an attempt abandons it at exactly that second, aborting its signal", async () => {
  const h = harness();
  let settle!: () => void;
  const never = handler("hang", () => new Promise<void>((resolve) => (settle = resolve)), {
    timeout: 1,
  });
  const box: { outcome?: Awaited<ReturnType<typeof executeHandler>> } = {};
  const running = executeHandler(never, h.ex).then((o) => (box.outcome = o));
  await h.clock.advance(0.999);
  assert.equal(box.outcome, undefined, "still waiting before the timeout");
  const signal = h.contexts[0]!.signal as AbortSignal;
  assert.equal(signal.aborted, false);
  await h.clock.advance(0.001);
  const outcome = await running;
  assert.equal(outcome.final, true);
  assert.ok(outcome.error instanceof kopf.HandlerTimeoutError);
  assert.equal(signal.aborted, true);
  assert.equal((signal.reason as Error).name, "HandlerTimeoutError");
  assert.match(h.lines.at(-1)!, /failed permanently: Handler 'hang' has timed out after 1s\./);
  // Its late end is logged at debug level and changes nothing.
  settle();
  await h.clock.advance(0);
  assert.equal(h.lines.at(-1), "debug: Handler 'hang' has finished after its timeout; ignored.");
  assert.equal(h.state.get("hang")?.failure, true);
});

Deno.test("protocol: the operator's signal aborts the attempt's signal; none is made unless read", async () => {
  const exit = new AbortController();
  const h = harness("temporary", { signal: exit.signal });
  let seen: AbortSignal | undefined;
  const waiting = executeHandler(
    handler("fn", (ctx: { signal: AbortSignal }) => {
      seen = ctx.signal;
      return new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    }),
    h.ex,
  );
  await h.clock.advance(0);
  assert.equal(seen?.aborted, false);
  exit.abort("exiting");
  assert.deepEqual(await waiting, { final: true, result: undefined });
  assert.equal(seen?.reason, "exiting");
});

Deno.test("protocol: results that cannot be stored fail their handler permanently, naming it and the path", async () => {
  const cyclic: Record<string, unknown> = { a: [1] };
  (cyclic.a as unknown[]).push({ up: cyclic });
  const cases: Array<[unknown, RegExp]> = [
    [{ n: 10n }, /result\.n is a BigInt/],
    [cyclic, /result\.a\[1\]\.up is a cycle/],
    [new Map([["a", 1]]), /result is a Map/],
    [{ x: NaN }, /result\.x is a non-finite number/],
    [[1, undefined], /result\[1\] is undefined in an array/],
    ["x".repeat(20), /result is 22 bytes of JSON, more than the 16 bytes a result may take/],
  ];
  for (const [value, problem] of cases) {
    const h = harness("temporary", { resultLimit: 16 });
    const outcome = await executeHandler(handler("fn", () => value), h.ex);
    assert.equal(outcome.final, true, String(problem));
    assert.equal((outcome.error as Error)?.name, "ResultError");
    assert.match(
      h.lines.at(-1)!,
      /^error: Handler 'fn' failed permanently: Handler 'fn' returned a result that cannot be stored: /,
    );
    assert.match(h.lines.at(-1)!, problem);
    assert.equal(h.results.size, 0, "nothing passed on to be stored");
  }
  // What JSON drops in objects is dropped, said once at debug level; the rest is stored.
  const h = harness("temporary", { resultLimit: 1024 });
  await executeHandler(handler("fn", () => ({ a: 1, f: () => {}, u: undefined })), h.ex);
  assert.deepEqual(h.results.get("fn"), { a: 1 });
  assert.deepEqual(h.lines, [
    "debug: Handler 'fn' returned values that JSON drops (functions, undefined): result.f, result.u; they are not stored.",
    "info: Handler 'fn' succeeded.",
  ]);
});

Deno.test("protocol: executeHandlers runs the awakened handlers as the lifecycle picks them", async () => {
  const ran: string[] = [];
  const mk = (id: string, fail = false) =>
    handler(id, () => {
      ran.push(id);
      if (fail) throw new kopf.TemporaryError("later", { delay: 5 });
    });
  const h = harness();
  const handlers = [mk("a", true), mk("b"), mk("c")];
  await executeHandlers(handlers, h.ex);
  assert.deepEqual(ran, ["a", "b", "c"]);
  await executeHandlers(handlers, h.ex);
  assert.deepEqual(ran, ["a", "b", "c"], "a sleeps; b and c are done");
  await h.clock.advance(5);
  await executeHandlers(handlers, h.ex);
  assert.deepEqual(ran, ["a", "b", "c", "a"]);
  const one = harness("temporary", { lifecycle: kopf.oneByOne });
  ran.length = 0;
  await executeHandlers([mk("x"), mk("y")], one.ex);
  assert.deepEqual(ran, ["x"]);
});
