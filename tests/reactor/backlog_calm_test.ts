/**
 * The backlog's worker limit (core/reactor/backlog.ts) on a fake clock: it holds from the first
 * backlog seen until the API is calm — no request waiting and at most half the limit's requests
 * in flight, at two checks in a row — not only until the backlog empties for an instant (in a
 * burst that let thousands of cycles run at once); then the waiting cycles go on.
 */
import assert from "node:assert/strict";
import { OperatorSettings } from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import { BacklogLimit, CALM_SECONDS } from "../../src/core/reactor/backlog.ts";

function setup(slots = 64) {
  const clock = new FakeClock();
  const settings = new OperatorSettings();
  settings.networking.maxConcurrentRequests = slots;
  const api = { backlog: 0, inFlight: 0 };
  const admitted: number[] = [];
  const limit = new BacklogLimit(settings, api, () => void admitted.push(clock.now()), clock);
  return { clock, settings, api, admitted, limit };
}

Deno.test("BacklogLimit: none without a backlog; from the first backlog seen, as many cycles as request slots, through a burst whose backlog empties and comes back", async () => {
  const { clock, api, admitted, limit } = setup();
  api.inFlight = 30;
  assert.equal(limit.current, null, "no backlog: no limit");
  api.backlog = 10;
  api.inFlight = 64;
  assert.equal(limit.current, 64);
  // A burst: the backlog empties and comes back, the slots stay busy.
  for (let i = 0; i < 20; i++) {
    api.backlog = i % 2 ? 3 : 0;
    api.inFlight = 40 + (i % 7);
    await clock.advance(CALM_SECONDS / 2);
    assert.equal(limit.current, 64, `still held at ${clock.now()} s`);
  }
  assert.deepEqual(admitted, [], "nobody admitted by a momentary calm");
  limit.close();
});

Deno.test("BacklogLimit: lifts at the second calm check in a row — no backlog, at most half the limit's requests in flight — and the waiting go on then, once", async () => {
  const { clock, api, admitted, limit } = setup();
  api.backlog = 1;
  assert.equal(limit.current, 64);
  api.backlog = 0;
  api.inFlight = 33; // just above half: not calm
  await clock.advance(CALM_SECONDS * 5);
  assert.deepEqual([limit.current, admitted.length], [64, 0]);
  api.inFlight = 32;
  await clock.advance(CALM_SECONDS);
  assert.deepEqual([limit.current, admitted.length], [64, 0], "one calm check is not enough");
  api.backlog = 2; // back between the checks
  await clock.advance(CALM_SECONDS);
  api.backlog = 0;
  await clock.advance(CALM_SECONDS);
  assert.deepEqual([limit.current, admitted.length], [64, 0], "the checks start over");
  await clock.advance(CALM_SECONDS);
  assert.equal(admitted.length, 1, "lifted");
  assert.equal(limit.current, null);
  await clock.advance(CALM_SECONDS * 10);
  assert.equal(admitted.length, 1, "admitted once; no more checks while not held");
  api.backlog = 1; // a new backlog: held again
  assert.equal(limit.current, 64);
  limit.close();
  api.backlog = 0;
  api.inFlight = 0;
  await clock.advance(CALM_SECONDS * 10);
  assert.equal(admitted.length, 1, "nothing after close()");
});

Deno.test("BacklogLimit: the settings' own worker limit wins; no request limit, no backlog limit", async () => {
  const { clock, settings, api, admitted, limit } = setup();
  api.backlog = 5;
  settings.batching.workerLimit = 7;
  assert.equal(limit.current, 7);
  settings.batching.workerLimit = null;
  settings.networking.maxConcurrentRequests = null;
  assert.equal(limit.current, null);
  await clock.advance(CALM_SECONDS * 5);
  assert.deepEqual(admitted, []);
  limit.close();
});
