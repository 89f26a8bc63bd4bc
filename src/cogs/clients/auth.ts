/**
 * Logging in: functions that find credentials and return them as
 * {@link ConnectionInfo} (the building blocks of `kopf.on.login` handlers),
 * and the authenticator loop that keeps the {@link Vault} filled.
 *
 * - {@link loginWithKubeconfig}: a kubeconfig file (or `KUBECONFIG`'s list, or
 *   `~/.kube/config`), any context: tokens, token files, basic auth, client
 *   certificates, CAs, exec credential plugins (run anew at every login, so
 *   the token is a fresh one). Users with an `auth-provider` (OIDC and the
 *   legacy cloud providers) go through `@kubernetes/client-node`, loaded for
 *   them only (see kubeconfig.ts for why).
 * - {@link loginWithServiceAccount}: in-cluster, from the pod's service account.
 * - {@link loginViaClient}: whatever `@kubernetes/client-node` itself would
 *   use (`KubeConfig.loadFromDefault()`: kubeconfig, then in-cluster), or a
 *   `KubeConfig` you built — "piggybacking" on the client library.
 *
 * Failures are one-line {@link LoginError}s saying what to fix; a missing Deno
 * permission names the flag (`--allow-read=…`, `--allow-env=…`, `--allow-run`).
 * Credentials expire and get rejected: the API client then invalidates them
 * and {@link runAuthenticator} calls the login function again, so every call
 * of these functions reads the files anew and re-runs exec plugins.
 *
 * @module
 */

import { LoginError, type Vault, type VaultSource } from "../structs/credentials.ts";
import type { ConnectionInfo } from "../structs/credentials.ts";
import { type ClientKubeConfig, connectionInfoOf } from "./client_library.ts";
import { loginWithKubeconfig } from "./login_kubeconfig.ts";
import { type EnvReader, loginWithServiceAccount } from "./login_service_account.ts";

export type { ClientKubeConfig } from "./client_library.ts";
export {
  type KubeconfigLoginOptions,
  loginWithKubeconfig,
  PRIORITY_OF_KUBECONFIG,
  withDefaultKubeconfig,
} from "./login_kubeconfig.ts";
export {
  type EnvReader,
  loginWithServiceAccount,
  PRIORITY_OF_SERVICE_ACCOUNT,
  SERVICE_ACCOUNT_ROOT,
  type ServiceAccountLoginOptions,
} from "./login_service_account.ts";

/** Kopf's priority of credentials from the client library. */
export const PRIORITY_OF_CLIENT = 10;

/** Options of {@link loginViaClient}. */
export interface ClientLoginOptions {
  /**
   * A `KubeConfig` to take the credentials from (default: the sources of `loadFromDefault()`:
   * `KUBECONFIG`, `~/.kube/config`, in-cluster).
   */
  kubeconfig?: ClientKubeConfig | undefined;
  /** The priority of the credentials (default 10). */
  priority?: number | undefined;
  /**
   * Without a `KubeConfig`: reads `KUBECONFIG`, `HOME` and the in-cluster service variables
   * (default `Deno.env.get`).
   */
  env?: EnvReader | undefined;
}

/**
 * Takes the credentials that `@kubernetes/client-node` would use, including
 * tokens its authenticators fetch (exec plugins, OIDC refresh, token files).
 * Without a `KubeConfig`, the sources of `loadFromDefault()` in its order: a
 * kubeconfig (`KUBECONFIG`, else `~/.kube/config`) as {@link loginWithKubeconfig}
 * reads it, else the pod's service account; the in-cluster token is not read
 * when there is a kubeconfig.
 *
 * @param options A ready `KubeConfig`, or none for the default sources.
 * @returns The credentials.
 * @throws {LoginError} When the client library finds no configuration, or
 *   its authentication fails.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeConfig } from "npm:@kubernetes/client-node@^2.0.1";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { loginViaClient } from "@kopf/kopf";
 *
 * await using server = await startApiServer({ token: "s3cret" });
 * const kubeconfig = new KubeConfig();
 * kubeconfig.loadFromString(server.kubeconfig.yaml);
 * const info = await loginViaClient({ kubeconfig });
 * assert.equal(info.token, "s3cret");
 * assert.equal(info.scheme, "Bearer");
 * ```
 */
export async function loginViaClient(options: ClientLoginOptions = {}): Promise<ConnectionInfo> {
  const kc = options.kubeconfig;
  const priority = options.priority ?? PRIORITY_OF_CLIENT;
  if (!kc) {
    // The sources of `KubeConfig.loadFromDefault()`, in its order: `KUBECONFIG`, then
    // `~/.kube/config`, then in-cluster. They are read here as the client library reads them,
    // without loading it (it needs more permissions than the files themselves, e.g. env access
    // for its HTTP stack); users with an `auth-provider` still go through it. The in-cluster
    // token is not probed when there is a kubeconfig: an operator allowed to read its
    // kubeconfig only is not asked for --allow-read=/var/run/secrets/….
    const env = options.env;
    const fromKubeconfig = await loginWithKubeconfig({ priority, env });
    if (fromKubeconfig) return fromKubeconfig;
    const inCluster = await loginWithServiceAccount({ priority, env });
    if (inCluster) return inCluster;
    throw new LoginError(
      "Cannot authenticate the client library neither in-cluster, nor via kubeconfig: " +
        "set KUBECONFIG or create ~/.kube/config",
    );
  }
  return await connectionInfoOf(kc, "the client library's configuration", priority);
}

/** A login function: credentials by id (e.g. the login handler's), or none. */
export type LoginFunction = (signal: AbortSignal | undefined) => VaultSource | Promise<VaultSource>;

/**
 * Keeps the vault filled: whenever it runs dry (at start, and when all
 * credentials were rejected or expired), calls `login` and populates the
 * vault with what it returns. A failing `login` populates nothing, so that the
 * waiting API calls fail with a {@link LoginError} caused by its error.
 * Returns when the signal aborts.
 *
 * @param vault The vault to fill.
 * @param login Gets fresh credentials.
 * @param options `signal` stops the loop.
 * @returns When stopped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { runAuthenticator } from "./auth.ts";
 *
 * using vault = new Vault();
 * const stop = new AbortController();
 * const task = runAuthenticator(vault, () => ({ login: new ConnectionInfo({ server: "http://x", token: "t" }) }), { signal: stop.signal });
 * const { info } = await vault.select();
 * assert.equal(info.token, "t");
 * stop.abort();
 * await task;
 * ```
 */
export async function runAuthenticator(
  vault: Vault,
  login: LoginFunction,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const signal = options.signal;
  while (!signal?.aborted) {
    try {
      await vault.whenEmpty(signal);
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    }
    let src: VaultSource = {};
    let failure: unknown = undefined;
    try {
      src = await login(signal);
    } catch (error) {
      if (signal?.aborted) return;
      failure = error;
    }
    vault.populate(src, { error: failure });
  }
}
