/**
 * Leader election in a running operator (`kopf run --leader-election`,
 * `settings.leaderElection`): which Lease, who we are, and the elector
 * (engines/leader_election.ts) holding the operator's pause gate through a
 * toggle of its own; also the role the metrics and the readiness endpoint
 * report (engines/roles.ts), with or without an election.
 *
 * Which Lease — decided here:
 * - the name is `settings.leaderElection.name`, by default
 *   `kopf-leader-<settings.peering.name>` (`kopf-leader-default`): replicas of
 *   one operator share it; different operators in one namespace must differ
 *   (a name of their own, or a peering name of their own — as Kopf asks of
 *   peering);
 * - the namespace is `settings.leaderElection.namespace`; by default the one
 *   namespace the operator serves when it serves exactly one literal `-n`
 *   (its RBAC is there, as Kopf's namespaced peering is); else the login's
 *   namespace — in a cluster, the pod's own (controller-runtime's default),
 *   with a kubeconfig, its context's; else `default`.
 *
 * Why the toggle is on from the start: nothing may be handled before this
 * replica knows it leads, exactly as peering holds the gate until it has read
 * its peering objects. Why the Lease is released last, after the peering is
 * left: handlers finish during the exit, and the Lease must stay held (and
 * renewed) until then — a standby takes over only when nothing runs here.
 *
 * The wiring only: the policy (acquire, renew, abdicate) is
 * engines/leader_election.ts, the same name one layer down;
 * {@link leaderElectionPart} is how a running operator starts it (parts.ts,
 * running.ts's list).
 *
 * @module
 */

import { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { LeaseLock } from "../../cogs/clients/lease_lock.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { selectSpecificNamespaces } from "../../cogs/structs/namespace_patterns.ts";
import { OperatorLogger } from "../actions/loggers.ts";
import { LeaderElector } from "../engines/leader_election.ts";
import { detectOwnId } from "../engines/peers.ts";
import { reportRole } from "../engines/roles.ts";
import { OperatorError } from "./errors.ts";
import { need, type Needs, type OperatorPart, type PartTasks } from "./parts.ts";

/** The name of the pause toggle of the election (in `paused.reasons`). */
export const LEADER_ELECTION_TOGGLE = "leader election";

/**
 * What the leader election of an operator needs: the client, settings, log sink, namespaces,
 * identity, clock; the stop signal (standbys stop trying then; a leader renews until the
 * leaving); the pause gate; the metrics and health server, to report the role on
 * (`kopf_operator_role`, `/readyz`).
 */
export type LeaderElectionParts = Needs<"signal">;

/**
 * Checks the election's settings when it is on — at the start, after the startup handlers.
 *
 * @param settings The settings.
 * @throws {OperatorError} With one line naming the settings (client-go's rule).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * import { checkLeaderElection } from "./leader_election.ts";
 * const settings = new OperatorSettings();
 * settings.leaderElection.enabled = true;
 * settings.leaderElection.renewDeadline = 20;
 * assert.throws(() => checkLeaderElection(settings), {
 *   message: "settings.leaderElection.leaseDuration (15s) must be greater than renewDeadline (20s).",
 * });
 * ```
 */
export function checkLeaderElection(settings: OperatorSettings): void {
  if (!settings.leaderElection.enabled) return;
  try {
    settings.leaderElection.check();
  } catch (e) {
    throw new OperatorError((e as Error).message, { cause: e });
  }
  const name = leaseNameOf(settings);
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    throw new OperatorError(
      `The leader-election Lease name '${name}' is not a valid object name: lowercase letters, ` +
        "digits, '-' and '.', starting and ending with a letter or digit (settings.leaderElection.name).",
    );
  }
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The Lease's name: the configured one, or `kopf-leader-<peering name>`.
 *
 * @param settings The settings.
 * @returns The name.
 */
export function leaseNameOf(settings: OperatorSettings): string {
  return settings.leaderElection.name ?? `kopf-leader-${settings.peering.name}`;
}

/**
 * The Lease's namespace (see the module's notes).
 *
 * @param settings The settings.
 * @param namespaces The served `-n` patterns (undefined: cluster-wide).
 * @param api The API client, for the login's namespace.
 * @param signal Stops the waiting for the credentials.
 * @returns The namespace.
 */
export async function leaseNamespaceOf(
  settings: OperatorSettings,
  namespaces: string[] | undefined,
  api: ApiClient,
  signal?: AbortSignal,
): Promise<string> {
  const configured = settings.leaderElection.namespace;
  if (configured) return configured;
  const literal = namespaces ? selectSpecificNamespaces(namespaces) : [];
  if (namespaces?.length === 1 && literal.length === 1) return literal[0]!;
  return (await api.defaultNamespace(signal).catch(() => undefined)) || "default";
}

/**
 * Starts the leader election of an operator if it is on, and reports the role (leader,
 * standby, paused) on the metrics and the health server either way.
 *
 * @param parts The client, settings, log sink, pause gate, namespaces, clock, signal, metrics.
 * @returns Its task and how to leave.
 */
export function startLeaderElection(parts: LeaderElectionParts): PartTasks {
  const { api, settings, signal, clock } = parts;
  const election = settings.leaderElection;
  const paused = parts.paused ?? new ToggleSet();
  // Made at once (not after the namespace is known): nothing is handled before the first try.
  const toggle = election.enabled ? paused.make(LEADER_ELECTION_TOGGLE, true) : undefined;
  const roles = reportRole(paused, toggle, parts);
  if (!toggle) return { tasks: [], leave: () => Promise.resolve() };

  const logger = new OperatorLogger(parts.sink, "kopf.leader_election");
  let elector: LeaderElector | undefined;
  const prepared = (async () => {
    const namespace = await leaseNamespaceOf(settings, parts.namespaces, api, signal);
    const { leaseDuration, renewDeadline, retryPeriod } = election;
    const lock = new LeaseLock({
      api,
      namespace,
      name: leaseNameOf(settings),
      identity: parts.identity ?? detectOwnId(false),
      leaseDuration,
      clock,
    });
    elector = new LeaderElector({
      lock,
      timings: { leaseDuration, renewDeadline, retryPeriod },
      toggle,
      logger,
      clock,
      onNewLeader: () => roles?.leaderElected(),
    });
  })();
  const done = prepared.then(() => elector?.run(signal));
  return {
    tasks: [{ name: "leader election", done }],
    async leave() {
      await prepared.catch(() => {});
      await elector?.leave();
      await done;
    },
  };
}

/**
 * Leader election as a part of a running operator (running.ts): its settings checked after the
 * startup handlers; started last; its Lease released last of the replicas' parts at the exit, so
 * that a standby starts when nothing runs here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leaderElectionPart } from "./leader_election.ts";
 * assert.equal(leaderElectionPart.name, "leader election");
 * ```
 */
export const leaderElectionPart: OperatorPart = {
  name: "leader election",
  check: (run) => checkLeaderElection(run.settings),
  start(run) {
    const op = need(run, "op");
    const api = need(run, "api");
    const { namespaces, signal, probing, metrics } = run;
    const identity = run.options.identity;
    const leadership = startLeaderElection({
      ...op,
      api,
      namespaces,
      signal,
      probing,
      metrics,
      identity,
    });
    return { tasks: leadership.tasks, exit: { leadership: () => leadership.leave() } };
  },
};
