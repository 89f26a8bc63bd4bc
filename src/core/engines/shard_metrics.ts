/**
 * Sharding's gauges on `/metrics`, in an operator's own registry (metrics.ts):
 *
 * - `kopf_shard_members{group}` — members in this replica's view of its shard
 *   group (0 while it is not a member: before it joined, or fenced);
 * - `kopf_shard_owned_objects{group}` — objects this replica has taken on and
 *   not released (handled here, by it alone);
 * - `kopf_shard_releasing_objects{group}` — objects it is handing over (an
 *   in-flight cycle finishing, daemons or timers exiting).
 *
 * Why a module of its own and not more methods of `OperatorMetrics`: the
 * gauges exist only in operators that shard, and they are read from the gate
 * at each scrape (a source function), so processing an object records nothing.
 *
 * @module
 */

import type { MetricsRegistry } from "../../cogs/metrics/registry.ts";
import type { OperatorMetrics } from "./metrics.ts";
import type { ShardSample } from "./sharding.ts";

/** The sources of each registry (the gauges are registered once per registry). */
const sources = new WeakMap<MetricsRegistry, Set<() => ShardSample>>();

/**
 * Adds a source of shard samples to an operator's metrics, read at each scrape.
 *
 * @param metrics The operator's metrics.
 * @param source Gives the gate's current reading.
 * @returns A function that removes the source.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorMetrics } from "@kopf/kopf";
 * import { observeShards } from "./shard_metrics.ts";
 * const metrics = new OperatorMetrics();
 * const remove = observeShards(metrics, () => ({ group: "kopf", members: 3, owned: 334, releasing: 0 }));
 * const text = await metrics.metrics();
 * assert.deepEqual(text.includes('kopf_shard_owned_objects{group="kopf"} 334'), true);
 * remove();
 * ```
 */
export function observeShards(metrics: OperatorMetrics, source: () => ShardSample): () => void {
  const registry = metrics.registry;
  let set = sources.get(registry);
  if (!set) {
    const all = set = new Set();
    sources.set(registry, all);
    const gauge = (name: string, help: string, pick: (s: ShardSample) => number) =>
      registry.gauge({
        name,
        help,
        labelNames: ["group"],
        collect(gauge) {
          gauge.reset();
          for (const read of all) {
            const s = read();
            gauge.set({ group: s.group }, pick(s));
          }
        },
      });
    gauge(
      "kopf_shard_members",
      "Members of the shard group in this replica's view (0 while not a member).",
      (s) => s.members,
    );
    gauge(
      "kopf_shard_owned_objects",
      "Objects this replica has taken on as their shard owner and not released.",
      (s) => s.owned,
    );
    gauge(
      "kopf_shard_releasing_objects",
      "Objects this replica is handing over to another member.",
      (s) => s.releasing,
    );
  }
  set.add(source);
  return () => void set.delete(source);
}
