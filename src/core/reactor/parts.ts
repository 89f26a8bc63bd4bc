/**
 * The parts of a running operator and the one small interface through which
 * each wires itself in: probes, the startup handlers, the login, the API
 * client, the events, the operator's context, the discovery, sharding, the
 * watchers, the metrics, admission, peering, leader election. running.ts
 * holds their list — the start order — and starts each in turn; adding a
 * part is a file of its own (an {@link OperatorPart}) and a line in that list.
 *
 * A part reads what the earlier ones left in the {@link Startup}, leaves
 * there what later ones need (the probe server, the API client, the
 * watchers…), and hands back its long-running tasks and its steps of the
 * exit, each at a named stage: the exit runs the stages in the order of
 * {@link EXIT_STAGES} (within `process.ultimateExitingTimeout`), then of
 * {@link LEAVE_STAGES} (always), whatever order the parts started in.
 *
 * The three ways of running several replicas — Kopf's peering, Lease leader
 * election, sharding — are parts too; each takes {@link Parts} and hands back
 * {@link PartTasks}: its tasks and its leaving, after the handlers and
 * daemons stop and before the vault closes, so that the others take over at
 * once. Each is read in two files of the same name: the policy in
 * `engines/` (peering.ts, leader_election.ts, sharding.ts) and its wiring in
 * `reactor/`.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { ToggleSet } from "../../cogs/aio/toggles.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { Vault } from "../../cogs/structs/vault.ts";
import type { ActivityEnvironment } from "../engines/activities.ts";
import type { EventRecorder } from "../engines/event_recorder.ts";
import type { OperatorIndexers } from "../engines/indexing.ts";
import type { OperatorMetrics } from "../engines/metrics.ts";
import type { PostingScope } from "../engines/posting.ts";
import type { ProbeServer } from "../engines/probing.ts";
import type { Lifecycle } from "../actions/execution.ts";
import type { PendingApi } from "../actions/handler_api.ts";
import type { AnyObject } from "../actions/invocation.ts";
import type { LogOutputOptions, LogSink, OperatorLogger } from "../actions/loggers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import { OperatorError } from "./errors.ts";
import type { Resolution } from "./observation.ts";
import type { Orchestrator } from "./orchestration.ts";
import type { OperatorContext } from "./processing.ts";

/** Options of an operator. */
export interface OperatorOptions {
  /** The handlers (default: the default registry of `kopf.on.*`). */
  registry?: OperatorRegistry;
  /** The settings (default: fresh defaults; startup handlers may change them). */
  settings?: OperatorSettings;
  /** The operator memo passed to all handlers (`kopf.Memo`). */
  memo?: AnyObject;
  /** Serve these namespaces (globs and `!negations` allowed); namespaced resources only there. */
  namespaces?: string[];
  /** Serve all namespaces (`-A`). This is also the default when no namespaces are given. */
  clusterwide?: boolean;
  /** Run without peering (`settings.peering.standalone`). */
  standalone?: boolean;
  /** The peering priority (`settings.peering.priority`). */
  priority?: number;
  /** The peering object's name; the peering becomes mandatory (`--peering NAME`). */
  peeringName?: string;
  /**
   * This operator's identity among its peers (Kopf's `kopf.operator(identity=...)`): the key of
   * its entry in the peering object, and its holder name in leader election and sharding Leases.
   * Default: `$POD_ID`, else `user@host/YYYYmmddHHMMSS/xyz`.
   *
   * @example
   * ```ts ignore
   * import * as kopf from "@kopf/kopf";
   * await kopf.operator({ clusterwide: true, identity: "operator-a", priority: 100 });
   * ```
   */
  identity?: string;
  /**
   * Serve liveness probes at this URL, e.g. `http://0.0.0.0:8080/healthz` (200 once ready, 503
   * before), and Prometheus metrics on `/metrics` of the same server.
   */
  liveness?: string;
  /** Record metrics here (default: a new registry of its own when `liveness` is given). */
  metrics?: OperatorMetrics;
  /** Stops the operator when aborted. */
  signal?: AbortSignal;
  /** Called once the operator watches everything it should. */
  onReady?: () => void;
  /**
   * Log in with this kubeconfig file (when there are no login handlers) instead of the default
   * login; login handlers get it as the default of `kopf.loginWithKubeconfig()`.
   */
  kubeconfig?: string;
  /** Credentials store (default: a new vault filled by login handlers or the default login). */
  vault?: Vault;
  /** Which ready handlers run in one cycle (default: all, in order). */
  lifecycle?: Lifecycle;
  /** Log output: level, format, prefix, where lines go. */
  logging?: LogOutputOptions;
  /** A sink for the operator's records instead of `logging`. */
  sink?: LogSink;
  /** The time source of queues, retries, daemons and timers (default: the real clock). */
  clock?: Clock;
}

/** One long-running part of an operator. */
export interface OperatorTask {
  /** What the task is, e.g. `"main"` or `"watchers"`. */
  name: string;
  /** Settles when the task ends; rejects with its failure. */
  done: Promise<void>;
}

