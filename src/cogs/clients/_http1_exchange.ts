/**
 * One request's terms and how they are held to: what `Http1Client.request` is asked
 * ({@link Http1Request}), and the {@link Exchange} that runs its timeouts and its abort and
 * remembers why it failed. A timeout that runs out is a {@link RequestTimeoutError}.
 *
 * @module
 */

import { realTimerOf, type TargetTimer, type TimerTarget } from "../aio/clock.ts";
import type { Link } from "./_http1_link.ts";

/**
 * One request of `Http1Client.request`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Http1Client } from "./http1.ts";
 * import { ResponseTooLargeError } from "./connection_errors.ts";
 *
 * // A connection whose answer declares 1 GB: refused by maxBodySize, nothing allocated.
 * const answer = new TextEncoder().encode("HTTP/1.1 200 OK\r\ncontent-length: 1000000000\r\n\r\n");
 * const conn = {
 *   read: (p: Uint8Array) => (p.set(answer), Promise.resolve(answer.length)),
 *   write: (p: Uint8Array) => Promise.resolve(p.length),
 *   close: () => {},
 * };
 * using client = new Http1Client("http://k8s.local", { connect: () => Promise.resolve(conn) });
 * const request = { method: "GET", target: "/api", headers: {}, maxBodySize: 1024 };
 * await assert.rejects(client.request(request), ResponseTooLargeError);
 * ```
 */
export interface Http1Request {
  /** The method, e.g. `GET`. */
  method: string;
  /** The path and query, e.g. `/api/v1/pods?limit=5`. */
  target: string;
  /** Header names (lower case) and values; `host` and `content-length` are added. */
  headers: Record<string, string>;
  /** The body. */
  body?: string | Uint8Array | undefined;
  /** Aborts the request and its body: the connection is closed. */
  signal?: AbortSignal | undefined;
  /** Seconds for the whole exchange including the body; null/undefined: none. */
  timeout?: number | null | undefined;
  /** Seconds up to the answer's headers (connecting included); null/undefined: none. */
  connectTimeout?: number | null | undefined;
  /**
   * Bytes a body read whole (`text()`, `bytes()`) may have: a longer one (or one that declares
   * more) fails with a {@link ResponseTooLargeError} and the connection is closed; nothing is
   * allocated from a declared length. null/undefined: none (`read()` is never limited).
   */
  maxBodySize?: number | null | undefined;
}

/**
 * A timeout of a request ran out (a `DOMException` named `TimeoutError`, as
 * `AbortSignal.timeout` makes), with which one and its seconds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestTimeoutError } from "./http1.ts";
 * const error = new RequestTimeoutError("connect", 5);
 * assert.deepEqual([error.name, error.phase, error.seconds], ["TimeoutError", "connect", 5]);
 * ```
 */
export class RequestTimeoutError extends DOMException {
  /** `total`: the whole request's timeout; `connect`: the one up to the headers. */
  readonly phase: "total" | "connect";
  /** The timeout in seconds. */
  readonly seconds: number;

  /**
   * Creates the error.
   *
   * @param phase Which timeout ran out.
   * @param seconds Its seconds.
   */
  constructor(phase: "total" | "connect", seconds: number) {
    super(`The request timed out after ${seconds}s`, "TimeoutError");
    this.phase = phase;
    this.seconds = seconds;
  }
}

/**
 * The one abort listener of a signal for all the exchanges that it may abort (the API client's
 * requests usually share a few long-lived signals). Kept while the signal lives (a weak map's
 * value).
 */
class SignalListener {
  /** The exchanges in flight with this signal: a list through their own links. */
  head: Exchange | undefined = undefined;
  readonly #signal: AbortSignal;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener("abort", this, ONCE);
  }

  /** The listener of a signal that has not aborted (made at its first exchange). */
  static of(signal: AbortSignal): SignalListener {
    let listener = listeners.get(signal);
    if (listener === undefined) listeners.set(signal, listener = new SignalListener(signal));
    return listener;
  }

  add(exchange: Exchange): void {
    exchange.next = this.head;
    if (this.head) this.head.prev = exchange;
    this.head = exchange;
  }

  remove(exchange: Exchange): void {
    if (exchange.prev) exchange.prev.next = exchange.next;
    else if (this.head === exchange) this.head = exchange.next;
    if (exchange.next) exchange.next.prev = exchange.prev;
    exchange.prev = exchange.next = undefined;
  }

  /** The signal aborted: every exchange with it fails with its reason, in the order they began. */
  handleEvent(): void {
    const reason = this.#signal.reason;
    const all: Exchange[] = [];
    for (let exchange = this.head; exchange; exchange = exchange.next) all.push(exchange);
    for (let i = all.length - 1; i >= 0; i--) all[i]!.fail(reason);
  }
}

