/**
 * Kubeconfig files, read the way kubectl reads them, without a client library:
 * several files merge (the first file that names a cluster, user or context
 * wins, and so does the first `current-context`), relative paths are relative
 * to the file that holds them, `*-data` fields stay base64 (the transport
 * decodes them). Exec credential plugins, which users may name, run as kubectl
 * runs them (`exec_plugin.ts`).
 *
 * Why not `@kubernetes/client-node`'s `KubeConfig`: loading that library
 * costs an operator ≈65 MB of memory (≈32 MB of JS heap) for a few fields of
 * YAML. It is still used, loaded on demand, for users with an
 * `auth-provider` (OIDC and the legacy cloud providers), whose token refresh
 * it implements. The YAML parser is `js-yaml`, an ES module: a CommonJS
 * package here would bring Deno's CommonJS loader into every operator
 * (several MiB of memory) only to read a kubeconfig. It is imported when the
 * first kubeconfig is parsed (≈6 MiB of memory): an operator in a pod logs in
 * with its service account and reads none.
 *
 * @module
 */

import type * as JsYaml from "npm:js-yaml@^5";
import { LoginError } from "../structs/credentials.ts";
import { directoryOf, isAbsolutePath, joinPath, SEPARATOR } from "./_paths.ts";

/** A cluster entry of a kubeconfig (the fields an operator uses). */
export interface KubeconfigCluster {
  name: string;
  server: string;
  certificateAuthority?: string | undefined;
  /** Base64 of PEM, as in the file. */
  certificateAuthorityData?: string | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  /** The cluster's `extensions` entry `client.authentication.k8s.io/exec` (for exec plugins). */
  execConfig?: unknown;
}

/** An exec credential plugin of a user. */
export interface KubeconfigExec {
  apiVersion: string;
  command: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
  installHint?: string | undefined;
  provideClusterInfo: boolean;
  interactiveMode?: string | undefined;
}

/** A user entry of a kubeconfig (the fields an operator uses). */
export interface KubeconfigUser {
  name: string;
  token?: string | undefined;
  tokenFile?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
  clientCertificate?: string | undefined;
  /** Base64 of PEM, as in the file. */
  clientCertificateData?: string | undefined;
  clientKey?: string | undefined;
  /** Base64 of PEM, as in the file. */
  clientKeyData?: string | undefined;
  exec?: KubeconfigExec | undefined;
  /** The name of an `auth-provider` (handled by the client library), if any. */
  authProvider?: string | undefined;
  /** Impersonation (`as`), which the operator does not support. */
  impersonate?: string | undefined;
}

/** A context entry of a kubeconfig. */
export interface KubeconfigContext {
  name: string;
  cluster: string;
  user: string;
  namespace?: string | undefined;
}

/** One or several kubeconfig files, merged. */
export interface Kubeconfig {
  /** Where it came from (the paths), for messages. */
  source: string;
  currentContext: string | undefined;
  clusters: Map<string, KubeconfigCluster>;
  users: Map<string, KubeconfigUser>;
  contexts: Map<string, KubeconfigContext>;
}

/**
 * Parses kubeconfig texts and merges them as kubectl merges `KUBECONFIG`'s
 * files. Relative file paths are made absolute against each file's directory.
 *
 * @param files The files' paths and texts, in `KUBECONFIG` order.
 * @returns The merged configuration (async: the YAML parser is imported on first use).
 * @throws {LoginError} For a text that is not a kubeconfig (one line: the file and what is wrong).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseKubeconfigs } from "./kubeconfig.ts";
 *
 * const kc = await parseKubeconfigs([{ path: "/etc/kube/config", text: `
 * current-context: dev
 * clusters: [{name: dev, cluster: {server: "https://k8s:6443", certificate-authority: ca.crt}}]
 * users: [{name: dev, user: {token: abc}}]
 * contexts: [{name: dev, context: {cluster: dev, user: dev, namespace: team}}]
 * ` }]);
 * assert.equal(kc.currentContext, "dev");
 * assert.equal(kc.clusters.get("dev")?.certificateAuthority, "/etc/kube/ca.crt");
 * assert.equal(kc.users.get("dev")?.token, "abc");
 * ```
 */
