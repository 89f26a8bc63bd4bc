/**
 * The options that `kopf rbac` and `kopf manifests` take beyond those of `_commands.ts`'s own
 * commands, and the parsers of the options' values that several commands share. A module of its
 * own so that the commands' specs (`_commands.ts`) and the modules whose flags types derive from
 * them (`run.ts`, `_operator_flags.ts`) import each other in one direction only.
 *
 * @module
 */

import { patternProblem } from "./_patterns.ts";
import { InvalidValueError, option, type OptionSpec, type ValuesOf } from "./_parser.ts";

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

/** The values of {@link MANIFESTS_OPTIONS}, as the parser gives them. */
export type ManifestsOptionValues = ValuesOf<typeof MANIFESTS_OPTIONS>;

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
 * import { decimal } from "./_options.ts";
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
