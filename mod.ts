/**
 * Kopf for Deno: write Kubernetes operators as a few TypeScript functions.
 *
 * Register handlers with `kopf.on.*`, then run them with `kopf run handlers.ts`
 * (or `kopf.main()` at the end of the handlers file, or `kopf.operator()` to
 * embed). State is kept on the objects in Python Kopf's formats.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.create("kopfexamples", { registry }, function createFn({ name, logger }) {
 *   logger.info(`And here we are! Created ${name}.`);
 *   return { message: "hello" }; // lands in status.createFn
 * });
 * assert.equal(registry.isEmpty, false);
 * ```
 *
 * @module
 */

export * as on from "./on.ts";
export { sleep } from "./src/cogs/aio/sleep.ts";
export { realClock } from "./src/cogs/aio/clock.ts";
export type { CancelTimer, Clock, TimerOptions } from "./src/cogs/aio/clock.ts";
export { VERSION } from "./src/cogs/configs/version.ts";

// Markers and filters.
export { ABSENT, all, any, EVERYTHING, none, not, PRESENT } from "./src/core/intents/markers.ts";
export { all_, any_, none_, not_ } from "./src/core/intents/markers.ts";
export type { Predicate } from "./src/core/intents/markers.ts";

// Errors of handlers.
export {
  ChildrenFailedError,
  HandlerRetriesError,
  HandlerTimeoutError,
  PermanentError,
  TemporaryError,
} from "./src/core/actions/errors.ts";

// Registration, sub-handlers, registries.
export {
  getDefaultRegistry,
  register,
  RegistrationError,
  setDefaultRegistry,
} from "./src/core/intents/registration.ts";
export type { SubhandlerOptions } from "./src/core/intents/registration.ts";
export { execute, subhandler } from "./src/core/intents/subhandler.ts";
export type { ExecuteCause, ExecuteOptions } from "./src/core/intents/subhandler.ts";
export { DuplicateHandlerError, OperatorRegistry } from "./src/core/intents/registry.ts";
export type { HandlerKinds, RegisteredKind } from "./src/core/intents/kinds.ts";
export type {
  ActivityContext,
  ActivityHandler,
  AnyObject,
  BaseContext,
  ChangeFilterOptions,
  ChangingContext,
  ChangingHandler,
  ErrorsMode,
  EventContext,
  FilterOptions,
  Handler,
  HandlerFn,
  IndexingHandler,
  MetaFilter,
  ObjectContext,
  Reason,
  ResourceHandler,
  SpawningHandler,
  ValueFilter,
  WatchingHandler,
  WhenFilter,
} from "./src/core/intents/handlers.ts";
export type { BaseHandler } from "./src/core/actions/invocation.ts";
export type { BaseOptions } from "./src/core/intents/handlers.ts";
// The handler options, each declared once (a member and a row): the options types derive from it.
export type {
  HandlerKind,
  HandlerKindGroups,
  HandlerOptionSpecs,
  KindSet,
  OptionCheck,
  OptionSpec,
} from "./src/core/intents/option_specs.ts";
export type {
  FieldsOf,
  GivenOptions,
  KindsOf,
  OptionName,
  OptionsOf,
  OptionTypes,
  StoredOptions,
  TakenByAll,
  TakenByAny,
  TakenByExactly,
  TakenOnlyBy,
} from "./src/core/intents/option_types.ts";
export type { RegistryOption } from "./src/core/intents/options.ts";
export { Memo } from "./src/core/intents/handlers.ts";

// Lifecycles and loggers.
export { allAtOnce, asap, oneByOne, shuffled } from "./src/core/actions/execution.ts";
export { getDefaultLifecycle, setDefaultLifecycle } from "./src/core/actions/lifecycles.ts";
export type { HandlerMetrics, Lifecycle } from "./src/core/actions/execution.ts";
export type { HandlerState, Outcome, State } from "./src/core/actions/progression.ts";
export { ObjectLogger, OperatorLogger } from "./src/core/actions/loggers.ts";
export { configure, LocalObjectLogger } from "./src/core/actions/logging.ts";
export type { ConfigureOptions } from "./src/core/actions/logging.ts";
export { type LogtapeSink, logtapeSink } from "./src/core/actions/logtape.ts";
export type { LogtapeSinkOptions } from "./src/core/actions/logtape.ts";
export type {
  Level,
  LogFormat,
  LogOutputOptions,
  LogRecord,
  LogSink,
  ObjectRef,
} from "./src/core/actions/loggers.ts";

// Events.
export { event, exception, info, warn } from "./src/core/engines/posting.ts";
export { OperatorMetrics } from "./src/core/engines/metrics.ts";
export type { OperatorMetricsOptions, QueueSample } from "./src/core/engines/metrics.ts";
export { MetricsRegistry } from "./src/cogs/metrics/registry.ts";
export type {
  BoundCounter,
  BoundGauge,
  BoundHistogram,
  Counter,
  Gauge,
  GaugeOptions,
  Histogram,
  HistogramOptions,
  LabelValues,
  MetricOptions,
  MetricsRegistryOptions,
} from "./src/cogs/metrics/registry.ts";
export type { RequestRecord } from "./src/cogs/clients/api.ts";

