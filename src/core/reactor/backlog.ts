/**
 * The worker limit of a backlogged API: with no `settings.batching.workerLimit` set, cycles run
 * without a limit — unless the API is backlogged (requests wait for a slot of
 * `settings.networking.maxConcurrentRequests`). Then cycles beyond the API's own concurrency
 * would only stall on it, each holding its whole in-flight state (which V8's scavenges copy and
 * promote): they wait as queued events instead, their latest body batched. The limit lifts when
 * the backlog has stayed gone for a while ({@link whenCalm}) — slow handlers or not — and
 * meanwhile each cycle that ends lets one in (`Limiter.release` reads the limit anew).
 *
 * @module
 */

import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import { Debouncer } from "../../cogs/aio/debounce.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";

/**
 * Cycles in processing per API request slot while the API is backlogged and no worker limit is
 * set: twice `maxConcurrentRequests` keeps every slot busy (a cycle has requests and handler
 * work between them) without piling up stalled cycles.
 */
export const BACKLOG_CYCLES_PER_REQUEST = 2;

/**
 * How long the API must stay without a backlog before every cycle that waits for the backlog's
 * limit goes on at once, in seconds. In a burst the backlog empties and comes back many times a
 * second: letting all the waiting cycles in at each such moment ran thousands at once.
 */
export const CALM_SECONDS = 0.1;

/**
 * The worker limit now: the settings' own, else the backlog's while the API is backlogged.
 *
 * @param settings The operator's settings (read anew at every call).
 * @param api The API client (its backlog).
 * @returns The limit, or null for none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * import { workerLimit } from "./backlog.ts";
 * const settings = new OperatorSettings();
 * assert.equal(workerLimit(settings, { backlog: 0 }), null);
 * assert.equal(workerLimit(settings, { backlog: 3 }), 128); // 2 × maxConcurrentRequests (64)
 * settings.batching.workerLimit = 10;
 * assert.equal(workerLimit(settings, { backlog: 3 }), 10);
 * ```
 */
export function workerLimit(
  settings: OperatorSettings,
  api: Pick<ApiClient, "backlog">,
): number | null {
  const limit = settings.batching.workerLimit;
  if (limit !== null || !api.backlog) return limit;
  const requests = settings.networking.maxConcurrentRequests;
  return requests === null ? null : BACKLOG_CYCLES_PER_REQUEST * requests;
}

/**
 * Calls `admit` once the API's backlog has stayed gone for {@link CALM_SECONDS}: each end of a
 * backlog (`onCalm`) starts the wait anew, and a backlog there at its end skips it (its own end
 * starts another).
 *
 * @param api The API client (its backlog and its calms).
 * @param admit Lets every waiting cycle go on.
 * @param clock The operator's clock.
 * @returns Stops following the calms (and cancels a pending wait).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { whenCalm } from "./backlog.ts";
 * const clock = new FakeClock();
 * const calms = new Set<() => void>();
 * const api = { backlog: 0, onCalm: (f: () => void) => (calms.add(f), () => calms.delete(f)) };
 * let admitted = 0;
 * const stop = whenCalm(api, () => void admitted++, clock);
 * for (const calm of calms) calm(); // a backlog ended
 * await clock.advance(0.05);
 * for (const calm of calms) calm(); // another came and went
 * await clock.advance(0.05);
 * assert.equal(admitted, 0);
 * await clock.advance(0.05); // gone for CALM_SECONDS
 * assert.equal(admitted, 1);
 * stop();
 * ```
 */
export function whenCalm(
  api: Pick<ApiClient, "backlog" | "onCalm">,
  admit: () => void,
  clock: Clock = realClock,
): () => void {
  const settled = new Debouncer(CALM_SECONDS, () => {
    if (!api.backlog) admit();
  }, clock);
  const unsubscribe = api.onCalm(() => settled.trigger());
  return () => {
    unsubscribe();
    settled.cancel();
  };
}
