/**
 * The command-line entry: parses arguments with commander, runs the command,
 * and turns user mistakes (bad flags, a busy port, a missing permission) into
 * one line on stderr and a non-zero exit code, never a stack trace.
 *
 * @module
 */

import { Command, CommanderError, InvalidArgumentError, Option } from "npm:commander@^14.0.0";
import { VERSION } from "../cogs/configs/version.ts";
import { permissionError, permissionHint } from "../cogs/clients/_permissions.ts";
import { groupProblem } from "../cogs/configs/sharding.ts";
import { patternProblem } from "./_patterns.ts";
import { FlagsError, manifestsOptions, operatorFlags, operatorOptions } from "./_operator_flags.ts";
import { type RunControls, runOperator } from "./run.ts";

/**
 * Runs the CLI as `kopf.main()` does in a handlers file: arguments that start
 * with an option (or none at all) are `run`'s flags.
 *
 * @param args The arguments (without the program name).
 * @param controls What an embedding caller controls (registry, settings, signal, output).
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import { main } from "../../mod.ts";
 * const code = await main(["--version"]);
 * console.log(code); // 0
 * ```
 */
export async function main(
  args: string[] = Deno.args,
  controls: RunControls = {},
): Promise<number> {
  // `kopf.main()` in a handlers file: its arguments are run's flags.
  if (
    !args.length ||
    args[0]!.startsWith("-") && !["-V", "--version", "-h", "--help"].includes(args[0]!)
  ) {
    args = ["run", ...args];
  }
  return await cli(args, controls);
}

/** A usage mistake found after parsing (e.g. `-A` with `-n`): one line, exit code 2. */
class UsageError extends Error {
  override name = "UsageError";
}

/**
 * Runs the `kopf` command line (`cli.ts`): without a command, it prints the
 * help to stderr and exits with 1, as commander does for a missing command.
 *
 * @param args The arguments (without the program name).
 * @param controls What an embedding caller controls (registry, settings, signal, output).
 * @returns The exit code: 0, 1 for a failure or no command, 2 for bad usage.
 *
 * @example
 * ```ts
 * import { cli } from "./main.ts";
 * const code = await cli(["--version"]);
 * console.log(code); // 0
 * ```
 */
