/**
 * Logging in from the pod's service account ({@link loginWithServiceAccount}), and the reading
 * of environment variables and credential files that the logins share: missing files are
 * absent, a missing Deno permission is a {@link LoginError} that names the flag.
 *
 * @module
 */

import { ConnectionInfo, LoginError } from "../structs/credentials.ts";
import { oneLine } from "./kubeconfig.ts";
import { permissionError, permissionHint } from "./_permissions.ts";

/**
 * Reads an environment variable: `Deno.env.get` by default; tests and embedders pass their own
 * (e.g. `(name) => vars[name]`) instead of changing the process's environment, which every
 * test running in parallel would see.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type EnvReader, loginWithKubeconfig } from "@kopf/kopf";
 * import { startApiServer } from "@kopf/kopf/testing";
 *
 * await using server = await startApiServer({ token: "from-env" });
 * const vars: Record<string, string> = { KUBECONFIG: server.kubeconfig.path };
 * const env: EnvReader = (name) => vars[name];
 * assert.equal((await loginWithKubeconfig({ env }))?.token, "from-env");
 * assert.equal(await loginWithKubeconfig({ env: () => undefined }), undefined); // no KUBECONFIG, no HOME
 * ```
 */
export type EnvReader = (name: string) => string | undefined;

/** The process's environment (`Deno.env.get`): the default {@link EnvReader}. */
export const processEnv: EnvReader = (name: string): string | undefined => Deno.env.get(name);

/** Options of {@link loginWithServiceAccount}. */
export interface ServiceAccountLoginOptions {
  /** The directory with `token`, `ca.crt`, `namespace` (default the pod's). */
  root?: string | undefined;
  /** The priority of the credentials (default 20). */
  priority?: number | undefined;
  /**
   * Reads `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` (default `Deno.env.get`).
   */
  env?: EnvReader | undefined;
}

/** Kopf's priority of credentials from a service account. */
export const PRIORITY_OF_SERVICE_ACCOUNT = 20;

/** Where pods find their service account. */
export const SERVICE_ACCOUNT_ROOT = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * Reads the pod's service account: the token, the CA and the namespace from
 * `/var/run/secrets/kubernetes.io/serviceaccount`, the server from
 * `KUBERNETES_SERVICE_HOST`/`_PORT` (or `https://kubernetes.default.svc` when
 * those are unset or not readable).
 *
 * @param options Another directory (for tests), the priority.
 * @returns The credentials, or undefined when there is no token file (not in a pod).
 * @throws {LoginError} When the files exist but cannot be read (e.g. a missing `--allow-read`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loginWithServiceAccount } from "@kopf/kopf";
 *
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/token`, "t0ken\n");
 * await Deno.writeTextFile(`${root}/namespace`, "operators");
 * const info = await loginWithServiceAccount({ root });
 * assert.equal(info?.token, "t0ken");
 * assert.equal(info?.defaultNamespace, "operators");
 * assert.equal(await loginWithServiceAccount({ root: `${root}/absent` }), undefined);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function loginWithServiceAccount(
  options: ServiceAccountLoginOptions = {},
): Promise<ConnectionInfo | undefined> {
  const root = options.root ?? SERVICE_ACCOUNT_ROOT;
  const token = await readOptional(`${root}/token`, "service account token");
  if (token === undefined) return undefined;
  const namespace = await readOptional(`${root}/namespace`, "service account namespace");
  const ca = await readOptional(`${root}/ca.crt`, "service account CA");
  return new ConnectionInfo({
    server: inClusterServer(options.env ?? processEnv),
    caPath: ca !== undefined ? `${root}/ca.crt` : undefined,
    token: token.trim() || undefined,
    defaultNamespace: namespace?.trim() || undefined,
    priority: options.priority ?? PRIORITY_OF_SERVICE_ACCOUNT,
  });
}

/**
 * Whether the operator runs in a pod and was allowed to read its token (`--allow-read` of the
 * service account directory): then a kubeconfig it may not look for (no env access to `KUBECONFIG`/`HOME`, no
 * read access to `~/.kube/config`) is taken as absent, and the login goes on in-cluster.
 */
export function inClusterIntended(): boolean {
  const token = `${SERVICE_ACCOUNT_ROOT}/token`;
  try {
    if (Deno.permissions.querySync({ name: "read", path: token }).state !== "granted") return false;
    return Deno.statSync(token).isFile;
  } catch {
    return false;
  }
}

export async function readRequired(path: string, what: string): Promise<string> {
  const text = await readOptional(path, what);
  if (text === undefined) {
    throw new LoginError(`The ${what} ${path} does not exist: create it or fix the kubeconfig`);
  }
  return text;
}

export async function readOptional(path: string, what: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    const denied = permissionError(error);
    if (denied) {
      throw new LoginError(`Reading the ${what} ${path} ${permissionHint(denied)}`, {
        cause: error,
      });
    }
    throw new LoginError(`Cannot read the ${what} ${path}: ${oneLine(error)}`, { cause: error });
  }
}

function inClusterServer(readEnv: EnvReader): string {
  let host: string | undefined;
  let port: string | undefined;
  try {
    host = readEnv("KUBERNETES_SERVICE_HOST");
    port = readEnv("KUBERNETES_SERVICE_PORT");
  } catch (error) {
    if (!permissionError(error)) throw error;
  }
  if (!host) return "https://kubernetes.default.svc";
  const bracketed = host.includes(":") ? `[${host}]` : host;
  const scheme = port === "80" || port === "8080" || port === "8001" ? "http" : "https";
  return `${scheme}://${bracketed}${port ? `:${port}` : ""}`;
}
