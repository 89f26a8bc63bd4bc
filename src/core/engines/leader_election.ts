/**
 * Lease leader election, client-go's way: one replica holds a Lease and
 * handles; the others are standbys that keep their watches and indices warm
 * behind the operator's pause gate and try to acquire the Lease every
 * `retryPeriod` (jittered ×[1, 2.2), client-go's `JitterFactor`).
 *
 * The gate is one toggle (cogs/aio/toggles.ts), on from the start: the
 * processing, daemons and timers wait exactly as under peering, and a replica
 * that is paused by peering as well stays paused whoever holds the Lease.
 *
 * Guarantees — never two leaders acting at once — rest on one inequality.
 * A leader counts its renew deadline from the moment it *sent* its last
 * successful renewal, and closes the gate on a timer the moment that
 * deadline passes, even if a renewal is still hanging on a dead connection.
 * A standby takes the Lease over only after the record has not changed for
 * `leaseDuration` on its own clock since it first saw it (client-go's
 * observed time), and it saw it no earlier than the leader sent it. With
 * `leaseDuration > renewDeadline` the leader has stopped before anyone can
 * start. The write itself is guarded by the Lease's resourceVersion, so two
 * candidates never both win a race.
 *
 * Caveats: the gate holds what has not started; a handler that is running at
 * the moment of abdication is not interrupted (keep handlers shorter than
 * `leaseDuration - renewDeadline`, or idempotent, as Kubernetes handlers
 * should be anyway). The clocks of the replicas must run at the same rate
 * (not show the same time): client-go assumes the same.
 *
 * Unlike client-go (whose process usually exits when it loses the lease), a
 * leader that abdicates becomes a standby again and may win the Lease back.
 *
 * The policy only: its wiring into a running operator (the Lease's name and
 * namespace, the gate, the release at exit) is reactor/leader_election.ts,
 * the same name one layer up.
 *
 * @module
 */

import { traceTransition, TRACING } from "../../cogs/tracing/tracing.ts";
import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import type { Toggle } from "../../cogs/aio/toggles.ts";
import type { LeaseLock } from "../../cogs/clients/lease_lock.ts";
import { JITTER_FACTOR } from "../../cogs/configs/leader_election.ts";
import type { OperatorLogger } from "../actions/loggers.ts";

/** The three durations of an election, in seconds. */
export interface ElectionTimings {
  /** How long a standby waits after the Lease's last change before taking it. */
  leaseDuration: number;
  /** How long the leader keeps handling without a successful renewal. */
  renewDeadline: number;
  /** The pause between tries. */
  retryPeriod: number;
}

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  /** The Lease, as this candidate sees it. */
  lock: LeaseLock;
  /** The durations (checked by the settings beforehand). */
  timings: ElectionTimings;
  /** The pause gate's toggle of this election: on while not leading. */
  toggle: Toggle;
  /** Where the election's lines go (INFO, like client-go's). */
  logger: OperatorLogger;
  /** Whose time counts (default: the real clock). */
  clock?: Clock | undefined;
  /** Random numbers in [0, 1) for the jitter (default `Math.random`). */
  random?: (() => number) | undefined;
  /** Called when this replica sees a new holder (itself included); not for a released Lease. */
  onNewLeader?: ((identity: string) => void) | undefined;
  /** Called when this replica starts or stops leading. */
  onLeading?: ((leading: boolean) => void) | undefined;
}

/**
 * One candidate of an election: {@link LeaderElector.run} until the operator stops, then
 * {@link LeaderElector.leave} at the very end of the exit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock, startApiServer } from "@kopf/kopf/testing";
 * import { ToggleSet } from "../../cogs/aio/toggles.ts";
 * import { ApiClient } from "../../cogs/clients/api.ts";
 * import { LeaseLock } from "../../cogs/clients/leases.ts";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { OperatorLogger } from "@kopf/kopf";
 * import { LeaderElector } from "./leader_election.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const clock = new FakeClock();
 * const paused = new ToggleSet();
 * const elector = new LeaderElector({
 *   lock: new LeaseLock({ api: new ApiClient({ vault }), namespace: "default", name: "op",
 *     identity: "me", leaseDuration: 15, clock }),
 *   timings: { leaseDuration: 15, renewDeadline: 10, retryPeriod: 2 },
 *   toggle: paused.make("leader election", true),
 *   logger: new OperatorLogger(() => {}), clock,
 * });
 * const stop = new AbortController();
 * const running = elector.run(stop.signal);
 * await paused.waitFor(false);
 * assert.deepEqual(elector.leading, true);
 * stop.abort();
 * await elector.leave(); // releases the Lease
 * await running;
 * assert.deepEqual([elector.leading, paused.on], [false, true]);
 * ```
 */