export async function cli(args: string[], controls: RunControls = {}): Promise<number> {
  let code = 0;
  let failure: string | undefined;
  const program = new Command("kopf")
    .description("Kopf for Deno: Kubernetes operators in a few lines of TypeScript")
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeErr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)),
      outputError: (s) => (failure = s),
    });

  program.command("apiserver")
    .description("run the embedded Kubernetes API server (no cluster needed)")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on; 0 picks a free one", parsePort, 0)
    .option(
      "--kubeconfig <path>",
      "where to write a kubeconfig for this server " +
        "(default: kopf-apiserver.kubeconfig in the current directory)",
    )
    .option("--data-dir <dir>", "keep the state in this directory across restarts")
    .option("--token <token>", "require this bearer token")
    .option("--tls", "serve HTTPS with a generated CA and client-certificate auth")
    .addOption(
      new Option(
        "--authorization <mode>",
        "rbac: every request names its user (401 otherwise) and RBAC objects decide (403)",
      ).choices(["rbac"]),
    )
    .option(
      "--token-auth-file <file>",
      'with --authorization rbac: users by bearer token, CSV lines token,user,uid,"group1,group2"',
    )
    .option("--verbose", "log one line per request")
    .option("--faults <json>", "fault switches at start, as JSON (see README)")
    .option(
      "--webhook-client-cert <file>",
      "present this client certificate (PEM) to admission and conversion webhooks",
    )
    .option("--webhook-client-key <file>", "the private key (PEM) of --webhook-client-cert")
    .action(async (opts) => {
      const { runApiServer } = await import("./apiserver.ts");
      code = await runApiServer({ ...opts, tls: !!opts.tls, verbose: !!opts.verbose });
    });

  program.command("run")
    .description("run an operator with the handlers of the given files or modules")
    .argument("[paths...]", "TypeScript/JavaScript files with handlers")
    .option("-m, --module <module>", "import a module with handlers (repeatable)", collect)
    .option(
      "-n, --namespace <pattern>",
      "serve this namespace; globs and !negations allowed (repeatable)",
      collectPattern,
    )
    .option("-A, --all-namespaces", "serve all namespaces (cluster-wide)")
    .option("--standalone", "run without peering, ignoring other operators")
    .option(
      "-P, --peering <name>",
      "the peering object to use (mandatory: pause until it exists); default: 'default' if found",
    )
    .option("-p, --priority <n>", "the peering priority (default 0)", parseInteger)
    .option("--dev", "development mode: the peering priority 666 (the other operators pause)")
    .option(
      "--leader-election [name]",
      "one replica handles, holding a Lease (=NAME; default kopf-leader-<peering name>); " +
        "the others stand by",
    )
    .option("--leader-election-namespace <ns>", "the namespace of the leader-election Lease")
    .option(
      "--shards [group]",
      "split the objects among the live replicas of a shard group (=GROUP; default 'kopf'), " +
        "each a member by a Lease of its own",
      parseGroup,
    )
    .option("--shards-namespace <ns>", "the namespace of the shard group's member Leases")
    .option(
      "-L, --liveness <url>",
      "serve liveness probes at this URL, e.g. http://0.0.0.0:8080/healthz",
    )
    .option("-v, --verbose", "log debug messages too")
    .option("-d, --debug", "log debug messages and the API traffic (method, path, code, duration)")
    .option("-q, --quiet", "log warnings and errors only")
    .addOption(
      new Option("--log-format <format>", "log line format").choices(["plain", "full", "json"])
        .default("full"),
    )
    .option("--log-prefix", "prefix per-object lines with [ns/name] (default: on, except json)")
    .option("--no-log-prefix", "do not prefix per-object lines")
    .option("--log-refkey <key>", "the key of the object reference in JSON lines", "object")
    .action(async (paths: string[], opts) => {
      if (opts.allNamespaces && opts.namespace?.length) {
        throw new UsageError(
          "The operator can be either cluster-wide or namespaced, not both: " +
            "use -A/--all-namespaces or -n/--namespace",
        );
      }
      let leaderElection: boolean | string | undefined = opts.leaderElection;
      if (typeof leaderElection === "string" && /[/\\]|\.[cm]?[jt]sx?$/.test(leaderElection)) {
        paths.unshift(leaderElection); // `--leader-election handlers.ts`: a file, not a name
        leaderElection = true;
      }
      let shards: boolean | string | undefined = opts.shards;
      if (typeof shards === "string" && isFileLike(shards)) {
        paths.unshift(shards); // `--shards handlers.ts`: a file, not a group
        shards = true;
      }
      if (shards && leaderElection) {
        throw new UsageError(
          "Sharding and leader election exclude each other (all replicas active vs. one): " +
            "use --shards or --leader-election, not both",
        );
      }
      const stop = new AbortController();
      const signal = controls.signal
        ? AbortSignal.any([stop.signal, controls.signal])
        : stop.signal;
      const onSignal = () => {
        if (stop.signal.aborted) Deno.exit(130);
        stop.abort();
      };
      const signals: Deno.Signal[] = controls.signal ? [] : ["SIGINT", "SIGTERM"];
      for (const s of signals) Deno.addSignalListener(s, onSignal);
      try {
        code = await runOperator({
          paths,
          modules: opts.module ?? [],
          namespaces: opts.namespace ?? [],
          allNamespaces: !!opts.allNamespaces,
          standalone: !!opts.standalone,
          peering: opts.peering ?? envValue("KOPF_RUN_PEERING"),
          priority: opts.priority,
          dev: !!opts.dev,
          leaderElection,
          leaderElectionNamespace: opts.leaderElectionNamespace,
          shards,
          shardsNamespace: opts.shardsNamespace,
          liveness: opts.liveness,
          verbose: !!opts.verbose,
          debug: !!opts.debug,
          quiet: !!opts.quiet,
          logFormat: opts.logFormat,
          logPrefix: opts.logPrefix,
          logRefkey: opts.logRefkey,
        }, { ...controls, signal });
      } finally {
        for (const s of signals) Deno.removeSignalListener(s, onSignal);
      }
    });

  for (const command of ["freeze", "resume"] as const) {
    const c = program.command(command)
      .description(
        command === "freeze"
          ? "pause the operators of a peering: a peer entry with a priority and a lifetime"
          : "resume the operators of a peering: remove the entry written by 'kopf freeze'",
      )
      .option("-n, --namespace <pattern>", "the KopfPeering in these namespaces", collectPattern)
      .option("-A, --all-namespaces", "the ClusterKopfPeering (the default without -n)")
      .option("-i, --id <id>", "the peer's identity (default: user@host, or $POD_ID)")
      .option("-P, --peering <name>", "the peering object's name", "default");
    if (command === "freeze") {
      c.requiredOption(
        "-t, --lifetime <seconds>",
        "how long the freeze lasts unless resumed",
        parsePositive,
      )
        .option("-p, --priority <n>", "the priority of the freeze", parseInteger, 100)
        .option("--dev", "the priority 666")
        .option("-m, --message <text>", "why (stored with the entry)");
    }
    c.option("-v, --verbose", "log debug messages too")
      .option("-d, --debug", "log debug messages too")
      .option("-q, --quiet", "log warnings and errors only")
      .addOption(
        new Option("--log-format <format>", "log line format").choices(["plain", "full", "json"])
          .default("full"),
      )
      .action(async (opts) => {
        if (opts.allNamespaces && opts.namespace?.length) {
          throw new UsageError(
            "The peering can be either cluster-wide or namespaced, not both: " +
              "use -A/--all-namespaces or -n/--namespace",
          );
        }
        const env = command === "freeze" ? "KOPF_FREEZE_PEERING" : "KOPF_RESUME_PEERING";
        const { peeringCommand } = await import("./peering.ts");
        code = await peeringCommand(command, {
          id: opts.id,
          peering: opts.peering !== "default" ? opts.peering : envValue(env) ?? opts.peering,
          namespaces: opts.namespace ?? [],
          allNamespaces: !!opts.allNamespaces,
          priority: opts.priority,
          dev: !!opts.dev,
          lifetime: opts.lifetime,
          message: opts.message,
          verbose: !!opts.verbose,
          debug: !!opts.debug,
          quiet: !!opts.quiet,
          logFormat: opts.logFormat,
        }, { kubeconfig: controls.kubeconfig, write: controls.write });
      });
  }

  program.command("crd")
    .description("print the CRDs of the typed resources (kopf.resource) of the given files")
    .argument("[paths...]", "TypeScript/JavaScript files with handlers")
    .option("-m, --module <module>", "import a module with handlers (repeatable)", collect)
    .action(async (paths: string[], opts) => {
      const { runCrd } = await import("./crd.ts");
      code = await runCrd(paths, opts.module ?? []);
    });

  for (const command of ["rbac", "manifests"] as const) {
    const c = program.command(command).description(
      command === "rbac"
        ? "print the Roles, ClusterRoles and bindings that the handlers of the given files need"
        : "print a deployable set: service account, RBAC, CRDs and a Deployment of the operator",
    );
    operatorOptions(c);
    if (command === "manifests") manifestsOptions(c);
    c.action(async (paths: string[], opts) => {
      try {
        const flags = operatorFlags(paths, opts);
        if (command === "rbac") code = await (await import("./rbac.ts")).runRbac(flags);
        else code = await (await import("./manifests.ts")).runManifests(flags, opts);
      } catch (e) {
        if (!(e instanceof FlagsError)) throw e;
        throw new UsageError(e.message);
      }
    });
  }

  try {
    await program.parseAsync(args, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return 0;
      if (e.code === "commander.help") return e.exitCode; // no command: the help, on stderr
      const command = program.commands.find((c) => c.name() === args[0]);
      console.error(
        `kopf: ${usageLine(failure ?? e.message, command ? `kopf ${command.name()}` : "kopf")}`,
      );
      return 2;
    }
    if (e instanceof UsageError) {
      console.error(`kopf: ${e.message}`);
      return 2;
    }
    if (controls.throwErrors) throw e;
    console.error(`kopf: ${describe(e)}`);
    return 1;
  }
  return code;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function collectPattern(value: string, previous: string[] | undefined): string[] {
  const problem = patternProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return collect(value, previous);
}

