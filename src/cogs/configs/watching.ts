/**
 * Settings of how the cluster is followed: the watch streams (`settings.watching`),
 * the per-object queues they feed (`settings.batching`, also `settings.queueing`),
 * and the scanning of namespaces and CRDs (`settings.scanning`).
 *
 * @module
 */

import { bool, delays, fail, integer, optionalSeconds, seconds } from "./_checks.ts";

/**
 * Settings of the watch streams.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().watching;
 * s.serverTimeout = 600;
 * assert.deepEqual([s.reconnectBackoff, s.listPageSize, s.streamingLists], [0.1, 500, "auto"]);
 * ```
 */
export class WatchingSettings {
  #serverTimeout: number | null = null;
  #clientTimeout: number | null = null;
  #connectTimeout: number | null = null;
  #reconnectBackoff = 0.1;
  #inactivityTimeout: number | null = 70;
  #listPageSize = 500;
  #streamingLists: "auto" | "always" | "never" = "auto";
  #maxLineSize = 16 * 1024 * 1024;

  /**
   * Characters one line (one event) of a watch-stream may have; a longer one ends the watch with
   * a `ResponseTooLargeError`. Default 16 MiB: etcd holds objects up to 1.5 MiB, and their JSON
   * in an event is a few MiB at most.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().watching;
   * assert.equal(s.maxLineSize, 16 * 1024 * 1024);
   * s.maxLineSize = 64 * 1024 * 1024;
   * assert.throws(() => (s.maxLineSize = 0), /watching.maxLineSize/);
   * ```
   */
  get maxLineSize(): number {
    return this.#maxLineSize;
  }
  set maxLineSize(value: number) {
    this.#maxLineSize = integer("watching.maxLineSize", value, 1);
  }

  /** Objects per page of the initial (and every re-) listing (`limit`; 0: one request). Default 500. */
  get listPageSize(): number {
    return this.#listPageSize;
  }
  set listPageSize(value: number) {
    this.#listPageSize = integer("watching.listPageSize", value, 0);
  }

  /**
   * How the state is read when a watch (re)starts: `"always"` streamed over the watch itself
   * (`sendInitialEvents=true`, KEP-3157: no LIST, the objects come as they are read, the end is
   * a bookmark), `"never"` paginated LIST then WATCH, or `"auto"`: streamed where the server
   * offers it, else — it refuses, or answers without the end bookmark — LIST then WATCH for the
   * rest of that watcher's life. Default `"auto"`.
   */
  get streamingLists(): "auto" | "always" | "never" {
    return this.#streamingLists;
  }
  set streamingLists(value: "auto" | "always" | "never") {
    if (value !== "auto" && value !== "always" && value !== "never") {
      fail("watching.streamingLists", '"auto", "always" or "never"', value);
    }
    this.#streamingLists = value;
  }

  /** `timeoutSeconds` asked of the server per watch request (`null`: the server's choice). Default null. */
  get serverTimeout(): number | null {
    return this.#serverTimeout;
  }
  set serverTimeout(value: number | null) {
    this.#serverTimeout = optionalSeconds("watching.serverTimeout", value);
  }

  /** Client-side limit of one watch request, connecting included (`null`: none). Default null. */
  get clientTimeout(): number | null {
    return this.#clientTimeout;
  }
  set clientTimeout(value: number | null) {
    this.#clientTimeout = optionalSeconds("watching.clientTimeout", value);
  }

  /** Connection timeout of watch requests (`null`: `networking.connectTimeout`). Default null. */
  get connectTimeout(): number | null {
    return this.#connectTimeout;
  }
  set connectTimeout(value: number | null) {
    this.#connectTimeout = optionalSeconds("watching.connectTimeout", value);
  }

  /** Pause between watch requests, against API flooding. Default 0.1. */
  get reconnectBackoff(): number {
    return this.#reconnectBackoff;
  }
  set reconnectBackoff(value: number) {
    this.#reconnectBackoff = seconds("watching.reconnectBackoff", value);
  }

  /**
   * How long a stream may stay silent (bookmarks count) before it is taken
   * for dead and reopened (`null`: never). Default 70.
   */
  get inactivityTimeout(): number | null {
    return this.#inactivityTimeout;
  }
  set inactivityTimeout(value: number | null) {
    this.#inactivityTimeout = optionalSeconds("watching.inactivityTimeout", value);
  }
}

/**
 * Settings of the per-object event queues and their workers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().batching;
 * s.errorDelays = [10, 20, 30];
 * assert.deepEqual([[...s.errorDelays], s.idleTimeout], [[10, 20, 30], 5]);
 * ```
 */
export class BatchingSettings {
  #workerLimit: number | null = null;
  #idleTimeout = 5;
  #batchWindow = 0.1;
  #exitTimeout = 2;
  #errorDelays: Iterable<number> = Object.freeze([
    1,
    1,
    2,
    3,
    5,
    8,
    13,
    21,
    34,
    55,
    89,
    144,
    233,
    377,
    610,
  ]);

  /**
   * How many per-object workers may run at once (`null`: no limit). Default null: no limit while
   * the API keeps up; once requests queue for a slot of `networking.maxConcurrentRequests`, as
   * many cycles per watched resource as there are slots, the others waiting as queued events
   * (batched) until the API is calm again (no request waiting, at most half as many in flight).
   * A number here is the limit at all times.
   */
  get workerLimit(): number | null {
    return this.#workerLimit;
  }
  set workerLimit(value: number | null) {
    this.#workerLimit = value === null ? null : integer("batching.workerLimit", value, 1);
  }

  /**
   * How soon an idle per-object worker exits. Default 5. (Idle queues are let go in groups: up to
   * a fifth of this, at most 1 s, after their time.)
   */
  get idleTimeout(): number {
    return this.#idleTimeout;
  }
  set idleTimeout(value: number) {
    this.#idleTimeout = seconds("batching.idleTimeout", value);
  }

  /**
   * Events arriving within this window after one are batched; only the last is processed. A lone
   * event is processed at once, and so are the echoes of the operator's own writes (nothing else
   * came between them). Default 0.1.
   */
  get batchWindow(): number {
    return this.#batchWindow;
  }
  set batchWindow(value: number) {
    this.#batchWindow = seconds("batching.batchWindow", value);
  }

  /** How long workers may take to finish their queues when the watcher exits. Default 2. */
  get exitTimeout(): number {
    return this.#exitTimeout;
  }
  set exitTimeout(value: number) {
    this.#exitTimeout = seconds("batching.exitTimeout", value);
  }

  /**
   * Pauses after unexpected framework errors in an object's worker, one per
   * consecutive error, the last repeated; `[]` disables throttling.
   * Default 1, 1, 2, 3, 5, 8, … 610.
   */
  get errorDelays(): Iterable<number> {
    return this.#errorDelays;
  }
  set errorDelays(value: number | Iterable<number>) {
    this.#errorDelays = delays("batching.errorDelays", value);
  }
}

/**
 * Settings of observing the cluster's namespaces and CRDs at runtime.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().scanning;
 * assert.deepEqual(s.disabled, false);
 * ```
 */
export class ScanningSettings {
  #disabled = false;

  /** Whether to serve only what exists at startup (no watching of namespaces/CRDs). Default false. */
  get disabled(): boolean {
    return this.#disabled;
  }
  set disabled(value: boolean) {
    this.#disabled = bool("scanning.disabled", value);
  }
}
