/**
 * The list of `deno task mutants` (tools/mutants.ts): one plausible one-line bug per entry in a
 * central function, and the tests that must catch it. `original` must occur exactly once in
 * `file` (the tool and tests/tools/mutants_test.ts fail otherwise), so when a listed line
 * changes, its entry changes with it — and the new line is seen caught again.
 *
 * Keep each entry's tests few and fast: one run of the whole list should stay under ~10
 * minutes on a loaded 2-core machine.
 *
 * @module
 */

import type { Mutant } from "./mutants.ts";

/** The mutants, in the order they run. */
export const MUTANTS: readonly Mutant[] = [
  // --- Guarantees that had no test (issue 26) -----------------------------------------------
  {
    id: "timeout-per-attempt",
    file: "src/core/actions/execution.ts",
    original: "return deadline(call, timeout - runtime, clock, () => {",
    mutant: "return deadline(call, timeout, clock, () => {",
    tests: ["tests/core/timeout_first_attempt_test.ts"],
    why: "a retried attempt gets a full timeout, not what is left since the first attempt",
  },
  {
    id: "server-ignores-rv-precondition",
    file: "src/apiserver/objects.ts",
    original: 'if (typeof rv === "string" && rv !== current.metadata.resourceVersion) {',
    mutant: "if (false) {",
    tests: ["tests/apiserver/delete_options_test.ts", "tests/clients/deleting_test.ts"],
    why: "a delete with a stale resourceVersion precondition deletes anyway",
  },
  {
    id: "client-drops-preconditions",
    file: "src/cogs/clients/deleting.ts",
    original:
      "if (options.preconditions !== undefined) body.preconditions = options.preconditions;",
    mutant: "",
    tests: ["tests/clients/deleting_test.ts", "tests/reactor/sharding_expiry_test.ts"],
    why: "the client does not send a delete's preconditions",
  },
  {
    id: "sharding-deletes-unconditionally",
    file: "src/core/reactor/sharding.ts",
    original: 'preconditions: { resourceVersion: body.metadata?.resourceVersion ?? "" },',
    mutant: "",
    tests: ["tests/reactor/sharding_expiry_test.ts"],
    why: "an expired member Lease is deleted even if it was renewed meanwhile",
  },
  {
    id: "client-drops-grace",
    file: "src/cogs/clients/deleting.ts",
    original: "body.gracePeriodSeconds = options.gracePeriodSeconds;",
    mutant: "",
    tests: ["tests/clients/deleting_test.ts"],
    why: "the client does not send a delete's gracePeriodSeconds",
  },
  {
    id: "server-ignores-grace",
    file: "src/apiserver/server.ts",
    original: "grace = body.gracePeriodSeconds ?? undefined;",
    mutant: "grace = undefined;",
    tests: ["tests/apiserver/delete_options_test.ts"],
    why: "the server does not read gracePeriodSeconds from a delete's body",
  },
  {
    id: "untrimmed-deleting-view",
    file: "src/core/reactor/processing.ts",
    original: "op.daemons.touch(memory.spawned, trimBody(body));",
    mutant: "op.daemons.touch(memory.spawned, body);",
    tests: ["tests/reactor/kept_bodies_test.ts"],
    why: "a daemon's view of an object being deleted keeps managedFields",
  },
  {
    id: "untrimmed-spawned-view",
    file: "src/core/reactor/processing.ts",
    original:
      "memory.spawned = op.daemons.observe(memory.spawned, resource, api, trimBody(body), context());",
    mutant: "memory.spawned = op.daemons.observe(memory.spawned, resource, api, body, context());",
    tests: ["tests/reactor/kept_bodies_test.ts"],
    why: "daemons' and timers' views keep managedFields and the last-applied annotation",
  },
  {
    id: "untrimmed-reconciled-parent",
    file: "src/core/reactor/processing.ts",
    original: "op.reconcilers.observe(resource, api, trimBody(result.patched ?? body), deleting,",
    mutant: "op.reconcilers.observe(resource, api, result.patched ?? body, deleting,",
    tests: ["tests/reactor/kept_bodies_test.ts"],
    why: "a reconciled parent's kept body keeps managedFields",
  },
  {
    id: "run-skips-first-module",
    file: "src/cli/run.ts",
    original: "for (const module of modules) {",
    mutant: "for (const module of modules.slice(1)) {",
    tests: ["tests/cli/run_flags_test.ts"],
    why: "kopf run -m does not load the (first) module",
  },
  {
    id: "leader-election-namespace-ignored",
    file: "src/cli/run.ts",
    original: "settings.leaderElection.namespace = flags.leaderElectionNamespace;",
    mutant: "",
    tests: ["tests/cli/run_flags_test.ts"],
    why: "--leader-election-namespace does not move the Lease",
  },
  {
    id: "latency-jitter-ignored",
    file: "src/apiserver/faults.ts",
    original: "const ms = base + (jitter ? this.#random() * jitter : 0);",
    mutant: "const ms = base;",
    tests: ["tests/apiserver/server_options_test.ts"],
    why: "the latencyJitterMs fault adds no delay",
  },
  {
    id: "kubernetes-minor-ignored",
    file: "src/apiserver/server.ts",
    original: "versionInfo(this.#options.kubernetesMinor ?? 33)",
    mutant: "versionInfo(33)",
    tests: ["tests/apiserver/server_options_test.ts"],
    why: "startApiServer({ kubernetesMinor }) does not change /version",
  },
  // --- Examples state results that are checked ----------------------------------------------
  {
    id: "example-expects-wrong-op",
    file: "src/cogs/structs/diffs.ts",
    original: 'assert.deepEqual(opOf(diff({}, { a: 1 })[0]!), "add");',
    mutant: 'assert.deepEqual(opOf(diff({}, { a: 1 })[0]!), "remove");',
    tests: ["src/cogs/structs/diffs.ts"],
    why: "a JSDoc example states a wrong result",
  },
];
