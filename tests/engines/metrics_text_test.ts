/**
 * The exact text of an operator's `/metrics` for a few operations, pinned as
 * prom-client wrote it before the switch to our own registry (captured from
 * the same calls on both): names, HELP texts, types, label sets and their
 * order, values, blank lines — a scraper sees no difference.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { observeRole } from "../../src/core/engines/roles.ts";
import { observeShards } from "../../src/core/engines/shard_metrics.ts";

const RUNS = [
  "# HELP kopf_handler_runs_total Runs of handlers (each attempt), by handler id and kind.",
  "# TYPE kopf_handler_runs_total counter",
];

Deno.test("`OperatorMetrics.metrics()` writes counters, escaped labels, role and shard gauges as before", async () => {
  const m = new kopf.OperatorMetrics();
  m.handlerRun("createFn", "changing", 0.12, false);
  m.handlerRun("createFn", "changing", 0.005, true);
  m.handlerRun('weird\\fn"x\ny', "event", 3, true);
  m.apiRequest({
    verb: "patch",
    resource: "pods",
    subresource: undefined,
    code: 0,
    method: "PATCH",
    path: "/x",
    attempt: 1,
    durationMs: 3,
  });
  m.countEvents("posted", 2);
  m.countEvents("spam", 3);
  m.observeQueues(() => [{ resource: "pods", depth: 3, objects: 2 }, {
    resource: "kex",
    depth: 0,
    objects: 1,
  }]);
  m.observeQueues(() => [{ resource: "pods", depth: 1, objects: 1 }]);
  observeRole(m, () => "standby").leaderElected();
  const remove = observeShards(m, () => ({ group: "kopf", members: 3, owned: 334, releasing: 0 }));
  observeShards(m, () => ({ group: "other", members: 0, owned: 0, releasing: 2 }));
  remove();
  const blocks = (await m.metrics()).split("\n\n");
  assert.equal(blocks.length, 16);
  assert.equal(
    blocks[0],
    [
      ...RUNS,
      'kopf_handler_runs_total{handler="createFn",kind="changing"} 2',
      'kopf_handler_runs_total{handler="weird\\\\fn\\"x\\ny",kind="event"} 1',
    ].join("\n"),
  );
  assert.equal(
    blocks[2]!.split("\n").slice(0, 2).concat(blocks[2]!.split("\n").slice(7, 16)).join("\n"),
    [
      "# HELP kopf_handler_duration_seconds Durations of handler runs, by handler id and kind.",
      "# TYPE kopf_handler_duration_seconds histogram",
      'kopf_handler_duration_seconds_bucket{le="0.25",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_bucket{le="0.5",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_bucket{le="1",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_bucket{le="2.5",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_bucket{le="5",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_bucket{le="10",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_bucket{le="+Inf",handler="createFn",kind="changing"} 2',
      'kopf_handler_duration_seconds_sum{handler="createFn",kind="changing"} 0.125',
      'kopf_handler_duration_seconds_count{handler="createFn",kind="changing"} 2',
    ].join("\n"),
  );
  assert.equal(
    blocks[3],
    [
      "# HELP kopf_api_requests_total Requests to the Kubernetes API (each attempt), by verb and HTTP code (0: no answer).",
      "# TYPE kopf_api_requests_total counter",
      'kopf_api_requests_total{verb="patch",code="0"} 1',
    ].join("\n"),
  );
  assert.equal(
    blocks[4],
    [
      "# HELP kopf_watch_connects_total Watch-streams opened (connects and reconnects), by resource.",
      "# TYPE kopf_watch_connects_total counter",
    ].join("\n"),
  );
  assert.equal(
    blocks.slice(5, 8).join("\n\n"),
    [
      "# HELP kopf_events_posted_total Kubernetes Events created (a POST each).",
      "# TYPE kopf_events_posted_total counter",
      "kopf_events_posted_total 2",
      "",
      "# HELP kopf_events_folded_total Repeats of an event folded into its existing Event's count (a PATCH, as client-go).",
      "# TYPE kopf_events_folded_total counter",
      "kopf_events_folded_total 0",
      "",
      "# HELP kopf_events_aggregated_total Similar events (one object and reason, 10 messages in 10 minutes) posted or folded as one '(combined from similar events)' Event.",
      "# TYPE kopf_events_aggregated_total counter",
      "kopf_events_aggregated_total 0",
    ].join("\n"),
  );
  assert.equal(
    blocks.slice(9, 11).join("\n\n"),
    [
      "# HELP kopf_queue_depth Events waiting in the per-object queues, by resource.",
      "# TYPE kopf_queue_depth gauge",
      'kopf_queue_depth{resource="pods"} 4',
      'kopf_queue_depth{resource="kex"} 0',
      "",
      "# HELP kopf_queue_objects Objects with a live per-object worker, by resource.",
      "# TYPE kopf_queue_objects gauge",
      'kopf_queue_objects{resource="pods"} 3',
      'kopf_queue_objects{resource="kex"} 1',
    ].join("\n"),
  );
  assert.equal(
    blocks.slice(11).join("\n\n"),
    [
      "# HELP kopf_operator_role This replica's role, 1 for the current one: leader (it handles), standby (it waits for the leader-election Lease), paused (by a peer of higher priority or kopf freeze).",
      "# TYPE kopf_operator_role gauge",
      'kopf_operator_role{role="leader"} 0',
      'kopf_operator_role{role="standby"} 1',
      'kopf_operator_role{role="paused"} 0',
      "",
      "# HELP kopf_leader_transitions_total New holders of the leader-election Lease seen by this replica (itself included).",
      "# TYPE kopf_leader_transitions_total counter",
      "kopf_leader_transitions_total 1",
      "",
      "# HELP kopf_shard_members Members of the shard group in this replica's view (0 while not a member).",
      "# TYPE kopf_shard_members gauge",
      'kopf_shard_members{group="other"} 0',
      "",
      "# HELP kopf_shard_owned_objects Objects this replica has taken on as their shard owner and not released.",
      "# TYPE kopf_shard_owned_objects gauge",
      'kopf_shard_owned_objects{group="other"} 0',
      "",
      "# HELP kopf_shard_releasing_objects Objects this replica is handing over to another member.",
      "# TYPE kopf_shard_releasing_objects gauge",
      'kopf_shard_releasing_objects{group="other"} 2',
      "",
    ].join("\n"),
  );
});

Deno.test("`OperatorMetrics` with default labels and buckets writes them where prom-client did", async () => {
  const m = new kopf.OperatorMetrics({ labels: { operator: "b", zone: 'a"b' }, buckets: [0.1, 1] });
  m.handlerRun("createFn", "changing", 20, true);
  m.countEvents("aggregated", 5);
  const text = await m.metrics();
  const lines = (prefix: string) => text.split("\n").filter((l) => l.startsWith(prefix));
  assert.deepEqual(lines("kopf_handler_runs_total"), [
    'kopf_handler_runs_total{handler="createFn",kind="changing",operator="b",zone="a\\"b"} 1',
  ]);
  assert.deepEqual(lines("kopf_handler_duration_seconds"), [
    'kopf_handler_duration_seconds_bucket{le="0.1",operator="b",zone="a\\"b",handler="createFn",kind="changing"} 0',
    'kopf_handler_duration_seconds_bucket{le="1",operator="b",zone="a\\"b",handler="createFn",kind="changing"} 0',
    'kopf_handler_duration_seconds_bucket{le="+Inf",operator="b",zone="a\\"b",handler="createFn",kind="changing"} 1',
    'kopf_handler_duration_seconds_sum{operator="b",zone="a\\"b",handler="createFn",kind="changing"} 20',
    'kopf_handler_duration_seconds_count{operator="b",zone="a\\"b",handler="createFn",kind="changing"} 1',
  ]);
  assert.deepEqual(lines("kopf_events_aggregated_total"), [
    'kopf_events_aggregated_total{operator="b",zone="a\\"b"} 5',
  ]);
  assert.deepEqual(lines("kopf_events_dropped_total"), [
    'kopf_events_dropped_total{reason="spam",operator="b",zone="a\\"b"} 0',
    'kopf_events_dropped_total{reason="failed",operator="b",zone="a\\"b"} 0',
    'kopf_events_dropped_total{reason="overflow",operator="b",zone="a\\"b"} 0',
    'kopf_events_dropped_total{reason="unflushed",operator="b",zone="a\\"b"} 0',
  ]);
  assert.equal(m.contentType, "text/plain; version=0.0.4; charset=utf-8");
});
