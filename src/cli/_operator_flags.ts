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
import { applyPeeringOptions } from "../core/reactor/peering.ts";
import { checkSharding } from "../core/reactor/sharding.ts";
import { checkAdmission } from "../core/reactor/webhooking.ts";
import { patternProblem } from "./_patterns.ts";
import { InvalidValueError, option, type OptionSpec, type ValuesOf } from "./_parser.ts";
import { applyRunFlags, loadHandlers, type SettingsFlags } from "./run.ts";

/** How long the startup handlers may take without a cluster. */
const STARTUP_TIMEOUT = 30;

/** The parsed flags of an operator, as `kopf run` would take them. */
export interface OperatorFlags extends SettingsFlags {
  /** Handler files. */
  paths: string[];
  /** Handler modules (`-m`). */
  modules: string[];
  /** `-n` patterns. */
  namespaces: string[];
  /** `-A`. */
  allNamespaces: boolean;
  /** CRD files for resources that are not typed and not built in (`--crd`). */
  crdFiles: string[];
  /** The base name of the account, roles, bindings and the Deployment (`--name`). */
  name: string;
  /** The operator's namespace (its service account's): `--account-namespace`. */
  accountNamespace: string;
}

/** A usage mistake: one line, exit code 2. */
export class FlagsError extends Error {
  override name = "FlagsError";
}

/** A DNS-1123 name (`--name`, `--account-namespace`). */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The operator's options of `kopf rbac` and `kopf manifests`: those of `kopf run` that change what
 * it asks of the API, and `--crd`, `--name`, `--account-namespace`.
 */
export const OPERATOR_OPTIONS = [
  option("-m, --module <module>", "import a module with handlers (repeatable)", { parse: collect }),
  option(
    "-n, --namespace <pattern>",
    "the namespaces the operator serves, as for kopf run (repeatable)",
    { parse: collectPattern },
  ),
  option("-A, --all-namespaces", "the operator serves all namespaces (cluster-wide)"),
  option("--standalone", "the operator runs without peering"),
  option("-P, --peering <name>", "the peering object (mandatory peering), as for kopf run"),
  option("--leader-election [name]", "the operator runs with leader election, as for kopf run"),
  option("--leader-election-namespace <ns>", "the namespace of the leader-election Lease"),
  option("--shards [group]", "the operator runs as a shard of a group, as for kopf run"),
  option("--shards-namespace <ns>", "the namespace of the shard group's member Leases"),
  option(
    "--crd <file>",
    "a YAML file with CRDs of resources the handlers name (repeatable; typed resources and " +
      "built-in kinds need none)",
    { parse: collect },
  ),
  option(
    "--name <name>",
    "the name of the service account, the roles and bindings (and the Deployment)",
    { parse: parseName, default: "kopf-operator" },
  ),
  option(
    "--account-namespace <ns>",
    "the namespace of the operator's service account and pod (default: the one -n namespace, " +
      "else default)",
    { parse: parseName },
  ),
] satisfies readonly OptionSpec[];

/** The values of {@link OPERATOR_OPTIONS}, as the parser gives them. */
export type OperatorValues = ValuesOf<typeof OPERATOR_OPTIONS>;

/**
 * The options of `kopf manifests` beyond the operator's: the image, replicas, the probes' URL,
 * the handlers' path in the image, and whether to include the Namespace.
 */
export const MANIFESTS_OPTIONS = [
  option("--image <image>", "the operator's image (built from deploy/Dockerfile)", {
    mandatory: true,
  }),
  option("--replicas <n>", "the Deployment's replicas", { parse: parseReplicas, default: 1 }),
  option(
    "-L, --liveness <url>",
    "the probes' URL that kopf run serves in the pod (readiness: /readyz on the same port)",
    { parse: parseLiveness, default: "http://0.0.0.0:8080/healthz" },
  ),
  option("--entry <path>", "the handlers file in the image, for kopf run", {
    default: "handlers.ts",
  }),
  option("--create-namespace", "include the Namespace of --account-namespace"),
] satisfies readonly OptionSpec[];

function parseReplicas(value: string): number {
  const n = decimal(value);
  if (n === undefined || n < 0) {
    throw new InvalidValueError("use a whole number in plain decimal digits, e.g. 2.");
  }
  return n;
}

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

/**
 * A repeatable option's values: the ones so far and this one.
 *
 * @param value The value given.
 * @param previous The values so far (undefined at first).
 * @returns All the values.
 */
export function collect(value: string, previous: unknown): string[] {
  return [...((previous as string[] | undefined) ?? []), value];
}

/**
 * A repeatable `-n/--namespace`: the patterns so far and this one, if it can be a pattern.
 *
 * @param value The pattern given.
 * @param previous The patterns so far (undefined at first).
 * @returns All the patterns.
 * @throws {InvalidValueError} For a pattern that matches no namespace name ever.
 */
export function collectPattern(value: string, previous: unknown): string[] {
  const problem = patternProblem(value);
  if (problem) throw new InvalidValueError(problem);
  return collect(value, previous);
}

/**
 * A whole number (`--priority`).
 *
 * @param value The value given.
 * @returns The number.
 * @throws {InvalidValueError} For anything else.
 */
export function parseInteger(value: string): number {
  const n = decimal(value);
  if (n === undefined) {
    throw new InvalidValueError("use a whole number in plain decimal digits, e.g. 100.");
  }
  return n;
}

/**
 * An integer written in plain decimal digits (a leading `-` allowed), or undefined: `Number()`
 * would also take `0x10`, `1e3`, `" 7 "`, `""` and `1.0`, which nobody means as a flag's value.
 *
 * @param value The value given.
 * @returns The number, or undefined for anything else (or beyond a safe integer).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decimal } from "./_operator_flags.ts";
 * assert.deepEqual(["10", "-5", "0x10", "1e3", " 7 "].map(decimal), [10, -5, undefined, undefined, undefined]);
 * ```
 */
export function decimal(value: string): number | undefined {
  if (!/^-?[0-9]+$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * A liveness URL (`--liveness`): http:// with a host (the address to listen on), as `kopf run`
 * serves it.
 *
 * @param value The URL given.
 * @returns The URL as given.
 * @throws {InvalidValueError} For anything else, with an example.
 */
export function parseLiveness(value: string): string {
  const example = "e.g. --liveness=http://0.0.0.0:8080/healthz";
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // Not a URL at all: said below.
  }
  if (!url || !url.hostname) {
    throw new InvalidValueError(
      `give a URL with the address and port to listen on and the probes' path, ${example}.`,
    );
  }
  if (url.protocol !== "http:") {
    throw new InvalidValueError(`only http:// is served, ${example}.`);
  }
  return value;
}

function parseName(value: string): string {
  if (!DNS_LABEL.test(value)) {
    throw new InvalidValueError(
      "use lowercase letters, digits and '-' (at most 63), starting and ending with a letter or digit.",
    );
  }
  return value;
}
