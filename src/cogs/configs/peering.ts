/**
 * Settings of peering (`settings.peering`): how replicas of an operator find
 * each other, and which of them pauses.
 *
 * @module
 */

import { bool, fail, integer, text } from "./_checks.ts";

/**
 * Settings of peering: how replicas of operators find each other and who pauses.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * const s = new OperatorSettings().peering;
 * s.namespaced = false;
 * assert.deepEqual([s.name, s.clusterwide, s.lifetime], ["default", true, 60]);
 * ```
 */
export class PeeringSettings {
  #name = "default";
  #stealth = false;
  #priority = 0;
  #lifetime = 60;
  #mandatory = false;
  #standalone = false;
  #clusterwide = false;

  /** The peering object's name; different names are separate neighbourhoods. Default `"default"`. */
  get name(): string {
    return this.#name;
  }
  set name(value: string) {
    this.#name = text("peering.name", value);
  }

  /** Whether not to log the regular keep-alives. Default false. */
  get stealth(): boolean {
    return this.#stealth;
  }
  set stealth(value: boolean) {
    this.#stealth = bool("peering.stealth", value);
  }

  /** This operator's priority; lower ones pause while a higher or equal one runs. Default 0. */
  get priority(): number {
    return this.#priority;
  }
  set priority(value: number) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      fail("peering.priority", "an integer", value);
    }
    this.#priority = value;
  }

  /** For how long (seconds) others trust this operator's keep-alive. Default 60. */
  get lifetime(): number {
    return this.#lifetime;
  }
  set lifetime(value: number) {
    this.#lifetime = integer("peering.lifetime", value, 1);
  }

  /** Whether to fail when the peering object or CRD is absent. Default false. */
  get mandatory(): boolean {
    return this.#mandatory;
  }
  set mandatory(value: boolean) {
    this.#mandatory = bool("peering.mandatory", value);
  }

  /** Whether to run without peering even if it exists. Default false. */
  get standalone(): boolean {
    return this.#standalone;
  }
  set standalone(value: boolean) {
    this.#standalone = bool("peering.standalone", value);
  }

  /** Whether the peering is cluster-wide (`ClusterKopfPeering`) or namespaced. Default false. */
  get clusterwide(): boolean {
    return this.#clusterwide;
  }
  set clusterwide(value: boolean) {
    this.#clusterwide = bool("peering.clusterwide", value);
  }

  /** The inverse of {@link PeeringSettings.clusterwide}. */
  get namespaced(): boolean {
    return !this.#clusterwide;
  }
  set namespaced(value: boolean) {
    this.#clusterwide = !bool("peering.namespaced", value);
  }
}
