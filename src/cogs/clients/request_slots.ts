/**
 * The request slots of an API client: at most `maxConcurrentRequests` requests in flight, the
 * others waiting first come first served; low-priority requests (Kubernetes Events) after all
 * others, and only while the handling is calm (see {@link RequestSlots.acquire}).
 *
 * @module
 */

import { Fifo } from "../aio/fifo.ts";

const RESOLVED: Promise<void> = Promise.resolve();

/** Bounded concurrency of requests, with a low priority that yields to the others. */
export class RequestSlots {
  /** Requests in flight. */
  #inFlight = 0;
  /** How many of those are low-priority. */
  #inFlightLow = 0;
  /** Requests waiting for a slot, first come first served; low-priority ones after all others. */
  #waiting = new Fifo<() => void>();
  #waitingLow = new Fifo<() => void>();
  /** The concurrency limit as last read (low-priority requests are woken by it). */
  #limit: number | null = null;

  /** How many requests of normal priority are in flight now. */
  get inFlight(): number {
    return this.#inFlight - this.#inFlightLow;
  }

  /** How many requests (of normal priority) wait for a slot now. */
  get backlog(): number {
    return this.#waiting.size;
  }

  /** Waits for a request slot (bounded concurrency; the limit is read at every use). */
  acquire(limit: number | null, low = false): Promise<void> {
    this.#limit = limit;
    if (limit === null) {
      this.#inFlight++;
      return RESOLVED;
    }
    if (!low) {
      if (this.#inFlight < limit) {
        this.#inFlight++;
        return RESOLVED;
      }
      return new Promise((resolve) => this.#waiting.push(resolve));
    }
    if (!this.#waitingLow.size && this.#lowFits(limit)) {
      this.#inFlight++;
      this.#inFlightLow++;
      return RESOLVED;
    }
    return new Promise((resolve) => this.#waitingLow.push(resolve));
  }

  /**
   * Whether a low-priority request may start: no other request waits, the others in flight
   * hold at most a quarter of the slots (the handling is calm, not in a burst), and a quarter
   * of the slots stays free.
   */
  #lowFits(limit: number | null): boolean {
    if (limit === null) return true;
    const others = this.#inFlight - this.#inFlightLow;
    return !this.#waiting.size && others <= Math.floor(limit / 4) &&
      this.#inFlight < lowLimit(limit);
  }

  /** Gives a slot back and wakes the next waiting request(s). */
  release(low = false): void {
    this.#inFlight--;
    if (low) this.#inFlightLow--;
    const next = this.#waiting.shift();
    if (next) {
      this.#inFlight++;
      next();
      return;
    }
    // Low-priority requests fill what is free below their limit (several may be woken at once
    // when the other requests have drained).
    while (this.#waitingLow.size && this.#lowFits(this.#limit)) {
      this.#inFlight++;
      this.#inFlightLow++;
      this.#waitingLow.shift()!();
    }
  }
}

/** The slots low-priority requests may take: three quarters of the limit, at least one. */
function lowLimit(limit: number): number {
  return Math.max(1, Math.floor(limit * 0.75));
}
