/**
 * The commands of `kopf`, their options and what each option's value may be: the program as
 * `_parser.ts` reads it and `_help.ts` shows it. What each command does is in `main.ts` (and the
 * command's own module, imported when it runs).
 *
 * @module
 */

import { groupProblem } from "../cogs/configs/sharding.ts";
import type { LogFormat } from "../core/actions/loggers.ts";
import {
  collect,
  collectPattern,
  decimal,
  MANIFESTS_OPTIONS,
  OPERATOR_OPTIONS,
  parseInteger,
  parseLiveness,
} from "./_options.ts";
import {
  type CommandSpec,
  InvalidValueError,
  option,
  type ProgramSpec,
  type ValuesOf,
} from "./_parser.ts";

const HANDLER_FILES = "TypeScript/JavaScript files with handlers";
const LOG_FORMATS = ["plain", "full", "json"] as const satisfies readonly LogFormat[];

const APISERVER = {
  name: "apiserver",
  description: "run the embedded Kubernetes API server (no cluster needed)",
  options: [
    option("--host <host>", "address to listen on", { default: "127.0.0.1" }),
    option("--port <port>", "port to listen on; 0 picks a free one", {
      parse: parsePort,
      default: 0,
    }),
    option(
      "--kubeconfig <path>",
      "where to write a kubeconfig for this server " +
        "(default: kopf-apiserver.kubeconfig in the current directory)",
    ),
    option("--data-dir <dir>", "keep the state in this directory across restarts"),
    option(
      "--data-dir-fsync <mode>",
      "when a write is on disk: group (one fdatasync per batch of writes, before they are " +
        "answered), write (one per write), off (survives a crash of the process, not a power loss)",
      { choices: ["group", "write", "off"], default: "group" },
    ),
    option("--token <token>", "require this bearer token"),
    option("--tls", "serve HTTPS with a generated CA and client-certificate auth"),
    option(
      "--authorization <mode>",
      "rbac: every request names its user (401 otherwise) and RBAC objects decide (403)",
      { choices: ["rbac"] },
    ),
    option(
      "--token-auth-file <file>",
      'with --authorization rbac: users by bearer token, CSV lines token,user,uid,"group1,group2"',
    ),
    option("--verbose", "log one line per request"),
    option("--faults <json>", "fault switches at start, as JSON (see README)"),
    option(
      "--webhook-client-cert <file>",
      "present this client certificate (PEM) to admission and conversion webhooks",
    ),
    option("--webhook-client-key <file>", "the private key (PEM) of --webhook-client-cert"),
  ],
} satisfies CommandSpec;

const RUN = {
  name: "run",
  description: "run an operator with the handlers of the given files or modules",
  paths: HANDLER_FILES,
  options: [
    option("-m, --module <module>", "import a module with handlers (repeatable)", {
      parse: collect,
    }),
    option(
      "-n, --namespace <pattern>",
      "serve this namespace; globs and !negations allowed (repeatable)",
      { parse: collectPattern },
    ),
    option("-A, --all-namespaces", "serve all namespaces (cluster-wide)"),
    option("--standalone", "run without peering, ignoring other operators"),
    option(
      "-P, --peering <name>",
      "the peering object to use (mandatory: pause until it exists); default: 'default' if found",
    ),
    option("-p, --priority <n>", "the peering priority (default 0)", { parse: parseInteger }),
    option("--dev", "development mode: the peering priority 666 (the other operators pause)"),
    option(
      "--leader-election [name]",
      "one replica handles, holding a Lease (=NAME; default kopf-leader-<peering name>); " +
        "the others stand by",
    ),
    option("--leader-election-namespace <ns>", "the namespace of the leader-election Lease"),
    option(
      "--shards [group]",
      "split the objects among the live replicas of a shard group (=GROUP; default 'kopf'), " +
        "each a member by a Lease of its own",
      { parse: parseGroup },
    ),
    option("--shards-namespace <ns>", "the namespace of the shard group's member Leases"),
    option(
      "-L, --liveness <url>",
      "serve liveness probes at this URL, e.g. http://0.0.0.0:8080/healthz",
      { parse: parseLiveness },
    ),
    option("-v, --verbose", "log debug messages too"),
    option("-d, --debug", "log debug messages and the API traffic (method, path, code, duration)"),
    option("-q, --quiet", "log warnings and errors only"),
    option("--log-format <format>", "log line format", { choices: LOG_FORMATS, default: "full" }),
    option("--log-prefix", "prefix per-object lines with [ns/name] (default: on, except json)"),
    option("--no-log-prefix", "do not prefix per-object lines"),
    option("--log-refkey <key>", "the key of the object reference in JSON lines", {
      default: "object",
    }),
  ],
} satisfies CommandSpec;

