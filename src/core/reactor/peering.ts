/**
 * Peering in a running operator: which peering objects it joins, and the
 * keep-alive and monitor of each (engines/peering.ts), all holding the
 * operator's pause gate through toggles of their own.
 *
 * The modes are the docs' ("Peering"):
 * - standalone (`--standalone`, `settings.peering.standalone`): nothing here;
 * - automatic (the default): the peering object named `settings.peering.name`
 *   (`default`) is used if it exists at the start (or when a served
 *   namespace appears); if none exists, the operator runs standalone and says
 *   so in Kopf's line: "Default peering object is not found, falling back to
 *   the standalone mode.";
 * - mandatory (`--peering NAME`, `settings.peering.mandatory`): the operator
 *   is paused until the object exists (in each served namespace).
 *
 * The scope chooses the kind, as Kopf chooses it: a cluster-wide operator
 * (`-A`, or neither `-A` nor `-n`) uses `ClusterKopfPeering`; a namespaced one
 * (`-n`) uses `KopfPeering` in each served namespace (following the `-n`
 * patterns as namespaces come and go). Both API groups are served where they
 * exist: kopf.dev/v1 and the legacy zalando.org/v1.
 *
 * Why the gate is held until the first decision: an operator that starts
 * while a higher-priority one runs must not handle anything before it has
 * read the peering object — so every peering toggle starts on, and the
 * detection holds one more toggle until the peering objects are known.
 *
 * Leaving is the last step of a graceful exit, after the daemons and the
 * watchers have stopped: the entry stays (alive) while this operator still
 * finishes its handlers, so a lower-priority peer resumes only after that.
 *
 * The wiring only: the policy (keep-alive, monitor) is engines/peering.ts,
 * the same name one layer down, imported at the first join (the automatic mode
 * without a peering object — most operators — never loads it, nor makes the
 * identity it would need); {@link peeringPart} is how a running operator starts
 * it (parts.ts, running.ts's list, loaded when not standalone: optional_parts.ts).
 *
 * @module
 */

import { realClock } from "../../cogs/aio/clock.ts";
import { type Toggle, ToggleSet } from "../../cogs/aio/toggles.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { readObject } from "../../cogs/clients/fetching.ts";
import { patchObject } from "../../cogs/clients/patching.ts";
import { scanResources } from "../../cogs/clients/scanning.ts";
import { infiniteWatch } from "../../cogs/clients/watching.ts";
import {
  CLUSTER_PEERINGS,
  CLUSTER_PEERINGS_LEGACY,
  NAMESPACED_PEERINGS,
  NAMESPACED_PEERINGS_LEGACY,
  type Resource,
} from "../../cogs/structs/references.ts";
import { OperatorLogger } from "../actions/loggers.ts";
import type { KeepAlive, PeeringMonitor, PeeringTarget } from "../engines/peering.ts";
import { followCrds, followNamespaces, literalNamespaces } from "./observation.ts";
import { need, type Needs, type OperatorPart, type PartTasks } from "./parts.ts";

/**
 * What the peering of an operator needs: the client, settings, log sink, namespaces, identity,
 * clock; the pause gate (each peering object holds it through a toggle of its own); the stop
 * signal (no new peering objects are joined after it).
 */
export type PeeringParts = Needs<"signal">;

/** One joined peering object. */
interface Joined {
  keepalive: KeepAlive;
  monitor: PeeringMonitor;
  toggle: Toggle;
  stop: AbortController;
  /** Ends when its watch and keep-alives have ended (not including the leaving). */
  done: Promise<void>;
}

/**
 * The peering resources for a scope that the cluster serves (kopf.dev first, then zalando.org).
 *
 * @param api The API client.
 * @param clusterwide `ClusterKopfPeering` if true, else `KopfPeering`.
 * @param signal Stops the discovery.
 * @returns The resources (empty if the CRDs are not there).
 */
export async function peeringResources(
  api: ApiClient,
  clusterwide: boolean,
  signal?: AbortSignal,
): Promise<Resource[]> {
  const all = await scanResources(api, { groups: ["kopf.dev", "zalando.org"], signal });
  const selectors = clusterwide
    ? [CLUSTER_PEERINGS, CLUSTER_PEERINGS_LEGACY]
    : [NAMESPACED_PEERINGS, NAMESPACED_PEERINGS_LEGACY];
  return selectors.flatMap((s) => s.select(all).slice(0, 1));
}

