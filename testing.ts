/**
 * Testing tools for operators, with no cluster at all: the embedded Kubernetes API server
 * (`startApiServer`, with fault injection), the operator runner (`KopfRunner`) and the fake
 * clock (`FakeClock`) for virtual time. The server core's internals have their own export path,
 * `@kopf/kopf/apiserver`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * assert.deepEqual(api.url.startsWith("http://127.0.0.1:"), true);
 * // KUBECONFIG=api.kubeconfig.path makes kubectl and operators talk to it.
 * ```
 *
 * @module
 */

// The embedded API server: starting it, what it answers with, and its fault switches.
export {
  type RunningApiServer,
  startApiServer,
  type StartApiServerOptions,
} from "./src/apiserver/serving/start.ts";
export type { FaultCounts, FaultSettings } from "./src/apiserver/shared/faults.ts";
export type { Kubeconfig } from "./src/apiserver/serving/kubeconfig.ts";
export type { ClientCertificate, TlsBundle } from "./src/apiserver/shared/tls.ts";
// Running an operator in a test.
export { KopfRunner } from "./src/cli/runner.ts";
export type { BaseKopfRunner, KopfRunnerOptions } from "./src/kits/runner.ts";
// Virtual time.
export { FakeClock } from "./src/cogs/aio/fake_clock.ts";
