/**
 * The parts that most operators do not run — sharding, admission, peering, leader election — as
 * running.ts lists them: each is loaded ({@link loadedWhenWanted}) only when this operator's
 * settings and handlers want it, and its module (its wiring in this folder, its policy in
 * `engines/`, the Lease and peering clients below them) is then imported.
 *
 * Why: every module an operator imports stays in its memory for as long as it runs — its source,
 * its compiled functions, its place in the module graph — used or not. An operator with no
 * replicas' coordination and no webhooks imported all of them at its start (≈150 KB of source of
 * the ≈1.5 MB `mod.ts` imported). The imports are string literals: `deno compile`, `deno cache`
 * and JSR see the modules as before (Deno prepares them with the graph; it does not run them).
 *
 * What each one's "wanted" reads, and when it is asked (at the settings' check, after the startup
 * handlers, and again at the part's start):
 * - sharding: `settings.sharding.enabled`;
 * - admission: a webhook server in `settings.admission.server`, or webhook or conversion handlers
 *   (without a server those fail the check, as before);
 * - peering: not `settings.peering.standalone` (sharding, started earlier, may set it) — in the
 *   automatic mode the detection runs, and the keep-alive and monitor load only when a peering
 *   object is joined (peering.ts);
 * - leader election: `settings.leaderElection.enabled`; off, only the role (leader or paused) is
 *   reported on the metrics and the health server, when there are any (engines/roles.ts).
 *
 * Also here: {@link applyPeeringOptions}, which running.ts applies before the startup handlers.
 *
 * @module
 */

import { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { reportRole } from "../engines/roles.ts";
import { loadedWhenWanted, type OperatorPart } from "./parts.ts";

/**
 * Applies the peering arguments of `kopf.operator()`/`kopf run` to the settings, as Kopf's
 * `spawn_tasks()` does: a peering name makes the peering mandatory; the scope makes it
 * cluster-wide or namespaced.
 *
 * @param settings The settings to change.
 * @param options `clusterwide` (the operator's scope), `peeringName`, `standalone`, `priority`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * import { applyPeeringOptions } from "./optional_parts.ts";
 * const settings = new OperatorSettings();
 * applyPeeringOptions(settings, { clusterwide: false, peeringName: "example" });
 * assert.deepEqual([settings.peering.name, settings.peering.mandatory, settings.peering.namespaced], ["example", true, true]);
 * ```
 */
export function applyPeeringOptions(
  settings: OperatorSettings,
  options: { clusterwide: boolean; peeringName?: string; standalone?: boolean; priority?: number },
): void {
  settings.peering.clusterwide = options.clusterwide;
  if (options.peeringName !== undefined) {
    settings.peering.name = options.peeringName;
    settings.peering.mandatory = true;
  }
  if (options.standalone !== undefined) settings.peering.standalone = options.standalone;
  if (options.priority !== undefined) settings.peering.priority = options.priority;
}

/**
 * Sharding (sharding.ts), loaded when `settings.sharding.enabled`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shardingPart } from "./optional_parts.ts";
 * assert.equal(shardingPart.name, "sharding");
 * ```
 */
export const shardingPart: OperatorPart = loadedWhenWanted(
  "sharding",
  (run) => run.settings.sharding.enabled,
  async () => (await import("./sharding.ts")).shardingPart,
);

/**
 * Admission and conversion webhooks (webhooking.ts), loaded when there is a webhook server or a
 * webhook or conversion handler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { admissionPart } from "./optional_parts.ts";
 * assert.equal(admissionPart.name, "admission");
 * ```
 */
export const admissionPart: OperatorPart = loadedWhenWanted(
  "admission",
  ({ settings, registry }) =>
    settings.admission.server !== null || registry.webhookHandlers().length > 0 ||
    registry.converterHandlers().length > 0,
  async () => (await import("./webhooking.ts")).admissionPart,
);

/**
 * Peering (peering.ts), loaded unless the operator is standalone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peeringPart } from "./optional_parts.ts";
 * assert.equal(peeringPart.name, "peering");
 * ```
 */
export const peeringPart: OperatorPart = loadedWhenWanted(
  "peering",
  (run) => !run.settings.peering.standalone,
  async () => (await import("./peering.ts")).peeringPart,
);

const electing = loadedWhenWanted(
  "leader election",
  (run) => run.settings.leaderElection.enabled,
  async () => (await import("./leader_election.ts")).leaderElectionPart,
);

/**
 * Leader election (leader_election.ts), loaded when `settings.leaderElection.enabled`; off, the
 * role read from the pause gate is reported on the metrics and the health server (if any), as
 * the election's part reports it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leaderElectionPart } from "./optional_parts.ts";
 * assert.equal(leaderElectionPart.name, "leader election");
 * ```
 */
export const leaderElectionPart: OperatorPart = {
  name: "leader election",
  check: (run) => electing.check?.(run),
  start(run) {
    if (run.settings.leaderElection.enabled) return electing.start(run);
    reportRole(run.op?.paused ?? new ToggleSet(), undefined, run);
  },
};
