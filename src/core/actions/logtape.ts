/**
 * The operator's log records into LogTape (`@logtape/logtape`): for apps that
 * already route their logs through LogTape's sinks (files, OpenTelemetry,
 * Sentry, …). The operator keeps its own per-operator records (several
 * operators and test runners per process need that); this sink hands each
 * record to the LogTape logger of its category, e.g. `["kopf", "objects"]`,
 * with the object's reference and the error as properties.
 *
 * @module
 */

import { getLogger, type Logger, type LogLevel } from "npm:@logtape/logtape@^1.3.0";
import { type Level, levelAtLeast, type LogRecord, type LogSink } from "./loggers.ts";

/** Options of {@link logtapeSink}. */
export interface LogtapeSinkOptions {
  /** A category to put before Kopf's (`["my-app"]` gives `["my-app", "kopf", "objects"]`). */
  category?: readonly string[];
  /**
   * The lowest level handed over (default `info`): records below it are not even built, which
   * matters for `debug`, whose messages include whole bodies.
   */
  level?: Level;
  /** Start per-object messages with `[namespace/name] ` (default: yes). */
  prefix?: boolean;
}

const LEVELS: Record<Level, LogLevel> = {
  debug: "debug",
  info: "info",
  warning: "warning",
  error: "error",
  critical: "fatal",
};

/**
 * A log sink that hands the operator's records to LogTape. Configure LogTape
 * (`configure()`) as the app does; the records arrive under the categories
 * `["kopf", "activities"]` and `["kopf", "objects"]` (per-object records carry
 * `properties.object`: apiVersion, kind, namespace, name, uid), with
 * `critical` as LogTape's `fatal` and a handler's error as `properties.error`.
 *
 * @param options A category prefix, the lowest level, the `[ns/name]` prefix.
 * @returns The sink, for `kopf.operator({ sink })` / `kopf.run({ sink })`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configure, type LogRecord } from "npm:@logtape/logtape@^1.3.0";
 * import * as kopf from "@kopf/kopf";
 *
 * const seen: LogRecord[] = [];
 * await configure({
 *   sinks: { memory: (record) => seen.push(record) },
 *   loggers: [
 *     { category: ["kopf"], sinks: ["memory"], lowestLevel: "info" },
 *     { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
 *   ],
 *   reset: true,
 * });
 * const sink = kopf.logtapeSink();
 * sink({ level: "info", message: "Handler 'create' succeeded.", time: new Date(),
 *   logger: "kopf.objects", object: { namespace: "default", name: "kex" }, prefix: "[default/kex] " });
 * assert.deepEqual(seen[0]?.category, ["kopf", "objects"]);
 * assert.equal(seen[0]?.message[0], "[default/kex] Handler 'create' succeeded.");
 * ```
 */
export function logtapeSink(options: LogtapeSinkOptions = {}): LogSink {
  const prefix = options.prefix ?? true;
  const category = options.category ?? [];
  const level = options.level ?? "info";
  const loggers = new Map<string, Logger>();
  const sink = (record: LogRecord): void => {
    if (!levelAtLeast(record.level, level)) return;
    let logger = loggers.get(record.logger);
    if (!logger) {
      logger = getLogger([...category, ...record.logger.split(".")]);
      loggers.set(record.logger, logger);
    }
    const text = prefix && record.prefix ? record.prefix + record.message : record.message;
    const properties: Record<string, unknown> = {};
    if (record.object) properties.object = record.object;
    if (record.error !== undefined) properties.error = record.error;
    logger.emit({
      timestamp: record.time.getTime(),
      level: LEVELS[record.level],
      message: [text],
      rawMessage: text,
      properties,
    });
  };
  return Object.assign(sink, { level });
}
