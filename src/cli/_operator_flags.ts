/**
 * The flags that `kopf rbac` and `kopf manifests` share with `kopf run` (the
 * scope, the peering, leader election, sharding), and the loading of an
 * operator as `kopf run` starts it — the handler files, the flags written
 * into the settings, the startup handlers — without logging in. What those
 * commands print depends on the settings as the startup handlers leave them
 * (`settings.admission.managed`, `settings.peering.standalone`, …), so the
 * startup handlers run here as they run in the operator; their API client
 * fails with a `LoginError`, as before any login.
 *
 * @module
 */

import { OperatorSettings } from "../cogs/configs/settings.ts";
import { groupProblem } from "../cogs/configs/sharding.ts";
import { selectSpecificNamespaces } from "../cogs/structs/references.ts";
import { apiScope, pendingApi } from "../core/actions/handler_api.ts";
import { lineSink, OperatorLogger } from "../core/actions/loggers.ts";
import { runActivity } from "../core/engines/activities.ts";
import { Memo } from "../core/intents/handlers.ts";
import type { OperatorRegistry } from "../core/intents/registry.ts";
import { fatal } from "../core/reactor/errors.ts";
import { checkLeaderElection } from "../core/reactor/leader_election.ts";
import { applyPeeringOptions } from "../core/reactor/optional_parts.ts";
import { checkSharding } from "../core/reactor/sharding.ts";
import { checkAdmission } from "../core/reactor/webhooking.ts";
import { FlagsError } from "./_flags_error.ts";
import type { OperatorValues } from "./_options.ts";
import { applyRunFlags, loadHandlers, type SettingsFlags } from "./run.ts";

/** How long the startup handlers may take without a cluster. */
const STARTUP_TIMEOUT = 30;

/**
 * The parsed flags of an operator, as `kopf run` would take them: the values of
 * `OPERATOR_OPTIONS` (`_options.ts`), derived from their specs (those that go into the settings as
 * `kopf run`'s), with `-m`, `-n` and `--crd` as lists under plural names, the files, and the
 * account's namespace decided.
 */
export interface OperatorFlags
  extends
    SettingsFlags,
    Omit<OperatorValues, "module" | "namespace" | "crd" | keyof SettingsFlags> {
  /** Handler files. */
  paths: string[];
  /** `-m, --module`: handler modules. */
  modules: string[];
  /** `-n, --namespace`: the patterns of the served namespaces. */
  namespaces: string[];
  /** `--crd`: CRD files for resources that are not typed and not built in. */
  crdFiles: string[];
  /** The operator's namespace (its service account's): `--account-namespace`, or as decided. */
  accountNamespace: string;
}

export type { OperatorValues };

export { FlagsError };

/**
 * The flags of a parsed command line, checked as `kopf run` checks them.
 *
 * @param paths The positional paths.
 * @param opts The options' values, as the parser gives them.
 * @returns The flags.
 * @throws {FlagsError} For `-A` with `-n`, sharding with leader election, a bad group.
 */
export function operatorFlags(paths: string[], opts: OperatorValues): OperatorFlags {
  const namespaces = opts.namespace ?? [];
  if (opts.allNamespaces && namespaces.length) {
    throw new FlagsError(
      "The operator can be either cluster-wide or namespaced, not both: " +
        "use -A/--all-namespaces or -n/--namespace",
    );
  }
  const { leaderElection, shards } = opts;
  if (typeof shards === "string") {
    const problem = groupProblem(shards);
    if (problem) throw new FlagsError(`--shards '${shards}' is invalid: ${problem}`);
  }
  if (shards && leaderElection) {
    throw new FlagsError(
      "Sharding and leader election exclude each other (all replicas active vs. one): " +
        "use --shards or --leader-election, not both",
    );
  }
  const literal = selectSpecificNamespaces(namespaces);
  const accountNamespace = opts.accountNamespace ??
    (namespaces.length === 1 && literal.length === 1 ? literal[0]! : "default");
  return {
    paths: [...paths],
    modules: opts.module ?? [],
    namespaces,
    allNamespaces: !!opts.allNamespaces,
    standalone: !!opts.standalone,
    dev: false,
    ...(opts.peering ? { peering: opts.peering } : {}),
    leaderElection,
    leaderElectionNamespace: opts.leaderElectionNamespace,
    shards,
    shardsNamespace: opts.shardsNamespace,
    crdFiles: opts.crd ?? [],
    name: opts.name,
    accountNamespace,
  };
}

/** An operator loaded as `kopf run` starts it, up to the login. */
export interface LoadedOperator {
  /** Its handlers. */
  registry: OperatorRegistry;
  /** Its settings after the flags and the startup handlers. */
  settings: OperatorSettings;
  /** The served `-n` patterns; undefined for cluster-wide. */
  namespaces: string[] | undefined;
}

/**
 * Loads the handler files, writes the flags into fresh settings and runs the startup handlers
 * (their log lines of warnings and errors go to `log`), then checks the settings as the
 * operator checks them before the login.
 *
 * @param flags The flags.
 * @param log Where the startup handlers' warnings go (default stderr).
 * @returns The registry, the settings, and the served namespaces.
 * @throws {LoadingError} For a file that cannot be loaded.
 * @throws {OperatorError} For failed startup handlers or settings that do not fit.
 */
export async function loadOperator(
  flags: OperatorFlags,
  log: (line: string) => void = (line) => console.error(line),
): Promise<LoadedOperator> {
  const registry = await loadHandlers(flags.paths, flags.modules);
  const settings = applyRunFlags(flags, new OperatorSettings());
  const clusterwide = flags.allNamespaces || !flags.namespaces.length;
  applyPeeringOptions(settings, { clusterwide });
  const logger = new OperatorLogger(
    lineSink({ level: "warning", format: "plain", write: log }),
    "kopf.activities",
  );
  const env = { logger, memo: new Memo(), settings, indices: {} };
  const signal = AbortSignal.timeout(STARTUP_TIMEOUT * 1000);
  // kopf.api() exists, and fails as before the login (as in the operator).
  await apiScope.run(
    pendingApi().kube,
    () => runActivity("startup", registry.activityHandlers("startup"), env, signal),
  ).catch(fatal("startup"));
  checkAdmission(registry, settings);
  checkSharding(settings);
  checkLeaderElection(settings);
  return { registry, settings, namespaces: clusterwide ? undefined : flags.namespaces };
}