// Talking to the API from handlers: the operator's client, and the API's error classes.
export { api } from "./src/core/actions/handler_api.ts";
export { KubeClient } from "./src/cogs/clients/kube_client.ts";
// What the handlers do through the client, declared for `kopf rbac` (and `kopf manifests`).
export { uses } from "./src/core/intents/uses.ts";
export type { ApiVerb, KubeVerb, UsesOptions, UsesResource } from "./src/core/intents/uses.ts";
export type {
  KubeApplyOptions,
  KubeDeleteOptions,
  KubeGetOptions,
  KubeList,
  KubeListOptions,
  KubeObject,
  KubeObjectOptions,
  KubePatchOptions,
  KubePatchType,
  KubeReplaceOptions,
  KubeWatchEvent,
  KubeWatchOptions,
  KubeWriteOptions,
  ResourceRef,
} from "./src/cogs/clients/kube_client.ts";
export {
  AlreadyExistsError,
  ApiConnectionError,
  ApiError,
  ConflictError,
  ForbiddenError,
  GoneError,
  NotFoundError,
  ResponseTooLargeError,
  ServerError,
  TlsVerificationError,
  TooManyRequestsError,
  UnauthorizedError,
  UnprocessableError,
} from "./src/cogs/clients/errors.ts";
export type { ApiErrorInit, KubeStatus } from "./src/cogs/clients/errors.ts";
export { ResourceSelectorError } from "./src/cogs/structs/references.ts";
export { SelectorError } from "./src/cogs/structs/selector_error.ts";
export type { SelectorFields } from "./src/cogs/structs/references.ts";

// Settings and storages.
export { OperatorSettings } from "./src/cogs/configs/settings.ts";
export type {
  AdmissionSettings,
  BackgroundSettings,
  BatchingSettings,
  ExecutionSettings,
  LogLevel,
  NetworkingSettings,
  PeeringSettings,
  PersistenceSettings,
  PostingSettings,
  ProbingSettings,
  ProcessSettings,
  ScanningSettings,
  WatchingSettings,
} from "./src/cogs/configs/settings.ts";
export type { LeaderElectionSettings } from "./src/cogs/configs/leader_election.ts";
export type { ShardingSettings } from "./src/cogs/configs/sharding.ts";
export {
  AnnotationsProgressStorage,
  MultiProgressStorage,
  ProgressStorage,
  SmartProgressStorage,
  StatusProgressStorage,
} from "./src/cogs/configs/progress.ts";
export type { MaybePromise, ProgressRecord } from "./src/cogs/configs/progress.ts";
export {
  AnnotationsDiffBaseStorage,
  DiffBaseStorage,
  MultiDiffBaseStorage,
  StatusDiffBaseStorage,
} from "./src/cogs/configs/diffbase.ts";

// Structures.
export { Patch } from "./src/cogs/structs/patches.ts";
export type { JsonPatchOperation, MetaPatch, PatchStrings } from "./src/cogs/structs/patches.ts";
export type { JsonObject } from "./src/cogs/structs/_json.ts";
export type {
  Annotations,
  Body,
  BodyEssence,
  Labels,
  Meta,
  OwnerReference as MetaOwnerReference,
  Spec,
  Status,
} from "./src/cogs/structs/bodies.ts";
export type { FieldPath, FieldSpec } from "./src/cogs/structs/dicts.ts";
export { diff, reduceDiff } from "./src/cogs/structs/diffs.ts";
export type {
  Diff,
  DiffItem,
  DiffOperation,
  DiffOptions,
  DiffScope,
} from "./src/cogs/structs/diffs.ts";
export { Resource, Selector } from "./src/cogs/structs/references.ts";
export type { Everything, QueryParams, ResourceFilter } from "./src/cogs/structs/references.ts";
export { ConnectionInfo, LoginError, Vault } from "./src/cogs/structs/credentials.ts";
export type { PemData, VaultEntry, VaultKey, VaultSource } from "./src/cogs/structs/credentials.ts";

// Authentication.
export {
  loginViaClient,
  loginWithKubeconfig,
  loginWithServiceAccount,
} from "./src/cogs/clients/auth.ts";
export type {
  ClientKubeConfig,
  ClientLoginOptions,
  EnvReader,
  KubeconfigLoginOptions,
  ServiceAccountLoginOptions,
} from "./src/cogs/clients/auth.ts";

// Hierarchies.
export {
  adjustNamespace,
  adopt,
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  harmonizeNaming,
  label,
  removeOwnerReference,
} from "./src/kits/hierarchies.ts";
export type {
  AdoptOptions,
  KubernetesObjects,
  LabelOptions,
  NamespaceOptions,
  NamingOptions,
  NestedFieldPath,
  ObjectReference,
  OwnerBody,
  OwnerReference,
  OwnerReferenceOptions,
} from "./src/kits/hierarchies.ts";

