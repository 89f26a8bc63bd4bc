/**
 * Exec credential plugins, run as kubectl runs them ({@link runExecPlugin}): the user's command
 * with its `args` and `env`, `KUBERNETES_EXEC_INFO` describing the request, never
 * interactively; its standard output an `ExecCredential` (`client.authentication.k8s.io`).
 * Run anew at every login, so the token is a fresh one.
 *
 * @module
 */

import { LoginError } from "../structs/credentials.ts";
import {
  type KubeconfigCluster,
  type KubeconfigExec,
  type KubeconfigUser,
  oneLine,
} from "./kubeconfig.ts";
import { permissionError, permissionHint } from "./_permissions.ts";

/** What an exec plugin gave: a token and/or a client certificate, and when they expire. */
export interface ExecCredentials {
  token?: string | undefined;
  clientCertificateData?: string | undefined;
  clientKeyData?: string | undefined;
  expiration?: string | undefined;
}

/**
 * Runs a user's exec credential plugin, as kubectl runs it: with the user's
 * `args` and `env`, `KUBERNETES_EXEC_INFO` describing the request (and the
 * cluster, if `provideClusterInfo`), never interactively. Its standard output
 * must be an `ExecCredential` of the same `apiVersion`.
 *
 * @param source The kubeconfig's path(s), for messages.
 * @param user The user whose plugin it is.
 * @param cluster The cluster (for `provideClusterInfo`).
 * @returns The credentials it printed.
 * @throws {LoginError} When the plugin is missing, fails, prints something else,
 *   needs a terminal, or running it is not permitted (`--allow-run`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runExecPlugin } from "./exec_plugin.ts";
 * // A plugin that prints the token it is given in its env (here: Deno itself, as a script).
 * const credential = {
 *   apiVersion: "client.authentication.k8s.io/v1",
 *   kind: "ExecCredential",
 *   status: { token: "$TOKEN", expirationTimestamp: "2030-01-01T00:00:00Z" },
 * };
 * const script = `console.log(JSON.stringify(${JSON.stringify(credential)})` +
 *   `.replace("$TOKEN", Deno.env.get("TOKEN")))`;
 * const user = {
 *   name: "me",
 *   exec: {
 *     apiVersion: "client.authentication.k8s.io/v1",
 *     command: Deno.execPath(),
 *     args: ["eval", script],
 *     env: [{ name: "TOKEN", value: "t0ken" }],
 *     provideClusterInfo: false,
 *   },
 * };
 * const cluster = { name: "c", server: "https://127.0.0.1:6443" };
 * const { token, expiration } = await runExecPlugin("~/.kube/config", user, cluster);
 * assert.deepEqual([token, expiration], ["t0ken", "2030-01-01T00:00:00Z"]);
 * ```
 */
export async function runExecPlugin(
  source: string,
  user: KubeconfigUser & { exec: KubeconfigExec },
  cluster: KubeconfigCluster,
): Promise<ExecCredentials> {
  const exec = user.exec;
  const what = `The exec plugin "${exec.command}" of the user "${user.name}" in ${source}`;
  if (exec.interactiveMode === "Always") {
    throw new LoginError(
      `${what} needs an interactive terminal (interactiveMode: Always), which an operator has not: ` +
        `use a plugin or mode that works without one`,
    );
  }
  const spec: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo) {
    spec.cluster = {
      server: cluster.server,
      ...(cluster.certificateAuthorityData
        ? { "certificate-authority-data": cluster.certificateAuthorityData }
        : {}),
      ...(cluster.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(cluster.execConfig !== undefined ? { config: cluster.execConfig } : {}),
    };
  }
  const env: Record<string, string> = {
    KUBERNETES_EXEC_INFO: JSON.stringify({
      apiVersion: exec.apiVersion,
      kind: "ExecCredential",
      spec,
    }),
  };
  for (const { name, value } of exec.env) env[name] = value;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(exec.command, {
      args: exec.args,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    const denied = permissionError(error);
    if (denied) throw new LoginError(`${what} ${permissionHint(denied)}`, { cause: error });
    if (error instanceof Deno.errors.NotFound) {
      throw new LoginError(
        `${what} is not found: ${
          exec.installHint ? oneLine(exec.installHint) : "install it or fix the command's path"
        }`,
        { cause: error },
      );
    }
    throw new LoginError(`${what} cannot run: ${oneLine(error)}`, { cause: error });
  }
  const decoder = new TextDecoder();
  if (!output.success) {
    const stderr = oneLine(decoder.decode(output.stderr)) || "no message";
    throw new LoginError(`${what} failed (exit code ${output.code}): ${stderr}`);
  }
  let credential: unknown;
  try {
    credential = JSON.parse(decoder.decode(output.stdout));
  } catch (error) {
    throw new LoginError(`${what} printed no ExecCredential JSON: ${oneLine(error)}`, {
      cause: error,
    });
  }
  const c = credential as { apiVersion?: unknown; kind?: unknown; status?: unknown } | null;
  if (!c || typeof c !== "object" || c.kind !== "ExecCredential") {
    throw new LoginError(`${what} printed something other than an ExecCredential`);
  }
  if (c.apiVersion !== exec.apiVersion) {
    throw new LoginError(
      `${what} printed an ExecCredential of ${String(c.apiVersion)}, ` +
        `but the kubeconfig asks for ${exec.apiVersion}: make them the same`,
    );
  }
  const status = (c.status ?? {}) as Record<string, unknown>;
  const text = (key: string) => typeof status[key] === "string" ? status[key] : undefined;
  const result: ExecCredentials = {
    token: text("token") || undefined,
    clientCertificateData: text("clientCertificateData") || undefined,
    clientKeyData: text("clientKeyData") || undefined,
    expiration: text("expirationTimestamp") || undefined,
  };
  if (!result.token && !(result.clientCertificateData && result.clientKeyData)) {
    throw new LoginError(
      `${what} printed an ExecCredential with neither a token nor a client certificate and key`,
    );
  }
  return result;
}
