/**
 * Logging in from a kubeconfig ({@link loginWithKubeconfig}): which files (a path, `KUBECONFIG`'s
 * list, `~/.kube/config`, or the default of {@link withDefaultKubeconfig}), read and merged as
 * kubectl merges them, and the credentials of a context — tokens, token files, basic auth,
 * client certificates, CAs, exec credential plugins (run anew at every login).
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { ConnectionInfo, LoginError } from "../structs/credentials.ts";
import { viaClientLibrary } from "./client_library.ts";
import { runExecPlugin } from "./exec_plugin.ts";
import { oneLine, parseKubeconfigs, selectContext } from "./kubeconfig.ts";
import { joinPath } from "./_paths.ts";
import {
  type EnvReader,
  inClusterIntended,
  processEnv,
  readRequired,
} from "./login_service_account.ts";
import { pemText } from "./transport.ts";
import { permissionError, permissionHint } from "./_permissions.ts";

/** Kopf's priority of credentials from a kubeconfig. */
export const PRIORITY_OF_KUBECONFIG = 10;

/** Options of {@link loginWithKubeconfig}. */
export interface KubeconfigLoginOptions {
  /** The kubeconfig file(s); default `KUBECONFIG`'s list, else `~/.kube/config`. */
  path?: string | string[] | undefined;
  /** The context to use; default the kubeconfig's `current-context`. */
  context?: string | undefined;
  /** The priority of the credentials (default 10). */
  priority?: number | undefined;
  /**
   * Reads an environment variable (`KUBECONFIG`, `HOME`) when no path is given (default
   * `Deno.env.get`; a reader that throws `Deno.errors.NotCapable` is a missing `--allow-env`).
   */
  env?: EnvReader | undefined;
}

/**
 * Reads credentials from a kubeconfig. Several files merge as kubectl merges
 * them: the first file that names a cluster, user or context wins, and so
 * does the first `current-context`.
 *
 * @param options The file(s) and the context.
 * @returns The credentials, or undefined when no path is given, `KUBECONFIG`
 *   is unset and `~/.kube/config` does not exist.
 * @throws {LoginError} For a missing or invalid file, an unknown context, a
 *   failing exec plugin, or a missing permission.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { loginWithKubeconfig } from "@kopf/kopf";
 *
 * await using server = await startApiServer({ token: "s3cret" });
 * const info = await loginWithKubeconfig({ path: server.kubeconfig.path });
 * assert.equal(info?.server, server.url);
 * assert.equal(info?.token, "s3cret");
 * assert.equal(info?.defaultNamespace, "default");
 * ```
 */
export async function loginWithKubeconfig(
  options: KubeconfigLoginOptions = {},
): Promise<ConnectionInfo | undefined> {
  const found = options.path !== undefined
    ? { paths: Array.isArray(options.path) ? options.path : [options.path], fromEnv: false }
    : defaultKubeconfigPaths(options.env ?? processEnv);
  if (found === undefined || found.paths.length === 0) return undefined;
  // As kubectl: missing files in KUBECONFIG's list are skipped; a path given explicitly must exist.
  const files = [];
  for (const path of found.paths) {
    const text = await readKubeconfig(path, found.fromEnv);
    if (text !== undefined) files.push({ path, text });
  }
  if (!files.length) {
    throw new LoginError(
      `None of the kubeconfig files in KUBECONFIG exists (${found.paths.join(", ")}): ` +
        `point KUBECONFIG at an existing file`,
    );
  }
  const kc = await parseKubeconfigs(files);
  const { context, cluster, user } = selectContext(kc, options.context);
  const priority = options.priority ?? PRIORITY_OF_KUBECONFIG;
  if (user.impersonate) {
    throw new LoginError(
      `The kubeconfig ${kc.source} impersonates "${user.impersonate}" for the user "${user.name}", ` +
        `which the operator does not support: use a context without "as"`,
    );
  }
  if (user.authProvider) return await viaClientLibrary(files, context.name, kc.source, priority);

  let token = user.token;
  if (!token && user.tokenFile) {
    token = (await readRequired(user.tokenFile, `token file of the user "${user.name}"`)).trim();
  }
  let certificateData = user.clientCertificateData;
  let privateKeyData = user.clientKeyData;
  let expiration: string | undefined;
  if (user.exec) {
    const exec = await runExecPlugin(kc.source, { ...user, exec: user.exec }, cluster);
    token = exec.token ?? token;
    if (exec.clientCertificateData && exec.clientKeyData) {
      certificateData = exec.clientCertificateData;
      privateKeyData = exec.clientKeyData;
    }
    expiration = exec.expiration;
  }
  const fromExec = certificateData !== user.clientCertificateData;
  const pem = (data: string | undefined, field: string, owner: string) => {
    if (!data) return undefined;
    try {
      return pemText(data);
    } catch (error) {
      throw new LoginError(
        `The kubeconfig ${kc.source} has a ${field} of ${owner} that is neither PEM nor base64: fix it`,
        { cause: error },
      );
    }
  };
  const userName = fromExec
    ? `the exec plugin of the user "${user.name}"`
    : `the user "${user.name}"`;
  return new ConnectionInfo({
    server: cluster.server,
    caPath: cluster.certificateAuthorityData ? undefined : cluster.certificateAuthority,
    caData: pem(
      cluster.certificateAuthorityData,
      "certificate-authority-data",
      `the cluster "${cluster.name}"`,
    ),
    insecure: cluster.insecureSkipTlsVerify || undefined,
    username: token ? undefined : user.username || undefined,
    password: token ? undefined : user.password || undefined,
    scheme: token ? "Bearer" : undefined,
    token: token || undefined,
    certificatePath: certificateData ? undefined : user.clientCertificate,
    certificateData: pem(certificateData, "client-certificate-data", userName),
    privateKeyPath: privateKeyData || fromExec ? undefined : user.clientKey,
    privateKeyData: pem(privateKeyData, "client-key-data", userName),
    defaultNamespace: context.namespace,
    expiration,
    priority,
  });
}

