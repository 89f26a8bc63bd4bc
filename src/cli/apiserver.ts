/**
 * `kopf apiserver`: runs the embedded Kubernetes API server until SIGINT or
 * SIGTERM, after printing its URL and the line that points kubectl at it.
 *
 * @module
 */

import {
  KubeconfigWriteError,
  startApiServer,
  type StartApiServerOptions,
} from "../apiserver/serving/start.ts";
import { validateFaults } from "../apiserver/shared/faults.ts";
import { parseTokenAuthFile } from "../apiserver/auth/authentication.ts";
import { permissionError, permissionHint } from "../cogs/clients/_permissions.ts";
import type { ApiServerValues } from "./_commands.ts";

/**
 * The flags of `kopf apiserver`: the values of its options, derived from their specs
 * (`_commands.ts`), each optional for a caller in code (one with a default gets the server's own)
 * but the address to listen on, which the messages name.
 */
export type ApiServerFlags =
  & Partial<Omit<ApiServerValues, "host" | "port">>
  & Pick<ApiServerValues, "host" | "port">;

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
  if (flags.dataDir) options.dataDir = await checkDataDir(flags.dataDir);
  if (flags.dataDirFsync) {
    if (!["group", "write", "off"].includes(flags.dataDirFsync)) {
      throw new Error(`--data-dir-fsync ${flags.dataDirFsync}: use group, write or off`);
    }
    options.dataDirFsync = flags.dataDirFsync as "group" | "write" | "off";
  }
  if (flags.token) options.token = flags.token;
  if (flags.authorization) {
    if (flags.authorization !== "rbac") {
      throw new Error(`--authorization ${flags.authorization}: the only mode is rbac`);
    }
    options.authorization = "rbac";
  }
  if (flags.tokenAuthFile) {
    if (!options.authorization) {
      throw new Error(
        "--token-auth-file needs --authorization rbac (without it, anyone may do anything)",
      );
    }
    let text: string;
    try {
      text = await Deno.readTextFile(flags.tokenAuthFile);
    } catch (e) {
      throw new Error(
        `--token-auth-file: cannot read ${flags.tokenAuthFile}: ${(e as Error).message}`,
      );
    }
    try {
      options.staticTokens = parseTokenAuthFile(text);
    } catch (e) {
      throw new Error(`--token-auth-file ${flags.tokenAuthFile}: ${(e as Error).message}`);
    }
  }
  if (flags.faults) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags.faults);
    } catch {
      throw new Error(`--faults must be a JSON object, e.g. '{"rate503":0.1}'`);
    }
    options.faults = validateFaults(parsed as Record<string, unknown>);
  }
  if (flags.webhookClientCert || flags.webhookClientKey) {
    if (!flags.webhookClientCert || !flags.webhookClientKey) {
      throw new Error("--webhook-client-cert and --webhook-client-key go together: give both");
    }
    options.webhookClientCert = {
      cert: await readPem("--webhook-client-cert", flags.webhookClientCert),
      key: await readPem("--webhook-client-key", flags.webhookClientKey),
    };
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
  let api;
  try {
    api = await startApiServer({ ...options, signal: stop.signal });
  } catch (error) {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
    // The data directory's own complaints (a broken snapshot) name the flag too.
    const message = error instanceof Error ? error.message : "";
    if (flags.dataDir && message.startsWith(flags.dataDir)) {
      throw new Error(`--data-dir ${message}`, { cause: error });
    }
    if (error instanceof KubeconfigWriteError) throw kubeconfigProblem(error, !!flags.kubeconfig);
    if (error instanceof Deno.errors.AddrInUse) {
      const where = flags.host.includes(":")
        ? `[${flags.host}]:${flags.port}`
        : `${flags.host}:${flags.port}`;
      throw new Error(
        `${where} is already in use: give kopf apiserver another --port (--port 0 picks a free one), ` +
          "or stop what listens there",
        { cause: error },
      );
    }
    throw error;
  }
  console.log(`Kubernetes API server (embedded) listening at ${api.url}`);
  console.log(`export KUBECONFIG=${api.kubeconfig.path}`);
  if (options.authorization) {
    // kubectl (client-go) sends bearer tokens only over TLS: without --tls it cannot log in.
    console.log(
      flags.tls
        ? "Authorization: rbac (that kubeconfig's client certificate is the administrator's, " +
          "in system:masters; give others a token: kubectl create token <serviceaccount>)"
        : "Authorization: rbac (that kubeconfig's token is the administrator's, " +
          "in system:masters; kubectl sends tokens only over HTTPS: add --tls to use kubectl)",
    );
  }
  await new Promise<void>((resolve) =>
    stop.signal.addEventListener("abort", () => resolve(), { once: true })
  );
  await api.stop();
  for (const s of signals) Deno.removeSignalListener(s, onSignal);
  if (!forced) console.log("Stopped.");
  return 0;
}

/**
 * Makes sure `--data-dir` is a directory the server can use (creating it if missing), so that a
 * mistake is one line naming the flag rather than the file system's words about `mkdir`.
 */
async function checkDataDir(dir: string): Promise<string> {
  const fail = (error: unknown) => {
    const denied = permissionError(error);
    const why = denied
      ? permissionHint(denied)
      : `cannot be used (${
        (error as Error).message.split("\n")[0]!.replace(/:\s*(stat|mkdir) '.*'$/, "")
      }): give a directory that exists or can be created`;
    return new Error(`--data-dir ${dir} ${why}`, { cause: error });
  };
  let info: Deno.FileInfo | undefined;
  try {
    info = await Deno.stat(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw fail(error);
  }
  if (info && !info.isDirectory) {
    throw new Error(
      `--data-dir ${dir} is a file, not a directory: give a directory (it is created if missing)`,
    );
  }
  if (!info) {
    try {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw fail(error);
    }
  }
  return dir;
}

/**
 * The kubeconfig could not be written: one line naming `--kubeconfig` and the path, and the fix
 * (a missing permission: the flag to run with).
 */
function kubeconfigProblem(error: KubeconfigWriteError, given: boolean): Error {
  const denied = permissionError(error.cause);
  const which = given ? `--kubeconfig ${error.path}` : `The kubeconfig ${error.path} (the default)`;
  const why = denied
    ? permissionHint(denied)
    : `cannot be written (${
      (error.cause as Error).message.split("\n")[0]!.replace(/:\s*\w+ '.*'$/, "")
    }): give --kubeconfig a path in a directory that exists, e.g. --kubeconfig ./kopf.kubeconfig`;
  return new Error(`${which} ${why}`, { cause: error });
}

async function readPem(flag: string, path: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new Error(`${flag}: cannot read ${path}: ${(e as Error).message}`);
  }
  if (!text.includes("-----BEGIN ")) throw new Error(`${flag}: ${path} is not a PEM file`);
  return text;
}