export class LeaderElector {
  readonly #lock: LeaseLock;
  readonly #timings: ElectionTimings;
  readonly #toggle: Toggle;
  readonly #logger: OperatorLogger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #options: LeaderElectorOptions;
  /** Ends the renewing (at the very end of the exit); the acquiring ends on the operator's stop. */
  readonly #leaving = new AbortController();
  #leading = false;
  #reported = "";
  #complained = "";
  #timedOut = false;
  #running: Promise<void> | undefined;

  /**
   * Prepares a candidate; nothing happens until {@link LeaderElector.run}.
   *
   * @param options The Lease, durations, toggle, logger, clock and callbacks.
   */
  constructor(options: LeaderElectorOptions) {
    this.#options = options;
    this.#lock = options.lock;
    this.#timings = options.timings;
    this.#toggle = options.toggle;
    this.#logger = options.logger;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
  }

  /** Whether this replica leads now (its gate toggle is off). */
  get leading(): boolean {
    return this.#leading;
  }

  /** The holder last seen (`""` if none yet or released). */
  get leader(): string {
    return this.#lock.holder;
  }

  /**
   * Acquires the Lease and keeps it: tries every `retryPeriod` (jittered) until it holds it,
   * then renews it every `retryPeriod`; abdicates (closes the gate) when a renewal did not
   * succeed within `renewDeadline`, and becomes a candidate again.
   *
   * @param signal The operator's stop: no more acquiring after it; a leader goes on renewing
   *   until {@link LeaderElector.leave} (its handlers are still finishing).
   * @returns When stopped (never rejects).
   */
  run(signal: AbortSignal): Promise<void> {
    this.#running ??= (async () => {
      this.#logger.info(`attempting to acquire leader lease ${this.#lock.key}...`);
      while (!signal.aborted && !this.#leaving.signal.aborted) {
        const since = await this.#acquire(signal);
        if (since === undefined) break;
        await this.#lead(since);
      }
    })();
    return this.#running;
  }

  /**
   * Leaves the election — the last step of a graceful exit: stops renewing and releases the
   * Lease if this replica holds it (client-go's `ReleaseOnCancel`), so that a standby takes
   * over at its next try instead of after the lease duration.
   *
   * @returns When released (or given up after `renewDeadline`; the Lease then expires).
   */
  async leave(): Promise<void> {
    this.#leaving.abort();
    await this.#running;
    const wasLeading = this.#leading;
    this.#abdicate();
    if (!this.#lock.isLeader) return;
    const timeout = this.#timeout(this.#timings.renewDeadline);
    this.#timedOut = false;
    try {
      if (await this.#lock.release({ signal: timeout.signal })) {
        if (wasLeading) this.#logger.info(`released lease ${this.#lock.key}`);
        if (wasLeading && TRACING) {
          traceTransition("kopf.leadership released", { "kopf.lease": this.#lock.key });
        }
      } else {
        this.#logger.error(`Failed to release lock ${this.#lock.key}: ${this.#why()}`);
      }
    } catch {
      this.#logger.error(`Failed to release lock ${this.#lock.key}: timed out`);
    } finally {
      timeout.cancel();
    }
  }

  /** Tries until it holds the Lease; returns when its last successful write was sent. */
  async #acquire(signal: AbortSignal): Promise<number | undefined> {
    const stop = AbortSignal.any([signal, this.#leaving.signal]);
    const { renewDeadline, retryPeriod } = this.#timings;
    while (!stop.aborted) {
      const sent = this.#clock.now();
      const ok = await this.#try(stop, renewDeadline);
      this.#report();
      // A success that took longer than the deadline is not a safe start: renew first.
      if (ok && this.#clock.now() - sent < renewDeadline * 1000) {
        this.#logger.info(`successfully acquired lease ${this.#lock.key}`);
        if (TRACING) traceTransition("kopf.leadership acquired", { "kopf.lease": this.#lock.key });
        return sent;
      }
      if (!ok) this.#failed("acquire");
      const jittered = retryPeriod * (1 + this.#random() * JITTER_FACTOR);
      await this.#clock.sleep(jittered, stop);
    }
    return undefined;
  }

  /** Leads from `since` until a renewal is late or the Lease is lost (or the leaving). */
  async #lead(since: number): Promise<void> {
    const { renewDeadline, retryPeriod } = this.#timings;
    const lost = new AbortController();
    let cancelDeadline = () => {};
    const arm = (sent: number) => {
      cancelDeadline();
      const left = sent + renewDeadline * 1000 - this.#clock.now();
      cancelDeadline = this.#clock.timer(left, () => {
        // At once, in the timer: a renewal may be hanging on a dead connection.
        this.#abdicate();
        this.#logger.info(
          `failed to renew lease ${this.#lock.key}: timed out waiting for the condition`,
        );
        lost.abort();
      });
    };
    arm(since);
    this.#leading = true;
    this.#toggle.turnTo(false);
    this.#options.onLeading?.(true);
    const stop = AbortSignal.any([lost.signal, this.#leaving.signal]);
    try {
      while (!stop.aborted) {
        if (!await this.#clock.sleep(retryPeriod, stop)) break;
        const sent = this.#clock.now();
        const ok = await this.#try(stop);
        if (stop.aborted) break;
        this.#report();
        if (ok) {
          arm(sent);
          this.#complained = "";
          this.#logger.debug(`successfully renewed lease ${this.#lock.key}`);
        } else if (!this.#lock.isLeader) {
          this.#abdicate();
          this.#logger.info(
            `failed to renew lease ${this.#lock.key}: the lease is held by ${this.#lock.holder}`,
          );
          break;
        } else this.#failed("renew");
      }
    } finally {
      cancelDeadline();
    }
  }

  /** One try, cut short by `stop` or (optionally) after `limit` seconds. */
  async #try(stop: AbortSignal, limit?: number): Promise<boolean> {
    const timeout = limit === undefined ? undefined : this.#timeout(limit);
    this.#timedOut = false;
    try {
      const signal = timeout ? AbortSignal.any([stop, timeout.signal]) : stop;
      return await this.#lock.tryAcquireOrRenew({ signal });
    } catch {
      this.#timedOut = !!timeout?.signal.aborted && !stop.aborted;
      return false; // aborted: by the stop, or the try's own time limit
    } finally {
      timeout?.cancel();
    }
  }

  #abdicate(): void {
    this.#toggle.turnTo(true);
    if (!this.#leading) return;
    this.#leading = false;
    this.#options.onLeading?.(false);
  }

  /** client-go's `maybeReportTransition`: one line per new holder seen. */
  #report(): void {
    const holder = this.#lock.holder;
    if (!holder || holder === this.#reported) return;
    this.#reported = holder;
    this.#options.onNewLeader?.(holder);
    if (holder !== this.#lock.identity) this.#logger.info(`new leader elected: ${holder}`);
    if (TRACING) {
      traceTransition("kopf.leadership holder", {
        "kopf.lease": this.#lock.key,
        "kopf.leadership.holder": holder,
      });
    }
  }

  /**
   * A failed try: held by another (debug, as client-go's V(4)), or an error — a warning
   * once per distinct error (e.g. 403 on Leases: RBAC), the repeats at debug.
   */
  #failed(what: "acquire" | "renew"): void {
    const why = this.#why();
    if (!why) {
      const held = this.#lock.holder ? ` (held by ${this.#lock.holder})` : "";
      this.#logger.debug(`failed to ${what} lease ${this.#lock.key}${held}`);
    } else if (why !== this.#complained) {
      this.#complained = why;
      this.#logger.warning(`error trying to ${what} lease ${this.#lock.key}: ${why}`);
    } else this.#logger.debug(`failed to ${what} lease ${this.#lock.key}: ${why}`);
  }

  #why(): string {
    if (this.#timedOut) return "timed out waiting for the API";
    const error = this.#lock.lastError;
    return error === undefined ? "" : error instanceof Error ? error.message : String(error);
  }

  /** A signal that aborts after `seconds` on the election's clock. */
  #timeout(seconds: number): { signal: AbortSignal; cancel: () => void } {
    const controller = new AbortController();
    const cancel = this.#clock.timer(seconds * 1000, () => {
      controller.abort(new DOMException("timed out", "TimeoutError"));
    });
    return { signal: controller.signal, cancel };
  }
}
