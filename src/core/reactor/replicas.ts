/**
 * What the three ways of running several replicas — Kopf's peering, Lease
 * leader election, sharding — each need of the operator, and what each hands
 * back: its long-running tasks and its leaving, the last step of the exit
 * (after handlers and daemons stop, before the vault closes), so that the
 * others take over at once.
 *
 * @module
 */

import type { Clock } from "../../cogs/aio/clock.ts";
import type { ApiClient } from "../../cogs/clients/api.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { LogSink } from "../actions/loggers.ts";

/** What a replicas' coordination needs of the operator. */
export interface ReplicaParts {
  /** The API client. */
  api: ApiClient;
  /** The settings (the coordination's own section decides its mode and durations). */
  settings: OperatorSettings;
  /** Where the log lines go. */
  sink: LogSink;
  /** The served `-n` patterns; undefined for a cluster-wide operator. */
  namespaces: string[] | undefined;
  /** This replica's identity (default: Kopf's, from `$POD_ID` or user, host, time). */
  identity?: string | undefined;
  /** The time source (default: the real clock). */
  clock?: Clock | undefined;
}

/** A running replicas' coordination. */
export interface ReplicaTasks {
  /** Its long-running tasks (they end after {@link ReplicaTasks.leave}). */
  tasks: Array<{ name: string; done: Promise<void> }>;
  /** Leaves the other replicas (removes its peering entry, releases or deletes its Lease). */
  leave(): Promise<void>;
}
