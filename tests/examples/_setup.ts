/**
 * Shared set-up of the example tests: an embedded API server with the
 * example CRD applied, and kubectl bound to it.
 *
 * @module
 */

import { type RunningApiServer, startApiServer } from "../../testing.ts";

/** The repository root (with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** kubectl's result. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An API server with the example CRD, plus a kubectl bound to it. */
export interface Cluster extends AsyncDisposable {
  api: RunningApiServer;
  kubectl(...args: string[]): Promise<KubectlResult>;
}

/**
 * Starts an API server, applies examples/crd.yaml, and gives a kubectl for it.
 *
 * @returns The cluster; dispose it with `await using`.
 */
export async function cluster(): Promise<Cluster> {
  const api = await startApiServer();
  const home = await Deno.makeTempDir({ prefix: "kopf-test-home-" });
  const kubectl = async (...args: string[]): Promise<KubectlResult> => {
    const out = await new Deno.Command("kubectl", {
      args: ["--kubeconfig", api.kubeconfig.path, ...args],
      env: { HOME: home },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  };
  const crd = await kubectl("apply", "-f", `${ROOT}examples/crd.yaml`);
  if (crd.code !== 0) throw new Error(`kubectl apply of the CRD failed: ${crd.stderr}`);
  return {
    api,
    kubectl,
    async [Symbol.asyncDispose]() {
      await api.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}