const kubeconfigScope = new AsyncLocalStorage<string>();

/**
 * Runs a function with a default kubeconfig for {@link loginWithKubeconfig}
 * calls without a path (instead of `KUBECONFIG` or `~/.kube/config`): an
 * operator given a kubeconfig (e.g. by `KopfRunner`) runs its login handlers
 * so, and they reach the same cluster as the default login would.
 *
 * @param path The kubeconfig file.
 * @param fn The function.
 * @returns What the function returns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { loginWithKubeconfig } from "@kopf/kopf";
 * import { withDefaultKubeconfig } from "./auth.ts";
 *
 * await using server = await startApiServer();
 * const info = await withDefaultKubeconfig(server.kubeconfig.path, () => loginWithKubeconfig());
 * assert.equal(info?.server, server.url);
 * ```
 */
export function withDefaultKubeconfig<T>(path: string, fn: () => T): T {
  return kubeconfigScope.run(path, fn);
}

/** The default kubeconfig files, and whether they come from `KUBECONFIG` (missing ones are skipped). */
function defaultKubeconfigPaths(
  readEnv: EnvReader,
): { paths: string[]; fromEnv: boolean } | undefined {
  const scoped = kubeconfigScope.getStore();
  if (scoped) return { paths: [scoped], fromEnv: false };
  let env: string | undefined;
  let home: string | undefined;
  try {
    env = readEnv("KUBECONFIG");
    home = env ? undefined : readEnv("HOME") ?? readEnv("USERPROFILE");
  } catch (error) {
    const denied = permissionError(error);
    if (!denied) throw error;
    if (inClusterIntended()) return undefined;
    throw new LoginError(
      `Finding the kubeconfig needs env access to KUBECONFIG and HOME: ` +
        `run with --allow-env=KUBECONFIG,HOME, or pass the kubeconfig's path`,
      { cause: error },
    );
  }
  if (env) {
    const separator = Deno.build.os === "windows" ? ";" : ":";
    return { paths: env.split(separator).map((p) => p.trim()).filter((p) => p), fromEnv: true };
  }
  if (!home) return undefined;
  const path = joinPath(home, ".kube", "config");
  try {
    Deno.statSync(path);
    return { paths: [path], fromEnv: false };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    const denied = permissionError(error);
    if (denied && inClusterIntended()) return undefined;
    if (denied) {
      throw new LoginError(`Reading the kubeconfig ${path} ${permissionHint(denied)}`, {
        cause: error,
      });
    }
    throw error;
  }
}

async function readKubeconfig(path: string, optional: boolean): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (optional && error instanceof Deno.errors.NotFound) return undefined;
    const denied = permissionError(error);
    if (denied) {
      throw new LoginError(`Reading the kubeconfig ${path} ${permissionHint(denied)}`, {
        cause: error,
      });
    }
    if (error instanceof Deno.errors.NotFound) {
      throw new LoginError(
        `The kubeconfig ${path} does not exist: set KUBECONFIG or pass the path of an existing file`,
        { cause: error },
      );
    }
    throw new LoginError(`Cannot read the kubeconfig ${path}: ${oneLine(error)}`, { cause: error });
  }
}
