/**
 * Fault injection for reliability tests: the API server can close or stall
 * watch streams, answer a fraction of requests with 429/500/503, add latency,
 * and expire resourceVersions so that resuming watches get 410 Gone. The
 * switches can be set at start, changed at run time (from a test through the
 * server handle, or over HTTP at `/admin/faults`), and every fault injected is
 * counted so a test can assert that its fault really happened.
 *
 * @module
 */

/** The fault switches. All are off by default. */
export interface FaultSettings {
  /** Close every watch stream this many seconds after it opens. */
  closeWatchesEvery?: number;
  /** Close every watch stream at a random moment within this many seconds of opening. */
  closeWatchesRandomly?: number;
  /** Fraction (0..1) of API requests answered with 429 Too Many Requests. */
  rate429?: number;
  /** Fraction (0..1) of API requests answered with 500 Internal Server Error. */
  rate500?: number;
  /** Fraction (0..1) of API requests answered with 503 Service Unavailable. */
  rate503?: number;
  /** The Retry-After seconds of injected 429/503 answers (default 1). */
  retryAfterSeconds?: number;
  /** Latency added to every API request, in milliseconds. */
  latencyMs?: number;
  /** Random extra latency up to this many milliseconds. */
  latencyJitterMs?: number;
  /** Watch streams stay open but deliver nothing (like a silently dead connection). */
  stallWatches?: boolean;
  /**
   * Watch events reach the clients this many milliseconds late (a lagging watch): in order, and no
   * bookmark passes them. The initial state of a watch is not delayed, only the changes after it.
   */
  watchDelayMs?: number;
  /** The resources (plurals) whose watches `watchDelayMs` delays; every resource's if not given. */
  watchDelayResources?: string[];
  /** Which requests the error rates apply to: "all" API requests (default), or "writes" only. */
  errorScope?: "all" | "writes";
}

/** Counts of injected faults by kind. */
export interface FaultCounts {
  /** Watch streams closed by `closeWatchesEvery`, `closeWatchesRandomly` or a counted close-all. */
  watchClosed: number;
  /** Watch streams that stalled (`stallWatches`). */
  watchStalled: number;
  /** Watch events delivered late (`watchDelayMs`). */
  watchDelayed: number;
  /** Requests answered with an injected 429. */
  error429: number;
  /** Requests answered with an injected 500. */
  error500: number;
  /** Requests answered with an injected 503. */
  error503: number;
  /** Requests given added latency. */
  delayed: number;
  /** Calls of {@link Faults.expire}. */
  expired: number;
  /** Watches answered with 410 Gone because their resourceVersion was too old (expired by a fault or not). */
  expiredWatches: number;
}

const KEYS: ReadonlyArray<keyof FaultSettings> = [
  "closeWatchesEvery",
  "closeWatchesRandomly",
  "rate429",
  "rate500",
  "rate503",
  "retryAfterSeconds",
  "latencyMs",
  "latencyJitterMs",
  "stallWatches",
  "watchDelayMs",
  "watchDelayResources",
  "errorScope",
];

/**
 * The fault switches and their counters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer({ faults: { rate503: 1 } });
 * const faults = api.server.faults;
 * assert.deepEqual([faults.pickError("GET")?.code, faults.counts.error503], [503, 1]);
 * ```
 */
export class Faults {
  /** The current switches (validated). */
  settings: FaultSettings;
  /** The injected faults so far, by kind; never reset. */
  readonly counts: FaultCounts = {
    watchClosed: 0,
    watchStalled: 0,
    watchDelayed: 0,
    error429: 0,
    error500: 0,
    error503: 0,
    delayed: 0,
    expired: 0,
    expiredWatches: 0,
  };
  /** Set by the server: compacts history (and closes watches) when asked to expire. */
  onExpire: (closeWatches: boolean) => void = () => {};
  #random: () => number;

  /**
   * Creates the switches, validated.
   *
   * @param settings The initial switches.
   * @param random A random source in [0, 1) (injectable for tests).
   * @throws {TypeError} For an unknown switch or a value out of range.
   */
  constructor(settings: FaultSettings = {}, random: () => number = Math.random) {
    this.settings = validateFaults({ ...settings });
    this.#random = random;
  }

