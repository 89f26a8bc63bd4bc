/**
 * Operator settings: every knob of the framework, grouped as Kopf groups
 * them (`settings.posting.level`, `settings.watching.serverTimeout`, …) with
 * Kopf's defaults, camelCased. Startup handlers change them before the
 * operator starts its work; each operator (even several in one process) has
 * its own settings object.
 *
 * Assignments are checked where that is cheap, so a typo-level mistake —
 * a negative timeout, an unknown log level, a string for a number — fails at
 * startup with a one-line `TypeError` naming the setting, instead of as an
 * odd behaviour an hour later.
 *
 * @module
 */

import { AnnotationsDiffBaseStorage, DiffBaseStorage } from "./diffbase.ts";
import { LeaderElectionSettings } from "./leader_election.ts";
import { ProgressStorage, SmartProgressStorage } from "./progress.ts";
import { ShardingSettings } from "./sharding.ts";

/**
 * Log levels, as Python's logging names them (lowercase).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type LogLevel } from "@kopf/kopf";
 * const level: LogLevel = "warning";
 * assert.deepEqual(level, "warning");
 * ```
 */
export type LogLevel = "debug" | "info" | "warning" | "error" | "critical";

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warning", "error", "critical"];

function fail(name: string, expected: string, value: unknown): never {
  let shown: string;
  try {
    shown = typeof value === "function" ? "a function" : JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  throw new TypeError(`settings.${name} must be ${expected}; got ${shown}.`);
}

function seconds(name: string, value: unknown): number {
  if (typeof value !== "number" || !(value >= 0) || value === Infinity) {
    fail(name, "a non-negative number of seconds", value);
  }
  return value;
}

function optionalSeconds(name: string, value: unknown): number | null {
  return value === null ? null : seconds(name, value);
}

function bool(name: string, value: unknown): boolean {
  if (typeof value !== "boolean") fail(name, "true or false", value);
  return value;
}

function integer(name: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    fail(name, min === 0 ? "a non-negative integer" : `an integer of at least ${min}`, value);
  }
  return value;
}

function text(name: string, value: unknown, allowEmpty = false): string {
  if (typeof value !== "string" || (!allowEmpty && value === "")) {
    fail(name, allowEmpty ? "a string" : "a non-empty string", value);
  }
  return value;
}

/** Backoff sequences: arrays are checked and copied; other iterables (even infinite) are kept as they are. */
function delays(name: string, value: unknown): Iterable<number> {
  if (typeof value === "number") return Object.freeze([seconds(name, value)]);
  if (Array.isArray(value)) {
    return Object.freeze(value.map((item, i) => seconds(`${name}[${i}]`, item)));
  }
  if (
    value !== null && typeof value === "object" &&
    typeof (value as Iterable<unknown>)[Symbol.iterator] === "function"
  ) {
    return value as Iterable<number>;
  }
  fail(name, "a number or an iterable of non-negative numbers", value);
}

/**
 * Settings of the operator's OS process (e.g. when started by `kopf run`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().process;
 * s.ultimateExitingTimeout = null;
 * assert.deepEqual(s.ultimateExitingTimeout, null);
 * ```
 */
export class ProcessSettings {
  #ultimateExitingTimeout: number | null = 600;

  /** How long a graceful exit may take before the process is killed (seconds; `null`: never). Default 600. */
  get ultimateExitingTimeout(): number | null {
    return this.#ultimateExitingTimeout;
  }
  set ultimateExitingTimeout(value: number | null) {
    this.#ultimateExitingTimeout = optionalSeconds("process.ultimateExitingTimeout", value);
  }
}

/**
 * Settings of posting log messages as Kubernetes events.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().posting;
 * s.level = "warning";
 * assert.deepEqual([s.level, s.reportingComponent], ["warning", "kopf"]);
 * ```
 */
export class PostingSettings {
  #enabled = true;
  #loggers = true;
  #level: LogLevel = "info";
  #reportingComponent = "kopf";
  #reportingInstance = "dev";
  #eventNamePrefix = "kopf-event-";
  #concurrency = 16;
  #flushTimeout = 5;
  #spamBurst = 25;
  #spamRefill = 300;

