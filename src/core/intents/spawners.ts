/**
 * Registering daemons and timers (`kopf.daemon`, `kopf.timer`): the resource
 * and filters as for every resource handler, plus their schedule and
 * stopping options (checked against the options table, options.ts).
 *
 * @module
 */

import type { BaseOptions, FilterOptions, HandlerFn, SpawningHandler } from "./handlers.ts";
import {
  getDefaultRegistry,
  parseResourceArgs,
  RegistrationError,
  resourceHandlerBase,
} from "./registration.ts";
import type { OperatorRegistry } from "./registry.ts";

/** Options of `kopf.daemon` and `kopf.timer`. */
export interface SpawningOptions extends BaseOptions, FilterOptions {
  /** Register in this registry instead of the default one. */
  registry?: OperatorRegistry;
  /** Seconds before the first run after the object is seen (or the operator starts). */
  initialDelay?: number;
  /** Daemons: seconds of graceful waiting after the stop-flag is set. */
  cancellationBackoff?: number;
  /** Daemons: seconds to wait more before abandoning a daemon that does not exit. */
  cancellationTimeout?: number;
  /** Daemons: seconds between checks while a daemon is exiting (default 5). */
  cancellationPolling?: number;
  /** Timers: seconds between runs. */
  interval?: number;
  /** Timers: run on the interval grid, whatever each run takes. */
  sharp?: boolean;
  /** Timers: run only when the object has not changed for so many seconds. */
  idle?: number;
}

/**
 * Registers a daemon or a timer (`kopf.daemon`, `kopf.timer`).
 *
 * @param spawn "daemon" or "timer".
 * @param args The call's arguments: resource, optional options, the function.
 * @returns The handler function.
 * @throws {RegistrationError} For options of the other kind, or bad numbers.
 */
export function registerSpawning(
  spawn: "daemon" | "timer",
  args: unknown[],
): HandlerFn {
  const what = `kopf.${spawn}`;
  const { selector, options: o, fn } = parseResourceArgs<SpawningOptions>(what, spawn, args);
  if (spawn === "timer" && o.interval === undefined && o.idle === undefined) {
    throw new RegistrationError(
      `${what}(...) needs an interval or idle time, e.g. ${what}("kopfexamples", { interval: 60 }, fn)`,
    );
  }
  if (o.sharp && o.interval === undefined) {
    throw new RegistrationError(
      `${what}(...): sharp needs an interval, e.g. { interval: 10, sharp: true }`,
    );
  }
  const handler: SpawningHandler = {
    kind: "spawning",
    spawn,
    ...resourceHandlerBase(o, fn, selector, `${spawn}_handler`),
    initialDelay: o.initialDelay,
    cancellationBackoff: o.cancellationBackoff,
    cancellationTimeout: o.cancellationTimeout,
    cancellationPolling: o.cancellationPolling,
    interval: o.interval,
    sharp: o.sharp ?? false,
    idle: o.idle,
  };
  (o.registry ?? getDefaultRegistry()).register(handler);
  return fn;
}
