/**
 * Peering (Kopf's): operators that serve the same resources announce
 * themselves in a shared peering object and pause for the one with the
 * highest priority. Two parts per peering object (per namespace for the
 * namespaced `KopfPeering`):
 *
 * - {@link KeepAlive}: patches this operator's entry into the object's
 *   status at once and then every `lifetime` minus 5–10 seconds (Kopf's
 *   jitter), and removes it when leaving (a graceful exit);
 * - {@link PeeringMonitor}: reads every version of the object (from a watch)
 *   and turns this peering's pause toggle on while a live peer with a higher
 *   priority is there — or one with the same priority: then all of them
 *   freeze, with the docs' warning, once per change of the set of such peers
 *   (Kopf repeats it at every event, i.e. every keep-alive of anyone) — and
 *   off when they go or expire. Expired
 *   entries are removed from the status (by whichever operator sees them
 *   first); an expiry with no event to announce it is noticed on the clock.
 *
 * Why a toggle and not a flag of its own: pausing is the reactor's gate
 * (cogs/aio/toggles.ts), held by independent reasons — this peering object,
 * another namespace's, later a leader-election lease or a shard. The monitor
 * owns one toggle and never looks at the others.
 *
 * There are no per-object locks between operators: as in Kopf, this only
 * guarantees that one operator is active once the peers have seen each other
 * (a keep-alive round trip), and it warns about same-priority operators.
 *
 * The policy only: its wiring into a running operator (which peering
 * objects, the leaving at exit) is reactor/peering.ts, the same name one
 * layer up.
 *
 * @module
 */

import { traceTransition, TRACING } from "../../cogs/tracing/tracing.ts";
import { type Clock, realClock } from "../../cogs/aio/clock.ts";
import type { Toggle } from "../../cogs/aio/toggles.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { patchObject } from "../../cogs/clients/patching.ts";
import type { PeeringSettings } from "../../cogs/configs/peering.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { OperatorLogger } from "../actions/loggers.ts";
import type { AnyObject } from "../intents/handlers.ts";
import { type CappedLastseen, type Peer, peerEntry, reprPeers, viewPeers } from "./peers.ts";

/** One peering object: its resource, namespace (null for cluster-scoped ones) and name. */
export interface PeeringTarget {
  /** `clusterkopfpeerings` or `kopfpeerings` (kopf.dev/v1 or the legacy zalando.org/v1). */
  resource: Resource;
  /** The namespace of a `KopfPeering`; null for a `ClusterKopfPeering`. */
  namespace: string | null;
  /** The object's name (`settings.peering.name`). */
  name: string;
}

/**
 * Where a peering object is, as Kopf's log lines say it.
 *
 * @param namespace The namespace, or null.
 * @returns `cluster-wide` or `in 'ns1'`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { whereOf } from "./peering.ts";
 * assert.deepEqual([whereOf(null), whereOf("ns1")], ["cluster-wide", "in 'ns1'"]);
 * ```
 */
export function whereOf(namespace: string | null): string {
  return namespace ? `in '${namespace}'` : "cluster-wide";
}

/**
 * Writes (or, with a zero lifetime, removes) one peer's entry in a peering object — Kopf's
 * `touch()`, also what `kopf freeze` and `kopf resume` do.
 *
 * @param api The API client.
 * @param target The peering object.
 * @param identity The peer's identity.
 * @param priority The peer's priority.
 * @param lifetime Seconds the entry counts as alive; 0 removes it.
 * @param options `now`: the wall time (default: now); `message`: stored with the entry (only
 *   `kopf freeze --message`; Kopf's readers ignore unknown fields); `signal`.
 * @returns Whether the peering object exists (false: not found, nothing written).
 * @throws {ApiError} When the API refuses the patch.
 */