const ONCE = { once: true } as const;
/** The abort listener of each signal of a request (see {@link SignalListener}). */
const listeners = new WeakMap<AbortSignal, SignalListener>();

/**
 * The timeouts and the abort of one request, and why it failed. One timer serves both
 * timeouts (the exchange is its target): it is set for the earlier of the two and,
 * when it fires with the other one still to come (e.g. the connect timeout after the headers
 * arrived), set again for the rest of that one.
 */
export class Exchange implements TimerTarget {
  failure: unknown = undefined;
  link: Link | undefined;
  /** The neighbours in the list of its signal's {@link SignalListener}. */
  prev: Exchange | undefined = undefined;
  next: Exchange | undefined = undefined;
  /** The signal while its {@link SignalListener} holds the exchange. */
  #signal: AbortSignal | undefined;
  #timer: TargetTimer | undefined;
  /** The timeouts in seconds (null: none, or that one ended: the headers arrived). */
  #totalSeconds: number | null = null;
  #connectSeconds: number | null = null;
  /** When the exchange started (`performance.now()`), known from the first timer. */
  #start = 0;
  #reject: ((reason: unknown) => void) | undefined;
  #done = false;

  constructor(req: Http1Request) {
    const signal = req.signal;
    if (signal) {
      if (signal.aborted) {
        this.failure = signal.reason;
        return;
      }
      this.#signal = signal;
      SignalListener.of(signal).add(this);
    }
    const total = req.timeout;
    const connect = req.connectTimeout;
    if (total != null && total > 0) this.#totalSeconds = total;
    if (connect != null && connect > 0) this.#connectSeconds = connect;
    const first = this.#totalSeconds === null
      ? this.#connectSeconds
      : this.#connectSeconds === null
      ? this.#totalSeconds
      : Math.min(this.#totalSeconds, this.#connectSeconds);
    if (first !== null) {
      const ms = first * 1000;
      this.#timer = realTimerOf(ms, this);
      this.#start = this.#timer.due - ms;
    }
  }

  /**
   * The timer is due: the timeout that ran out fails the exchange (the earlier one if both did;
   * the total one if they are due at once), else the timer is set for the one still to come.
   */
  onTimer(): void {
    this.#timer = undefined;
    if (this.#done || this.failure !== undefined) return;
    const now = performance.now();
    const total = this.#totalSeconds;
    const connect = this.#connectSeconds;
    const totalDue = total === null ? Infinity : this.#start + total * 1000;
    const connectDue = connect === null ? Infinity : this.#start + connect * 1000;
    if (connectDue < totalDue && connectDue <= now) {
      this.fail(new RequestTimeoutError("connect", connect!));
    } else if (totalDue <= now) this.fail(new RequestTimeoutError("total", total!));
    else if (connectDue <= now) this.fail(new RequestTimeoutError("connect", connect!));
    else this.#timer = realTimerOf(Math.min(totalDue, connectDue) - now, this);
  }

  /** Aborts: remembers why, closes the connection, stops the wait for a connection. */
  fail(reason: unknown): void {
    if (this.#done || this.failure !== undefined) return;
    this.failure = reason;
    this.link?.close();
    this.#reject?.(reason);
  }

  /** Waits for `promise`, or rejects at once when the exchange fails. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      promise.then(resolve, reject).finally(() => (this.#reject = undefined));
    });
  }

  /** The headers arrived: the connect timeout no longer runs (its timer, if set, re-arms for the total). */
  headers(): void {
    this.#connectSeconds = null;
    if (this.#totalSeconds === null) this.#cancelTimer();
  }

  /** The exchange ended (however): no timer runs, the signal no longer aborts it. */
  finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#cancelTimer();
    if (this.#signal) listeners.get(this.#signal)?.remove(this);
    this.#signal = undefined;
  }

  #cancelTimer(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }
}
