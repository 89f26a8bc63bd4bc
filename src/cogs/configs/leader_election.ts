/**
 * Settings of Lease leader election (`settings.leaderElection`), with
 * client-go's defaults and its rule for the three durations.
 *
 * Why the durations are checked together and not in their setters: they are
 * set one by one (a startup handler shortens them all), so an intermediate
 * state may break the rule; {@link LeaderElectionSettings.check} judges the
 * final state when the election starts, in client-go's words.
 *
 * @module
 */

/** client-go's `JitterFactor`: candidates retry after `retryPeriod × [1, 2.2)`. */
export const JITTER_FACTOR = 1.2;

function positive(name: string, value: unknown): number {
  if (typeof value !== "number" || !(value > 0) || value === Infinity) {
    throw new TypeError(
      `settings.leaderElection.${name} must be a positive number of seconds; got ${
        JSON.stringify(value) ?? String(value)
      }.`,
    );
  }
  return value;
}

function optionalText(name: string, value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== "string" || value === "") {
    throw new TypeError(
      `settings.leaderElection.${name} must be a non-empty string or null; got ${
        JSON.stringify(value) ?? String(value)
      }.`,
    );
  }
  return value;
}

/**
 * Lease leader election: one replica (the holder of a coordination.k8s.io/v1 Lease) handles;
 * the others stand by with their watches and indices warm.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().leaderElection;
 * s.enabled = true;
 * s.leaseDuration = 2;
 * s.renewDeadline = 1.5;
 * s.retryPeriod = 0.3;
 * s.check(); // fine: 2 > 1.5 > 0.3 × 1.2
 * assert.deepEqual([s.leaseDuration, s.name], [2, null]);
 * ```
 */
export class LeaderElectionSettings {
  #enabled = false;
  #name: string | null = null;
  #namespace: string | null = null;
  #leaseDuration = 15;
  #renewDeadline = 10;
  #retryPeriod = 2;

  /** Whether to elect a leader (`kopf run --leader-election`). Default false. */
  get enabled(): boolean {
    return this.#enabled;
  }
  set enabled(value: boolean) {
    if (typeof value !== "boolean") {
      throw new TypeError(
        `settings.leaderElection.enabled must be true or false; got ${JSON.stringify(value)}.`,
      );
    }
    this.#enabled = value;
  }

  /**
   * The Lease's name; null (the default) means `kopf-leader-<settings.peering.name>`, so
   * operators that already keep apart by peering name keep apart here too.
   */
  get name(): string | null {
    return this.#name;
  }
  set name(value: string | null) {
    this.#name = optionalText("name", value);
  }

  /**
   * The Lease's namespace; null (the default) means: the operator's one namespace when it
   * serves exactly one literal `-n`, else the login's namespace (in a cluster, the pod's own),
   * else `default`.
   */
  get namespace(): string | null {
    return this.#namespace;
  }
  set namespace(value: string | null) {
    this.#namespace = optionalText("namespace", value);
  }

  /**
   * Seconds a standby waits, from when it last saw the Lease change, before taking it over.
   * Whole seconds, as the Lease stores them. Default 15 (client-go's).
   */
  get leaseDuration(): number {
    return this.#leaseDuration;
  }
  set leaseDuration(value: number) {
    if (!Number.isInteger(value) || value < 1) {
      throw new TypeError(
        `settings.leaderElection.leaseDuration must be a whole number of seconds (at least 1), as a Lease stores it; got ${
          JSON.stringify(value) ?? String(value)
        }.`,
      );
    }
    this.#leaseDuration = value;
  }

  /** Seconds the leader keeps handling without a successful renewal. Default 10 (client-go's). */
  get renewDeadline(): number {
    return this.#renewDeadline;
  }
  set renewDeadline(value: number) {
    this.#renewDeadline = positive("renewDeadline", value);
  }

  /** Seconds between tries to acquire or renew. Default 2 (client-go's). */
  get retryPeriod(): number {
    return this.#retryPeriod;
  }
  set retryPeriod(value: number) {
    this.#retryPeriod = positive("retryPeriod", value);
  }

  /**
   * Checks the durations as client-go does: `leaseDuration > renewDeadline >
   * retryPeriod × 1.2`.
   *
   * @throws {TypeError} With one line naming the settings and their values.
   */
  check(): void {
    const { leaseDuration: lease, renewDeadline: renew, retryPeriod: retry } = this;
    if (!(lease > renew)) {
      throw new TypeError(
        `settings.leaderElection.leaseDuration (${lease}s) must be greater than renewDeadline (${renew}s).`,
      );
    }
    if (!(renew > retry * JITTER_FACTOR)) {
      throw new TypeError(
        `settings.leaderElection.renewDeadline (${renew}s) must be greater than retryPeriod × ${JITTER_FACTOR} (${+(retry *
          JITTER_FACTOR).toFixed(6)}s).`,
      );
    }
  }
}
