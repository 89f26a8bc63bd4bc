/**
 * The context of daemons and timers, as a live view of their object.
 *
 * Why a module and a class of its own: a daemon runs for as long as its
 * object exists, so, as in Kopf, its `body`, `spec`, `labels`… must read the
 * latest object, not the one it was started with — they are getters over the
 * object's record, which the engine updates on every event.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { Patch } from "../../cogs/structs/patches.ts";
import type { StopFlag } from "../../cogs/aio/stop_flag.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { KubeClient } from "../../cogs/clients/kube_client.ts";
import type { Attempt } from "../actions/execution.ts";
import type { ObjectLogger } from "../actions/loggers.ts";
import type {
  AnyObject,
  DaemonStoppingReason as Reason,
  SpawningContext,
} from "../intents/handlers.ts";

/** Where the live body is read from (the engine's record of the object). */
export interface LiveBody {
  /** The object as last seen. */
  readonly body: AnyObject;
}

/** The fields of a live context that are not read through the body or the attempt. */
export type LiveContextFields =
  & Omit<SpawningContext, LiveField | "retry" | "started" | "runtime" | "stopped">
  & { stopped: StopFlag<Reason> };

/**
 * The context of one attempt of a daemon or timer: every object field reads the latest body;
 * `signal` is the attempt's (it aborts when the stop-flag is set and at the handler's timeout);
 * `stopped` is the stop-flag itself.
 *
 * @example
 * ```ts ignore
 * const context = new LiveContext(record, attempt, { resource, patch, logger, … });
 * record.body = newer;
 * context.spec; // newer.spec
 * ```
 */
export class LiveContext implements SpawningContext {
  readonly #object: LiveBody;
  /** The attempt, for its signal: only if the handler has a timeout (see `signal`). */
  readonly #attempt: Attempt | undefined;
  /** The object's resource. */
  resource: SpawningContext["resource"];
  /** Changes to the object, applied when the attempt ends. */
  patch: Patch;
  /** The object's logger. */
  logger: ObjectLogger;
  /** The object's memo. */
  memo: AnyObject;
  /** The operator's settings. */
  settings: OperatorSettings;
  /** The in-memory indices. */
  indices: AnyObject;
  /** The operator's API client. */
  api: KubeClient;
  /** The handler's `param`. */
  param: unknown;
  /** The operator's clock (of the stop-flag's waits, the schedules and `kopf.sleep()`). */
  clock: Clock;
  /** The stop-flag. */
  stopped: StopFlag<Reason>;
  /** Attempts made before this one. */
  readonly retry: number;
  /** When the first attempt started. */
  readonly started: Date;
  /** Seconds since the first attempt started. */
  readonly runtime: number;

  /**
   * @param object The object's record: the body is read from it on every access.
   * @param attempt The attempt (retry, started, runtime, signal).
   * @param fields The other fields.
   * @param timed Whether the handler has a timeout (its attempt's signal is not the flag's).
   */
  constructor(object: LiveBody, attempt: Attempt, fields: LiveContextFields, timed: boolean) {
    this.#object = object;
    this.#attempt = timed ? attempt : undefined;
    // Field by field, not Object.assign: one shape for all contexts.
    this.resource = fields.resource;
    this.patch = fields.patch;
    this.logger = fields.logger;
    this.memo = fields.memo;
    this.settings = fields.settings;
    this.indices = fields.indices;
    this.api = fields.api;
    this.param = fields.param;
    this.clock = fields.clock;
    this.stopped = fields.stopped;
    this.retry = attempt.retry;
    this.started = attempt.started;
    this.runtime = attempt.runtime;
  }
  /**
   * The attempt's signal: it aborts when the stop-flag is set, and at the handler's timeout.
   * Without a timeout, nothing but the flag aborts it, so it is the flag's own signal (one
   * controller per daemon that reads it, not two and a listener). Made on the first read.
   */
  get signal(): AbortSignal {
    return this.#attempt ? this.#attempt.signal : this.stopped.signal;
  }
  /** The object as last seen. */
  get body(): AnyObject {
    return this.#object.body;
  }
  /** `body.spec`, or `{}`. */
  get spec(): AnyObject {
    return this.#object.body.spec ?? {};
  }
  /** `body.metadata`, or `{}`. */
  get meta(): AnyObject {
    return this.#object.body.metadata ?? {};
  }
  /** `body.status`, or `{}`. */
  get status(): AnyObject {
    return this.#object.body.status ?? {};
  }
  /** `metadata.uid`. */
  get uid(): string {
    return this.#object.body.metadata?.uid;
  }
  /** `metadata.name`. */
  get name(): string {
    return this.#object.body.metadata?.name;
  }
  /** `metadata.namespace`. */
  get namespace(): string | undefined {
    return this.#object.body.metadata?.namespace;
  }
  /** `metadata.labels`, or `{}`. */
  get labels(): Record<string, string> {
    return this.#object.body.metadata?.labels ?? {};
  }
  /** `metadata.annotations`, or `{}`. */
  get annotations(): Record<string, string> {
    return this.#object.body.metadata?.annotations ?? {};
  }
}

type LiveField =
  | "signal"
  | "body"
  | "spec"
  | "meta"
  | "status"
  | "uid"
  | "name"
  | "namespace"
  | "labels"
  | "annotations";
