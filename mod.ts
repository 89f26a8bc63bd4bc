/**
 * Kopf for Deno: write Kubernetes operators as a few TypeScript functions.
 *
 * This is the public entry point (`@kopf/kopf`). The operator core (handlers,
 * daemons, timers, indices) lands here as it is built; today the module ships
 * the embedded Kubernetes API server (see `@kopf/kopf/testing`) and the
 * cancellable sleep used by daemons.
 *
 * @example
 * ```ts
 * import * as kopf from "./mod.ts";
 * const stop = new AbortController();
 * stop.abort();
 * await kopf.sleep(10, stop.signal); // returns at once: the signal is aborted
 * ```
 *
 * @module
 */

export { sleep } from "./src/cogs/aio/sleep.ts";
export { VERSION } from "./src/cogs/configs/version.ts";
