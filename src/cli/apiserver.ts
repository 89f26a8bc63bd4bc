/**
 * `kopf apiserver`: runs the embedded Kubernetes API server until SIGINT or
 * SIGTERM, after printing its URL and the line that points kubectl at it.
 *
 * @module
 */

import { startApiServer, type StartApiServerOptions } from "../apiserver/start.ts";
import { validateFaults } from "../apiserver/faults.ts";

/** The parsed flags of `kopf apiserver`. */
export interface ApiServerFlags {
  host: string;
  port: number;
  kubeconfig?: string;
  dataDir?: string;
  token?: string;
  tls: boolean;
  verbose: boolean;
  faults?: string;
}

/**
 * Runs the server until a signal, printing readiness lines to stdout.
 *
 * @param flags The command's flags.
 * @returns The exit code (0 after a clean stop).
 * @throws {Error} For bad flags (a one-line message), a busy port, or a missing permission.
 *
 * @example
 * ```ts ignore
 * import { runApiServer } from "./apiserver.ts";
 * await runApiServer({ host: "127.0.0.1", port: 0, tls: false, verbose: false });
 * ```
 */
export async function runApiServer(flags: ApiServerFlags): Promise<number> {
  const options: StartApiServerOptions = {
    host: flags.host,
    port: flags.port,
    tls: flags.tls,
    verbose: flags.verbose,
  };
  if (flags.kubeconfig) options.kubeconfigPath = flags.kubeconfig;
  else options.kubeconfigPath = `${Deno.cwd()}/kopf-apiserver.kubeconfig`;
  if (flags.dataDir) options.dataDir = flags.dataDir;
  if (flags.token) options.token = flags.token;
  if (flags.faults) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags.faults);
    } catch {
      throw new Error(`--faults must be a JSON object, e.g. '{"rate503":0.1}'`);
    }
    options.faults = validateFaults(parsed as Record<string, unknown>);
  }
  const stop = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  let forced = false;
  const onSignal = () => {
    if (stop.signal.aborted) {
      forced = true;
      Deno.exit(130);
    }
    stop.abort();
  };
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  const api = await startApiServer({ ...options, signal: stop.signal });
  console.log(`Kubernetes API server (embedded) listening at ${api.url}`);
  console.log(`export KUBECONFIG=${api.kubeconfig.path}`);
  await new Promise<void>((resolve) =>
    stop.signal.addEventListener("abort", () => resolve(), { once: true })
  );
  await api.stop();
  for (const s of signals) Deno.removeSignalListener(s, onSignal);
  if (!forced) console.log("Stopped.");
  return 0;
}
