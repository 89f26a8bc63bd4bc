/**
 * Registering daemons and timers (`kopf.daemon`, `kopf.timer`): the resource
 * and filters as for every resource handler, plus their schedule and
 * stopping options (declared in option_specs.ts, checked by options.ts).
 *
 * @module
 */

import type { HandlerFn, SpawningHandler } from "./handlers.ts";
import type { HandlerKindGroups } from "./option_specs.ts";
import type { OptionsOf } from "./option_types.ts";
import type { RegistryOption } from "./options.ts";
import {
  getDefaultRegistry,
  parseResourceArgs,
  RegistrationError,
  resourceHandlerBase,
} from "./registration.ts";

/** Options of `kopf.daemon` and `kopf.timer` (option_specs.ts declares each). */
export interface SpawningOptions extends OptionsOf<HandlerKindGroups["spawning"]>, RegistryOption {}

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
