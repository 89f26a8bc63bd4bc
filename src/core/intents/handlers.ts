/**
 * What a registered handler is: its function, its id, its options (errors,
 * timeouts, retries, backoff), its filters, and — for resource handlers — the
 * resource selector and the cause it reacts to. Also the handler contexts: the
 * single argument every handler receives (Kopf's kwargs).
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { Diff } from "../../cogs/structs/diffs.ts";
import type { Patch } from "../../cogs/structs/patches.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { Selector } from "../../cogs/structs/selector.ts";
import type { KubeClient } from "../../cogs/clients/kube_client.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { ObjectLogger, OperatorLogger } from "../actions/loggers.ts";
import type { AnyObject, BaseHandler, ErrorsMode, HandlerFn } from "../actions/invocation.ts";
import type { HandlerKindGroups } from "./option_specs.ts";
import type {
  FieldsOf,
  GivenOptions,
  StoredOptions,
  TakenByAll,
  TakenByExactly,
} from "./option_types.ts";

export type { AnyObject, BaseHandler, ErrorsMode, HandlerFn };
export type { MetaFilter, ValueFilter, WhenFilter } from "./option_specs.ts";
export { defaultId } from "../actions/invocation.ts";

/** Why a resource-changing handler runs (Kopf's `kopf.Reason`). */
export type Reason = "create" | "update" | "delete" | "resume" | "noop" | "free" | "gone";

/** The operator-wide memo: a plain object handlers may put anything into (`kopf.Memo`). */
export class Memo {
  /** Anything the handlers store, by name. */
  // deno-lint-ignore no-explicit-any
  [key: string]: any;
}

/** What every handler context has. */
export interface BaseContext {
  /** The operator's memo (filled in startup handlers, shared by all). */
  memo: AnyObject;
  /** The operator's settings. */
  settings: OperatorSettings;
  /** The handler's `param` option. */
  param: unknown;
  /** How many times this handler was retried before (0 on the first run). */
  retry: number;
  /** When this handler first started, across retries. */
  started: Date;
  /** Seconds since `started`. */
  runtime: number;
  /** In-memory indices by id (filled by `kopf.index` handlers). */
  indices: AnyObject;
  /**
   * The API client on the operator's own credentials and networking settings (`kopf.api()`):
   * get, list, create, replace, patch, apply, delete and watch any resource by any of Kopf's
   * names. In `on.startup` and `on.login` handlers, its requests fail: the login comes after them.
   */
  api: KubeClient;
  /**
   * Aborted when the handler's `timeout` passes (the operator then stops waiting for it) and at
   * the operator's exit; for daemons and timers, also when they are asked to stop.
   */
  signal: AbortSignal;
  /**
   * The operator's clock (`clock` of `kopf.operator()` and `KopfRunner`; the real one by
   * default): the time the operator's schedules, retries and `kopf.sleep()` run on. A handler
   * that measures or waits for time asks it (`clock.now()`, `await clock.sleep(seconds, signal)`),
   * so that its test on a `FakeClock` runs in virtual time.
   */
  clock: Clock;
}

/** The context of handlers that work on one object. */
export interface ObjectContext extends BaseContext {
  /** The whole object as last seen. */
  body: AnyObject;
  /** `body.spec`, or `{}`. */
  spec: AnyObject;
  /** `body.metadata`. */
  meta: AnyObject;
  /** `body.status`, or `{}`. */
  status: AnyObject;
  /** `metadata.uid`. */
  uid: string;
  /** `metadata.name`. */
  name: string;
  /** `metadata.namespace`; undefined for cluster-scoped objects. */
  namespace: string | undefined;
  /** `metadata.labels`, or `{}`. */
  labels: Record<string, string>;
  /** `metadata.annotations`, or `{}`. */
  annotations: Record<string, string>;
  /** The resource of the object. */
  resource: Resource;
  /** Changes to apply to the object at the end of the cycle, as one merge patch. */
  patch: Patch;
  /** A logger that prefixes `[ns/name] ` and posts Kubernetes events. */
  logger: ObjectLogger;
}

/** The context of resource-changing handlers (`on.create/update/delete/resume/field`). */
export interface ChangingContext extends ObjectContext {
  /** The cause the handler runs for. */
  reason: Reason;
  /** The diff of the essence (or of the field, for field handlers). */
  diff: Diff;
  /** The old essence (or field value). */
  old: unknown;
  /** The new essence (or field value). */
  new: unknown;
}