  /** Whether to post events at all, `kopf.event()` and friends included. Default true. */
  get enabled(): boolean {
    return this.#enabled;
  }
  set enabled(value: boolean) {
    this.#enabled = bool("posting.enabled", value);
  }

  /**
   * Whether the per-object loggers' messages (handlers' `logger`) are posted
   * too, as in Kopf 1.x; when false, only explicit `kopf.event()` calls post.
   * Default true.
   */
  get loggers(): boolean {
    return this.#loggers;
  }
  set loggers(value: boolean) {
    this.#loggers = bool("posting.loggers", value);
  }

  /** The lowest level posted. Default `"info"`. Case-insensitive on assignment. */
  get level(): LogLevel {
    return this.#level;
  }
  set level(value: LogLevel) {
    const name = typeof value === "string" ? value.toLowerCase() : value;
    if (!LOG_LEVELS.includes(name as LogLevel)) fail("posting.level", LOG_LEVELS.join("|"), value);
    this.#level = name as LogLevel;
  }

  /** The events' `reportingComponent` and `source.component`. Default `"kopf"`. */
  get reportingComponent(): string {
    return this.#reportingComponent;
  }
  set reportingComponent(value: string) {
    this.#reportingComponent = text("posting.reportingComponent", value);
  }

  /** The events' `reportingInstance`. Default `"dev"`. */
  get reportingInstance(): string {
    return this.#reportingInstance;
  }
  set reportingInstance(value: string) {
    this.#reportingInstance = text("posting.reportingInstance", value);
  }

  /** The events' `metadata.generateName`. Default `"kopf-event-"`. */
  get eventNamePrefix(): string {
    return this.#eventNamePrefix;
  }
  set eventNamePrefix(value: string) {
    this.#eventNamePrefix = text("posting.eventNamePrefix", value);
  }

  /**
   * How many Events are written (POST or PATCH) at once, besides the handling. Default 16. Their
   * requests have low priority: they take request slots only while the handling is calm.
   */
  get concurrency(): number {
    return this.#concurrency;
  }
  set concurrency(value: number) {
    this.#concurrency = integer("posting.concurrency", value, 1);
  }

  /** Seconds the pending Events get to be written at exit; the rest is dropped and counted. Default 5. */
  get flushTimeout(): number {
    return this.#flushTimeout;
  }
  set flushTimeout(value: number) {
    this.#flushTimeout = seconds("posting.flushTimeout", value);
  }

  /** Events about one object posted at once before the spam filter drops them (client-go's 25). */
  get spamBurst(): number {
    return this.#spamBurst;
  }
  set spamBurst(value: number) {
    this.#spamBurst = integer("posting.spamBurst", value, 1);
  }

  /** Seconds until one more event about an object passes once its burst is spent (client-go's 300; 0: no limit). */
  get spamRefill(): number {
    return this.#spamRefill;
  }
  set spamRefill(value: number) {
    this.#spamRefill = seconds("posting.spamRefill", value);
  }
}

/**
 * Settings of peering: how replicas of operators find each other and who pauses.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().peering;
 * s.namespaced = false;
 * assert.deepEqual([s.name, s.clusterwide, s.lifetime], ["default", true, 60]);
 * ```
 */
export class PeeringSettings {
  #name = "default";
  #stealth = false;
  #priority = 0;
  #lifetime = 60;
  #mandatory = false;
  #standalone = false;
  #clusterwide = false;

  /** The peering object's name; different names are separate neighbourhoods. Default `"default"`. */
  get name(): string {
    return this.#name;
  }
  set name(value: string) {
    this.#name = text("peering.name", value);
  }

  /** Whether not to log the regular keep-alives. Default false. */
  get stealth(): boolean {
    return this.#stealth;
  }
  set stealth(value: boolean) {
    this.#stealth = bool("peering.stealth", value);
  }

