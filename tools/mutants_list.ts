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
    file: "src/apiserver/objects/delete.ts",
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
    file: "src/apiserver/serving/request_bodies.ts",
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
    id: "untrimmed-own-patch",
    file: "src/core/engines/spawning.ts",
    original: "if (patched) touch(object, trimBody(patched), this.clock);",
    mutant: "if (patched) touch(object, patched, this.clock);",
    tests: ["tests/reactor/kept_bodies_test.ts"],
    why: "the body a daemon's or timer's own patch returns is kept with managedFields",
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
    file: "src/apiserver/shared/faults.ts",
    original: "const ms = base + (jitter ? this.#random() * jitter : 0);",
    mutant: "const ms = base;",
    tests: ["tests/apiserver/server_options_test.ts"],
    why: "the latencyJitterMs fault adds no delay",
  },
  {
    id: "kubernetes-minor-ignored",
    file: "src/apiserver/serving/server.ts",
    original: "versionInfo(this.#options.kubernetesMinor ?? 33)",
    mutant: "versionInfo(33)",
    tests: ["tests/apiserver/server_options_test.ts"],
    why: "startApiServer({ kubernetesMinor }) does not change /version",
  },
  // --- Central functions --------------------------------------------------------------------
  {
    id: "diff-by-identity",
    file: "src/cogs/structs/diffs.ts",
    original: "} else if (!deepEqual(a, b)) {",
    mutant: "} else if (a !== b) {",
    tests: ["tests/structs/diffs_test.ts"],
    why: "equal arrays and values compared by identity: spurious changes",
  },
  {
    id: "diffbase-keeps-status",
    file: "src/cogs/configs/diffbase.ts",
    original: 'const NOT_ESSENCE = new Set(["apiVersion", "kind", "metadata", "status"]);',
    mutant: 'const NOT_ESSENCE = new Set(["apiVersion", "kind", "metadata"]);',
    tests: ["tests/configs/diffbase_test.ts"],
    why: "the diff-base essence keeps status: every status write looks like an update",
  },
  {
    id: "progress-delay-in-ms",
    file: "src/core/actions/progression.ts",
    original: "this.delayed = new Date(now.getTime() + (outcome.delay ?? 0) * 1000);",
    mutant: "this.delayed = new Date(now.getTime() + (outcome.delay ?? 0));",
    tests: ["tests/core/progress_test.ts", "tests/core/execution_test.ts"],
    why: "a retry's delay stored as milliseconds, not seconds",
  },
  {
    id: "progress-retries-not-counted",
    file: "src/core/actions/progression.ts",
    original: "this.retries += 1;",
    mutant: "",
    tests: ["tests/core/execution_test.ts"],
    why: "attempts are not counted: `retries` never runs out",
  },
  {
    id: "backoff-ignored",
    file: "src/core/actions/outcomes.ts",
    original: "return { final: false, error: e, delay: backoff };",
    mutant: "return { final: false, error: e, delay: 0 };",
    tests: ["tests/core/execution_test.ts"],
    why: "an arbitrary error is retried at once, not after the backoff",
  },
  {
    id: "temporary-delay-ignored",
    file: "src/core/actions/outcomes.ts",
    original: "return { final: false, error: e, delay: e.delay };",
    mutant: "return { final: false, error: e, delay: backoff };",
    tests: ["tests/core/execution_test.ts"],
    why: "TemporaryError's own delay is ignored",
  },
  {
    id: "finalizer-removes-last",
    file: "src/core/actions/application.ts",
    original: "const index = finalizers?.indexOf(finalizer) ?? -1;",
    mutant: "const index = (finalizers?.length ?? 0) - 1;",
    tests: ["tests/core/finalizers_test.ts"],
    why: "removing our finalizer removes whichever is last (another controller's)",
  },
  {
    id: "finalizer-edit-unguarded",
    file: "src/core/actions/application.ts",
    original:
      '      path: "/metadata/resourceVersion",\n      value: current.metadata.resourceVersion,',
    mutant: '      path: "/metadata/name",\n      value: current.metadata.name,',
    tests: ["tests/core/finalizers_test.ts"],
    why: "finalizer edits are not guarded by the resourceVersion: a concurrent edit is lost",
  },
  {
    id: "deletion-blocked-by-any-finalizer",
    file: "src/core/intents/causes.ts",
    original: "return Array.isArray(finalizers) && finalizers.includes(finalizer);",
    mutant: "return Array.isArray(finalizers) && finalizers.length > 0;",
    tests: ["tests/core/causes_test.ts"],
    why: "any finalizer counts as ours",
  },
  {
    id: "watch-bookmark-rv-ignored",
    file: "src/cogs/clients/watcher.ts",
    original:
      '      if (version) resourceVersion = version;\n      continue;\n    }\n    if (type !== "ADDED"',
    mutant: '      continue;\n    }\n    if (type !== "ADDED"',
    tests: ["tests/clients/watch_resume_test.ts"],
    why: "bookmarks do not advance the resourceVersion a watch resumes from",
  },
  {
    id: "watch-event-rv-ignored",
    file: "src/cogs/clients/watcher.ts",
    original:
      '    if (version) resourceVersion = version;\n    if (type === "DELETED") inventory.deleted(object);',
    mutant: '    if (type === "DELETED") inventory.deleted(object);',
    tests: ["tests/clients/watch_resume_test.ts"],
    why: "a resumed watch starts from the list's resourceVersion: events come twice",
  },
  {
    id: "queue-does-not-wait-own-write",
    file: "src/core/reactor/own_writes.ts",
    original: "const at = lastAtVersion(batch, this.#own.metadata?.resourceVersion);",
    mutant: "const at = batch.length - 1;",
    tests: ["tests/reactor/queueing_test.ts", "tests/reactor/own_write_tracker_test.ts"],
    why: "the queue acts on events older than its own write instead of waiting for it",
  },
  {
    id: "apiserver-stale-update-accepted",
    file: "src/apiserver/objects/update.ts",
    original: "if (rv && rv !== current.metadata.resourceVersion) {",
    mutant: "if (false) {",
    tests: ["tests/apiserver/server_test.ts"],
    why: "an update with a stale resourceVersion overwrites instead of 409 Conflict",
  },
  {
    id: "apiserver-history-replays-start",
    file: "src/apiserver/storage/store.ts",
    original: "if (h[mid]!.rv <= afterRv) lo = mid + 1;",
    mutant: "if (h[mid]!.rv < afterRv) lo = mid + 1;",
    tests: ["tests/apiserver/store_test.ts"],
    why: "a watch resuming from N replays the change at N too",
  },
  {
    id: "label-notin-needs-label",
    file: "src/cogs/structs/label_selector.ts",
    original: "if (has && values.includes(value as string)) return false;",
    mutant: "if (!has || values.includes(value as string)) return false;",
    tests: ["tests/structs/label_selector_test.ts"],
    why: "`!=`/`notin` no longer match objects without the label",
  },
  {
    id: "field-selector-ignores-operator",
    file: "src/cogs/structs/field_selector.ts",
    original: 'if ((actual === value) !== (operator === "=")) return false;',
    mutant: "if (actual !== value) return false;",
    tests: ["tests/structs/field_selector_test.ts"],
    why: "a field selector's `!=` matches like `=`",
  },
  {
    id: "merge-patch-null-kept",
    file: "src/cogs/structs/merge_patch.ts",
    original: "if (value === null) {",
    mutant: "if (value === undefined) {",
    tests: ["tests/structs/merge_patch_test.ts"],
    why: "a merge patch's null does not delete the key",
  },
  // --- Examples state results that are checked ----------------------------------------------
  {
    id: "example-expects-wrong-op",
    file: "src/cogs/structs/diffs.ts",
    original: 'assert.deepEqual(opOf(diff({}, { a: 1 })[0]!), "add");',
    mutant: 'assert.deepEqual(opOf(diff({}, { a: 1 })[0]!), "remove");',
    tests: ["tests/docs/jsdoc_examples_cogs_data_test.ts"],
    why: "a JSDoc example states a wrong result",
  },
];
