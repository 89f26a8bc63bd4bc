/**
 * The role of a replica — `leader`, `standby` or `paused` — for `/metrics`
 * and the readiness endpoint, derived from the operator's pause gate.
 *
 * - `leader`: nothing holds the gate; this replica handles (with leader
 *   election on, it holds the Lease; without it, it is simply active);
 * - `standby`: only the leader-election toggle holds the gate — the Lease is
 *   someone else's (or nobody's yet) and this replica waits, watches warm;
 * - `paused`: another reason holds the gate (a higher-priority peer, a
 *   `kopf freeze`, a peering object not found yet), whoever has the Lease.
 *
 * Why the metrics are registered here and not in metrics.ts: they exist only
 * where there is a gate to read, and they read it at each scrape (a gauge's
 * `collect`), so no code path has to remember to update them.
 *
 * @module
 */

import type { Toggle, ToggleSet } from "../../cogs/aio/toggles.ts";
import type { OperatorMetrics } from "./metrics.ts";

/** The roles, in the order the gauge lists them. */
export const ROLES = ["leader", "standby", "paused"] as const;

/** A replica's role. */
export type OperatorRole = typeof ROLES[number];

/**
 * The role from the pause gate and the election's toggle.
 *
 * @param paused The operator's pause gate.
 * @param election The leader-election toggle of that gate, if the election is on.
 * @returns The role.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToggleSet } from "../../cogs/aio/toggles.ts";
 * import { roleOf } from "./roles.ts";
 * const paused = new ToggleSet();
 * const election = paused.make("leader election", true);
 * assert.deepEqual(roleOf(paused, election), "standby");
 * const peering = paused.make("peering default@*", true);
 * assert.deepEqual(roleOf(paused, election), "paused");
 * election.turnTo(false);
 * peering.turnTo(false);
 * assert.deepEqual(roleOf(paused, election), "leader");
 * ```
 */
export function roleOf(paused: ToggleSet | undefined, election?: Toggle): OperatorRole {
  if (!paused?.on) return "leader";
  const others = paused.reasons.filter((name) => name !== election?.name);
  return others.length ? "paused" : "standby";
}

/** What the role metrics of an operator record beyond the gauge. */
export interface RoleMetrics {
  /** Counts a new leader seen by this replica. */
  leaderElected(): void;
}

const registered = new WeakMap<
  OperatorMetrics,
  { role: () => OperatorRole; metrics: RoleMetrics }
>();

/**
 * Registers the role gauge `kopf_operator_role{role}` (1 for the current role, 0 for the
 * others, read at each scrape) and the counter `kopf_leader_transitions_total` in an
 * operator's metrics.
 *
 * @param metrics The operator's metrics.
 * @param role Reads the current role.
 * @returns How to count leader transitions.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorMetrics } from "@kopf/kopf";
 * import { observeRole } from "./roles.ts";
 * const metrics = new OperatorMetrics();
 * const roles = observeRole(metrics, () => "standby");
 * roles.leaderElected();
 * const text = await metrics.metrics();
 * assert.deepEqual(text.includes('kopf_operator_role{role="standby"} 1'), true);
 * assert.deepEqual(text.includes("kopf_leader_transitions_total 1"), true);
 * ```
 */
export function observeRole(metrics: OperatorMetrics, role: () => OperatorRole): RoleMetrics {
  const known = registered.get(metrics);
  if (known) {
    known.role = role; // the same operator's metrics, started again: read the newer gate
    return known.metrics;
  }
  const entry = { role, metrics: undefined as unknown as RoleMetrics };
  metrics.registry.gauge({
    name: "kopf_operator_role",
    help: "This replica's role, 1 for the current one: leader (it handles), standby (it waits " +
      "for the leader-election Lease), paused (by a peer of higher priority or kopf freeze).",
    labelNames: ["role"],
    collect(gauge) {
      const now = entry.role();
      for (const r of ROLES) gauge.set({ role: r }, r === now ? 1 : 0);
    },
  });
  const transitions = metrics.registry.counter({
    name: "kopf_leader_transitions_total",
    help: "New holders of the leader-election Lease seen by this replica (itself included).",
  });
  entry.metrics = { leaderElected: () => transitions.inc() };
  registered.set(metrics, entry);
  return entry.metrics;
}

/**
 * Reports the role read from the pause gate on the metrics (see {@link observeRole}) and the
 * health server, whichever the operator has: what every operator does, its leader election on
 * or off (off, the role is `leader` or `paused`).
 *
 * @param paused The operator's pause gate.
 * @param election The leader-election toggle of that gate, if the election is on.
 * @param to The operator's metrics and health server, if any.
 * @returns How to count leader transitions, when there are metrics.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorMetrics } from "@kopf/kopf";
 * import { ToggleSet } from "../../cogs/aio/toggles.ts";
 * import { reportRole } from "./roles.ts";
 * const metrics = new OperatorMetrics();
 * const paused = new ToggleSet();
 * reportRole(paused, undefined, { metrics });
 * paused.make("a peer of higher priority", true);
 * assert.equal((await metrics.metrics()).includes('kopf_operator_role{role="paused"} 1'), true);
 * ```
 */
export function reportRole(
  paused: ToggleSet,
  election: Toggle | undefined,
  to: {
    metrics?: OperatorMetrics | undefined;
    probing?: { observeRole(role: () => OperatorRole): void } | undefined;
  },
): RoleMetrics | undefined {
  const role = () => roleOf(paused, election);
  to.probing?.observeRole(role);
  return to.metrics ? observeRole(to.metrics, role) : undefined;
}
