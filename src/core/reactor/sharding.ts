/**
 * Sharding in a running operator (`kopf run --shards[=GROUP]`,
 * `settings.sharding`): this replica's member Lease, renewed and carrying
 * what the replica publishes; a watch of the group's member Leases, with
 * expired members removed; and the per-object gate (engines/sharding.ts)
 * that the per-object queues ask before every cycle.
 *
 * The loops:
 * - the **renewer** writes the member Lease every `renewPeriod`, and soon
 *   (a short debounce) after the gate's published state changes (a new view,
 *   a release finished). It joins the gate after the first write of an
 *   incarnation, and fences it — no object admitted, all released — when
 *   `renewDeadline` passes since the last successful write was *sent*, or at
 *   once when the Lease turns out to be lost (deleted or rewritten by
 *   others); the next write then carries a new incarnation.
 * - the **observer** watches the Leases labelled with the group and feeds the
 *   live members to the gate; when a Lease has not changed for its duration
 *   on our clock, it deletes it with its resourceVersion as the precondition
 *   (shard_leases.ts: a member that renewed after all stays).
 *
 * Leaving is the last step of a graceful exit, after the daemons and the
 * watchers have stopped: the renewer stops after its current write and the
 * Lease is deleted, so the others take this replica's objects at once.
 *
 * Peering: replicas of a shard group are peers of equal standing, so an
 * operator with sharding runs with peering standalone — unless the peering is
 * mandatory (`--peering NAME`), where Kopf's rules apply as well (e.g.
 * `kopf freeze` with a higher priority pauses every shard).
 *
 * The wiring only: the policy (the gate, the hand-off) is engines/sharding.ts,
 * the same name one layer down, with engines/shard_leases.ts and
 * engines/shard_metrics.ts; {@link shardingPart} is how a running operator
 * starts it (parts.ts, running.ts's list).
 *
 * @module
 */

import { traceTransition, TRACING } from "../../cogs/tracing/tracing.ts";
import { type CancelTimer, realClock } from "../../cogs/aio/clock.ts";
import { ApiClient } from "../../cogs/clients/api.ts";
import { deleteObject } from "../../cogs/clients/deleting.ts";
import { ConflictError, NotFoundError } from "../../cogs/clients/errors.ts";
import { LEASES, readLease } from "../../cogs/clients/lease_records.ts";
import { infiniteWatch } from "../../cogs/clients/watching.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { selectSpecificNamespaces } from "../../cogs/structs/namespace_patterns.ts";
import { OperatorLogger } from "../actions/loggers.ts";
import { detectOwnId } from "../engines/peers.ts";
import { OperatorError } from "./errors.ts";
import { MemberLease, MemberTable } from "../engines/shard_leases.ts";
import { observeShards } from "../engines/shard_metrics.ts";
import { memberAnnotations, SHARD_GROUP_LABEL, ShardGate, viewKey } from "../engines/sharding.ts";
import { need, type OperatorPart, type Parts, type PartTasks } from "./parts.ts";

/**
 * What the sharding of an operator needs: the client, settings, log sink, namespaces, identity,
 * clock; the metrics (the membership's gauges go there, shard_metrics.ts), if given.
 */
export type ShardingParts = Parts;

/** The running sharding of an operator. */
export interface ShardingTasks extends PartTasks {
  /** The per-object gate for the queues; undefined without sharding. */
  gate: ShardGate | undefined;
}

/**
 * Where the member Leases live: the setting, else the operator's one literal namespace, else
 * `$POD_NAMESPACE`, else `default`.
 *
 * @param setting `settings.sharding.namespace`.
 * @param namespaces The served `-n` patterns (undefined: cluster-wide).
 * @param env Reads an environment variable (default: Deno's, where permitted).
 * @returns The namespace.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shardNamespace } from "./sharding.ts";
 * assert.deepEqual(shardNamespace(null, ["orders"], () => undefined), "orders");
 * assert.deepEqual(shardNamespace(null, undefined, () => "ops"), "ops");
 * assert.deepEqual(shardNamespace("leases", ["orders"]), "leases");
 * ```
 */
export function shardNamespace(
  setting: string | null,
  namespaces: string[] | undefined,
  env: (name: string) => string | undefined = readEnv,
): string {
  if (setting !== null) return setting;
  const literal = namespaces ? selectSpecificNamespaces(namespaces) : [];
  if (namespaces?.length === 1 && literal.length === 1) return literal[0]!;
  return env("POD_NAMESPACE") || "default";
}

function readEnv(name: string): string | undefined {
  const granted = Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
  return granted ? Deno.env.get(name) : undefined;
}

