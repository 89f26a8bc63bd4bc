/**
 * Testing tools for operators: the embedded Kubernetes API server, so an
 * operator can be run and tested with no cluster at all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "./testing.ts";
 * await using api = await startApiServer();
 * assert.deepEqual(api.url.startsWith("http://127.0.0.1:"), true);
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
// The server's parts, as `RunningApiServer.server` exposes them (types only, not constructible).
export type { ApiServer, ApiServerOptions, ClientIdentity } from "./src/apiserver/server.ts";
export type { Controllers } from "./src/apiserver/controllers.ts";
export type {
  AdmissionHooks,
  DeleteOptions,
  FieldValidation,
  Objects,
  PatchType,
  WriteOptions,
  WriteResult,
} from "./src/apiserver/objects.ts";
export type { ResourceRegistry } from "./src/apiserver/registry.ts";
export type { PrinterColumn, ResourceDef } from "./src/apiserver/resources.ts";
export type { JsonSchema } from "./src/apiserver/schema.ts";
// Renamed where mod.ts has a type of the same name (kopf.Store is an index's store).
export type {
  Change,
  CommitGuard,
  EventType,
  KObject,
  Meta as ApiMeta,
  OwnerReference as ApiOwnerReference,
  Store as ApiStore,
  Watcher,
} from "./src/apiserver/store.ts";
export type { WatchHub, WatchRequest } from "./src/apiserver/watch.ts";
export type { WebhookClientCertificate } from "./src/apiserver/webhook_client.ts";
export type { FieldRequirement } from "./src/cogs/structs/field_selector.ts";
export type { LabelRequirement, LabelSelector } from "./src/cogs/structs/label_selector.ts";
export type { FaultCounts, Faults, FaultSettings } from "./src/apiserver/faults.ts";
export type { Kubeconfig } from "./src/apiserver/kubeconfig.ts";
export type { ClientCertificate, TlsBundle } from "./src/apiserver/tls.ts";
// Authorization (`authorization: "rbac"`), as `RunningApiServer.server` exposes it.
export type { Authenticator, StaticToken, UserInfo } from "./src/apiserver/authentication.ts";
export type {
  Decision,
  PolicyRule,
  RbacAuthorizer,
  RuleVisitor,
  Subject,
} from "./src/apiserver/rbac.ts";
export type { RequestAttributes } from "./src/apiserver/request_attributes.ts";
export type {
  ServiceAccountTokens,
  ServiceAccountUser,
} from "./src/apiserver/service_account_tokens.ts";
export { KopfRunner } from "./src/cli/runner.ts";
export { FakeClock } from "./src/cogs/aio/fake_clock.ts";
export type { BaseKopfRunner, KopfRunnerOptions } from "./src/kits/runner.ts";
