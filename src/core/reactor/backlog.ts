/**
 * The worker limit of a backlogged API: with no `settings.batching.workerLimit` set, cycles run
 * without a limit — unless the API is backlogged (requests wait for a slot of
 * `settings.networking.maxConcurrentRequests`). Then cycles beyond the API's own concurrency
 * would only stall on it, each holding its whole in-flight state (which V8's scavenges copy and
 * promote): they wait as queued events instead, their latest body batched. The limit holds until
 * the API is calm — no request waiting and at most half the limit's requests in flight (of normal
 * priority: the Events' writes, low-priority, do not count), at two checks {@link CALM_SECONDS}
 * apart — and then every waiting cycle goes on at once, slow handlers or not (they hold cycles,
 * not request slots). Meanwhile each cycle that ends lets one in while the
 * limit allows (`Limiter.release` reads it anew).
 *
 * Why not "until no request waits": the limit itself empties the backlog. In a burst the backlog
 * empties and comes back many times a second; lifting the limit at each such moment let every
 * waiting cycle in — thousands at once in a 10,000 burst.
 *
 * @module
 */

import { type CancelTimer, type Clock, realClock } from "../../cogs/aio/clock.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";

/**
 * Cycles in processing per API request slot while the limit holds: as many cycles as slots (a
 * cycle makes its requests one at a time) — cycles beyond them only wait for a slot, holding
 * their state; fewer leave slots idle.
 */
export const BACKLOG_CYCLES_PER_REQUEST = 1;

/** Seconds between the checks of whether the API is calm, while the limit holds. */
export const CALM_SECONDS = 0.1;

/**
 * The worker limit of one watched resource's queues: the settings' own, else the backlog's (see
 * the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { BacklogLimit } from "./backlog.ts";
 * const clock = new FakeClock();
 * const api = { backlog: 5, inFlight: 64 };
 * let admitted = 0;
 * const limit = new BacklogLimit(new OperatorSettings(), api, () => void admitted++, clock);
 * assert.equal(limit.current, 64); // backlogged: as many cycles as request slots
 * api.backlog = 0;
 * await clock.advance(0.5);
 * assert.deepEqual([limit.current, admitted], [64, 0]); // all 64 slots still busy: it holds
 * api.inFlight = 10;
 * await clock.advance(0.2);
 * assert.deepEqual([limit.current, admitted], [null, 1]); // calm: lifted, the waiting go on
 * limit.close();
 * ```
 */
export class BacklogLimit {
  readonly #settings: OperatorSettings;
  readonly #api: Pick<ApiClient, "backlog" | "inFlight">;
  readonly #admit: () => void;
  readonly #clock: Clock;
  /** The check's timer while the limit holds. */
  #check: CancelTimer | undefined;
  /** Whether the last check found the API calm. */
  #calm = false;

  /**
   * @param settings The operator's settings (read anew at every use).
   * @param api The API client: its backlog and its requests in flight.
   * @param admit Lets every waiting cycle go on (when the limit lifts).
   * @param clock The operator's clock.
   */
  constructor(
    settings: OperatorSettings,
    api: Pick<ApiClient, "backlog" | "inFlight">,
    admit: () => void,
    clock: Clock = realClock,
  ) {
    this.#settings = settings;
    this.#api = api;
    this.#admit = admit;
    this.#clock = clock;
  }

  /** The limit now, or null for none; a backlog seen now makes the backlog's limit hold. */
  get current(): number | null {
    const own = this.#settings.batching.workerLimit;
    if (own !== null) return own;
    const slots = this.#settings.networking.maxConcurrentRequests;
    if (slots === null) return null;
    if (!this.#check) {
      if (!this.#api.backlog) return null;
      this.#calm = false;
      this.#arm();
    }
    return cyclesFor(slots);
  }

  /** Stops checking (the limit no longer holds; nothing is admitted by it any more). */
  close(): void {
    this.#check?.();
    this.#check = undefined;
  }

  #arm(): void {
    this.#check = this.#clock.timer(CALM_SECONDS * 1000, () => {
      const slots = this.#settings.networking.maxConcurrentRequests;
      const calm = !this.#api.backlog &&
        (slots === null || this.#api.inFlight * 2 <= cyclesFor(slots));
      if (calm && this.#calm) {
        this.#check = undefined;
        this.#admit();
        return;
      }
      this.#calm = calm;
      this.#arm();
    });
  }
}

/** The cycles the backlog's limit lets run for so many request slots. */
function cyclesFor(slots: number): number {
  return Math.max(1, Math.round(BACKLOG_CYCLES_PER_REQUEST * slots));
}