/**
 * Checks the sharding settings once the startup handlers have run: the durations fit together,
 * and leader election is not on as well (one active replica and all replicas active exclude
 * each other).
 *
 * @param settings The settings.
 * @throws {OperatorError} With one line saying what to change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorSettings } from "@kopf/kopf";
 * import { checkSharding } from "./sharding.ts";
 * const settings = new OperatorSettings();
 * settings.sharding.enabled = true;
 * settings.sharding.renewDeadline = 20;
 * try {
 *   checkSharding(settings);
 * } catch (e) {
 *   assert.deepEqual((e as Error).message, "settings.sharding.leaseDuration (15s) must be greater than renewDeadline (20s).");
 * }
 * ```
 */
export function checkSharding(settings: OperatorSettings): void {
  if (!settings.sharding.enabled) return;
  try {
    settings.sharding.check();
  } catch (e) {
    throw new OperatorError((e as Error).message, { cause: e });
  }
  if (settings.leaderElection.enabled) {
    throw new OperatorError(
      "Sharding and leader election exclude each other (all replicas active vs. one): " +
        "use --shards or --leader-election, not both.",
    );
  }
}

/** A new incarnation token: 12 random base-36 characters. */
function token(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return [...bytes].map((b) => b.toString(36).padStart(2, "0")).join("").slice(0, 12);
}

/**
 * Starts the sharding of an operator (nothing unless `settings.sharding.enabled`).
 *
 * @param parts The client, settings, log sink, namespaces, metrics, identity and clock.
 * @returns The gate, the task, and how to leave.
 * @throws {TypeError} When the durations do not fit ({@link checkSharding} says it earlier).
 */
