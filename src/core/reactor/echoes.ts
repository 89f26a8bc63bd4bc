/**
 * Our own settled write's echo: the watch's event of the version a cycle's last write returned,
 * when a cycle on it would change nothing — the essence as the write stored it, the filters still
 * matching, the finalizer as the handlers need it. The cycle that wrote gives the queue an
 * {@link EchoCheck} with its result (`CycleResult.echo`); when that version comes back alone, the
 * queue asks the check instead of running a cycle, and the check does what that cycle would have
 * done: Kopf's no-op line (debug) and nothing else.
 *
 * Why: every object's last write comes back through the watch, and its cycle — the queue's wake-up,
 * the worker slot, the cycle's logger, memo and context, the essence and the filters — cost about
 * a tenth of an object's CPU in a burst (a benchmark's object is one create handler), all to find
 * that nothing changed.
 *
 * What keeps it exact: the check is the changing cycle's own no-op test (changing.ts
 * `processChanging`), made on the echo's body when it comes, not on what the write expected — a
 * change by someone else that the write's response carries (a merge patch applies on top of it)
 * fails the test, and the cycle runs. It is given only for an object of a plain operator (no
 * raw-event handlers, indices, daemons, timers or reconcilers: they see every event), asked again
 * at the echo, and never while tracing (each event is a cycle there, linked to the write it echoes:
 * tracing.md).
 *
 * @module
 */

import type { AnyObject } from "../intents/handlers.ts";
import { isDeletionBlocked, isDeletionOngoing } from "../intents/causes.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type {
  CycleResult,
  EchoCheck,
  ObjectMemory,
  OperatorContext,
  RawEvent,
} from "./cycle_types.ts";

export type { EchoCheck } from "./cycle_types.ts";

/** What of a cycle (changing.ts `ChangingCycle`) its write's echo check needs. */
export interface EchoCycle {
  /** The operator's registry and settings. */
  op: OperatorContext;
  /** The object's resource. */
  resource: Resource;
  /** The object's memory. */
  memory: ObjectMemory;
  /** The object's logger (the no-op line). */
  logger: ObjectLogger;
  /** Whether the object's events need the changing part alone; absent: no. */
  plain?(): boolean;
}

/** The line of a cycle whose essence is unchanged (Kopf's). */
export const NOOP_LINE =
  "Something has changed, but we are not interested (the essence is the same).";

/**
 * The echo check of a cycle's last write, or undefined when its echo must be a cycle (tracing on,
 * or an object that is not plain: see the module doc).
 *
 * @param cycle The cycle that wrote.
 * @param tracing Whether cycles are traced.
 * @returns The check.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { echoCheck } from "./echoes.ts";
 * import type { EchoCycle } from "./echoes.ts";
 * const cycle = { plain: () => false } as unknown as EchoCycle; // raw-event handlers, say
 * assert.equal(echoCheck(cycle, false), undefined);
 * ```
 */
export function echoCheck(cycle: EchoCycle, tracing: boolean): EchoCheck | undefined {
  if (tracing || !cycle.plain?.()) return undefined;
  return (body) => isNoop(cycle, body);
}

function isNoop(cycle: EchoCycle, body: AnyObject): boolean {
  const { op, resource, memory } = cycle;
  const registry = op.registry;
  // Still plain (a handler or an index may have come meanwhile); no filter reads a context; not
  // a resumption still owed (noticed by a listing, never fully handled).
  if (!cycle.plain?.() || registry.filterCallbacks(resource)) return false;
  if (memory.noticedByListing === true && !memory.fullyHandledOnce) return false;
  if (isDeletionOngoing(body)) return false;
  const diffbase = op.settings.persistence.diffbaseStorage;
  if (typeof diffbase.unchanged !== "function") return false;
  const essence = diffbase.build(body);
  if (!diffbase.unchanged(body, essence)) return false;
  if (!registry.prematch(resource, { body, old: essence, new: essence }, undefined)) return false;
  const finalizer = op.settings.persistence.finalizer;
  if (
    registry.requiresFinalizer(resource, body, undefined) !== isDeletionBlocked(body, finalizer)
  ) {
    return false;
  }
  cycle.logger.debug(NOOP_LINE);
  memory.fullyHandledOnce = true;
  return true;
}

/**
 * One worker's side of it: the check of its last cycle's write, asked once — by the next batch
 * that is exactly that version's event (alone, not a deletion); any other batch just drops it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OwnEcho } from "./echoes.ts";
 * const echo = new OwnEcho();
 * const body = { metadata: { resourceVersion: "5" } };
 * echo.wrote({ patched: body, echo: () => true });
 * assert.equal(echo.skips([{ type: "MODIFIED", object: { metadata: { resourceVersion: "4" } } }], false), false);
 * echo.wrote({ patched: body, echo: () => true });
 * assert.equal(echo.skips([{ type: "MODIFIED", object: body }], false), true);
 * assert.equal(echo.skips([{ type: "MODIFIED", object: body }], false), false); // asked once
 * ```
 */
export class OwnEcho {
  #check: EchoCheck | undefined;
  #version: string | undefined;

  /**
   * A cycle's result: its write's check, if it gave one, replaces any before.
   *
   * @param result The cycle's result.
   */
  wrote(result: CycleResult): void {
    this.#check = result.echo;
    this.#version = result.patched?.metadata?.resourceVersion;
  }

  /**
   * Whether a batch is our write's echo that needs no cycle (the check has done what it would).
   *
   * @param batch The events to process now.
   * @param deleted Whether the batch has a deletion.
   * @returns True when no cycle is to run for it.
   */
  skips(batch: readonly RawEvent[], deleted: boolean): boolean {
    const check = this.#check;
    if (!check) return false;
    this.#check = undefined;
    const only = batch.length === 1 && !deleted ? batch[0]! : undefined;
    return only !== undefined && only.object.metadata?.resourceVersion === this.#version &&
      check(only.object);
  }
}
