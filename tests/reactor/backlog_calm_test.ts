/**
 * The lift of the backlog's worker limit (core/reactor/backlog.ts): the waiting cycles go on once
 * the API's backlog has stayed gone for CALM_SECONDS — not at each moment it empties in a burst
 * (that let thousands of cycles run at once) — on a fake clock.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { CALM_SECONDS, whenCalm } from "../../src/core/reactor/backlog.ts";

/** An API client's backlog and calms, driven by the test. */
function fakeApi() {
  const listeners = new Set<() => void>();
  return {
    backlog: 0,
    onCalm(listener: () => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    /** A backlog came and went: the calm's listeners are called. */
    calm() {
      this.backlog = 0;
      for (const listener of listeners) listener();
    },
    get listeners() {
      return listeners.size;
    },
  };
}

Deno.test("whenCalm: a backlog that comes back within CALM_SECONDS again and again admits nobody; one that stays gone admits once", async () => {
  const clock = new FakeClock();
  const api = fakeApi();
  let admitted = 0;
  const stop = whenCalm(api, () => void admitted++, clock);
  for (let i = 0; i < 10; i++) {
    api.calm();
    await clock.advance(CALM_SECONDS * 0.6);
    api.backlog = 5; // back: requests wait for a slot again
    await clock.advance(CALM_SECONDS * 0.3);
  }
  assert.equal(admitted, 0, "a burst's momentary calms admit nobody");
  api.calm();
  await clock.advance(CALM_SECONDS * 0.99);
  assert.equal(admitted, 0);
  await clock.advance(CALM_SECONDS * 0.02);
  assert.equal(admitted, 1, "admitted once the backlog stayed gone");
  await clock.advance(CALM_SECONDS * 10);
  assert.equal(admitted, 1, "once per calm");
  stop();
});

Deno.test("whenCalm: a backlog there at the end of the wait skips it; its own end starts another; stopping cancels a pending wait", async () => {
  const clock = new FakeClock();
  const api = fakeApi();
  let admitted = 0;
  const stop = whenCalm(api, () => void admitted++, clock);
  api.calm();
  api.backlog = 3; // back, and still there when the wait ends
  await clock.advance(CALM_SECONDS * 2);
  assert.equal(admitted, 0);
  api.calm();
  await clock.advance(CALM_SECONDS);
  assert.equal(admitted, 1);
  api.calm();
  stop();
  assert.equal(api.listeners, 0);
  await clock.advance(CALM_SECONDS * 2);
  assert.equal(admitted, 1, "nothing after stop()");
});
