/**
 * Testing tools for operators: the embedded Kubernetes API server, so an
 * operator can be run and tested with no cluster at all.
 *
 * @example
 * ```ts
 * import { startApiServer } from "./testing.ts";
 * await using api = await startApiServer();
 * console.log(api.url.startsWith("http://127.0.0.1:")); // true
 * // KUBECONFIG=api.kubeconfig.path makes kubectl and operators talk to it.
 * ```
 *
 * @module
 */

export {
  type RunningApiServer,
  startApiServer,
  type StartApiServerOptions,
} from "./src/apiserver/start.ts";
export type { FaultCounts, FaultSettings } from "./src/apiserver/faults.ts";
export type { Kubeconfig } from "./src/apiserver/kubeconfig.ts";
export type { TlsBundle } from "./src/apiserver/tls.ts";
export { KopfRunner } from "./src/cli/runner.ts";
export type { KopfRunnerOptions } from "./src/kits/runner.ts";
