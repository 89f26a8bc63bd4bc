/**
 * Loggers of an operator: the operator-level logger and the per-object logger
 * that prefixes `[ns/name] ` and forwards records at or above the posting
 * level to Kubernetes Events. Output goes to the operator's own sink (so that
 * several operators in one process, or a test runner, each see their own
 * lines), in Kopf's formats: plain, full, or JSON.
 *
 * @module
 */

import { logTraceFields, TRACING } from "../../cogs/tracing/tracing.ts";
import { buildObjectReference, type ObjectReference } from "../../cogs/structs/bodies.ts";

/** Log levels, lowest first. */
export type Level = "debug" | "info" | "warning" | "error" | "critical";

const RANK: Record<Level, number> = { debug: 10, info: 20, warning: 30, error: 40, critical: 50 };

/**
 * Whether a level is at or above a threshold.
 *
 * @param level The record's level.
 * @param threshold The minimum.
 * @returns True when it passes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { levelAtLeast } from "./loggers.ts";
 * assert.deepEqual([levelAtLeast("warning", "info"), levelAtLeast("debug", "info")], [true, false]);
 * ```
 */
export function levelAtLeast(level: Level, threshold: Level): boolean {
  return RANK[level] >= RANK[threshold];
}

/**
 * The object a record is about, as a Kubernetes object reference (the structs' one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ObjectRef } from "@kopf/kopf";
 * const ref: ObjectRef = { apiVersion: "v1", kind: "Pod", name: "p", namespace: "ns" };
 * assert.deepEqual(ref.name, "p");
 * ```
 */
export type ObjectRef = ObjectReference;

/** One log record. */
export interface LogRecord {
  /** The record's level. */
  level: Level;
  /** The message, without the object prefix. */
  message: string;
  /** When the record was made. */
  time: Date;
  /** The logger's name, e.g. `kopf.objects`, `kopf.activities`. */
  logger: string;
  /** The object, for per-object records. */
  object?: ObjectRef;
  /** The `[ns/name] ` prefix of per-object records. */
  prefix?: string;
  /** An error whose details follow the message. */
  error?: unknown;
}

/**
 * Where records go. A sink may state the lowest level it keeps (`level`), so
 * that messages below it that are costly to build (e.g. a body as JSON) are
 * not built at all, and records below it are not given to it (nor made: a
 * quiet operator makes no record of the debug lines of every cycle); a sink
 * without it is given every record.
 */
export type LogSink = ((record: LogRecord) => void) & { readonly level?: Level };

/** Output formats of `--log-format`. */
export type LogFormat = "plain" | "full" | "json";

/** How records become lines. */
export interface LogOutputOptions {
  /** The minimum level printed (default info; `-v` debug; `-q` warning). */
  level?: Level;
  /** The line format (default `"full"`: timestamp, logger, level, message). */
  format?: LogFormat;
  /** Prefix per-object lines with `[ns/name] ` (default: yes, except for JSON). */
  prefix?: boolean;
  /** The key of the object reference in JSON lines (default "object"). */
  refkey?: string;
  /** Where lines go (default: stderr). */
  write?: (line: string) => void;
}

/**
 * Renders a record as one line (plus the error's stack, for plain and full formats).
 *
 * @param record The record.
 * @param options Format, prefix and refkey.
 * @returns The text, without a trailing newline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatRecord } from "./loggers.ts";
 * const line = formatRecord({ level: "info", message: "Hi.", time: new Date(0), logger: "kopf.objects", prefix: "[ns/x] " }, { format: "plain" });
 * assert.deepEqual(line, "[ns/x] Hi.");
 * ```
 */
export function formatRecord(record: LogRecord, options: LogOutputOptions = {}): string {
  const format = options.format ?? "full";
  const usePrefix = options.prefix ?? format !== "json";
  const message = (usePrefix && record.prefix ? record.prefix : "") + record.message;
  if (format === "json") {
    const out: Record<string, unknown> = { message: withError(message, record.error, false) };
    if (record.object) out[options.refkey ?? "object"] = record.object;
    out.severity = record.level;
    out.timestamp = record.time.toISOString().replace("Z", "");
    // Inside a span: its trace_id, span_id and trace_flags (OpenTelemetry's names for logs).
    if (TRACING) Object.assign(out, logTraceFields());
    return JSON.stringify(out);
  }
  const text = withError(message, record.error, true);
  if (format === "plain") return text;
  const ts = record.time.toISOString().replace("T", " ").replace("Z", "").replace(".", ",");
  const name = record.logger.padEnd(20).slice(0, 20);
  return `[${ts}] ${name} [${record.level.toUpperCase().padEnd(8)}] ${text}`;
}

