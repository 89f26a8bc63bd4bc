/**
 * Settings of sharding (`settings.sharding`): the objects of the served
 * resources split across the live replicas of a shard group, each replica a
 * member by a coordination.k8s.io/v1 Lease of its own.
 *
 * Why the durations are checked together and not in their setters: a startup
 * handler sets them one by one, so an intermediate state may break the rule;
 * {@link ShardingSettings.check} judges the final state when the sharding
 * starts.
 *
 * @module
 */

/** What a group name may be: the start of a Lease's name (a DNS-1123 label, ≤ 40 characters). */
const GROUP = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;

function fail(name: string, expected: string, value: unknown): never {
  throw new TypeError(
    `settings.sharding.${name} must be ${expected}; got ${JSON.stringify(value) ?? String(value)}.`,
  );
}

/**
 * Why a shard group's name is not usable, or undefined when it is.
 *
 * @param value The name.
 * @returns The reason, for one line of the CLI or a settings error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { groupProblem } from "./sharding.ts";
 * assert.deepEqual(groupProblem("orders"), undefined);
 * assert.deepEqual(groupProblem("Orders!"), "use lowercase letters, digits and '-' (at most 40), starting and ending with a letter or digit");
 * ```
 */
export function groupProblem(value: unknown): string | undefined {
  if (typeof value === "string" && GROUP.test(value)) return undefined;
  return "use lowercase letters, digits and '-' (at most 40), starting and ending with a letter or digit";
}

/**
 * Sharding: every live replica of a group handles its share of the objects (rendezvous hashing
 * of uids over the members); a membership change moves about 1/N of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().sharding;
 * s.enabled = true;
 * s.group = "orders";
 * s.leaseDuration = 3;
 * s.renewDeadline = 2;
 * s.renewPeriod = 0.5;
 * s.check(); // fine: 3 > 2 > 0.5
 * assert.deepEqual([s.group, s.namespace], ["orders", null]);
 * ```
 */
export class ShardingSettings {
  #enabled = false;
  #group = "kopf";
  #namespace: string | null = null;
  #leaseDuration = 15;
  #renewDeadline = 10;
  #renewPeriod = 2;

  /** Whether this operator is a shard (`kopf run --shards`). Default false. */
  get enabled(): boolean {
    return this.#enabled;
  }
  set enabled(value: boolean) {
    if (typeof value !== "boolean") fail("enabled", "true or false", value);
    this.#enabled = value;
  }

  /**
   * The shard group: replicas of one group share the objects; member Leases are named
   * `<group>-<identity>` and labelled `kopf.dev/shard-group: <group>`. Default `"kopf"`.
   */
  get group(): string {
    return this.#group;
  }
  set group(value: string) {
    const problem = groupProblem(value);
    if (problem) fail("group", `a name for Leases (${problem})`, value);
    this.#group = value;
  }

  /**
   * Where the member Leases live; null (the default) means: the operator's one namespace when it
   * serves exactly one literal `-n`, else `$POD_NAMESPACE` if set, else `default`.
   */
  get namespace(): string | null {
    return this.#namespace;
  }
  set namespace(value: string | null) {
    if (value !== null && (typeof value !== "string" || value === "")) {
      fail("namespace", "a non-empty string or null", value);
    }
    this.#namespace = value;
  }

  /**
   * Seconds after a member's Lease was last seen to change (on the observer's clock) before the
   * others take its objects over. Whole seconds, as the Lease stores them. Default 15.
   */
  get leaseDuration(): number {
    return this.#leaseDuration;
  }
  set leaseDuration(value: number) {
    if (!Number.isInteger(value) || value < 1) {
      fail("leaseDuration", "a whole number of seconds (at least 1), as a Lease stores it", value);
    }
    this.#leaseDuration = value;
  }

  /**
   * Seconds a member keeps handling without a successful renewal; after that it stops starting
   * anything and releases all its objects, before the others can see its Lease expire.
   * Default 10.
   */
  get renewDeadline(): number {
    return this.#renewDeadline;
  }
  set renewDeadline(value: number) {
    if (typeof value !== "number" || !(value > 0) || value === Infinity) {
      fail("renewDeadline", "a positive number of seconds", value);
    }
    this.#renewDeadline = value;
  }

  /** Seconds between renewals of the member Lease. Default 2. */
  get renewPeriod(): number {
    return this.#renewPeriod;
  }
  set renewPeriod(value: number) {
    if (typeof value !== "number" || !(value > 0) || value === Infinity) {
      fail("renewPeriod", "a positive number of seconds", value);
    }
    this.#renewPeriod = value;
  }

  /**
   * Checks the durations together: `leaseDuration > renewDeadline > renewPeriod`.
   *
   * @throws {TypeError} With one line naming the settings and their values.
   */
  check(): void {
    const { leaseDuration: lease, renewDeadline: deadline, renewPeriod: period } = this;
    if (!(lease > deadline)) {
      throw new TypeError(
        `settings.sharding.leaseDuration (${lease}s) must be greater than renewDeadline (${deadline}s).`,
      );
    }
    if (!(deadline > period)) {
      throw new TypeError(
        `settings.sharding.renewDeadline (${deadline}s) must be greater than renewPeriod (${period}s).`,
      );
    }
  }
}
