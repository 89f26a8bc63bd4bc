/**
 * The command-line entry: parses arguments with commander, runs the command,
 * and turns user mistakes (bad flags, a busy port, a missing permission) into
 * one line on stderr and a non-zero exit code, never a stack trace.
 *
 * @module
 */

import { Command, CommanderError, InvalidArgumentError } from "commander";
import { VERSION } from "../cogs/configs/version.ts";
import { runApiServer } from "./apiserver.ts";

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
export async function main(args: string[]): Promise<number> {
  let code = 0;
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
      code = await runApiServer(opts);
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
    console.error(`kopf: ${describe(e)}`);
    return 1;
  }
  return code;
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
