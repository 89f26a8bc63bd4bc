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
import type { ABSENT, PRESENT } from "./markers.ts";
import type {
  AnyObject,
  BaseHandler,
  BaseOptions,
  ErrorsMode,
  HandlerFn,
} from "../actions/invocation.ts";

export type { AnyObject, BaseHandler, BaseOptions, ErrorsMode, HandlerFn };
export { defaultId } from "../actions/invocation.ts";

/** Why a resource-changing handler runs (Kopf's `kopf.Reason`). */
export type Reason = "create" | "update" | "delete" | "resume" | "noop" | "free" | "gone";

/** The operator-wide memo: a plain object handlers may put anything into (`kopf.Memo`). */
export class Memo {
  /** Anything the handlers store, by name. */
  // deno-lint-ignore no-explicit-any
  [key: string]: any;
}

/** A value filter: an exact value, PRESENT/ABSENT, or a callback of the value. */
export type ValueFilter =
  | typeof PRESENT
  | typeof ABSENT
  | string
  | number
  | boolean
  | null
  | AnyObject
  | unknown[]
  // deno-lint-ignore no-explicit-any
  | ((value: any, context: any) => boolean);

/** Label or annotation filters: key → value filter. */
export type MetaFilter = Record<string, ValueFilter>;

/** A whole-object callback filter. */
// deno-lint-ignore no-explicit-any
export type WhenFilter = (context: any) => boolean;

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

/** Filters of resource handlers. */
export interface FilterOptions {
  /** Only objects whose labels match: label → value filter. */
  labels?: MetaFilter;
  /** Only objects whose annotations match: annotation → value filter. */
  annotations?: MetaFilter;
  /** Only objects for which this callback of the context returns true. */
  when?: WhenFilter;
  /** A dotted field path; restricts and scopes the handler to that field. */
  field?: string | string[];
  /** Only objects whose `field` has this value (for update and field handlers: the old or the new one). */
  value?: ValueFilter;
}

/** Change filters of update and field handlers. */
export interface ChangeFilterOptions {
  /** Only changes whose old value (of the field, or the whole essence) matches. */
  old?: ValueFilter;
  /** Only changes whose new value (of the field, or the whole essence) matches. */
  new?: ValueFilter;
}

/** A handler of one resource kind, with filters. */
export interface ResourceHandler extends BaseHandler {
  /** The resource (or resources) the handler serves. */
  selector: Selector;
  /** The label filters, if any. */
  labels: MetaFilter | undefined;
  /** The annotation filters, if any. */
  annotations: MetaFilter | undefined;
  /** The `when` callback, if any. */
  when: WhenFilter | undefined;
  /** The field path, parsed; undefined for the whole object. */
  field: string[] | undefined;
  /** The field's value filter, if any. */
  value: ValueFilter | undefined;
}

/** A resource-changing handler (`on.resume/create/update/delete/field`, sub-handlers). */
export interface ChangingHandler extends ResourceHandler {
  /** Always `"changing"`. */
  kind: "changing";
  /** The cause it reacts to; undefined for any (field and resume handlers). */
  reason: Reason | undefined;
  /** Runs only in the first cycle of an object in this process (resume handlers). */
  initial: boolean;
  /** Also runs for objects being deleted (resume handlers with `deleted: true`). */
  deleted: boolean;
  /** Blocks deletion with a finalizer until it has run (non-optional delete handlers). */
  requiresFinalizer: boolean;
  /** The old value filter (update and field handlers), if any. */
  old: ValueFilter | undefined;
  /** The new value filter (update and field handlers), if any. */
  new: ValueFilter | undefined;
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
export interface SpawningHandler extends ResourceHandler {
  /** Always `"spawning"`. */
  kind: "spawning";
  /** "daemon" runs once for long; "timer" runs on a schedule. */
  spawn: "daemon" | "timer";
  /** Seconds before the first run after the object is seen. */
  initialDelay: number | undefined;
  /** Daemons: seconds of graceful waiting after the stop-flag is set. */
  cancellationBackoff: number | undefined;
  /** Daemons: seconds to wait more before abandoning a daemon that does not exit. */
  cancellationTimeout: number | undefined;
  /** Daemons: seconds between checks (and log lines) while a daemon is exiting. */
  cancellationPolling: number | undefined;
  /** Timers: seconds between runs. */
  interval: number | undefined;
  /** Timers: run on the interval grid, whatever each run takes. */
  sharp: boolean;
  /** Timers: run only when the object has not changed for so many seconds. */
  idle: number | undefined;
}
