/**
 * Coalescing of changes into runs of one piece of work: the timing of a
 * level-based reconciler (kube-rs' scheduler and applier, controller-runtime's
 * workqueue, for one key). A burst of changes waits for a quiet period and
 * becomes one run; runs never overlap; a change during a run makes exactly
 * one more run after it; a run may ask to be repeated after a delay (a retry);
 * with nothing happening, a run comes every `resync` seconds.
 *
 * Why a quiet period with a cap: a trailing debounce alone starves under
 * steady churn (a child whose status changes every 100 ms would never let its
 * parent be reconciled with a 200 ms debounce); so a change waits at most
 * `maxWait` seconds from the first change not served yet.
 *
 * Why a readiness function and not a flag: before a run may start, the
 * operator may be paused (peering) or may still be listing what the run reads
 * (children, indices). The changes that come meanwhile are served by the run
 * that starts after the wait — one run, not one for the wait and one for them.
 *
 * All time comes from a {@link Clock}, so that every rule is tested on a fake one.
 *
 * @module
 */

import { type CancelTimer, type Clock, realClock } from "./clock.ts";

/**
 * The work: one run, given a signal that aborts when the coalescer closes. It resolves to
 * seconds after which it wants to run again even without a change (a retry), or undefined.
 */
export type CoalescedRun = (signal: AbortSignal) => Promise<number | undefined>;

/** The timing of a {@link Coalescer}. */
export interface CoalescerOptions {
  /** Seconds without a change before a run starts (0: at once). */
  debounce: number;
  /** Seconds at most from the first change not served yet to its run (default: no cap). */
  maxWait?: number | undefined;
  /** Seconds from the end of a run to the next run when nothing changes (default: none). */
  resync?: number | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
  /**
   * What a run waits for before it starts: undefined when it may start now, or a promise that
   * settles when it is worth asking again. Changes that come while it waits are served by the
   * run that then starts.
   */
  ready?: ((signal: AbortSignal) => Promise<unknown> | undefined) | undefined;
  /** Receives what a run threw (a run should not throw: it reports its own failures). */
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * Runs one piece of work for changes: debounced, one run at a time, with retries and resyncs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { Coalescer } from "./coalescer.ts";
 * const clock = new FakeClock();
 * const runs: number[] = [];
 * const work = new Coalescer(async () => void runs.push(clock.now()), { debounce: 0.2, clock });
 * for (let i = 0; i < 5; i++) {
 *   work.trigger();
 *   await clock.advance(0.1);
 * }
 * await clock.advance(1);
 * assert.deepEqual(runs, [ 600 ]);
 * await work.close();
 * ```
 */
export class Coalescer {
  readonly #run: CoalescedRun;
  readonly #options: CoalescerOptions;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  /** A change has come that no run has served yet. */
  #pending = false;
  /** When the first change not served yet came (clock ms). */
  #firstAt = 0;
  /** When the last change came (clock ms). */
  #lastAt = 0;
  /** The run (with its wait for readiness), while one is under way. */
  #current: Promise<void> | undefined;
  /** The start after a quiet period. */
  #debounced: CancelTimer | undefined;
  /** The start without a change: a retry or a resync. */
  #woken: CancelTimer | undefined;
  #runs = 0;

  /**
   * @param run The work.
   * @param options The debounce, cap, resync, clock and readiness.
   */
  constructor(run: CoalescedRun, options: CoalescerOptions) {
    this.#run = run;
    this.#options = options;
    this.#clock = options.clock ?? realClock;
  }

  /** Whether a run is under way (or waits for readiness). */
  get running(): boolean {
    return this.#current !== undefined;
  }

  /** Whether a change waits for a run. */
  get pending(): boolean {
    return this.#pending;
  }

  /** How many runs have started. */
  get runs(): number {
    return this.#runs;
  }

  /** Whether {@link Coalescer.close} was called. */
  get closed(): boolean {
    return this.#stop.signal.aborted;
  }

  /** A change: a run starts after the quiet period (or after the current run). */
  trigger(): void {
    if (this.closed) return;
    const now = this.#clock.now();
    if (!this.#pending) this.#firstAt = now;
    this.#pending = true;
    this.#lastAt = now;
    if (!this.#current) this.#debounce();
  }

  /**
   * Stops: no more runs; the current run's signal aborts with the reason.
   *
   * @param reason Why (the signal's reason).
   * @returns When the current run (if any) has ended.
   */
  close(reason?: unknown): Promise<void> {
    this.#cancelTimers();
    if (!this.closed) this.#stop.abort(reason);
    return this.#current ?? Promise.resolve();
  }

  /** (Re)arms the start after the quiet period, capped by `maxWait` since the first change. */
  #debounce(): void {
    const { debounce, maxWait } = this.#options;
    let at = this.#lastAt + debounce * 1000;
    if (maxWait !== undefined) at = Math.min(at, this.#firstAt + maxWait * 1000);
    this.#debounced?.();
    this.#debounced = this.#clock.timer(at - this.#clock.now(), () => this.#start());
  }

  #cancelTimers(): void {
    this.#debounced?.();
    this.#woken?.();
    this.#debounced = this.#woken = undefined;
  }

  #start(): void {
    this.#cancelTimers();
    if (this.#current || this.closed) return;
    this.#current = this.#once().finally(() => (this.#current = undefined)).then((again) => {
      if (this.closed) return;
      if (this.#pending) this.#debounce();
      const wake = again ?? this.#options.resync;
      if (wake !== undefined) {
        this.#woken = this.#clock.timer(Math.max(0, wake) * 1000, () => this.#start());
      }
    });
  }

  /** Waits until ready, then runs once (serving every change that came until then). */
  async #once(): Promise<number | undefined> {
    const signal = this.#stop.signal;
    for (let wait = this.#options.ready?.(signal); wait; wait = this.#options.ready?.(signal)) {
      await wait.then(() => {}, () => {});
      if (signal.aborted) return undefined;
    }
    if (signal.aborted) return undefined;
    this.#pending = false;
    this.#runs++;
    try {
      return await this.#run(signal);
    } catch (e) {
      this.#options.onError?.(e);
      return undefined;
    }
  }
}