/** `-n, --namespace <pattern>` → `-n/--namespace`. */
function flagOf(flags: string): string {
  return flags.replace(/\s*[<[].*[>\]]$/, "").replace(/,\s*/, "/");
}

/**
 * Commander's error as one line: `option '--port <port>' argument 'abc' is invalid. use…`
 * becomes `--port 'abc' is invalid: use…`; unknown options and commands point at the help.
 */
function usageLine(message: string, command: string): string {
  const text = message.trim().replace(/^error: /, "").replace(
    /\n\(Did you mean (.*)\?\)$/,
    " (did you mean $1?)",
  );
  const invalid = /^option '(.+?)' argument '(.*)' is invalid\. (.*)$/s.exec(text);
  if (invalid) {
    const [, flags, value, why] = invalid as unknown as [string, string, string, string];
    return `${flagOf(flags)} '${value}' is invalid: ${why.charAt(0).toLowerCase()}${why.slice(1)}`;
  }
  const missing = /^option '(.+?)' argument missing$/.exec(text);
  if (missing) {
    return `${flagOf(missing[1]!)} needs a value: see '${command} --help'`;
  }
  if (/^(unknown|too many|missing)/.test(text)) {
    return `${text.replace(/\.$/, "")}: see '${command} --help'`;
  }
  return text.split("\n").join(" ");
}

function parseInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError("use a whole number.");
  return n;
}

/** `--shards GROUP`: a valid group, or a handlers file given right after the flag. */
function parseGroup(value: string): string {
  const problem = isFileLike(value) ? undefined : groupProblem(value);
  if (problem) throw new InvalidArgumentError(`${problem}.`);
  return value;
}

function isFileLike(value: string): boolean {
  return /[/\\]|\.[cm]?[jt]sx?$/.test(value);
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError("use a whole number of seconds.");
  }
  return n;
}

/** An environment variable, if it may be read without a prompt. */
function envValue(name: string): string | undefined {
  const allowed = Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
  return allowed ? Deno.env.get(name) || undefined : undefined;
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new InvalidArgumentError("use a port number from 0 to 65535 (0 picks a free port).");
  }
  return n;
}

/**
 * Describes an error in one line, with what to do for the common ones.
 *
 * @param e The error.
 * @returns One line.
 */
export function describe(e: unknown): string {
  // Only a bare permission error: wrapping errors say what needed it (and the flag) themselves.
  const denied = permissionError(e);
  if (denied && denied === e) {
    // Listening on port 0 needs the host only: the port is not known before.
    return `missing Deno permission: ${permissionHint(denied).replace(/:0(")?(?=:|$)/g, "$1")}`;
  }
  if (e instanceof Deno.errors.AddrInUse) {
    return `the address is already in use: pick another --port, or 0 for a free one`;
  }
  if (e instanceof Error) return e.message.split("\n")[0]!;
  return String(e);
}
