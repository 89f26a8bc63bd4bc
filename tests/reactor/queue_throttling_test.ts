/**
 * Throttling with the processor (`Throttle`, `ThrottledProcessor`,
 * src/core/reactor/throttling.ts): the error delays one per consecutive failure, the last
 * repeating, afresh after a success; the processor's errors reported with the delay.
 */

import assert from "node:assert/strict";
import { Throttle, ThrottledProcessor } from "../../src/core/reactor/throttling.ts";
import { newMemory, type RawEvent } from "../../src/core/reactor/processing.ts";

const event: RawEvent = { type: "MODIFIED", object: { metadata: { uid: "u" } } };

Deno.test("Throttle: one delay per consecutive failure, the last repeats; a success starts afresh", () => {
  const throttle = new Throttle([1, 2, 3]);
  assert.deepEqual([throttle.engaged, throttle.delay], [false, undefined]);
  const delays = Array.from({ length: 5 }, () => throttle.failed());
  assert.deepEqual(delays, [1, 2, 3, 3, 3]);
  assert.deepEqual([throttle.engaged, throttle.delay], [true, 3]);
  throttle.succeeded();
  assert.deepEqual([throttle.engaged, throttle.delay], [false, undefined]);
  assert.equal(throttle.failed(), 1);
});

Deno.test("Throttle: no delays — engaged by a failure, but no delay to wait", () => {
  const throttle = new Throttle([]);
  assert.equal(throttle.failed(), undefined);
  assert.equal(throttle.engaged, true);
});

Deno.test("Throttle: a generator of delays is read lazily, once per failure", () => {
  let made = 0;
  const throttle = new Throttle({
    *[Symbol.iterator]() {
      made++;
      for (let i = 1;; i *= 2) yield i;
    },
  });
  assert.deepEqual([throttle.failed(), throttle.failed(), throttle.failed()], [1, 2, 4]);
  throttle.succeeded();
  assert.equal(throttle.failed(), 1);
  assert.equal(made, 2, "a fresh sequence after the success");
});

Deno.test("ThrottledProcessor: a success gives the result and releases the throttle; a failure reports the error with its delay", async () => {
  const reported: Array<[unknown, RawEvent, number | undefined]> = [];
  let fail = true;
  const signals: AbortSignal[] = [];
  const stop = new AbortController();
  const cycles = new ThrottledProcessor(
    (_e, _m, signal) => {
      signals.push(signal);
      return fail ? Promise.reject(new Error("boom")) : Promise.resolve({ delay: 7 });
    },
    stop.signal,
    (error, e, delay) => reported.push([error, e, delay]),
  );
  const throttle = new Throttle([1, 2]);
  const memory = newMemory();
  assert.equal(await cycles.run(event, memory, throttle), undefined);
  assert.equal(await cycles.run(event, memory, throttle), undefined);
  assert.deepEqual(reported.map(([e, ev, d]) => [(e as Error).message, ev, d]), [
    ["boom", event, 1],
    ["boom", event, 2],
  ]);
  fail = false;
  assert.deepEqual(await cycles.run(event, memory, throttle), { delay: 7 });
  assert.equal(throttle.engaged, false);
  assert.ok(signals.every((s) => s === stop.signal), "the queues' stop signal reaches the cycle");
});

Deno.test("ThrottledProcessor: a cycle that fails because the queues' grace ran out (aborted) is not reported as an unexpected error", async () => {
  const stop = new AbortController();
  const reported: unknown[] = [];
  const processor = new ThrottledProcessor(
    (_event, _memory, signal) =>
      new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason), { once: true })
      ),
    stop.signal,
    (e) => reported.push(e),
  );
  const throttle = new Throttle([1]);
  const cycle = processor.run(event, newMemory(), throttle);
  stop.abort(new DOMException("The queues closed.", "AbortError"));
  assert.equal(await cycle, undefined);
  assert.equal(reported.length, 0);
  // Not aborted: the same failure is reported, with its delay.
  const failing = new ThrottledProcessor(
    () => Promise.reject(new Error("boom")),
    new AbortController().signal,
    (e) => reported.push(e),
  );
  assert.equal(await failing.run(event, newMemory(), throttle), undefined);
  assert.equal(reported.length, 1);
});