export async function parseKubeconfigs(
  files: Array<{ path: string; text: string }>,
): Promise<Kubeconfig> {
  yaml ??= await import("npm:js-yaml@^5");
  const merged: Kubeconfig = {
    source: files.map((f) => f.path).join(", "),
    currentContext: undefined,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
  };
  for (const { path, text } of files) {
    let doc: unknown;
    try {
      doc = yamlOf(text);
    } catch (error) {
      throw new LoginError(`The kubeconfig ${path} is not valid: ${oneLine(error)}`, {
        cause: error,
      });
    }
    if (doc === null || doc === undefined) continue; // an empty file, as kubectl allows
    const file = new FileReader(path, directoryOf(path));
    const root = file.mapping(doc, "the file");
    merged.currentContext ||= file.string(root, "current-context") || undefined;
    for (const [i, item] of file.list(root, "clusters").entries()) {
      const entry = file.named(item, `clusters[${i}]`, "cluster");
      if (merged.clusters.has(entry.name)) continue;
      const c = entry.body;
      const extensions = file.list(c, "extensions").map((e) => file.mapping(e, "an extension"));
      merged.clusters.set(entry.name, {
        name: entry.name,
        server: file.string(c, "server") ?? "",
        certificateAuthority: file.path(c, "certificate-authority"),
        certificateAuthorityData: file.string(c, "certificate-authority-data"),
        insecureSkipTlsVerify: file.boolean(c, "insecure-skip-tls-verify"),
        execConfig: extensions.find((e) => e.name === "client.authentication.k8s.io/exec")
          ?.extension,
      });
    }
    for (const [i, item] of file.list(root, "users").entries()) {
      const entry = file.named(item, `users[${i}]`, "user");
      if (merged.users.has(entry.name)) continue;
      const u = entry.body;
      const exec = u.exec === undefined || u.exec === null
        ? undefined
        : file.exec(file.mapping(u.exec, `the exec of user "${entry.name}"`), entry.name);
      const provider = u["auth-provider"];
      merged.users.set(entry.name, {
        name: entry.name,
        token: file.string(u, "token"),
        tokenFile: file.path(u, "tokenFile"),
        username: file.string(u, "username"),
        password: file.string(u, "password"),
        clientCertificate: file.path(u, "client-certificate"),
        clientCertificateData: file.string(u, "client-certificate-data"),
        clientKey: file.path(u, "client-key"),
        clientKeyData: file.string(u, "client-key-data"),
        exec,
        authProvider: provider === undefined || provider === null
          ? undefined
          : file.string(file.mapping(provider, "an auth-provider"), "name") ?? "unnamed",
        impersonate: file.string(u, "as"),
      });
    }
    for (const [i, item] of file.list(root, "contexts").entries()) {
      const entry = file.named(item, `contexts[${i}]`, "context");
      if (merged.contexts.has(entry.name)) continue;
      const c = entry.body;
      merged.contexts.set(entry.name, {
        name: entry.name,
        cluster: file.string(c, "cluster") ?? "",
        user: file.string(c, "user") ?? "",
        namespace: file.string(c, "namespace") || undefined,
      });
    }
  }
  return merged;
}

/** What a context resolves to: its cluster, its user and its namespace. */
export interface KubeconfigSelection {
  context: KubeconfigContext;
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
}

/**
 * Picks a context (the given one, else `current-context`) with its cluster and user.
 *
 * @param kc The merged kubeconfig.
 * @param name The context to use, if not the current one.
 * @returns The context, cluster and user.
 * @throws {LoginError} When there is no such context, or it names a missing cluster or user.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseKubeconfigs, selectContext } from "./kubeconfig.ts";
 *
 * const kc = await parseKubeconfigs([
 *   { path: "/k", text: "contexts: [{name: a, context: {cluster: a, user: a}}]" },
 * ]);
 * assert.throws(() => selectContext(kc), /sets no current-context/);
 * assert.throws(() => selectContext(kc, "a"), /has no cluster "a" for the context "a"/);
 * ```
 */
export function selectContext(kc: Kubeconfig, name?: string): KubeconfigSelection {
  const contextName = name ?? kc.currentContext;
  if (!contextName) {
    throw new LoginError(
      `The kubeconfig ${kc.source} sets no current-context: pass a context to use`,
    );
  }
  const context = kc.contexts.get(contextName);
  if (!context) {
    const known = [...kc.contexts.keys()].join(", ") || "none";
    throw new LoginError(
      `The kubeconfig ${kc.source} has no context "${contextName}": use one of ${known}`,
    );
  }
  const cluster = kc.clusters.get(context.cluster);
  if (!cluster) {
    throw new LoginError(
      `The kubeconfig ${kc.source} has no cluster "${context.cluster}" for the context "${contextName}"`,
    );
  }
  if (!cluster.server) {
    throw new LoginError(
      `The kubeconfig ${kc.source} has no server for the cluster "${cluster.name}": add its server URL`,
    );
  }
  const user = kc.users.get(context.user) ??
    (context.user ? undefined : { name: "" } as KubeconfigUser);
  if (!user) {
    throw new LoginError(
      `The kubeconfig ${kc.source} has no user "${context.user}" for the context "${contextName}"`,
    );
  }
  return { context, cluster, user };
}