export async function touchPeering(
  api: ApiClient,
  target: PeeringTarget,
  identity: string,
  priority: number,
  lifetime: number,
  options: { now?: Date; message?: string | undefined; signal?: AbortSignal } = {},
): Promise<boolean> {
  const entry = peerEntry(priority, lifetime, options.now ?? new Date());
  const value = entry && options.message !== undefined
    ? { ...entry, message: options.message }
    : entry;
  const patched = await patchObject(
    api,
    target.resource,
    target.namespace,
    target.name,
    { status: { [identity]: value } },
    { signal: options.signal },
  );
  return patched !== undefined;
}

/** Options of a {@link KeepAlive}. */
export interface KeepAliveOptions {
  /** The API client. */
  api: ApiClient;
  /** The peering object. */
  target: PeeringTarget;
  /** This operator's identity. */
  identity: string;
  /** The peering settings (priority, lifetime and stealth are read at each keep-alive). */
  settings: PeeringSettings;
  /** Where the keep-alive lines go. */
  logger: OperatorLogger;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
  /** A random number in [0, 1) for the jitter (default `Math.random`). */
  random?: () => number;
}

/**
 * The keep-alives of one operator in one peering object: at once, then every `lifetime` minus
 * 5–10 seconds (at least a second), until {@link KeepAlive.leave} removes the entry.
 *
 * @example
 * ```ts ignore
 * const keepalive = new KeepAlive({ api, target, identity, settings: settings.peering, logger });
 * const running = keepalive.run();
 * // … at a graceful exit, after the handlers have stopped:
 * await keepalive.leave();
 * await running;
 * ```
 */
export class KeepAlive {
  readonly #o: KeepAliveOptions;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  #wake: AbortController | undefined;
  #running: Promise<void> = Promise.resolve();

  /** @param options The client, target, identity, settings, logger and clock. */
  constructor(options: KeepAliveOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Runs the keep-alives until stopped (failures are logged and retried at the next one).
   *
   * @returns When stopped.
   */
  run(): Promise<void> {
    return this.#running = this.#loop();
  }

  async #loop(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      try {
        await this.touch(undefined, stop);
      } catch (e) {
        if (stop.aborted) break;
        const { target, logger } = this.#o;
        logger.warning(
          `Keep-alive in '${target.name}' ${whereOf(target.namespace)} failed: ${
            e instanceof Error ? e.message : e
          }`,
        );
      }
      const lifetime = this.#o.settings.lifetime;
      const jitter = 5 + Math.floor((this.#o.random ?? Math.random)() * 6); // 5..10, as Kopf's
      const duration = Math.min(lifetime, Math.max(1, lifetime - jitter));
      const wake = this.#wake = new AbortController();
      await this.#clock.sleep(Math.max(1, duration), AbortSignal.any([stop, wake.signal]));
    }
  }

  /** Sends the next keep-alive now (e.g. when the peering object has just appeared). */
  poke(): void {
    this.#wake?.abort();
  }