  /** This operator's priority; lower ones pause while a higher or equal one runs. Default 0. */
  get priority(): number {
    return this.#priority;
  }
  set priority(value: number) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      fail("peering.priority", "an integer", value);
    }
    this.#priority = value;
  }

  /** For how long (seconds) others trust this operator's keep-alive. Default 60. */
  get lifetime(): number {
    return this.#lifetime;
  }
  set lifetime(value: number) {
    this.#lifetime = integer("peering.lifetime", value, 1);
  }

  /** Whether to fail when the peering object or CRD is absent. Default false. */
  get mandatory(): boolean {
    return this.#mandatory;
  }
  set mandatory(value: boolean) {
    this.#mandatory = bool("peering.mandatory", value);
  }

  /** Whether to run without peering even if it exists. Default false. */
  get standalone(): boolean {
    return this.#standalone;
  }
  set standalone(value: boolean) {
    this.#standalone = bool("peering.standalone", value);
  }

  /** Whether the peering is cluster-wide (`ClusterKopfPeering`) or namespaced. Default false. */
  get clusterwide(): boolean {
    return this.#clusterwide;
  }
  set clusterwide(value: boolean) {
    this.#clusterwide = bool("peering.clusterwide", value);
  }

  /** The inverse of {@link PeeringSettings.clusterwide}. */
  get namespaced(): boolean {
    return !this.#clusterwide;
  }
  set namespaced(value: boolean) {
    this.#clusterwide = !bool("peering.namespaced", value);
  }
}

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
   * the API keeps up; while requests queue for a slot of `networking.maxConcurrentRequests`,
   * twice that many cycles per watched resource, the others waiting as queued events (batched)
   * until the queue is gone. A number here is the limit at all times.
   */
  get workerLimit(): number | null {
    return this.#workerLimit;
  }
  set workerLimit(value: number | null) {
    this.#workerLimit = value === null ? null : integer("batching.workerLimit", value, 1);
  }

  /** How soon an idle per-object worker exits. Default 5. */
  get idleTimeout(): number {
    return this.#idleTimeout;
  }
  set idleTimeout(value: number) {
    this.#idleTimeout = seconds("batching.idleTimeout", value);
  }

  /** Events arriving within this window after one are batched; only the last is processed. Default 0.1. */
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

/**
 * Settings of requests to the Kubernetes API.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().networking;
 * s.errorBackoffs = 2; // one retry after 2 s
 * assert.deepEqual([[...s.errorBackoffs], s.requestTimeout], [[2], 300]);
 * ```
 */
export class NetworkingSettings {
  #requestTimeout: number | null = 300;
  #connectTimeout: number | null = null;
  #errorBackoffs: Iterable<number> = Object.freeze([1, 1, 2, 3, 5, 8, 13, 21]);
  #enforceRetryAfter = false;
  #maxConcurrentRequests: number | null = 64;
  #logTraffic = false;
  #maxBodySize: number | null = 512 * 1024 * 1024;
  #errorBodySize = 1024 * 1024;
  #errorBodyTimeout: number | null = 5;

  /**
   * Bytes an API answer's body (watch streams excepted: `watching.maxLineSize`) may have;
   * a bigger one fails with a `ResponseTooLargeError` (not retried). `null`: none.
   * Default 512 MiB: the longest string a JavaScript engine holds (V8: 2²⁹−24 characters), so
   * no body that could be parsed at all is refused; the operator's lists come in pages
   * (`watching.listPageSize`) far below it.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().networking;
   * assert.equal(s.maxBodySize, 512 * 1024 * 1024);
   * s.maxBodySize = 64 * 1024 * 1024;
   * assert.throws(() => (s.maxBodySize = -1), /networking.maxBodySize/);
   * ```
   */
  get maxBodySize(): number | null {
    return this.#maxBodySize;
  }
  set maxBodySize(value: number | null) {
    this.#maxBodySize = value === null ? null : integer("networking.maxBodySize", value, 1);
  }