export function startSharding(parts: ShardingParts): ShardingTasks {
  const s = parts.settings.sharding;
  if (!s.enabled) return { gate: undefined, tasks: [], leave: () => Promise.resolve() };
  s.check();
  if (!parts.settings.peering.mandatory) parts.settings.peering.standalone = true;
  // The member Leases get a client of their own (its own request slots and connections): a
  // renewal must not wait behind a burst of the handlers' patches and miss its deadline.
  const metrics = parts.metrics;
  const api = new ApiClient({
    vault: parts.api.vault,
    settings: parts.api.settings,
    logger: parts.api.logger,
    onRequest: metrics && ((r) => metrics.apiRequest(r)),
  });
  const clock = parts.clock ?? realClock;
  const group = s.group;
  const identity = parts.identity ?? detectOwnId(false);
  const namespace = shardNamespace(s.namespace, parts.namespaces);
  const logger = new OperatorLogger(parts.sink, "kopf.sharding");
  const gate = new ShardGate(identity, group);
  const lease = new MemberLease({
    api,
    namespace,
    group,
    identity,
    leaseDuration: s.leaseDuration,
    clock,
  });
  const table = new MemberTable(clock);
  const unobserve = metrics && observeShards(metrics, () => gate.sample());
  const stop = new AbortController();
  let leaving = false;
  const where = `shard group '${group}'`;

  // --- The renewer: writes the member Lease; joins and fences the gate. -----------------------
  let incarnation = token();
  let deadline: CancelTimer | undefined;
  let dirty = false;
  let wake: (() => void) | undefined;
  let failing = false;
  const fence = (why: string) => {
    deadline?.();
    deadline = undefined;
    incarnation = token();
    if (!gate.member) return;
    logger.warning(`${why}: stopping all objects of the ${where} until it is renewed.`);
    if (TRACING) traceTransition("kopf.sharding fenced", { "kopf.sharding.reason": why });
    gate.fence();
  };
  const unchange = gate.onChange(() => {
    dirty = true;
    wake?.();
  });
  const renewer = (async () => {
    while (!leaving) {
      const sent = clock.now();
      const written = incarnation;
      dirty = false;
      const outcome = await lease.write(memberAnnotations({ ...gate.state(), incarnation }));
      if (outcome === "held" && written === incarnation) {
        failing = false;
        deadline?.();
        deadline = clock.timer(
          sent + s.renewDeadline * 1000 - clock.now(),
          () => fence(`The member Lease '${lease.name}' was not renewed for ${s.renewDeadline}s`),
        );
        if (!gate.member) {
          gate.join(incarnation);
          logger.info(
            `Joined the ${where} as '${identity}' (Lease '${lease.name}' in '${namespace}').`,
          );
          if (TRACING) traceTransition("kopf.sharding joined", { "kopf.lease": lease.name });
        }
      } else if (outcome === "lost") {
        fence(`The member Lease '${lease.name}' was deleted or taken by another replica`);
        continue;
      } else if (outcome === "failed" && !failing) {
        failing = true;
        const e = lease.lastError;
        logger.warning(
          `Cannot write the member Lease '${lease.name}': ${
            e instanceof Error ? e.message.split("\n")[0] : e
          }; retrying every ${s.renewPeriod}s.`,
        );
      }
      if (leaving) break;
      // Soon after a change of what we publish (debounced), else at the next renewal.
      const changed = dirty;
      await new Promise<void>((resolve) => {
        const cancel = clock.timer(changed ? 50 : s.renewPeriod * 1000, () => done());
        const done = () => {
          cancel();
          wake = undefined;
          resolve();
        };
        wake = () => (leaving || !changed) && done();
        if (leaving) done();
      });
    }
    deadline?.();
  })();

  // --- The observer: the group's member Leases, expired ones removed. -------------------------
  let expiry: CancelTimer | undefined;
  const deleting = new Set<string>();
  let lastView = "";
  const update = () => {
    gate.observe(table.members());
    const view = gate.state().view;
    const key = viewKey(view);
    if (gate.member && key !== lastView) {
      lastView = key;
      const ids = [...view.keys()].sort();
      logger.info(
        `The ${where} has ${ids.length} member${ids.length === 1 ? "" : "s"}: ${ids.join(", ")}.`,
      );
      if (TRACING) {
        traceTransition("kopf.sharding members", {
          "kopf.sharding.members": ids.length,
          "kopf.sharding.member_ids": ids.join(","),
        });
      }
    }
    expiry?.();
    const next = table.nextExpiry();
    const expired = table.expired().filter((b) =>
      b.metadata?.name !== lease.name && !deleting.has(b.metadata?.name ?? "")
    );
    if (expired.length) void Promise.all(expired.map(remove)).then(update);
    else if (next !== undefined) expiry = clock.timer(next - clock.now() + 1, update);
  };
  const remove = async (body: { metadata?: { name?: string; resourceVersion?: string } }) => {
    const name = body.metadata?.name ?? "";
    deleting.add(name);
    try {
      await deleteObject(api, LEASES, namespace, name, {
        preconditions: { resourceVersion: body.metadata?.resourceVersion ?? "" },
        ignoreNotFound: true,
        signal: stop.signal,
      });
      table.remove(name);
      logger.info(`The member Lease '${name}' has expired: its objects go to the others.`);
      if (TRACING) traceTransition("kopf.sharding expired", { "kopf.lease": name });
    } catch (e) {
      if (stop.signal.aborted) return;
      if (e instanceof ConflictError) {
        // It changed after all (our watch lags): take in what it is now.
        const fresh = await readLease(api, namespace, name, { signal: stop.signal }).catch(() =>
          undefined
        );
        if (fresh) table.apply("MODIFIED", fresh.body);
        else table.remove(name);
      } else if (!(e instanceof NotFoundError)) {
        logger.warning(`Cannot delete the expired member Lease '${name}': ${e}`);
        await clock.sleep(s.renewPeriod, stop.signal);
      }
    } finally {
      deleting.delete(name);
    }
  };
  const observer = (async () => {
    while (!stop.signal.aborted) {
      let listed = false;
      try {
        for await (
          const event of infiniteWatch(api, LEASES, namespace, {
            labelSelector: `${SHARD_GROUP_LABEL}=${group}`,
            signal: stop.signal,
          })
        ) {
          if (event.type === "LISTED") listed = true;
          else table.apply(event.type, event.object);
          if (listed) update();
        }
      } catch (e) {
        if (stop.signal.aborted) break;
        logger.error(
          `Watching the member Leases of the ${where} failed: ${
            e instanceof Error ? e.message.split("\n")[0] : e
          }; retrying in ${s.renewPeriod}s.`,
        );
        await clock.sleep(s.renewPeriod, stop.signal);
      }
    }
    expiry?.();
  })();

  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  return {
    gate,
    tasks: [{ name: "sharding", done }],
    async leave() {
      if (leaving) return done;
      leaving = true;
      wake?.();
      await renewer;
      unchange();
      if (await lease.delete()) {
        logger.info(`Left the ${where}: the member Lease '${lease.name}' is deleted.`);
        if (TRACING) traceTransition("kopf.sharding left", { "kopf.lease": lease.name });
      }
      stop.abort();
      await observer;
      unobserve?.();
      finished();
    },
  };
}

/**
 * Sharding as a part of a running operator (running.ts): its settings checked after the startup
 * handlers; started before the watchers, whose queues ask its gate; left after the watchers and
 * daemons have stopped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shardingPart } from "./sharding.ts";
 * assert.equal(shardingPart.name, "sharding");
 * ```
 */
export const shardingPart: OperatorPart = {
  name: "sharding",
  check: (run) => checkSharding(run.settings),
  start(run) {
    const op = need(run, "op");
    const api = need(run, "api");
    const { namespaces, metrics } = run;
    const sharding = startSharding({
      ...op,
      api,
      namespaces,
      metrics,
      identity: run.options.identity,
    });
    op.shards = sharding.gate; // the queues' gate
    return { tasks: sharding.tasks, exit: { shards: () => sharding.leave() } };
  },
};
