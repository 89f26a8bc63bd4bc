/**
 * Several operators, and the development mode (Kopf's 06-peering example).
 *
 * When several operators serve the same resources (replicas in the cluster, or a developer's
 * operator on a workstation), they see each other through a peering object, announce their
 * priorities, and only the highest one handles the objects; the others pause — handlers,
 * daemons and timers — until it goes. The main use is the development mode: a developer runs
 * an operator with `--dev`, and the deployed ones stop processing until it exits.
 *
 * Once, create the peering CRDs and the `default` peering objects (after the example CRD):
 *
 *     kubectl apply -f peering.yaml
 *     kubectl apply -f examples/06-peering/default.yaml
 *
 * In shell A, then in shell B, start an operator:
 *
 *     deno run -A cli.ts run -A --verbose examples/06-peering/example.ts
 *
 * Both complain about a sibling with the same priority, and both freeze:
 *
 *     [WARNING ] Possibly conflicting operators with the same priority: [<Peer …: priority=0, …>].
 *     [WARNING ] Pausing all operators, including self: [<Peer …>, <Peer …>]
 *
 * Stop B (Ctrl+C) and start it again with `--dev` (the priority 666): A pauses in favour of B —
 * `Pausing operations in favour of [<Peer …: priority=666, …>].` — and B handles the objects.
 * Stop B: A resumes (`Resuming operations after the pause. …`) and handles what changed
 * meanwhile. The same by hand, without a second operator:
 *
 *     deno run -A cli.ts freeze -A --lifetime 60 --priority 100 --message "Maintenance"
 *     deno run -A cli.ts resume -A
 */
import * as kopf from "../../mod.ts";

kopf.on.create("kopfexamples", function create_fn() {
  // Nothing to do: the log line "Handler 'create_fn' succeeded." tells which operator ran it.
});