  /**
   * Writes this operator's entry once (Kopf's `touch()`), and logs it at debug level unless
   * stealthy (a missing peering object is always logged).
   *
   * @param lifetime The lifetime to write (default: the setting); 0 removes the entry.
   * @param signal Stops the request.
   * @returns Whether the peering object exists.
   */
  async touch(lifetime?: number, signal?: AbortSignal): Promise<boolean> {
    const { api, target, identity, settings, logger } = this.#o;
    const found = await touchPeering(
      api,
      target,
      identity,
      settings.priority,
      lifetime ?? settings.lifetime,
      { now: this.#clock.date(), ...(signal ? { signal } : {}) },
    );
    if (!settings.stealth || !found) {
      logger.debug(
        `Keep-alive in '${target.name}' ${whereOf(target.namespace)}: ${
          found ? "ok" : "not found"
        }.`,
      );
    }
    return found;
  }

  /**
   * Stops the keep-alives and removes this operator's entry (a graceful exit); a failure is
   * logged, not thrown.
   */
  async leave(): Promise<void> {
    this.#stop.abort();
    await this.#running;
    try {
      await this.touch(0);
    } catch (e) {
      this.#o.logger.exception("Couldn't remove self from the peering. Ignoring.", e);
    }
  }
}

/** Options of a {@link PeeringMonitor}. */
export interface PeeringMonitorOptions {
  /** This operator's identity (its own entry is never a conflict). */
  identity: string;
  /** The peering settings (the priority is read at each decision). */
  settings: PeeringSettings;
  /** This peering's pause toggle: on while this operator must not handle anything. */
  toggle: Toggle;
  /** Where the decisions are logged. */
  logger: OperatorLogger;
  /** How the peering object is named in the lines about its absence: `'default' cluster-wide`. */
  what: string;
  /** Whether the object must exist (`--peering NAME`): absent, the operator stays paused. */
  mandatory: boolean;
  /** Removes expired peers from the status (errors are logged by the monitor). */
  clean: (peers: Peer[]) => Promise<void>;
  /** Asks for a keep-alive now: this operator's entry is missing from the object. */
  touch?: () => void;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
}

/**
 * The decisions of one operator about one peering object: pause, freeze, resume — Kopf's
 * `process_peering_event()`, fed with every version of the object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeClock } from "@kopf/kopf/testing";
 * import { ToggleSet } from "../../cogs/aio/toggles.ts";
 * import { PeeringSettings } from "../../cogs/configs/peering.ts";
 * import { OperatorLogger } from "@kopf/kopf";
 * import { PeeringMonitor } from "./peering.ts";
 *
 * const clock = new FakeClock({ start: new Date("2026-01-01T00:00:00Z") });
 * const paused = new ToggleSet();
 * const monitor = new PeeringMonitor({
 *   identity: "me", settings: new PeeringSettings(), toggle: paused.make("default@*", true),
 *   logger: new OperatorLogger(() => {}), what: "'default' cluster-wide", mandatory: false,
 *   clean: async () => {}, clock,
 * });
 * monitor.update({ status: { dev: { priority: 666, lifetime: 10, lastseen: "2026-01-01T00:00:00+00:00" } } });
 * assert.deepEqual(paused.on, true); // paused in favour of "dev"
 * await clock.advance(10);
 * assert.equal(paused.on, false); // "dev" expired
 * monitor.close();
 * ```
 */
export class PeeringMonitor {
  readonly #o: PeeringMonitorOptions;
  readonly #clock: Clock;
  /** The latest version of the object (undefined: absent). */
  #body: AnyObject | undefined;
  /** Paused because of peers (not for the object's absence): the resume is logged. */
  #conflicts = false;
  #waitingLogged = false;
  /**
   * The identities of the same-priority peers last warned about: the warning is logged once per
   * change of that set, not at every keep-alive of anyone (e.g. ours, while a killed twin's entry
   * has not expired yet).
   */
  #warnedSame = "";
  /** The problems of other peers' entries already warned about, by identity (once per change). */
  #warnedProblems = new Map<string, Set<string>>();
  /** Future lastseen times capped, by identity (so that they expire; see peers.ts). */
  readonly #capped: CappedLastseen = new Map();
  /** The expiry timer of the blocking peers. */
  #cancel: (() => void) | undefined;
  #closed = false;
  /** Identities being cleaned (one request per expiry, not one per event). */
  readonly #cleaning = new Set<string>();