  /**
   * Bytes of an error answer's body (4xx, 5xx) that are read for its `Status`; the rest is
   * dropped with the connection. Default 1 MiB: a `Status` is a few hundred bytes; a server's
   * error page a few KiB.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().networking;
   * s.errorBodySize = 4096;
   * assert.equal(s.errorBodySize, 4096);
   * assert.throws(() => (s.errorBodySize = 0), /networking.errorBodySize/);
   * ```
   */
  get errorBodySize(): number {
    return this.#errorBodySize;
  }
  set errorBodySize(value: number) {
    this.#errorBodySize = integer("networking.errorBodySize", value, 1);
  }

  /**
   * Seconds an error answer's body is read for at most, once its headers came (`null`: no
   * bound but the request's timeout); what came by then makes the error. Without it, a watch
   * whose server answers 5xx or 410 and then stalls would hang: its inactivity timeout watches
   * only 2xx streams. Default 5.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { OperatorSettings } from "@kopf/kopf";
   * const s = new OperatorSettings().networking;
   * assert.equal(s.errorBodyTimeout, 5);
   * s.errorBodyTimeout = null;
   * assert.equal(s.errorBodyTimeout, null);
   * ```
   */
  get errorBodyTimeout(): number | null {
    return this.#errorBodyTimeout;
  }
  set errorBodyTimeout(value: number | null) {
    this.#errorBodyTimeout = optionalSeconds("networking.errorBodyTimeout", value);
  }

  /**
   * How many API requests (watches excepted) may be in flight at once; `null`: unlimited.
   * Default 64: a burst of thousands of objects then queues its writes instead of opening
   * thousands of connections at once (which costs hundreds of MB), at the same throughput.
   */
  get maxConcurrentRequests(): number | null {
    return this.#maxConcurrentRequests;
  }
  set maxConcurrentRequests(value: number | null) {
    this.#maxConcurrentRequests = value === null
      ? null
      : integer("networking.maxConcurrentRequests", value, 1);
  }

  /** Limit of one API request, watches excepted (seconds; `null`: none). Default 300. */
  get requestTimeout(): number | null {
    return this.#requestTimeout;
  }
  set requestTimeout(value: number | null) {
    this.#requestTimeout = optionalSeconds("networking.requestTimeout", value);
  }

  /** Limit of connecting for API requests (`null`: only the request timeout). Default null. */
  get connectTimeout(): number | null {
    return this.#connectTimeout;
  }
  set connectTimeout(value: number | null) {
    this.#connectTimeout = optionalSeconds("networking.connectTimeout", value);
  }

  /**
   * Pauses between retries of API requests that failed on the network or
   * with 5xx; one more attempt than pauses; a single number is one pause;
   * `[]` disables retrying. Default 1, 1, 2, 3, 5, 8, 13, 21.
   */
  get errorBackoffs(): Iterable<number> {
    return this.#errorBackoffs;
  }
  set errorBackoffs(value: number | Iterable<number>) {
    this.#errorBackoffs = delays("networking.errorBackoffs", value);
  }

  /** Whether `Retry-After` always wins over the backoff (else the longer one). Default false. */
  get enforceRetryAfter(): boolean {
    return this.#enforceRetryAfter;
  }
  set enforceRetryAfter(value: boolean) {
    this.#enforceRetryAfter = bool("networking.enforceRetryAfter", value);
  }

  /**
   * Whether every API request is logged at the debug level: the method, the path with its
   * query, the HTTP code and the duration (never a header, so never a token). `kopf run --debug`
   * turns it on. Default false. Requests go through the HTTP(S) proxy of `HTTPS_PROXY` /
   * `HTTP_PROXY` (`NO_PROXY` excepted, lower-case names too), as Kopf's `trust_env` does.
   */
  get logTraffic(): boolean {
    return this.#logTraffic;
  }
  set logTraffic(value: boolean) {
    this.#logTraffic = bool("networking.logTraffic", value);
  }
}

/**
 * Settings of what the operator keeps on objects.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().persistence;
 * s.finalizer = "my-operator.example.com/kopf-finalizer";
 * assert.deepEqual(s.consistencyTimeout, 5);
 * ```
 */