/** The context of raw event handlers (`on.event`). */
export interface EventContext extends ObjectContext {
  /** ADDED, MODIFIED, DELETED, or null for the initial listing. */
  type: "ADDED" | "MODIFIED" | "DELETED" | null;
  /** The raw watch event. */
  event: { type: string | null; object: AnyObject };
}

/** The context of operator activities (`on.startup/cleanup/login/probe`). */
export interface ActivityContext extends BaseContext {
  /** The operator-level logger (`kopf.activities`). */
  logger: OperatorLogger;
}

/** Options every handler that runs again after a failure takes: its id, `param`, and the error options. */
export interface BaseOptions extends GivenOptions<TakenByAll<HandlerKindGroups["retried"]>> {}

/** Filters of resource handlers (the options all the kinds filtered by the object take). */
export interface FilterOptions
  extends GivenOptions<TakenByExactly<HandlerKindGroups["filtered"]>> {}

/** Change filters of update and field handlers (and their sub-handlers). */
export interface ChangeFilterOptions
  extends GivenOptions<TakenByExactly<"update" | "field" | "subhandler">> {}

/** A handler of one resource kind, with its filters (the field path parsed). */
export interface ResourceHandler
  extends BaseHandler, StoredOptions<TakenByExactly<HandlerKindGroups["filtered"]>> {
  /** The resource (or resources) the handler serves. */
  selector: Selector;
}

/** A resource-changing handler (`on.resume/create/update/delete/field`, sub-handlers). */
export interface ChangingHandler
  extends ResourceHandler, FieldsOf<HandlerKindGroups["changing"] | "subhandler"> {
  /** Always `"changing"`. */
  kind: "changing";
  /** The cause it reacts to; undefined for any (field and resume handlers). */
  reason: Reason | undefined;
  /** Runs only in the first cycle of an object in this process (resume handlers). */
  initial: boolean;
  /** Blocks deletion with a finalizer until it has run (non-optional delete handlers). */
  requiresFinalizer: boolean;
}

/** A raw event handler (`on.event`). */
export interface WatchingHandler extends ResourceHandler {
  /** Always `"watching"`. */
  kind: "watching";
}

/** An operator activity handler. */
export interface ActivityHandler extends BaseHandler {
  /** Always `"activity"`. */
  kind: "activity";
  /** The activity it runs for. */
  activity: "startup" | "cleanup" | "login" | "probe";
}

/** Any registered handler. */
export type Handler = ChangingHandler | WatchingHandler | ActivityHandler;

// --- In-memory indexing (kopf.index) -----------------------------------------------------------

/** An indexing handler (`kopf.index`): its result goes into the in-memory index named by its id. */
export interface IndexingHandler extends ResourceHandler {
  /** Always `"indexing"`. */
  kind: "indexing";
}

// --- Daemons and timers (kopf.daemon, kopf.timer) ---------------------------------------------

import type { DaemonStoppingReason } from "./daemon_stopping.ts";
export type { DaemonStoppingReason } from "./daemon_stopping.ts";

/** The stop-flag of daemons and timers (Kopf's `stopped` kwarg). */
export interface DaemonStopped {
  /** Whether the daemon is asked to stop. */
  isSet(): boolean;
  /** The first reason of the stop, or undefined while running. */
  readonly reason: DaemonStoppingReason | undefined;
  /** All reasons of the stop, in order. */
  readonly reasons: readonly DaemonStoppingReason[];
  /**
   * Sleeps for `seconds` or until the stop, whichever comes first.
   * Resolves to whether the daemon is stopped.
   */
  wait(seconds?: number): Promise<boolean>;
}

/** The context of daemons and timers: the object's live view, plus the stop-flag and signal. */
export interface SpawningContext extends ObjectContext {
  /** Aborted when the daemon or timer is asked to stop. */
  signal: AbortSignal;
  /** The stop-flag: `stopped.isSet()`, `stopped.reason`, `await stopped.wait(seconds)`. */
  stopped: DaemonStopped;
}

/** A daemon or a timer (`kopf.daemon`, `kopf.timer`): spawned per matching object. */
export interface SpawningHandler extends ResourceHandler, FieldsOf<HandlerKindGroups["spawning"]> {
  /** Always `"spawning"`. */
  kind: "spawning";
  /** "daemon" runs once for long; "timer" runs on a schedule. */
  spawn: "daemon" | "timer";
}