/** Reads the fields of one file, with one-line errors that name the file and the field. */
class FileReader {
  constructor(readonly file: string, readonly dir: string) {}

  #fail(what: string): never {
    throw new LoginError(`The kubeconfig ${this.file} is not valid: ${what}`);
  }

  mapping(value: unknown, what: string): Record<string, unknown> {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.#fail(`${what} must be a mapping`);
    }
    return value as Record<string, unknown>;
  }

  list(obj: Record<string, unknown>, key: string): unknown[] {
    const value = obj[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.#fail(`"${key}" must be a list`);
    return value;
  }

  string(obj: Record<string, unknown>, key: string): string | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    this.#fail(`"${key}" must be a string`);
  }

  boolean(obj: Record<string, unknown>, key: string): boolean | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "false") return value === "true";
    this.#fail(`"${key}" must be true or false`);
  }

  /** A file path field, made absolute against the kubeconfig's directory. */
  path(obj: Record<string, unknown>, key: string): string | undefined {
    const value = this.string(obj, key);
    if (!value) return undefined;
    return isAbsolutePath(value) ? value : joinPath(this.dir, value);
  }

  named(
    item: unknown,
    what: string,
    field: string,
  ): { name: string; body: Record<string, unknown> } {
    const entry = this.mapping(item, what);
    const name = this.string(entry, "name");
    if (!name) this.#fail(`${what} has no name`);
    const body = entry[field];
    return {
      name,
      body: body === undefined || body === null ? {} : this.mapping(body, `${what}.${field}`),
    };
  }

  exec(e: Record<string, unknown>, user: string): KubeconfigExec {
    const what = `the exec of user "${user}"`;
    let command = this.string(e, "command");
    if (!command) this.#fail(`${what} has no command`);
    const apiVersion = this.string(e, "apiVersion");
    if (!apiVersion) this.#fail(`${what} has no apiVersion`);
    // kubectl: a relative command with a path separator is relative to the kubeconfig's directory.
    if (!isAbsolutePath(command) && command.includes(SEPARATOR)) {
      command = joinPath(this.dir, command);
    }
    const args = this.list(e, "args").map((a) => {
      if (typeof a !== "string") this.#fail(`${what}: args must be strings`);
      return a;
    });
    const env = this.list(e, "env").map((item) => {
      const v = this.mapping(item, `an env entry of ${what}`);
      const name = this.string(v, "name");
      if (!name) this.#fail(`an env entry of ${what} has no name`);
      return { name, value: this.string(v, "value") ?? "" };
    });
    return {
      apiVersion,
      command,
      args,
      env,
      installHint: this.string(e, "installHint"),
      provideClusterInfo: this.boolean(e, "provideClusterInfo") ?? false,
      interactiveMode: this.string(e, "interactiveMode"),
    };
  }
}

/**
 * The first 300 characters of an error's message, on one line.
 *
 * @param error Any error.
 * @returns One line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { oneLine } from "./kubeconfig.ts";
 * assert.deepEqual(oneLine(new Error("a\n  b")), "a b");
 * ```
 */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n").map((l) => l.trim()).filter((l) => l).join(" ").slice(0, 300);
}

/** js-yaml, once the first kubeconfig is parsed. */
let yaml: typeof JsYaml | undefined;

/**
 * The one YAML document of a kubeconfig, as kubectl reads it: YAML 1.2's core schema (a date stays
 * a string), an empty file (or one of comments only) is nothing, several documents are an error.
 *
 * @throws {Error} One line: what is wrong and where (line and column), without the source snippet.
 */
function yamlOf(text: string): unknown {
  let docs: unknown[];
  try {
    docs = yaml!.loadAll(text);
  } catch (error) {
    if (!(error instanceof yaml!.YAMLException)) throw error;
    const at = error.mark ? ` at line ${error.mark.line + 1}, column ${error.mark.column + 1}` : "";
    throw new Error(`${error.reason}${at}`, { cause: error });
  }
  if (docs.length > 1) {
    throw new Error(
      `it holds ${docs.length} YAML documents (separated by ---): a kubeconfig is one document`,
    );
  }
  return docs[0];
}
