/**
 * Kopf's logging set-up for embedded operators and scripts: `kopf.configure()`
 * (the CLI's `-v`, `--debug`, `-q`, `--log-format`, `--log-prefix`,
 * `--log-refkey` as a function), and `kopf.LocalObjectLogger`, an object's
 * logger that only logs — it never posts Kubernetes Events.
 *
 * Why: `kopf run` configures logging from its flags, but an operator started
 * with `kopf.run()`/`kopf.operator()` from a script has no flags; Kopf's
 * `kopf.configure(verbose=True)` is how its docs set it up there.
 *
 * @module
 */

import {
  configureLineSinks,
  type LogFormat,
  type LogOutputOptions,
  type LogSink,
} from "./loggers.ts";
import { lineSink, ObjectLogger } from "./loggers.ts";

/** Options of {@link configure}: Kopf's `kopf.configure()` arguments, in camelCase. */
export interface ConfigureOptions {
  /** Log at debug level (as `--debug`). */
  debug?: boolean | null;
  /** Log at debug level (as `-v`/`--verbose`). */
  verbose?: boolean | null;
  /** Log warnings and errors only (as `-q`/`--quiet`). */
  quiet?: boolean | null;
  /** `"full"` (default: time, logger, level, message), `"plain"` (message), or `"json"`. */
  logFormat?: LogFormat;
  /** Prefix the lines of objects with `[ns/name] ` (default: yes, except for JSON). */
  logPrefix?: boolean | null;
  /** The key of the object reference in JSON lines (default `"object"`). */
  logRefkey?: string | null;
}

const KEYS = ["debug", "verbose", "quiet", "logFormat", "logPrefix", "logRefkey"];
const FORMATS = ["plain", "full", "json"];

/**
 * Configures the logging of the operators started from now on in this process without
 * logging options of their own (`kopf.run()`, `kopf.operator()`, `KopfRunner` with a
 * registry): Kopf's `kopf.configure(verbose=True, log_format=…)`. `kopf run` sets the same
 * from its flags. A later call replaces the earlier settings.
 *
 * @param options Levels (`debug`/`verbose` → debug, `quiet` → warning) and the line format.
 * @throws {TypeError} For an unknown option or a format other than plain, full, json.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.configure({ verbose: true, logFormat: "plain" });
 * kopf.configure({}); // back to the defaults: info, full
 * ```
 */
export function configure(options: ConfigureOptions = {}): void {
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) {
      throw new TypeError(
        `kopf.configure(): unknown option "${key}"; the options are: ${KEYS.join(", ")}.`,
      );
    }
  }
  if (options.logFormat !== undefined && !FORMATS.includes(options.logFormat)) {
    throw new TypeError(
      `kopf.configure(): logFormat must be "plain", "full" or "json", not ${
        JSON.stringify(options.logFormat)
      }.`,
    );
  }
  const logging: LogOutputOptions = {};
  if (options.debug || options.verbose) logging.level = "debug";
  else if (options.quiet) logging.level = "warning";
  if (options.logFormat !== undefined) logging.format = options.logFormat;
  if (options.logPrefix !== undefined && options.logPrefix !== null) {
    logging.prefix = options.logPrefix;
  }
  if (options.logRefkey) logging.refkey = options.logRefkey;
  configureLineSinks(logging);
}

/**
 * An object's logger that only logs, never posting Kubernetes Events (Kopf's
 * `kopf.LocalObjectLogger`): for code outside of handlers, or for lines about an
 * object that must not reach the cluster. Lines are prefixed with `[ns/name] `.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const lines: string[] = [];
 * const body = { apiVersion: "v1", kind: "Pod", metadata: { namespace: "ns", name: "p1", uid: "u" } };
 * const logger = new kopf.LocalObjectLogger({ body, sink: (r) => lines.push(r.prefix + r.message) });
 * logger.info("Seen.");
 * assert.deepEqual(lines, ["[ns/p1] Seen."]);
 * ```
 */
export class LocalObjectLogger extends ObjectLogger {
  /**
   * Creates the logger of one object.
   *
   * @param options The object's `body`; `sink` (default: lines on stderr, as configured);
   *   `settings` is accepted for Kopf's signature and not read (nothing is posted).
   */
  constructor(
    options: {
      body: ConstructorParameters<typeof ObjectLogger>[1];
      sink?: LogSink;
      settings?: unknown;
    },
  ) {
    super(options.sink ?? lineSink(), options.body);
  }
}