  /** @param options Identity, settings, toggle, logger, callbacks and clock. */
  constructor(options: PeeringMonitorOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Takes the latest version of the peering object and decides (undefined: it does not exist —
   * not listed, or deleted).
   *
   * @param body The object, or undefined.
   */
  update(body: AnyObject | undefined): void {
    if (this.#closed) return;
    this.#body = body;
    this.#decide();
  }

  /** Stops the expiry timer; later updates are ignored. */
  close(): void {
    this.#closed = true;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  /** Warns about malformed entries of other peers: each problem once while it lasts. */
  #report(peers: readonly Peer[]): void {
    const { identity, logger, what } = this.#o;
    const warned = new Map<string, Set<string>>();
    for (const p of peers) {
      if (p.identity === identity || !p.problems) continue;
      const before = this.#warnedProblems.get(p.identity);
      for (const problem of p.problems) {
        if (before?.has(problem.code)) continue;
        logger.warning(`The peer '${p.identity}' in the peering ${what} ${problem.text}`);
      }
      warned.set(p.identity, new Set(p.problems.map((x) => x.code)));
    }
    this.#warnedProblems = warned;
    const present = new Set(peers.map((p) => p.identity));
    for (const id of this.#capped.keys()) if (!present.has(id)) this.#capped.delete(id);
  }

  #decide(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    const { toggle, logger, identity, settings, mandatory, what } = this.#o;
    const body = this.#body;
    if (body === undefined) {
      if (mandatory) {
        if (!this.#waitingLogged) {
          logger.info(`The mandatory peering ${what} does not exist: pausing until it appears.`);
          this.#waitingLogged = true;
        }
        toggle.turnTo(true);
      } else {
        // Without the object, there is nobody to pause for.
        if (this.#conflicts) {
          logger.info(
            "Resuming operations after the pause. Conflicting operators with the same priority are gone.",
          );
          if (TRACING) traceTransition("kopf.peering resume");
        }
        this.#conflicts = false;
        this.#warnedSame = "";
        toggle.turnTo(false);
      }
      return;
    }
    if (this.#waitingLogged) {
      logger.info(`The mandatory peering ${what} exists now.`);
      this.#waitingLogged = false;
    }
    const now = this.#clock.date().getTime();
    const view = viewPeers(body.status, identity, settings.priority, now, this.#capped);
    this.#report(view.peers);
    const expired = view.dead.filter((p) => !this.#cleaning.has(p.identity));
    if (expired.length) {
      for (const p of expired) this.#cleaning.add(p.identity);
      this.#o.clean(expired).catch((e) => {
        logger.warning(
          `Cleaning the expired peers failed: ${e instanceof Error ? e.message : e}`,
        );
      }).finally(() => {
        for (const p of expired) this.#cleaning.delete(p.identity);
      });
    }
    if (!view.same.length || view.higher.length) this.#warnedSame = "";
    if (view.higher.length) {
      if (!this.#conflicts || !toggle.on) {
        logger.info(`Pausing operations in favour of ${reprPeers(view.higher)}.`);
        if (TRACING) traceTransition("kopf.peering pause", { "kopf.peering.reason": "higher" });
      }
      this.#conflicts = true;
      toggle.turnTo(true);
    } else if (view.same.length) {
      const same = view.same.map((p) => p.identity).sort().join("\n");
      if (same !== this.#warnedSame || !toggle.on) {
        logger.warning(
          `Possibly conflicting operators with the same priority: ${reprPeers(view.same)}.`,
        );
      }
      this.#warnedSame = same;
      if (!this.#conflicts || !toggle.on) {
        logger.warning(`Pausing all operators, including self: ${reprPeers(view.peers)}`);
        if (TRACING) traceTransition("kopf.peering pause", { "kopf.peering.reason": "same" });
      }
      this.#conflicts = true;
      toggle.turnTo(true);
    } else {
      if (this.#conflicts) {
        logger.info(
          "Resuming operations after the pause. Conflicting operators with the same priority are gone.",
        );
        if (TRACING) traceTransition("kopf.peering resume");
      }
      this.#conflicts = false;
      toggle.turnTo(false);
    }
    // This operator's entry is missing (the object is new, or someone cleaned it): announce now.
    const own = body.status?.[identity];
    if (own === undefined || own === null) this.#o.touch?.();
    // The blockers expire silently if they die: decide again at the earliest expiry.
    const blockers = [...view.same, ...view.higher];
    if (blockers.length) {
      const next = Math.min(...blockers.map((p) => p.deadline));
      this.#cancel = this.#clock.timer(Math.max(0, next - now), () => {
        this.#cancel = undefined;
        if (!this.#closed) this.#decide();
      });
    }
  }
}
