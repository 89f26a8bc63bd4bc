/**
 * The flags types of the commands follow their options' specs (`_commands.ts`,
 * `_operator_flags.ts`): every option is a flag under its key (`-m` and `-n` under plural names),
 * of the type its spec gives (choices, `parse`'s result, true/false for an on/off option), and
 * optional for a caller in code unless the function needs it. Checked by `deno check`: each
 * `@ts-expect-error` line must be an error, so a flags type that drifts from its spec fails.
 */

import assert from "node:assert/strict";
import type {
  ApiServerValues,
  FreezeValues,
  ManifestsValues,
  RbacValues,
  RunValues,
} from "../../src/cli/_commands.ts";
import type { OperatorFlags } from "../../src/cli/_operator_flags.ts";
import type { ApiServerFlags } from "../../src/cli/apiserver.ts";
import type { ManifestsFlags } from "../../src/cli/manifests.ts";
import type { PeeringFlags } from "../../src/cli/peering.ts";
import type { RunFlags } from "../../src/cli/run.ts";

/** True when A and B are the same type (not just assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

/** The options' keys that a flags type lacks, but for the renamed ones. */
type Missing<V, F, Renamed extends string> = Exclude<keyof V, Renamed | keyof F>;

// Every option of a command is a flag (the renamed ones under their new names).
const runComplete: Equal<Missing<RunValues, RunFlags, "module" | "namespace">, never> = true;
const apiserverComplete: Equal<Missing<ApiServerValues, ApiServerFlags, never>, never> = true;
const peeringComplete: Equal<Missing<FreezeValues, PeeringFlags, "namespace">, never> = true;
const operatorComplete: Equal<
  Missing<RbacValues, OperatorFlags, "module" | "namespace" | "crd">,
  never
> = true;
const manifestsComplete: Equal<
  Missing<ManifestsValues, OperatorFlags & ManifestsFlags, "module" | "namespace" | "crd">,
  never
> = true;

// Of the type its spec gives: choices, parse's result, on/off as a plain boolean.
const logFormat: Equal<RunFlags["logFormat"], "plain" | "full" | "json" | undefined> = true;
const priority: Equal<RunFlags["priority"], number | undefined> = true;
const verbose: Equal<RunFlags["verbose"], boolean | undefined> = true;
const shards: Equal<RunFlags["shards"], string | true | undefined> = true;
const fsync: Equal<ApiServerFlags["dataDirFsync"], "group" | "write" | "off" | undefined> = true;
const lifetime: Equal<PeeringFlags["lifetime"], number | undefined> = true;
const replicas: Equal<ManifestsFlags["replicas"], number | undefined> = true;

Deno.test("the flags types follow the options' specs (checked by deno check)", () => {
  const run: RunFlags = { paths: [], modules: [], namespaces: [], logFormat: "json", dev: true };
  // @ts-expect-error -- not a choice of --log-format
  run.logFormat = "xml";
  // @ts-expect-error -- an on/off option is a plain boolean
  run.verbose = "yes";
  // @ts-expect-error -- --priority's parse gives a number
  run.priority = "100";
  // @ts-expect-error -- -m is a list under a plural name: `modules`
  const renamed: RunFlags = { paths: [], modules: [], namespaces: [], module: [] };
  // Options with defaults stay optional for a caller in code: the address only for the server.
  const apiserver: ApiServerFlags = { host: "127.0.0.1", port: 0 };
  // @ts-expect-error -- not a choice of --data-dir-fsync
  apiserver.dataDirFsync = "sometimes";
  // @ts-expect-error -- --image is mandatory
  const manifests: ManifestsFlags = { replicas: 2 };
  const peering: PeeringFlags = { namespaces: [], lifetime: 60 };
  // @ts-expect-error -- --lifetime's parse gives a number
  peering.lifetime = "60";
  assert.deepEqual(
    [
      runComplete,
      apiserverComplete,
      peeringComplete,
      operatorComplete,
      manifestsComplete,
      logFormat,
      priority,
      verbose,
      shards,
      fsync,
      lifetime,
      replicas,
    ].every(Boolean),
    true,
  );
  assert.equal(run.logFormat, "xml");
  assert.deepEqual([renamed.modules, manifests.replicas, peering.lifetime], [[], 2, "60"]);
  assert.equal(apiserver.dataDirFsync, "sometimes");
});