/**
 * What the parts of a running operator share: the one type that peering, leader election and
 * sharding take (each reads what it needs; {@link Needs} makes a field required).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * import type { ApiClient } from "../../cogs/clients/api.ts";
 * import type { Needs, Parts } from "./parts.ts";
 * const parts: Parts = {
 *   api: {} as ApiClient,
 *   settings: new OperatorSettings(),
 *   sink: () => {},
 *   namespaces: undefined,
 * };
 * const stopping: Needs<"signal"> = { ...parts, signal: new AbortController().signal };
 * assert.equal(stopping.signal.aborted, false);
 * ```
 */
export interface Parts {
  /** The API client. */
  api: ApiClient;
  /** The settings (a part's own section decides its mode and durations). */
  settings: OperatorSettings;
  /** Where the log lines go. */
  sink: LogSink;
  /** The served `-n` patterns; undefined for a cluster-wide operator. */
  namespaces: string[] | undefined;
  /** This replica's identity (default: Kopf's, from `$POD_ID` or user, host, time). */
  identity?: string | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
  /** The operator's stop signal. */
  signal?: AbortSignal | undefined;
  /** The operator's pause gate: each reason to pause holds a toggle of its own. */
  paused?: ToggleSet | undefined;
  /** The operator's metrics, if it records them. */
  metrics?: OperatorMetrics | undefined;
  /** The health server, if it serves one (`/healthz`, `/readyz`). */
  probing?: ProbeServer | undefined;
}

/** {@link Parts} with the fields `K` required (e.g. `Needs<"signal">`). */
export type Needs<K extends keyof Parts> = Parts & { [F in K]-?: NonNullable<Parts[F]> };

/**
 * A running replicas' coordination (or any part that leaves at the exit).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { PartTasks } from "./parts.ts";
 * const standalone: PartTasks = { tasks: [], leave: () => Promise.resolve() };
 * assert.equal(await standalone.leave(), undefined);
 * ```
 */
export interface PartTasks {
  /** Its long-running tasks (they end after {@link PartTasks.leave}). */
  tasks: OperatorTask[];
  /** Leaves the other replicas (removes its peering entry, releases or deletes its Lease). */
  leave(): Promise<void>;
}

/**
 * The stages of a graceful exit that run within `process.ultimateExitingTimeout`, in order, each
 * with what the exit's notices say it waits for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EXIT_STAGES } from "./parts.ts";
 * assert.deepEqual(Object.keys(EXIT_STAGES)[0], "handlers");
 * ```
 */
export const EXIT_STAGES = {
  /** The daemons, timers and reconcilers stop first: nothing new starts on a stopping operator. */
  handlers: "the daemons and timers",
  /** Then the watchers, their queues and the handlers in progress. */
  watchers: "the watchers and their handlers",
  /** Then `kopf.on.cleanup`, with nothing else running. */
  cleanup: "the cleanup handlers",
  /** Then the events posted so far, including the cleanup's. */
  posting: "the posting of events",
  /** Then the webhook server and its managed configurations: their patches need the vault. */
  admission: "the admission clean-up",
} as const;

/**
 * The stages of the exit after the time limit (they run even when it passed), in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LEAVE_STAGES } from "./parts.ts";
 * assert.equal(LEAVE_STAGES.at(-1), "vault");
 * ```
 */
export const LEAVE_STAGES = [
  "peers", // Lower-priority peers resume only now; the peering's patches need the vault.
  "shards", // The other shards take this one's objects only now.
  "leadership", // Released last of the replicas: a standby starts when nothing runs here.
  "login", // The re-authentication ends (it stops on the operator's signal).
  "metrics", // The scrapes stop reading the queues.
  "probes", // The health server stops.
  "vault", // The credentials are closed, last: everything above may still call the API.
] as const;

/** A stage of the exit: one of {@link EXIT_STAGES} or {@link LEAVE_STAGES}. */
export type ExitStage = keyof typeof EXIT_STAGES | typeof LEAVE_STAGES[number];

/** What a started part hands back: its tasks and its steps of the exit, by stage. */
export interface Started {
  /** Its long-running tasks. */
  tasks?: OperatorTask[];
  /** Its steps of the exit, each at its stage (within a stage, in the order the parts started). */
  exit?: { [S in ExitStage]?: () => Promise<void> | void };
}

/**
 * What an operator's start holds: its options and what every part gets at once, then what the
 * parts leave for the parts after them (each part says which).
 */
