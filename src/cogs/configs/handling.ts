/**
 * Settings of how handlers run: admission webhooks (`settings.admission`),
 * handler execution (`settings.execution`) and daemons and timers
 * (`settings.background`).
 *
 * @module
 */

import { fail, integer, optionalSeconds, seconds, text } from "./_checks.ts";

/**
 * Settings of admission webhooks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().admission;
 * s.managed = "auto.kopf.dev";
 * assert.deepEqual([s.managed, s.server], ["auto.kopf.dev", null]);
 * ```
 */
export class AdmissionSettings {
  #server: object | null = null;
  #managed: string | null = null;

  /** How admission requests reach the operator (a webhook server or tunnel from kits). Default null. */
  get server(): object | null {
    return this.#server;
  }
  set server(value: object | null) {
    if (value !== null && typeof value !== "object" && typeof value !== "function") {
      fail("admission.server", "a webhook server object or null", value);
    }
    this.#server = value;
  }

  /** The name of the webhook configurations the operator creates and keeps up to date (`null`: unmanaged). */
  get managed(): string | null {
    return this.#managed;
  }
  set managed(value: string | null) {
    this.#managed = value === null ? null : text("admission.managed", value);
  }
}

/**
 * Settings of handler execution.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().execution;
 * s.maxWorkers = 20;
 * assert.deepEqual([s.maxWorkers, s.defaultBackoff], [20, 60]);
 * ```
 */
export class ExecutionSettings {
  #maxWorkers: number | null = null;
  #defaultBackoff = 60;

  /**
   * Kept for compatibility with Kopf's thread pool of sync handlers; handlers
   * here share one event loop. Must be at least 1 when set. Default null.
   */
  get maxWorkers(): number | null {
    return this.#maxWorkers;
  }
  set maxWorkers(value: number | null) {
    this.#maxWorkers = value === null ? null : integer("execution.maxWorkers", value, 1);
  }

  /** The retry delay after arbitrary (non-Kopf) errors of handlers without `backoff`. Default 60. */
  get defaultBackoff(): number {
    return this.#defaultBackoff;
  }
  set defaultBackoff(value: number) {
    this.#defaultBackoff = seconds("execution.defaultBackoff", value);
  }
}

/**
 * Settings of daemons and timers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().background;
 * assert.deepEqual([s.cancellationPolling, s.instantExitZeroTimeCycles], [60, 10]);
 * ```
 */
export class BackgroundSettings {
  #cancellationPolling = 60;
  #instantExitTimeout: number | null = null;
  #instantExitZeroTimeCycles: number | null = 10;

  /** How often to re-check an exiting daemon that has no cancellation timeout. Default 60. */
  get cancellationPolling(): number {
    return this.#cancellationPolling;
  }
  set cancellationPolling(value: number) {
    this.#cancellationPolling = seconds("background.cancellationPolling", value);
  }

  /** How long to wait for a daemon to exit at once before polling through the object. Default null. */
  get instantExitTimeout(): number | null {
    return this.#instantExitTimeout;
  }
  set instantExitTimeout(value: number | null) {
    this.#instantExitTimeout = optionalSeconds("background.instantExitTimeout", value);
  }

  /** How many zero-time event-loop turns a daemon gets to exit at once (when no timeout is set). Default 10. */
  get instantExitZeroTimeCycles(): number | null {
    return this.#instantExitZeroTimeCycles;
  }
  set instantExitZeroTimeCycles(value: number | null) {
    this.#instantExitZeroTimeCycles = value === null
      ? null
      : integer("background.instantExitZeroTimeCycles", value, 0);
  }
}