export class PersistenceSettings {
  #finalizer = "kopf.zalando.org/KopfFinalizerMarker";
  #progressStorage: ProgressStorage = new SmartProgressStorage();
  #diffbaseStorage: DiffBaseStorage = new AnnotationsDiffBaseStorage();
  #consistencyTimeout = 5;
  #resultSizeLimit = 256 * 1024;

  /** The finalizer that blocks deletion until deletion handlers are done. */
  get finalizer(): string {
    return this.#finalizer;
  }
  set finalizer(value: string) {
    this.#finalizer = text("persistence.finalizer", value);
  }

  /** Where handlers' progress is kept. Default `new SmartProgressStorage()`. */
  get progressStorage(): ProgressStorage {
    return this.#progressStorage;
  }
  set progressStorage(value: ProgressStorage) {
    if (!(value instanceof ProgressStorage)) {
      fail("persistence.progressStorage", "a ProgressStorage", value);
    }
    this.#progressStorage = value;
  }

  /** Where the last handled essence is kept. Default `new AnnotationsDiffBaseStorage()`. */
  get diffbaseStorage(): DiffBaseStorage {
    return this.#diffbaseStorage;
  }
  set diffbaseStorage(value: DiffBaseStorage) {
    if (!(value instanceof DiffBaseStorage)) {
      fail("persistence.diffbaseStorage", "a DiffBaseStorage", value);
    }
    this.#diffbaseStorage = value;
  }

  /** How long to wait for the object's version that our own patch produced. Default 5. */
  get consistencyTimeout(): number {
    return this.#consistencyTimeout;
  }
  set consistencyTimeout(value: number) {
    this.#consistencyTimeout = seconds("persistence.consistencyTimeout", value);
  }

  /**
   * The largest result (in bytes of JSON) a handler may return to be stored in `status.<id>`;
   * a larger one fails its handler permanently. Default 256 KiB: results travel with every
   * watch event of the object, and the whole object must stay within the API's limits.
   */
  get resultSizeLimit(): number {
    return this.#resultSizeLimit;
  }
  set resultSizeLimit(value: number) {
    this.#resultSizeLimit = integer("persistence.resultSizeLimit", value, 1);
  }
}

/**
 * All settings of one operator, with Kopf's defaults.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const settings = new OperatorSettings();
 * settings.posting.level = "warning";
 * settings.watching.serverTimeout = 10 * 60;
 * assert.deepEqual(settings.networking.requestTimeout, 300);
 * try {
 *   settings.watching.reconnectBackoff = -1;
 * } catch (error) {
 *   assert.deepEqual((error as Error).message, "settings.watching.reconnectBackoff must be a non-negative number of seconds; got -1.");
 * }
 * ```
 */
export class OperatorSettings {
  /** The OS process. */
  readonly process: ProcessSettings = new ProcessSettings();
  /** Events posting. */
  readonly posting: PostingSettings = new PostingSettings();
  /** Peering of replicas. */
  readonly peering: PeeringSettings = new PeeringSettings();
  /** Sharding of the objects across replicas. */
  readonly sharding: ShardingSettings = new ShardingSettings();
  /** Watch streams. */
  readonly watching: WatchingSettings = new WatchingSettings();
  /** Per-object queues (Kopf 1.x name; {@link OperatorSettings.queueing} is the same object). */
  readonly batching: BatchingSettings = new BatchingSettings();
  /** Cluster scanning. */
  readonly scanning: ScanningSettings = new ScanningSettings();
  /** Admission webhooks. */
  readonly admission: AdmissionSettings = new AdmissionSettings();
  /** Handler execution. */
  readonly execution: ExecutionSettings = new ExecutionSettings();
  /** Daemons and timers. */
  readonly background: BackgroundSettings = new BackgroundSettings();
  /** API requests. */
  readonly networking: NetworkingSettings = new NetworkingSettings();
  /** What is kept on objects. */
  readonly persistence: PersistenceSettings = new PersistenceSettings();
  /** Lease leader election of replicas. */
  readonly leaderElection: LeaderElectionSettings = new LeaderElectionSettings();

  /** The newer Kopf name of {@link OperatorSettings.batching} (the same object). */
  get queueing(): BatchingSettings {
    return this.batching;
  }
}
