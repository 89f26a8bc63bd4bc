/**
 * The command-line entry: parses the arguments (`_parser.ts`), runs the command, and turns user
 * mistakes (bad flags, a busy port, a missing permission) into one line on stderr and a non-zero
 * exit code, never a stack trace.
 *
 * @module
 */

import { VERSION } from "../cogs/configs/version.ts";
import { permissionError, permissionHint } from "../cogs/clients/_permissions.ts";
import {
  type ApiServerValues,
  type BundleValues,
  type CrdValues,
  type FreezeValues,
  type ManifestsValues,
  PROGRAM,
  type RbacValues,
  type ResumeValues,
  type RunValues,
} from "./_commands.ts";
import { helpText } from "./_help.ts";
import { FlagsError } from "./_flags_error.ts";
import { type OptionValues, parseCommandLine, ParseError } from "./_parser.ts";
import type { ApiServerFlags } from "./apiserver.ts";
import type { ManifestsFlags } from "./manifests.ts";
import { type RunControls, runOperator } from "./run.ts";
import { onProcessSignal } from "../core/reactor/running.ts";

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
 * import assert from "node:assert/strict";
 * import { VERSION } from "@kopf/kopf";
 * import { main } from "@kopf/kopf";
 * // What it prints, caught (it writes to stdout): the version, and the exit code is 0.
 * const printed: string[] = [];
 * const write = Deno.stdout.writeSync;
 * Deno.stdout.writeSync = (bytes) => (printed.push(new TextDecoder().decode(bytes)), bytes.length);
 * try {
 *   assert.equal(await main(["--version"]), 0);
 * } finally {
 *   Deno.stdout.writeSync = write;
 * }
 * assert.deepEqual(printed, [`${VERSION}\n`]);
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
 * Runs the `kopf` command line (`cli.ts`, and the package `@kopf/cli`): without a
 * command, it prints the help to stderr and exits with 1. Unlike `kopf.main()`, the
 * first argument is the command (`run`, `apiserver`, …), as on a shell.
 *
 * @param args The arguments (without the program name).
 * @param controls What an embedding caller controls (registry, settings, signal, output).
 * @returns The exit code: 0, 1 for a failure or no command, 2 for bad usage.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VERSION } from "@kopf/kopf";
 * import { cli } from "@kopf/kopf/cli";
 * // What it prints, caught (it writes to stdout): the version, and the exit code is 0.
 * const printed: string[] = [];
 * const write = Deno.stdout.writeSync;
 * Deno.stdout.writeSync = (bytes) => (printed.push(new TextDecoder().decode(bytes)), bytes.length);
 * try {
 *   assert.equal(await cli(["--version"]), 0);
 * } finally {
 *   Deno.stdout.writeSync = write;
 * }
 * assert.deepEqual(printed, [`${VERSION}\n`]);
 * ```
 */
export async function cli(args: string[], controls: RunControls = {}): Promise<number> {
  const writeError = controls.writeError ?? ((line: string) => console.error(line));
  let parsed;
  try {
    parsed = parseCommandLine(PROGRAM, args);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    const command = PROGRAM.commands.find((c) => c.name === args[0]);
    const see = e.seeHelp ? `: see '${command ? `kopf ${command.name}` : "kopf"} --help'` : "";
    writeError(`kopf: ${e.message}${see}`);
    return 2;
  }
  if (parsed.kind === "version") {
    writeAll(Deno.stdout, `${VERSION}\n`);
    return 0;
  }
  if (parsed.kind === "help") {
    const stream = parsed.error ? Deno.stderr : Deno.stdout;
    writeAll(stream, helpText(PROGRAM, parsed.command, helpWidth(stream)));
    return parsed.error ? 1 : 0;
  }
  try {
    return await execute(parsed.command.name, [...parsed.paths], parsed.options, controls);
  } catch (e) {
    if (e instanceof UsageError || e instanceof FlagsError) {
      writeError(`kopf: ${e.message}`);
      return 2;
    }
    if (controls.throwErrors) throw e;
    writeError(`kopf: ${describe(e)}`);
    return 1;
  }
}

/** Runs a parsed command. */
async function execute(
  command: string,
  paths: string[],
  values: OptionValues,
  controls: RunControls,
): Promise<number> {
  if (controls.bundled && ["crd", "rbac", "manifests"].includes(command)) {
    throw new UsageError(
      `this program is a bundle for kopf run: run kopf ${command} with the handler files ` +
        `themselves (e.g. deno run -A cli.ts ${command} handlers.ts)`,
    );
  }
  switch (command) {
    case "apiserver": {
      const { runApiServer } = await import("./apiserver.ts");
      const flags: ApiServerFlags = values as ApiServerValues;
      return await runApiServer(flags);
    }
    case "run":
      return await run(paths, values as RunValues, controls);
    case "freeze":
    case "resume": {
      // The values of the command that was parsed: its options' (`_commands.ts`); resume's are
      // a part of freeze's.
      const opts = values as ResumeValues & Partial<FreezeValues>;
      if (opts.allNamespaces && opts.namespace?.length) {
        throw new UsageError(
          "The peering can be either cluster-wide or namespaced, not both: " +
            "use -A/--all-namespaces or -n/--namespace",
        );
      }
      const env = command === "freeze" ? "KOPF_FREEZE_PEERING" : "KOPF_RESUME_PEERING";
      const { peeringCommand } = await import("./peering.ts");
      const { namespace, peering, ...rest } = opts;
      return await peeringCommand(command, {
        ...rest,
        peering: peering !== "default" ? peering : envValue(env) ?? peering,
        namespaces: namespace ?? [],
        ...loggingFlags(opts),
      }, { kubeconfig: controls.kubeconfig, write: controls.write });
    }
    case "crd": {
      const { runCrd } = await import("./crd.ts");
      return await runCrd(paths, (values as CrdValues).module ?? []);
    }
    case "rbac": {
      const { operatorFlags } = await import("./_operator_flags.ts");
      return await (await import("./rbac.ts")).runRbac(operatorFlags(paths, values as RbacValues));
    }
    case "bundle": {
      if (!paths.length) {
        throw new UsageError("no handlers file to bundle: give one, e.g. kopf bundle handlers.ts");
      }
      const { runBundle } = await import("./bundle.ts");
      return await runBundle(paths, (values as BundleValues).outdir);
    }
    case "manifests": {
      const { operatorFlags } = await import("./_operator_flags.ts");
      const flags = operatorFlags(paths, values as ManifestsValues);
      const manifest: ManifestsFlags = values as ManifestsValues;
      return await (await import("./manifests.ts")).runManifests(flags, manifest);
    }
  }
  throw new Error(`no action for the command '${command}'`);
}

/**
 * The logging flags that `run`, `freeze` and `resume` share, as their commands take them.
 *
 * @throws {UsageError} For `-q` with `-v` or `-d`: fewer lines and more lines at once.
 */
function loggingFlags(opts: RunValues | ResumeValues) {
  if (opts.quiet && (opts.verbose || opts.debug)) {
    const loud = opts.verbose ? "-v/--verbose" : "-d/--debug";
    throw new UsageError(
      `-q/--quiet and ${loud} contradict each other (warnings only vs. debug messages too): ` +
        "give one of them",
    );
  }
  return {
    verbose: !!opts.verbose,
    debug: !!opts.debug,
    quiet: !!opts.quiet,
    logFormat: opts.logFormat,
  };
}

/** `kopf run`: the flags checked together, then the operator until SIGINT/SIGTERM. */
async function run(paths: string[], opts: RunValues, controls: RunControls): Promise<number> {
  if (opts.allNamespaces && opts.namespace?.length) {
    throw new UsageError(
      "The operator can be either cluster-wide or namespaced, not both: " +
        "use -A/--all-namespaces or -n/--namespace",
    );
  }
  // `--shards handlers.ts`: the parser leaves a path after an optional value where it stands.
  if (opts.shards && opts.leaderElection) {
    throw new UsageError(
      "Sharding and leader election exclude each other (all replicas active vs. one): " +
        "use --shards or --leader-election, not both",
    );
  }
  const stop = new AbortController();
  const signal = controls.signal ? AbortSignal.any([stop.signal, controls.signal]) : stop.signal;
  const signals: Deno.Signal[] = controls.signal ? [] : ["SIGINT", "SIGTERM"];
  const listeners = signals.map((s) => [s, onProcessSignal(stop, s)] as const);
  for (const [s, fn] of listeners) Deno.addSignalListener(s, fn);
  try {
    // The options' values as they are (`_commands.ts`), -m and -n under their plural names.
    const { module, namespace, peering, ...rest } = opts;
    return await runOperator({
      ...rest,
      paths,
      modules: module ?? [],
      namespaces: namespace ?? [],
      peering: peering ?? envValue("KOPF_RUN_PEERING"),
      ...loggingFlags(opts),
    }, { ...controls, signal });
  } finally {
    for (const [s, fn] of listeners) Deno.removeSignalListener(s, fn);
  }
}

/** An environment variable, if it may be read without a prompt. */
function envValue(name: string): string | undefined {
  const allowed = Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
  return allowed ? Deno.env.get(name) || undefined : undefined;
}

/** The columns of the help: the terminal's, or 80 when the output is not a terminal. */
function helpWidth(stream: { isTerminal(): boolean }): number {
  if (!stream.isTerminal()) return 80;
  try {
    return Deno.consoleSize().columns || 80;
  } catch {
    return 80;
  }
}

function writeAll(stream: { writeSync(p: Uint8Array): number }, text: string): void {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length) bytes = bytes.subarray(stream.writeSync(bytes));
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
    // The listeners name their address and what to change; this is for any other one.
    const message = e.message.split("\n")[0]!;
    return /already in use: /.test(message)
      ? message
      : `an address is already in use (${message}): stop what listens there, or give another port`;
  }
  if (e instanceof Error) return e.message.split("\n")[0]!;
  return String(e);
}
