/**
 * The embedded API server's internals, for advanced use: the types of the server core that
 * `RunningApiServer.server` (from `@kopf/kopf/testing`) exposes — its object store and watch
 * hub, the resource registry, admission, authentication and RBAC authorization, fault
 * injection. They are types only (not constructible here) and may change between minor
 * versions; a test of an operator needs only `@kopf/kopf/testing`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import type { ApiServer, ApiStore } from "@kopf/kopf/apiserver";
 * await using api = await startApiServer();
 * const server: ApiServer = api.server;
 * const store: ApiStore = server.store;
 * assert.equal(typeof store.get, "function");
 * ```
 *
 * @module
 */

export type { ApiServer, ApiServerOptions } from "./src/apiserver/serving/server.ts";
export type { ClientIdentity } from "./src/apiserver/shared/types.ts";
export type { Controllers } from "./src/apiserver/controllers/controllers.ts";
export type { Objects } from "./src/apiserver/objects/objects.ts";
export type {
  AdmissionHooks,
  DeleteOptions,
  FieldValidation,
  PatchType,
  WriteOptions,
  WriteResult,
} from "./src/apiserver/objects/write_types.ts";
export type { ResourceRegistry } from "./src/apiserver/objects/registry.ts";
export type { PrinterColumn, ResourceDef } from "./src/apiserver/shared/resources.ts";
export type { JsonSchema } from "./src/apiserver/shared/types.ts";
// Renamed where mod.ts has a type of the same name (kopf.Store is an index's store).
export type { CommitGuard, Store as ApiStore, Watcher } from "./src/apiserver/storage/store.ts";
export type {
  Change,
  EventType,
  KObject,
  Meta as ApiMeta,
  OwnerReference as ApiOwnerReference,
} from "./src/apiserver/shared/types.ts";
export type { WatchHub, WatchRequest } from "./src/apiserver/storage/watch.ts";
export type { WebhookClientCertificate } from "./src/apiserver/webhooks/webhook_client.ts";
export type { FieldRequirement } from "./src/cogs/structs/field_selector.ts";
export type { LabelRequirement, LabelSelector } from "./src/cogs/structs/label_selector.ts";
export type { Faults } from "./src/apiserver/shared/faults.ts";
// Authentication and authorization (`authorization: "rbac"`).
export type { Authenticator, StaticToken, UserInfo } from "./src/apiserver/auth/authentication.ts";
export type {
  Decision,
  PolicyRule,
  RbacAuthorizer,
  RuleVisitor,
  Subject,
} from "./src/apiserver/auth/rbac.ts";
export type { RequestAttributes } from "./src/apiserver/auth/request_attributes.ts";
export type {
  ServiceAccountTokens,
  ServiceAccountUser,
} from "./src/apiserver/auth/service_account_tokens.ts";
