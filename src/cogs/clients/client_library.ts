/**
 * Credentials as `@kubernetes/client-node` resolves them from a `KubeConfig`
 * ({@link connectionInfoOf}): its authenticators (exec plugins, OIDC refresh, token files) run,
 * and we take the results and leave its HTTP agent unused. The library is loaded only for the
 * users that need it (`auth-provider`: {@link viaClientLibrary}; see `kubeconfig.ts` for why).
 *
 * @module
 */

import { directoryOf } from "./_paths.ts";
import { ConnectionInfo, LoginError } from "../structs/credentials.ts";
import { oneLine } from "./kubeconfig.ts";
import { permissionError, permissionHint } from "./_permissions.ts";

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

/**
 * Users with an `auth-provider` (OIDC, the legacy cloud providers): the client
 * library implements their token refresh, so it is loaded for them only.
 */
export async function viaClientLibrary(
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
      kc.makePathsAbsolute(directoryOf(path));
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

export async function connectionInfoOf(
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