export interface Startup {
  /** The operator's options. */
  readonly options: OperatorOptions;
  /** The operator's parts, in their start order. */
  readonly parts: readonly OperatorPart[];
  /** The handlers. */
  readonly registry: OperatorRegistry;
  /** The settings. */
  readonly settings: OperatorSettings;
  /** The operator memo. */
  readonly memo: AnyObject;
  /** Where the log lines go. */
  readonly sink: LogSink;
  /** The operator's own logger (`kopf.activities`). */
  readonly logger: OperatorLogger;
  /** Stops the operator (aborted by the options' signal, or from inside on a failure). */
  readonly stop: AbortController;
  /** The operator's stop signal. */
  readonly signal: AbortSignal;
  /** Whether it serves all namespaces. */
  readonly clusterwide: boolean;
  /** The in-memory indices, filled by the watchers. */
  readonly indexers: OperatorIndexers;
  /** The metrics, if recorded. */
  readonly metrics: OperatorMetrics | undefined;
  /** The activities' environment (startup, login, probes, cleanup). */
  readonly env: ActivityEnvironment;
  /** Which ready handlers run in one cycle. */
  readonly lifecycle: Lifecycle;
  /** `kopf.event()`'s scope: the poster is set once the API is there. */
  readonly posting: PostingScope;
  /** `kopf.api()` and the handlers' `api`, connected after the login. */
  readonly handlerApi: PendingApi;
  /** What to undo when the start fails half-way (e.g. the health server started before startup). */
  readonly undo: Array<() => Promise<void>>;
  /** The health server (by `probes`). */
  probing?: ProbeServer;
  /** The credentials (by `login`). */
  vault?: Vault;
  /** The re-authentication (by `login`); ends on the signal. */
  authenticator?: Promise<void>;
  /** Whether the vault is the operator's own (by `login`): then it is closed at the exit. */
  ownedVault?: boolean;
  /** The API client (by `api`). */
  api?: ApiClient;
  /** The event poster (by `events`). */
  poster?: EventRecorder;
  /** The operator's context for the queues and handlers (by `context`). */
  op?: OperatorContext;
  /** The served resources (by `discovery`). */
  resolution?: Resolution;
  /** The served `-n` patterns, undefined when cluster-wide (by `discovery`). */
  namespaces?: string[] | undefined;
  /** The watchers (by `watchers`). */
  watchers?: Orchestrator;
  /** Resolves when all initial watchers have listed (by `watchers`). */
  ready?: Promise<void>;
}

/**
 * One part of an operator: it wires itself in when started, in the order of running.ts's list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { OperatorPart } from "./parts.ts";
 * const hello: OperatorPart = {
 *   name: "hello",
 *   start: (run) => ({ exit: { cleanup: () => run.logger.info("Goodbye.") } }),
 * };
 * assert.equal(hello.name, "hello");
 * ```
 */
export interface OperatorPart {
  /** What the part is, e.g. `"peering"`. */
  readonly name: string;
  /**
   * Checks the part's settings after the startup handlers (which may change them), before the
   * login: a wrong setting fails the start before anything connects.
   */
  check?(run: Startup): Promise<void> | void;
  /** Starts the part: reads from and adds to the startup; hands back its tasks and exit. */
  start(run: Startup): Promise<Started | void> | Started | void;
}

/**
 * A part whose module is imported only when an operator needs it: `wanted` is asked at the check
 * and again at the start (a part started earlier may change the settings it reads), and the part
 * is loaded the first time it says yes. Why: most operators run no sharding, leader election or
 * admission, and a module an operator imports costs its memory for as long as it runs (its
 * source, its compiled code, the module graph), whether it is used or not. `load` imports a
 * string literal, so that `deno compile`, `deno cache` and JSR still find the module.
 *
 * @param name The part's name.
 * @param wanted Whether this operator needs the part now.
 * @param load Imports the part's module and gives the part.
 * @returns The part, loaded when wanted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadedWhenWanted, type OperatorPart, type Startup } from "./parts.ts";
 * let loads = 0;
 * const hello: OperatorPart = { name: "hello", start: () => ({ tasks: [] }) };
 * const lazy = loadedWhenWanted("hello", (run) => run.clusterwide, () => (loads++, Promise.resolve(hello)));
 * assert.equal(await lazy.start({ clusterwide: false } as Startup), undefined);
 * assert.equal(loads, 0);
 * assert.deepEqual(await lazy.start({ clusterwide: true } as Startup), { tasks: [] });
 * assert.equal(loads, 1);
 * ```
 */
export function loadedWhenWanted(
  name: string,
  wanted: (run: Startup) => boolean,
  load: () => Promise<OperatorPart>,
): OperatorPart {
  let loading: Promise<OperatorPart> | undefined;
  const part = () => loading ??= load();
  return {
    name,
    async check(run) {
      if (wanted(run)) await (await part()).check?.(run);
    },
    async start(run) {
      if (wanted(run)) return await (await part()).start(run);
    },
  };
}

/**
 * What an earlier part left in the startup, for a later one.
 *
 * @param run The startup.
 * @param key What is needed.
 * @returns It.
 * @throws {OperatorError} When no earlier part has set it (the list's order is wrong).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { need, type Startup } from "./parts.ts";
 * assert.throws(() => need({} as Startup, "api"), /api/);
 * ```
 */
export function need<K extends keyof Startup>(run: Startup, key: K): NonNullable<Startup[K]> {
  const value = run[key];
  if (value === undefined || value === null) {
    throw new OperatorError(`An operator's part needs '${key}' before a part has set it.`);
  }
  return value as NonNullable<Startup[K]>;
}
