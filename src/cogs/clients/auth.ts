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

import { AsyncLocalStorage } from "node:async_hooks";
import { dirname, join } from "node:path";
import {
  ConnectionInfo,
  LoginError,
  type Vault,
  type VaultSource,
} from "../structs/credentials.ts";
import { permissionError, permissionHint } from "./_permissions.ts";
import { pemText } from "./transport.ts";
import { oneLine, parseKubeconfigs, runExecPlugin, selectContext } from "./kubeconfig.ts";

/** Kopf's priority of credentials from the client library. */
export const PRIORITY_OF_CLIENT = 10;
/** Kopf's priority of credentials from a kubeconfig. */
export const PRIORITY_OF_KUBECONFIG = 10;
/** Kopf's priority of credentials from a service account. */
export const PRIORITY_OF_SERVICE_ACCOUNT = 20;

/** Where pods find their service account. */
export const SERVICE_ACCOUNT_ROOT = "/var/run/secrets/kubernetes.io/serviceaccount";

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

const processEnv: EnvReader = (name) => Deno.env.get(name);

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

/**
 * Users with an `auth-provider` (OIDC, the legacy cloud providers): the client
 * library implements their token refresh, so it is loaded for them only.
 */
async function viaClientLibrary(
  files: Array<{ path: string; text: string }>,
  context: string,
  source: string,
  priority: number,
): Promise<ConnectionInfo> {
  const { KubeConfig } = await import("npm:@kubernetes/client-node@^2.0.1");
  const merged = new KubeConfig();
  const clusters = new Map(), users = new Map(), contexts = new Map();
  for (const { path, text } of files) {
    const kc = new KubeConfig();
    try {
      kc.loadFromString(text);
      kc.makePathsAbsolute(dirname(path));
    } catch (error) {
      throw new LoginError(`The kubeconfig ${path} is not valid: ${oneLine(error)}`, {
        cause: error,
      });
    }
    for (const c of kc.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of kc.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of kc.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
  }
  merged.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext: context,
  });
  return await connectionInfoOf(merged, source, priority);
}

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
 * What {@link loginViaClient} uses of a `@kubernetes/client-node` `KubeConfig`: pass a
 * `KubeConfig` as it is (this names only its members that are used, so that the operator's
 * API does not carry the client library's types).
 */
export interface ClientKubeConfig {
  /** The current context's name ("" when none). */
  getCurrentContext(): string;
  /** A context by name. */
  getContextObject(
    name: string,
  ): { name: string; cluster: string; user: string; namespace?: string } | null;
  /** All contexts. */
  getContexts(): Array<{ name: string }>;
  /** The current context's cluster. */
  getCurrentCluster(): { name: string; server: string; skipTLSVerify: boolean } | null;
  /** The current context's user. */
  getCurrentUser(): { name: string; username?: string; password?: string } | null;
  /** Fills HTTPS request options (headers, CA, client certificate), running authenticators. */
  applyToHTTPSOptions(options: object): Promise<void>;
}

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

async function connectionInfoOf(
  kc: ClientKubeConfig,
  source: string,
  priority: number,
): Promise<ConnectionInfo> {
  const contextName = kc.getCurrentContext();
  if (!contextName) {
    throw new LoginError(`The kubeconfig ${source} sets no current-context: pass a context to use`);
  }
  const context = kc.getContextObject(contextName);
  if (!context) {
    const known = kc.getContexts().map((c) => c.name).join(", ") || "none";
    throw new LoginError(
      `The kubeconfig ${source} has no context "${contextName}": use one of ${known}`,
    );
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new LoginError(
      `The kubeconfig ${source} has no cluster "${context.cluster}" for the context "${contextName}"`,
    );
  }
  const user = kc.getCurrentUser();
  if (!user) {
    throw new LoginError(
      `The kubeconfig ${source} has no user "${context.user}" for the context "${contextName}"`,
    );
  }

  // The client library resolves files, exec plugins and auth providers into
  // these options; we take the results and leave its HTTP agent unused.
  const opts: {
    headers?: Record<string, unknown>;
    ca?: unknown;
    cert?: unknown;
    key?: unknown;
  } = { headers: {} };
  try {
    await kc.applyToHTTPSOptions(opts);
  } catch (error) {
    // Raised for http:// servers without insecure-skip-tls-verify only after
    // everything else was applied; our fetch has no such restriction.
    if (!/HTTP protocol is not allowed/.test(String((error as Error)?.message))) {
      const denied = permissionError(error);
      throw new LoginError(
        denied
          ? `Authenticating the user "${user.name}" of ${source} ${permissionHint(denied)}`
          : `Authenticating the user "${user.name}" of ${source} failed: ${oneLine(error)}`,
        { cause: error },
      );
    }
  }
  const authorization = String(opts.headers?.Authorization ?? opts.headers?.authorization ?? "");
  const space = authorization.indexOf(" ");
  const [scheme, token] = !authorization
    ? [undefined, undefined]
    : space < 0
    ? [undefined, authorization]
    : [authorization.slice(0, space), authorization.slice(space + 1)];
  return new ConnectionInfo({
    server: cluster.server,
    caData: pemOf(opts.ca),
    insecure: cluster.skipTLSVerify || undefined,
    username: user.username || undefined,
    password: user.password || undefined,
    scheme: scheme === "Basic" ? undefined : scheme,
    token: scheme === "Basic" ? undefined : token,
    certificateData: pemOf(opts.cert),
    privateKeyData: pemOf(opts.key),
    defaultNamespace: context.namespace || undefined,
    priority,
  });
}

function pemOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value || undefined;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value) || undefined;
  return String(value) || undefined;
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
  const path = join(home, ".kube", "config");
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

/**
 * Whether the operator runs in a pod and was allowed to read its token (`--allow-read` of the
 * service account directory): then a kubeconfig it may not look for (no env access to `KUBECONFIG`/`HOME`, no
 * read access to `~/.kube/config`) is taken as absent, and the login goes on in-cluster.
 */
function inClusterIntended(): boolean {
  const token = `${SERVICE_ACCOUNT_ROOT}/token`;
  try {
    if (Deno.permissions.querySync({ name: "read", path: token }).state !== "granted") return false;
    return Deno.statSync(token).isFile;
  } catch {
    return false;
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

async function readRequired(path: string, what: string): Promise<string> {
  const text = await readOptional(path, what);
  if (text === undefined) {
    throw new LoginError(`The ${what} ${path} does not exist: create it or fix the kubeconfig`);
  }
  return text;
}

async function readOptional(path: string, what: string): Promise<string | undefined> {
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