/** The keep-alive, the monitor and the identity (engines/peering.ts and peers.ts). */
interface PeeringEngine {
  KeepAlive: typeof KeepAlive;
  PeeringMonitor: typeof PeeringMonitor;
  whereOf: (namespace: string | null) => string;
  detectOwnId: (manual: boolean) => string;
}

let loadingEngine: Promise<PeeringEngine> | undefined;

/**
 * The peering's engine, imported when a peering object is joined (or a read of one fails): in
 * the automatic mode, an operator whose peering object does not exist — most — never loads it.
 */
function peeringEngine(): Promise<PeeringEngine> {
  return loadingEngine ??= Promise.all([
    import("../engines/peering.ts"),
    import("../engines/peers.ts"),
  ]).then(([{ KeepAlive, PeeringMonitor, whereOf }, { detectOwnId }]) => ({
    KeepAlive,
    PeeringMonitor,
    whereOf,
    detectOwnId,
  }));
}

/**
 * Starts the peering of an operator (nothing in the standalone mode).
 *
 * @param parts The client, settings, log sink, pause gate, namespaces, clock and signal.
 * @returns Its task and how to leave.
 */
export function startPeering(parts: PeeringParts): PartTasks {
  const peering = parts.settings.peering;
  if (peering.standalone) return { tasks: [], leave: () => Promise.resolve() };
  const { api, signal, clock } = parts;
  const paused = parts.paused ?? new ToggleSet();
  const logger = new OperatorLogger(parts.sink, "kopf.peering");
  let identity = parts.identity; // Kopf's default identity, made at the first join
  const name = peering.name;
  const mandatory = peering.mandatory;
  const clusterwide = peering.clusterwide || parts.namespaces === undefined;
  const joined = new Map<string, Joined>();
  /** Keys checked in the automatic mode (absent there: not joined, not checked again). */
  const checked = new Set<string>();
  let resources: Resource[] = [];
  let namespaces: Set<string> | undefined; // undefined: cluster-wide
  let leaving = false;
  // Nothing is handled until the peering objects are known and read.
  const detecting = paused.make(`peering '${name}' detection`, true);
  let missingCrd: Toggle | undefined;

  const join = (
    { KeepAlive, PeeringMonitor, whereOf, detectOwnId }: PeeringEngine,
    resource: Resource,
    namespace: string | null,
  ): Joined => {
    const key = `${resource}@${namespace ?? "*"}`;
    const target: PeeringTarget = { resource, namespace, name };
    identity ??= detectOwnId(false);
    const toggle = paused.make(`peering '${name}' ${whereOf(namespace)}`, true);
    const keepalive = new KeepAlive({ api, target, identity, settings: peering, logger, clock });
    const monitor = new PeeringMonitor({
      identity,
      settings: peering,
      toggle,
      logger,
      clock,
      mandatory,
      what: `'${name}' ${whereOf(namespace)}`,
      clean: async (peers) => {
        const status = Object.fromEntries(peers.map((p) => [p.identity, null]));
        await patchObject(api, resource, namespace, name, { status });
      },
      touch: () => keepalive.poke(),
    });
    const stop = new AbortController();
    const s = AbortSignal.any([stop.signal, signal]);
    const watching = (async () => {
      while (!s.aborted) {
        try {
          for await (
            const event of infiniteWatch(api, resource, namespace, {
              signal: s,
              fieldSelector: `metadata.name=${name}`,
            })
          ) {
            if (event.type === "LISTED") {
              if (event.count === 0) monitor.update(undefined);
            } else if (event.object.metadata?.name === name) {
              monitor.update(event.type === "DELETED" ? undefined : event.object);
            }
          }
        } catch (e) {
          if (s.aborted) break;
          logger.error(
            `Watching the peering '${name}' ${whereOf(namespace)} failed: ${
              e instanceof Error ? e.message : e
            }`,
          );
          await (clock ?? realClock).sleep(10, s);
        }
      }
      monitor.close();
    })();
    const entry: Joined = {
      keepalive,
      monitor,
      toggle,
      stop,
      done: Promise.all([watching, keepalive.run()]).then(() => {}),
    };
    joined.set(key, entry);
    return entry;
  };

  /** Joins what is to be joined and drops the peerings of namespaces that are gone. */
  const reconcile = async (): Promise<number> => {
    const wanted: Array<[string, Resource, string | null]> = [];
    for (const r of resources) {
      if (namespaces === undefined) wanted.push([`${r}@*`, r, null]);
      else for (const ns of namespaces) wanted.push([`${r}@${ns}`, r, ns]);
    }
    const keys = new Set(wanted.map(([k]) => k));
    for (const [key, j] of joined) {
      if (keys.has(key)) continue;
      joined.delete(key);
      j.stop.abort();
      j.toggle.drop();
      void j.keepalive.leave();
    }
    let found = 0;
    await Promise.all(wanted.map(async ([key, r, ns]) => {
      if (joined.has(key) || leaving || signal.aborted) return;
      if (!mandatory) {
        if (checked.has(key)) return;
        checked.add(key);
        const exists = await readObject(api, r, ns, name, { signal }).catch(async (e) => {
          const { whereOf } = await peeringEngine();
          logger.warning(
            `Cannot read the peering '${name}' ${whereOf(ns)}: ${
              e instanceof Error ? e.message : e
            }`,
          );
          return undefined;
        });
        if (!exists || joined.has(key) || leaving || signal.aborted) return;
      }
      const engine = await peeringEngine();
      if (joined.has(key) || leaving || signal.aborted) return; // meanwhile
      join(engine, r, ns);
      found++;
    }));
    return found;
  };

  const main = (async () => {
    try {
      if (!clusterwide) {
        const patterns = parts.namespaces ?? [];
        const warn = (line: string) => logger.warning(line);
        if (parts.settings.scanning.disabled) {
          namespaces = literalNamespaces(patterns, "Scanning is disabled", warn);
        } else {
          namespaces = new Set();
          await followNamespaces(api, patterns, namespaces, {
            signal,
            onChange: () => void reconcile(),
            onError: (e) => {
              if (!signal.aborted) logger.warning(`Not following namespaces: ${e}`);
            },
            warn,
          });
        }
      }
      let found: Resource[] | undefined;
      while (!found) {
        try {
          found = await peeringResources(api, clusterwide, signal);
        } catch (e) {
          // Mandatory: paused until the peering is readable; automatic: standalone (below).
          if (!mandatory || signal.aborted) throw e;
          logger.warning(
            `Cannot look up the peering CRDs: ${e instanceof Error ? e.message : e}; ` +
              "retrying in 10 seconds.",
          );
          if (!await (clock ?? realClock).sleep(10, signal)) return;
        }
      }
      if (!found.length && mandatory) {
        missingCrd = paused.make(`peering '${name}': no peering CRDs`, true);
        logger.warning(
          `The peering CRDs (${clusterwide ? "ClusterKopfPeering" : "KopfPeering"}) ` +
            "are not served: pausing until they are (apply peering.yaml).",
        );
        void followCrds(api, {
          signal,
          onChange: () => {
            void peeringResources(api, clusterwide, signal).then(async (now) => {
              if (!now.length || resources.length) return;
              resources = now;
              await reconcile();
              missingCrd?.drop();
            }).catch(() => {});
          },
          onError: (e) => {
            if (!signal.aborted) logger.warning(`Not following CRDs: ${(e as Error).message}`);
          },
        });
        return;
      }
      resources = found;
      if (!await reconcile() && !mandatory) {
        resources = []; // Standalone from now on: namespaces that come later are not checked.
        logger.warning("Default peering object is not found, falling back to the standalone mode.");
      }
    } catch (e) {
      if (!signal.aborted) {
        logger.warning(
          `Peering is not possible: ${e instanceof Error ? e.message : e}; ` +
            "falling back to the standalone mode.",
        );
      }
    } finally {
      detecting.drop();
    }
  })();

  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  return {
    tasks: [{ name: "peering", done }],
    async leave() {
      leaving = true;
      await main;
      const all = [...joined.values()];
      joined.clear();
      for (const j of all) j.stop.abort();
      await Promise.all(all.map(async (j) => {
        await j.keepalive.leave();
        await j.done;
        j.toggle.drop();
      }));
      missingCrd?.drop();
      finished();
    },
  };
}

/**
 * Peering as a part of a running operator (running.ts): started after the watchers and the
 * admission; left after the watchers and daemons have stopped, so that lower-priority peers
 * resume only then. (Its options are applied before the startup handlers: running.ts calls
 * `applyPeeringOptions()` of optional_parts.ts.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peeringPart } from "./peering.ts";
 * assert.equal(peeringPart.name, "peering");
 * ```
 */
export const peeringPart: OperatorPart = {
  name: "peering",
  start(run) {
    const op = need(run, "op");
    const api = need(run, "api");
    const { namespaces, signal, metrics } = run;
    const peering = startPeering({
      ...op,
      api,
      namespaces,
      signal,
      metrics,
      identity: run.options.identity,
    });
    return { tasks: peering.tasks, exit: { peers: () => peering.leave() } };
  },
};
