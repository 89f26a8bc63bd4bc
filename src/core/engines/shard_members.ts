/**
 * A shard group's member as its Lease publishes it (engines/sharding.ts has the protocol): the
 * label and annotations, the state they carry, and their reading and writing; and the reading of
 * a replica's gate for the gauges (`ShardSample`).
 *
 * @module
 */

/** The label of member Leases: the shard group's name. */
export const SHARD_GROUP_LABEL = "kopf.dev/shard-group";
/** The annotation of a member's incarnation. */
export const INCARNATION_ANNOTATION = "kopf.dev/shard-incarnation";
/** The annotation of a member's view: JSON `{identity: incarnation}`, keys sorted. */
export const VIEW_ANNOTATION = "kopf.dev/shard-view";
/** The annotation of the objects a member still releases: JSON array of uids. */
export const RELEASING_ANNOTATION = "kopf.dev/shard-releasing";

/** What a member publishes in its Lease (and what the others read there). */
export interface MemberState {
  /** The member's identity (its Lease's `holderIdentity`): what objects are hashed against. */
  id: string;
  /** Its incarnation: new each time it (re)joins. */
  incarnation: string;
  /** The view it adopted: identity → incarnation of every member it sees live (itself too). */
  view: ReadonlyMap<string, string>;
  /** Objects (uids) it still releases under that view. */
  releasing: readonly string[];
}

/**
 * A view as published: JSON of `{identity: incarnation}` with sorted keys.
 *
 * @param view The view.
 * @returns The annotation's value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { viewKey } from "./shard_members.ts";
 * assert.deepEqual(viewKey(new Map([["b", "2"], ["a", "1"]])), '{"a":"1","b":"2"}');
 * ```
 */
export function viewKey(view: ReadonlyMap<string, string>): string {
  return JSON.stringify(Object.fromEntries([...view].sort(([a], [b]) => a < b ? -1 : +(a > b))));
}

/**
 * The annotations that publish a member's state in its Lease.
 *
 * @param state The state.
 * @returns The annotations.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memberAnnotations } from "./shard_members.ts";
 * const view = new Map([["a", "x1"]]);
 * assert.deepEqual(memberAnnotations({ id: "a", incarnation: "x1", view, releasing: [] }), { "kopf.dev/shard-incarnation": "x1", "kopf.dev/shard-view": '{"a":"x1"}', "kopf.dev/shard-releasing": "[]" });
 * ```
 */
export function memberAnnotations(state: MemberState): Record<string, string> {
  return {
    [INCARNATION_ANNOTATION]: state.incarnation,
    [VIEW_ANNOTATION]: viewKey(state.view),
    [RELEASING_ANNOTATION]: JSON.stringify([...state.releasing].sort()),
  };
}

/**
 * Reads a member's state from its Lease; undefined for a Lease that is not a member's (no holder,
 * no incarnation). Malformed views and lists read as empty: such a member acknowledges nothing.
 *
 * @param lease The Lease object.
 * @returns The state, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memberAnnotations, memberOf } from "./shard_members.ts";
 * const annotations = memberAnnotations({
 *   id: "a", incarnation: "x1", view: new Map([["a", "x1"]]), releasing: ["uid-1"],
 * });
 * const state = memberOf({ metadata: { annotations }, spec: { holderIdentity: "a" } });
 * assert.deepEqual([state?.view.get("a"), state?.releasing], ["x1", ["uid-1"]]);
 * ```
 */
export function memberOf(
  lease: { metadata?: { annotations?: Record<string, string> }; spec?: unknown },
): MemberState | undefined {
  const spec = lease.spec as { holderIdentity?: unknown } | undefined;
  const id = typeof spec?.holderIdentity === "string" ? spec.holderIdentity : "";
  const annotations = lease.metadata?.annotations ?? {};
  const incarnation = annotations[INCARNATION_ANNOTATION];
  if (!id || !incarnation) return undefined;
  const view = new Map<string, string>();
  const releasing: string[] = [];
  try {
    const parsed = JSON.parse(annotations[VIEW_ANNOTATION] ?? "{}");
    for (const [k, v] of Object.entries(parsed ?? {})) if (typeof v === "string") view.set(k, v);
  } catch { /* acknowledges nothing */ }
  try {
    const parsed = JSON.parse(annotations[RELEASING_ANNOTATION] ?? "[]");
    if (Array.isArray(parsed)) {
      for (const u of parsed) if (typeof u === "string") releasing.push(u);
    }
  } catch { /* releases nothing known */ }
  return { id, incarnation, view, releasing };
}

/** A gauge's reading of a replica's shard gate (for `/metrics`). */
export interface ShardSample {
  /** The shard group. */
  group: string;
  /** Members in this replica's view (0 while it is not a member). */
  members: number;
  /** Objects this replica has taken on and not released. */
  owned: number;
  /** Objects this replica is releasing. */
  releasing: number;
}