function withError(message: string, error: unknown, stack: boolean): string {
  if (error === undefined) return message;
  if (error instanceof Error) {
    if (stack && error.stack) return `${message}\n${error.stack}`;
    return `${message} (${error.name}: ${error.message})`;
  }
  return `${message} (${String(error)})`;
}

/** The defaults of new line sinks, as `kopf.configure()` sets them (logging.ts). */
let configured: LogOutputOptions = {};

/**
 * Sets the defaults of the line sinks made from now on (`kopf.configure()`): options given to
 * a sink (the CLI's flags, `kopf.operator({ logging })`) still win.
 *
 * @param options The defaults; `{}` resets them.
 */
export function configureLineSinks(options: LogOutputOptions): void {
  configured = { ...options };
}

/**
 * A sink that prints records as lines at or above a level (the defaults are
 * `kopf.configure()`'s, then info, full format).
 *
 * @param given Level, format, prefix, refkey and writer.
 * @returns The sink.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorLogger } from "@kopf/kopf";
 * import { lineSink } from "./loggers.ts";
 * const lines: string[] = [];
 * const logger = new OperatorLogger(lineSink({ format: "plain", write: (l) => lines.push(l) }));
 * logger.info("Hello.");
 * assert.deepEqual(lines, ["Hello."]);
 * ```
 */
export function lineSink(given: LogOutputOptions = {}): LogSink {
  const options = { ...configured, ...given };
  const level = options.level ?? "info";
  const encoder = new TextEncoder();
  const write = options.write ??
    ((line: string) => Deno.stderr.writeSync(encoder.encode(line + "\n")));
  const sink = (record: LogRecord) => {
    if (levelAtLeast(record.level, level)) write(formatRecord(record, options));
  };
  return Object.assign(sink, { level });
}

/**
 * The operator-level logger: startup, shutdown, activities, watching.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorLogger } from "@kopf/kopf";
 * const seen: string[] = [];
 * new OperatorLogger((r) => seen.push(r.message), "kopf.activities").warning("Careful.");
 * assert.deepEqual(seen, ["Careful."]);
 * ```
 */
export class OperatorLogger {
  /** Where this logger's records go. */
  readonly sink: LogSink;
  /** The logger's name. */
  readonly name: string;

  /**
   * Creates a logger that sends its records to a sink.
   *
   * @param sink Where records go.
   * @param name The logger's name (default `kopf`).
   */
  constructor(sink: LogSink, name = "kopf") {
    this.sink = sink;
    this.name = name;
  }

  /**
   * Logs a record.
   *
   * @param level The level.
   * @param message The message.
   * @param error An error to show after the message.
   */
  log(level: Level, message: string, error?: unknown): void {
    // Below the sink's stated level (and, for object loggers, not posted): it goes nowhere.
    if (!this.isEnabledFor(level)) return;
    const record: LogRecord = { level, message, time: new Date(), logger: this.name };
    if (error !== undefined) record.error = error;
    this.emit(record);
  }

  /** Emits a prepared record (subclasses add the object). @param record The record. */
  protected emit(record: LogRecord): void {
    this.sink(record);
  }

  /**
   * Whether a record at this level goes anywhere: false only when the sink
   * states a higher minimum level (and, for object loggers, no event is posted).
   * Guards messages that are costly to build, as Python's `isEnabledFor` does.
   *
   * @param level The level.
   * @returns Whether to build and log the message.
   */
  isEnabledFor(level: Level): boolean {
    const minimum = this.sink.level;
    return minimum === undefined || levelAtLeast(level, minimum);
  }

  /**
   * Logs a debug record.
   *
   * @param message The message.
   */
  debug(message: string): void {
    this.log("debug", message);
  }

  /**
   * Logs an info record.
   *
   * @param message The message.
   */
  info(message: string): void {
    this.log("info", message);
  }

  /**
   * Logs a warning record.
   *
   * @param message The message.
   */
  warning(message: string): void {
    this.log("warning", message);
  }