  /**
   * Changes some switches; `null` turns one off.
   *
   * @param patch The switches to change.
   * @returns The new settings.
   */
  update(patch: Record<string, unknown>): FaultSettings {
    const next: Record<string, unknown> = { ...this.settings };
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    this.settings = validateFaults(next);
    return this.settings;
  }

  /** Turns every fault off (counts are kept). */
  reset(): void {
    this.settings = {};
  }

  /**
   * Forces 410 Gone for every watch that resumes from a resourceVersion older than now.
   *
   * @param closeWatches Also close the open watch streams, so that clients resume (and get 410).
   */
  expire(closeWatches = true): void {
    this.counts.expired++;
    this.onExpire(closeWatches);
  }

  /**
   * How late the events of a watch of this resource are delivered now, in milliseconds (0: on
   * time).
   *
   * @param plural The watched resource's plural.
   * @returns The delay.
   */
  watchDelayFor(plural: string): number {
    const ms = this.settings.watchDelayMs ?? 0;
    if (ms <= 0) return 0;
    const only = this.settings.watchDelayResources;
    return only === undefined || only.includes(plural) ? ms : 0;
  }

  /**
   * Counts one injected fault.
   *
   * @param kind The fault.
   */
  count(kind: keyof FaultCounts): void {
    this.counts[kind]++;
  }

  /**
   * A number in [0, 1) from the switches' random source (injectable, so tests can repeat a run).
   *
   * @returns The number.
   */
  random(): number {
    return this.#random();
  }

  /** Counts a watch answered with 410 because of expired history. */
  noteExpired(): void {
    this.counts.expiredWatches++;
  }

  /**
   * Decides whether to answer this request with an injected error.
   *
   * @param method The HTTP method.
   * @returns The code and Retry-After to answer with, or undefined.
   */
  pickError(method: string): { code: 429 | 500 | 503; retryAfter: number } | undefined {
    const s = this.settings;
    if (!s.rate429 && !s.rate500 && !s.rate503) return undefined; // off: the usual case
    if (s.errorScope === "writes" && (method === "GET" || method === "HEAD")) return undefined;
    const retryAfter = s.retryAfterSeconds ?? 1;
    for (const code of [429, 500, 503] as const) {
      const rate = s[`rate${code}`];
      if (rate && this.#random() < rate) {
        this.counts[`error${code}`]++;
        return { code, retryAfter };
      }
    }
    return undefined;
  }

  /**
   * The latency to add to this request, in ms (0 when off).
   *
   * @returns Milliseconds.
   */
  pickLatency(): number {
    const base = this.settings.latencyMs ?? 0;
    const jitter = this.settings.latencyJitterMs ?? 0;
    const ms = base + (jitter ? this.#random() * jitter : 0);
    if (ms > 0) this.counts.delayed++;
    return ms;
  }
}

/**
 * Checks fault settings, with a clear message for a bad one.
 *
 * @param settings The settings to check.
 * @returns The same settings, typed.
 * @throws {TypeError} For an unknown switch or a value out of range.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateFaults } from "./faults.ts";
 * assert.deepEqual(validateFaults({ rate429: 0.1 }), { rate429: 0.1 });
 * ```
 */
export function validateFaults(settings: Record<string, unknown>): FaultSettings {
  for (const [k, v] of Object.entries(settings)) {
    if (!KEYS.includes(k as keyof FaultSettings)) {
      throw new TypeError(`unknown fault "${k}": use one of ${KEYS.join(", ")}`);
    }
    if (k === "stallWatches") {
      if (typeof v !== "boolean") throw new TypeError(`fault "stallWatches" must be true or false`);
    } else if (k === "watchDelayResources") {
      if (!Array.isArray(v) || !v.every((r) => typeof r === "string" && r)) {
        throw new TypeError(
          `fault "watchDelayResources" must be a list of plurals, e.g. ["kopfexamples"]`,
        );
      }
    } else if (k === "errorScope") {
      if (v !== "all" && v !== "writes") {
        throw new TypeError(`fault "errorScope" must be "all" or "writes"`);
      }
    } else if (typeof v !== "number" || !(v >= 0) || (k.startsWith("rate") && v > 1)) {
      throw new TypeError(
        `fault "${k}" must be a number ${
          k.startsWith("rate") ? "between 0 and 1" : "of 0 or more"
        }, not ${JSON.stringify(v)}`,
      );
    }
  }
  return settings as FaultSettings;
}
