/**
 * Operator settings: every knob of the framework, grouped as Kopf groups
 * them (`settings.posting.level`, `settings.watching.serverTimeout`, …) with
 * Kopf's defaults, camelCased. Startup handlers change them before the
 * operator starts its work; each operator (even several in one process) has
 * its own settings object.
 *
 * Assignments are checked where that is cheap, so a typo-level mistake —
 * a negative timeout, an unknown log level, a string for a number — fails at
 * startup with a one-line `TypeError` naming the setting, instead of as an
 * odd behaviour an hour later (the checks: `_checks.ts`).
 *
 * This file holds the whole ({@link OperatorSettings}), the process's own
 * group and the probes'; each other group lives in a module of its name — `posting.ts`,
 * `peering.ts`, `sharding.ts`, `watching.ts` (also batching and scanning),
 * `handling.ts` (admission, execution, background), `networking.ts`,
 * `persistence.ts`, `leader_election.ts` — and is re-exported here.
 *
 * @module
 */

import { optionalSeconds, seconds } from "./_checks.ts";
import { AdmissionSettings, BackgroundSettings, ExecutionSettings } from "./handling.ts";
import { LeaderElectionSettings } from "./leader_election.ts";
import { NetworkingSettings } from "./networking.ts";
import { PeeringSettings } from "./peering.ts";
import { PersistenceSettings } from "./persistence.ts";
import { PostingSettings } from "./posting.ts";
import { ShardingSettings } from "./sharding.ts";
import { BatchingSettings, ScanningSettings, WatchingSettings } from "./watching.ts";

export { AdmissionSettings, BackgroundSettings, ExecutionSettings } from "./handling.ts";
export { NetworkingSettings } from "./networking.ts";
export { PeeringSettings } from "./peering.ts";
export { PersistenceSettings } from "./persistence.ts";
export { type LogLevel, PostingSettings } from "./posting.ts";
export { BatchingSettings, ScanningSettings, WatchingSettings } from "./watching.ts";

/**
 * Settings of the operator's OS process (e.g. when started by `kopf run`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().process;
 * s.ultimateExitingTimeout = null;
 * assert.deepEqual(s.ultimateExitingTimeout, null);
 * ```
 */
export class ProcessSettings {
  #ultimateExitingTimeout: number | null = 600;

  /** How long a graceful exit may take before the process is killed (seconds; `null`: never). Default 600. */
  get ultimateExitingTimeout(): number | null {
    return this.#ultimateExitingTimeout;
  }
  set ultimateExitingTimeout(value: number | null) {
    this.#ultimateExitingTimeout = optionalSeconds("process.ultimateExitingTimeout", value);
  }
}

/**
 * Settings of the liveness endpoint's probes (`--liveness`; not a Kopf group: Kopf fixes the
 * period at 10 seconds).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().probing;
 * assert.deepEqual(s.cachePeriod, 10);
 * s.cachePeriod = 0.5;
 * assert.deepEqual(s.cachePeriod, 0.5);
 * assert.throws(() => (s.cachePeriod = -1), /settings\.probing\.cachePeriod must be a non-negative number/);
 * ```
 */
export class ProbingSettings {
  #cachePeriod = 10;

  /**
   * How long the `kopf.on.probe` handlers' results are reused before a request runs them again
   * (seconds; 0: every request runs them). Default 10, as in Kopf.
   */
  get cachePeriod(): number {
    return this.#cachePeriod;
  }
  set cachePeriod(value: number) {
    this.#cachePeriod = seconds("probing.cachePeriod", value);
  }
}

/**
 * All settings of one operator, with Kopf's defaults.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const settings = new OperatorSettings();
 * settings.posting.level = "warning";
 * settings.watching.serverTimeout = 10 * 60;
 * assert.deepEqual(settings.networking.requestTimeout, 300);
 * try {
 *   settings.watching.reconnectBackoff = -1;
 * } catch (error) {
 *   assert.deepEqual((error as Error).message, "settings.watching.reconnectBackoff must be a non-negative number of seconds; got -1.");
 * }
 * ```
 */
export class OperatorSettings {
  /** The OS process. */
  readonly process: ProcessSettings = new ProcessSettings();
  /** Events posting. */
  readonly posting: PostingSettings = new PostingSettings();
  /** Peering of replicas. */
  readonly peering: PeeringSettings = new PeeringSettings();
  /** Sharding of the objects across replicas. */
  readonly sharding: ShardingSettings = new ShardingSettings();
  /** Watch streams. */
  readonly watching: WatchingSettings = new WatchingSettings();
  /** Per-object queues (Kopf 1.x name; {@link OperatorSettings.queueing} is the same object). */
  readonly batching: BatchingSettings = new BatchingSettings();
  /** Cluster scanning. */
  readonly scanning: ScanningSettings = new ScanningSettings();
  /** Admission webhooks. */
  readonly admission: AdmissionSettings = new AdmissionSettings();
  /** Handler execution. */
  readonly execution: ExecutionSettings = new ExecutionSettings();
  /** Daemons and timers. */
  readonly background: BackgroundSettings = new BackgroundSettings();
  /** API requests. */
  readonly networking: NetworkingSettings = new NetworkingSettings();
  /** What is kept on objects. */
  readonly persistence: PersistenceSettings = new PersistenceSettings();
  /** Lease leader election of replicas. */
  readonly leaderElection: LeaderElectionSettings = new LeaderElectionSettings();
  /** The liveness endpoint's probes. */
  readonly probing: ProbingSettings = new ProbingSettings();

  /** The newer Kopf name of {@link OperatorSettings.batching} (the same object). */
  get queueing(): BatchingSettings {
    return this.batching;
  }
}
