/**
 * The command-line entry: parses arguments with commander, runs the command,
 * and turns user mistakes (bad flags, a busy port, a missing permission) into
 * one line on stderr and a non-zero exit code, never a stack trace.
 *
 * @module
 */

import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { VERSION } from "../cogs/configs/version.ts";
import { type RunControls, runOperator } from "./run.ts";

/**
 * Runs the CLI.
 *
 * @param args The arguments (without the program name).
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import { main } from "./main.ts";
 * const code = await main(["--version"]);
 * console.log(code); // 0
 * ```
 */
export async function main(
  args: string[] = Deno.args,
  controls: RunControls = {},
): Promise<number> {
  let code = 0;
  // `kopf.main()` in a handlers file: its arguments are run's flags.
  if (
    !args.length ||
    args[0]!.startsWith("-") && !["-V", "--version", "-h", "--help"].includes(args[0]!)
  ) {
    args = ["run", ...args];
  }
  const program = new Command("kopf")
    .description("Kopf for Deno: Kubernetes operators in a few lines of TypeScript")
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeErr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)) });

  program.command("apiserver")
    .description("run the embedded Kubernetes API server (no cluster needed)")
    .option("--host <host>", "address to listen on (loopback by default)", "127.0.0.1")
    .option("--port <port>", "port to listen on; 0 picks a free one", parsePort, 0)
    .option("--kubeconfig <path>", "where to write a kubeconfig for this server")
    .option("--data-dir <dir>", "keep the state in this directory across restarts")
    .option("--token <token>", "require this bearer token")
    .option("--tls", "serve HTTPS with a generated CA and client-certificate auth", false)
    .option("--verbose", "log one line per request", false)
    .option("--faults <json>", "fault switches at start, as JSON (see README)")
    .action(async (opts) => {
      const { runApiServer } = await import("./apiserver.ts");
      code = await runApiServer(opts);
    });

  program.command("run")
    .description("run an operator with the handlers of the given files or modules")
    .argument("[paths...]", "TypeScript/JavaScript files with handlers")
    .option("-m, --module <module>", "import a module with handlers (repeatable)", collect, [])
    .option(
      "-n, --namespace <pattern>",
      "serve this namespace; globs and !negations allowed (repeatable)",
      collect,
      [],
    )
    .option("-A, --all-namespaces", "serve all namespaces (cluster-wide)", false)
    .option("--standalone", "run without peering, ignoring other operators", false)
    .option("--peering <name>", "the peering object's name")
    .option("--priority <n>", "the peering priority", parseInteger)
    .option("--dev", "development mode: standalone with priority 666", false)
    .option(
      "-L, --liveness <url>",
      "serve liveness probes at this URL, e.g. http://0.0.0.0:8080/healthz",
    )
    .option("-v, --verbose", "log debug messages too", false)
    .option("-d, --debug", "log debug messages too (same as --verbose)", false)
    .option("-q, --quiet", "log warnings and errors only", false)
    .addOption(
      new Option("--log-format <format>", "log line format").choices(["plain", "full", "json"])
        .default("full"),
    )
    .option("--log-prefix", "prefix per-object lines with [ns/name] (default: on, except json)")
    .option("--no-log-prefix", "do not prefix per-object lines")
    .option("--log-refkey <key>", "the key of the object reference in JSON lines", "object")
    .action(async (paths: string[], opts) => {
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
          modules: opts.module,
          namespaces: opts.namespace,
          allNamespaces: opts.allNamespaces,
          standalone: opts.standalone,
          peering: opts.peering,
          priority: opts.priority,
          dev: opts.dev,
          liveness: opts.liveness,
          verbose: opts.verbose,
          debug: opts.debug,
          quiet: opts.quiet,
          logFormat: opts.logFormat,
          logPrefix: opts.logPrefix,
          logRefkey: opts.logRefkey,
        }, { ...controls, signal });
      } finally {
        for (const s of signals) Deno.removeSignalListener(s, onSignal);
      }
    });

  try {
    await program.parseAsync(args, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.exitCode === 0 || e.code === "commander.helpDisplayed" ||
          e.code === "commander.version"
        ? 0
        : 2;
    }
    if (controls.throwErrors) throw e;
    console.error(`kopf: ${describe(e)}`);
    return 1;
  }
  return code;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError("use a whole number.");
  return n;
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
  if (e instanceof Deno.errors.NotCapable || (e instanceof Error && e.name === "NotCapable")) {
    const m = /Requires (\w+) access/.exec((e as Error).message);
    return `missing Deno permission${m ? ` for ${m[1]}` : ""}: run with --allow-${
      m?.[1] ?? "all"
    } (or -A). ${(e as Error).message.split("\n")[0]}`;
  }
  if (e instanceof Deno.errors.AddrInUse) {
    return `the address is already in use: pick another --port, or 0 for a free one`;
  }
  if (e instanceof Error) return e.message.split("\n")[0]!;
  return String(e);
}
