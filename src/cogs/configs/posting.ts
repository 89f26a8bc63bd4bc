/**
 * Settings of posting log messages as Kubernetes events (`settings.posting`),
 * and the log levels they are judged by.
 *
 * @module
 */

import { bool, fail, integer, seconds, text } from "./_checks.ts";

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