/** `kopf freeze` and `kopf resume`: the scope of the peering. */
const PEERING_SCOPE = [
  option("-n, --namespace <pattern>", "the KopfPeering in these namespaces", {
    parse: collectPattern,
  }),
  option("-A, --all-namespaces", "the ClusterKopfPeering (the default without -n)"),
  option("-i, --id <id>", "the peer's identity (default: user@host, or $POD_ID)"),
  option("-P, --peering <name>", "the peering object's name", { default: "default" }),
];

/** `kopf freeze` and `kopf resume`: the log output. */
const PEERING_LOGGING = [
  option("-v, --verbose", "log debug messages too"),
  option("-d, --debug", "log debug messages too"),
  option("-q, --quiet", "log warnings and errors only"),
  option("--log-format <format>", "log line format", { choices: LOG_FORMATS, default: "full" }),
];

const FREEZE = {
  name: "freeze",
  description: "pause the operators of a peering: a peer entry with a priority and a lifetime",
  options: [
    ...PEERING_SCOPE,
    option("-t, --lifetime <seconds>", "how long the freeze lasts unless resumed", {
      parse: parsePositive,
      mandatory: true,
    }),
    option("-p, --priority <n>", "the priority of the freeze", {
      parse: parseInteger,
      default: 100,
    }),
    option("--dev", "the priority 666"),
    option("-m, --message <text>", "why (stored with the entry)"),
    ...PEERING_LOGGING,
  ],
} satisfies CommandSpec;

const RESUME = {
  name: "resume",
  description: "resume the operators of a peering: remove the entry written by 'kopf freeze'",
  options: [...PEERING_SCOPE, ...PEERING_LOGGING],
} satisfies CommandSpec;

const CRD = {
  name: "crd",
  description: "print the CRDs of the typed resources (kopf.resource) of the given files",
  paths: HANDLER_FILES,
  options: [
    option("-m, --module <module>", "import a module with handlers (repeatable)", {
      parse: collect,
    }),
  ],
} satisfies CommandSpec;

const RBAC = {
  name: "rbac",
  description:
    "print the Roles, ClusterRoles and bindings that the handlers of the given files need",
  paths: HANDLER_FILES,
  options: OPERATOR_OPTIONS,
} satisfies CommandSpec;

const MANIFESTS = {
  name: "manifests",
  description:
    "print a deployable set: service account, RBAC, CRDs and a Deployment of the operator",
  paths: HANDLER_FILES,
  options: [...OPERATOR_OPTIONS, ...MANIFESTS_OPTIONS],
} satisfies CommandSpec;

const BUNDLE = {
  name: "bundle",
  description: "bundle kopf run with the given files into a few minified files: " +
    "an operator that starts leaner",
  paths: HANDLER_FILES,
  options: [
    option("-o, --outdir <dir>", "where to write the bundle (empty, new, or an earlier bundle)", {
      default: "dist",
    }),
  ],
} satisfies CommandSpec;

/** The `kopf` program: its commands, in the help's order. */
export const PROGRAM: ProgramSpec = {
  name: "kopf",
  description: "Kopf for Deno: Kubernetes operators in a few lines of TypeScript",
  commands: [
    APISERVER,
    RUN,
    FREEZE,
    RESUME,
    CRD,
    RBAC,
    MANIFESTS,
    BUNDLE,
  ],
};

/** The values of `kopf apiserver`'s options, as the parser gives them. */
export type ApiServerValues = ValuesOf<typeof APISERVER.options>;

/** The values of `kopf run`'s options, as the parser gives them. */
export type RunValues = ValuesOf<typeof RUN.options>;

/** The values of `kopf freeze`'s options, as the parser gives them. */
export type FreezeValues = ValuesOf<typeof FREEZE.options>;

/** The values of `kopf resume`'s options, as the parser gives them. */
export type ResumeValues = ValuesOf<typeof RESUME.options>;

/** The values of `kopf crd`'s options, as the parser gives them. */
export type CrdValues = ValuesOf<typeof CRD.options>;

/** The values of `kopf rbac`'s options, as the parser gives them. */
export type RbacValues = ValuesOf<typeof RBAC.options>;

/** The values of `kopf manifests`' options, as the parser gives them. */
export type ManifestsValues = ValuesOf<typeof MANIFESTS.options>;

/** The values of `kopf bundle`'s options, as the parser gives them. */
export type BundleValues = ValuesOf<typeof BUNDLE.options>;

/** `--shards GROUP`: a valid group (a handlers file right after the flag is a path: the parser). */
function parseGroup(value: string): string {
  const problem = groupProblem(value);
  if (problem) throw new InvalidValueError(`${problem}.`);
  return value;
}

function parsePositive(value: string): number {
  const n = decimal(value);
  if (n === undefined || n < 1) {
    throw new InvalidValueError("use a whole number of seconds in plain decimal digits, e.g. 60.");
  }
  return n;
}

function parsePort(value: string): number {
  const n = decimal(value);
  if (n === undefined || n < 0 || n > 65535) {
    throw new InvalidValueError(
      "use a port number from 0 to 65535 in decimal digits (0 picks a free port).",
    );
  }
  return n;
}
