/**
 * The operator's log records into LogTape (`@logtape/logtape`): for apps that
 * already route their logs through LogTape's sinks (files, OpenTelemetry,
 * Sentry, …). The operator keeps its own per-operator records (several
 * operators and test runners per process need that); this sink hands each
 * record to the LogTape logger of its category, e.g. `["kopf", "objects"]`,
 * with the object's reference and the error as properties.
 *
 * LogTape is imported when the first such sink is made, not with `mod.ts`: an operator that does
 * not hand its records to LogTape does not load it (≈1.6 MiB of an idle operator's memory, its
 * modules and their compiled code). The records that arrive before the import has finished — a
 * turn of the event loop when the app has imported LogTape already, to configure it — are held
 * and handed over in their order; {@link LogtapeSink.ready} says when that is done.
 *
 * @module
 */

import type { getLogger, Logger, LogLevel } from "npm:@logtape/logtape@^1.3.0";
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

/** The sink {@link logtapeSink} makes: a {@link LogSink} that knows when LogTape is loaded. */
export type LogtapeSink = LogSink & {
  /** The lowest level handed over. */
  readonly level: Level;
  /**
   * Settled when LogTape's module is loaded and the records held until then are handed over;
   * rejected if it cannot be loaded (the sink then drops the records, and says so once on
   * stderr).
   */
  readonly ready: Promise<void>;
};

/**
 * A log sink that hands the operator's records to LogTape. Configure LogTape
 * (`configure()`) as the app does; the records arrive under the categories
 * `["kopf", "activities"]` and `["kopf", "objects"]` (per-object records carry
 * `properties.object`: apiVersion, kind, namespace, name, uid), with
 * `critical` as LogTape's `fatal` and a handler's error as `properties.error`.
 * LogTape's module is imported when the sink is made; records that come before it is loaded
 * are held and handed over in order once it is (`await sink.ready` to wait for that).
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
 * await sink.ready; // LogTape's module loaded, the record handed over
 * assert.deepEqual(seen[0]?.category, ["kopf", "objects"]);
 * assert.equal(seen[0]?.message[0], "[default/kex] Handler 'create' succeeded.");
 * ```
 */
export function logtapeSink(options: LogtapeSinkOptions = {}): LogtapeSink {
  const prefix = options.prefix ?? true;
  const category = options.category ?? [];
  const level = options.level ?? "info";
  const loggers = new Map<string, Logger>();
  let get: typeof getLogger | undefined;
  let failed = false;
  const held: LogRecord[] = [];
  const deliver = (record: LogRecord): void => {
    let logger = loggers.get(record.logger);
    if (!logger) {
      logger = get!([...category, ...record.logger.split(".")]);
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
  const ready = import("npm:@logtape/logtape@^1.3.0").then(
    (logtape) => {
      get = logtape.getLogger;
      for (const record of held.splice(0)) deliver(record);
    },
    (error: unknown) => {
      failed = true;
      const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
      console.error(
        `kopf.logtapeSink(): LogTape could not be loaded, its records are dropped: ${reason}`,
      );
      held.length = 0;
      throw error;
    },
  );
  ready.catch(() => {}); // a sink nobody awaits must not end the process with an unhandled rejection
  const sink = (record: LogRecord): void => {
    if (failed || !levelAtLeast(record.level, level)) return;
    if (get) deliver(record);
    else held.push(record);
  };
  return Object.assign(sink, { level, ready });
}