  /** Alias of {@link OperatorLogger.warning}. @param message The message. */
  warn(message: string): void {
    this.log("warning", message);
  }

  /**
   * Logs an error record.
   *
   * @param message The message.
   * @param error An error to show after the message (with its stack, in plain and full lines).
   */
  error(message: string, error?: unknown): void {
    this.log("error", message, error);
  }

  /** Logs an error with its stack trace. @param message The message. @param error The error. */
  exception(message: string, error?: unknown): void {
    this.log("error", message, error);
  }

  /**
   * Logs a critical record (as Python's `logger.critical`; posted as a `Fatal` event).
   *
   * @param message The message.
   * @param error An error to show after the message.
   */
  critical(message: string, error?: unknown): void {
    this.log("critical", message, error);
  }
}

/** Kopf's event types of log records: the level's name, with info as Kubernetes' Normal. */
const EVENT_TYPES: Record<Level, string> = {
  debug: "Debug",
  info: "Normal",
  warning: "Warning",
  error: "Error",
  critical: "Fatal",
};

/** Posts a Kubernetes Event about an object (set by the operator; never blocks). */
export type EventPoster = (ref: ObjectRef, type: string, reason: string, message: string) => void;

/**
 * The per-object logger handlers get: `[ns/name] ` prefixed lines, and
 * records at or above `settings.posting.level` also posted as Kubernetes
 * Events (as in Kopf, typed by level: Debug, Normal for info, Warning, Error, Fatal for
 * critical; reason `Logging`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ObjectLogger } from "@kopf/kopf";
 * const seen: string[] = [];
 * const logger = new ObjectLogger((r) => seen.push((r.prefix ?? "") + r.message), {
 *   metadata: { name: "x", namespace: "ns", uid: "u" }, apiVersion: "v1", kind: "Pod",
 * });
 * logger.info("Hello.");
 * assert.deepEqual(seen, ["[ns/x] Hello."]);
 * ```
 */
export class ObjectLogger extends OperatorLogger {
  /** The object, for the reference and prefix made when first needed (a record, an event). */
  readonly #body: {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; namespace?: string; uid?: string };
  };
  #ref: ObjectRef | undefined;
  #prefix: string | undefined;
  #post: EventPoster | undefined;
  #postingLevel: () => Level | undefined;

  /**
   * Creates the logger of one object.
   *
   * @param sink Where records go.
   * @param body The object.
   * @param posting Event posting: the poster and the current minimum level (undefined disables).
   */
  constructor(
    sink: LogSink,
    body: {
      apiVersion?: string;
      kind?: string;
      metadata?: { name?: string; namespace?: string; uid?: string };
    },
    posting?: { post: EventPoster; level: () => Level | undefined },
  ) {
    super(sink, "kopf.objects");
    this.#body = body;
    this.#post = posting?.post;
    this.#postingLevel = posting?.level ?? (() => undefined);
  }

  /**
   * The object reference of the records (made at the first record: a cycle that logs nothing,
   * as most of the no-op cycles on our own writes' echoes, makes none).
   */
  get ref(): ObjectRef {
    return this.#ref ??= buildObjectReference(this.#body);
  }

  /** The prefix, `[ns/name] ` or `[name] ` (made at the first record, as {@link ref}). */
  get prefix(): string {
    if (this.#prefix === undefined) {
      const meta = this.#body.metadata ?? {};
      this.#prefix = meta.namespace ? `[${meta.namespace}/${meta.name}] ` : `[${meta.name}] `;
    }
    return this.#prefix;
  }

  /** Also true when an event would be posted at this level, even if the sink drops it. */
  override isEnabledFor(level: Level): boolean {
    if (super.isEnabledFor(level)) return true;
    const threshold = this.#postingLevel();
    return !!this.#post && !!threshold && levelAtLeast(level, threshold);
  }

  /** Adds the object and prefix to the record, passes it on, and posts an event at or above the posting level. */
  protected override emit(record: LogRecord): void {
    record.object = this.ref;
    record.prefix = this.prefix;
    this.sink(record);
    const threshold = this.#postingLevel();
    if (this.#post && threshold && levelAtLeast(record.level, threshold)) {
      const type = EVENT_TYPES[record.level];
      const message = record.error instanceof Error
        ? `${record.message} ${record.error.message}`
        : record.message;
      this.#post(this.ref, type, "Logging", message);
    }
  }
}