// In-memory indexing and containers (kopf.index, kopf.Index, kopf.Store; memos).
export { index } from "./on.ts";
export { Index, Store } from "./src/core/engines/indexing.ts";
export type {
  IndexEntryOf,
  IndexHandle,
  IndexingContext,
  IndexingOptions,
  IndexKeyOf,
  IndexValueOf,
  ReadonlyIndex,
  ReadonlyStore,
} from "./src/core/intents/indexers.ts";

// Running and embedding.
export { operator, OperatorError, run, runTasks, spawnTasks } from "./src/core/reactor/running.ts";
export type { OperatorOptions, OperatorTask } from "./src/core/reactor/running.ts";
export { main } from "./src/cli/entry.ts";
export type { RunControls } from "./src/cli/run.ts";

// Daemons and timers (kopf.daemon, kopf.timer; also kopf.on.daemon, kopf.on.timer).
export { daemon, timer } from "./on.ts";
export type { SpawningHandlerArgs } from "./on.ts";
export { StopFlag } from "./src/cogs/aio/stop_flag.ts";
export { DaemonStoppingReason } from "./src/core/intents/daemon_stopping.ts";
export type { DaemonStopped, SpawningContext } from "./src/core/intents/handlers.ts";
export type { SpawningOptions } from "./src/core/intents/spawners.ts";

// Reconcilers of parents and their owned children (kopf.reconcile; also kopf.on.reconcile).
export { reconcile } from "./on.ts";
export type {
  ChildrenOf,
  OwnedArg,
  OwnedBody,
  OwnedKey,
  OwnedResource,
  ReconcileContext,
  ReconcileOptions,
  ReconcileRegistrar,
  ReconcilingHandler,
  TypedReconcileContext,
} from "./src/core/intents/reconcilers.ts";

// Admission webhooks.
export type { WebhookHandlerArgs } from "./on.ts";
export {
  AdmissionError,
  MissingDataError,
  UnknownResourceError,
  WebhookError,
} from "./src/core/engines/review_errors.ts";
export type { WebhookFn, WebhookRequestOptions } from "./src/core/engines/admission.ts";
export type {
  UserInfo,
  WebhookClientConfig,
  WebhookClientConfigService,
} from "./src/cogs/structs/reviews.ts";
export { ConversionError } from "./src/core/engines/review_errors.ts";
export type {
  ConversionContext,
  ConversionPatch,
  ConvertedBody,
  ConverterHandler,
  ConverterOptions,
  ConvertRegistrar,
  SpecStatusOf,
  TypedConversionContext,
  TypedConverterFn,
  TypedConverterOptions,
} from "./src/core/intents/converters.ts";
export type {
  AdmissionOperation,
  WebhookContext,
  WebhookHandler,
  WebhookOptions,
  WebhookType,
} from "./src/core/intents/webhooks.ts";
export {
  serveWebhooks,
  WebhookAutoServer,
  WebhookK3dServer,
  WebhookMinikubeServer,
  WebhookServer,
  WebhookServerError,
} from "./src/kits/webhooks.ts";
export { WebhookAutoTunnel, WebhookNgrokTunnel } from "./src/kits/webhook_tunnels.ts";
export type {
  WebhookAutoTunnelOptions,
  WebhookNgrokTunnelOptions,
} from "./src/kits/webhook_tunnels.ts";
export type {
  WebhookApi,
  WebhookLogger,
  WebhookServeOptions,
  WebhookServerFn,
  WebhookServerObject,
  WebhookServerOptions,
  WebhookServerProtocol,
} from "./src/kits/webhooks.ts";

// Typed resources (kopf.resource): one definition gives the types, the validation, the CRD.
export { resource, TypedResource, VersionedResource } from "./src/cogs/structs/typed_resources.ts";
export type {
  PrinterColumn,
  ResourceDefinition,
  Schema,
  Static,
  ValidationIssue,
  VersionDefinition,
  VersionedDefinition,
  VersionMember,
  VersionsOf,
} from "./src/cogs/structs/typed_resources.ts";
export { StructuralSchemaError, toStructural } from "./src/cogs/structs/structural.ts";
export { crds } from "./src/kits/crds.ts";
export type {
  FieldPathOf,
  FieldValueOf,
  IndexHandleOf,
  IndexRegistrar,
  MergePatchOf,
  OldNew,
  ResourceArg,
  ResourceRegistrar,
  Retyped,
  TypedBody,
  TypedChangingContext,
  TypedContexts,
  TypedFieldOption,
  TypedPatch,
  TypedWebhookContext,
} from "./src/core/intents/typing.ts";
import { Type as TypeBoxType } from "npm:@sinclair/typebox@^0.34";
/**
 * TypeBox's schema builder (`kopf.Type.Object({...})`), for the schemas of `kopf.resource`: each
 * schema is the JSON Schema object itself (a {@link Schema}), typed by {@link Static}. Its reference
 * is TypeBox's documentation. Declared here rather than re-exported so that `@ignore` keeps it out
 * of kopf's generated docs: its type is TypeBox's builder class, with TypeBox's hundreds of types.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const spec = kopf.Type.Object({ size: kopf.Type.String() });
 * assert.deepEqual(spec.required, ["size"]);
 * ```
 *
 * @ignore
 */
export const Type: typeof TypeBoxType = TypeBoxType;
