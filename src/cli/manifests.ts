/**
 * `kopf manifests handlers.ts --image IMAGE`: prints what `kubectl apply -f -`
 * needs to run the operator in a cluster — its Namespace (with
 * `--create-namespace`), ServiceAccount, the CRDs of its typed resources
 * (`kopf crd`), the RBAC of `kopf rbac`, and a Deployment of the image that
 * deploy/Dockerfile builds, running `kopf run` with the same flags the
 * manifests were made for, so the rules and the running operator agree.
 *
 * The Deployment follows Kopf's deployment docs and adds what this port
 * serves: the probes of `--liveness` (a startup probe and a liveness probe on
 * its path, which answers 200 once the operator has listed what it serves; a
 * readiness probe on `/readyz`), `POD_ID` and `POD_NAMESPACE` from the
 * downward API (the peering and Lease identity, the sharding namespace), and
 * the `Recreate` strategy for a single replica without leader election or
 * sharding, so that two operators never handle the same objects during a
 * rollout.
 *
 * @module
 */

import { crds } from "../kits/crds.ts";
import type { OperatorFlags } from "./_operator_flags.ts";
import type { ManifestsOptionValues } from "./_options.ts";
import { loadOperator } from "./_operator_flags.ts";
import { resolver } from "./_catalog.ts";
import { operatorAccess } from "../core/reactor/access.ts";
import { type ManifestObject, manifestYaml, rbacObjects } from "./rbac.ts";

/**
 * The flags of `kopf manifests` beyond the operator's: the values of `MANIFESTS_OPTIONS`,
 * derived from their specs, each optional for a caller in code but the mandatory `--image`.
 */
export interface ManifestsFlags extends Partial<ManifestsOptionValues> {
  /** `--image`: the operator's image. */
  image: string;
}

/**
 * The `kopf run` arguments of the operator in the pod: its scope and modes as given to
 * `kopf manifests`, the probes, and the handlers file.
 *
 * @param flags The operator's flags.
 * @param manifest The manifests' flags.
 * @returns The arguments (after the image's entry point `kopf run`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runArgs } from "./manifests.ts";
 * const flags = {
 *   dev: false,
 *   standalone: false,
 *   paths: ["handlers.ts"],
 *   modules: [],
 *   namespaces: ["shop"],
 *   allNamespaces: false,
 *   crdFiles: [],
 *   name: "kopf-operator",
 *   accountNamespace: "default",
 * };
 * assert.deepEqual(runArgs(flags, { image: "op:1" }), [
 *   "--namespace=shop",
 *   "--liveness=http://0.0.0.0:8080/healthz",
 *   "handlers.ts",
 * ]);
 * assert.deepEqual(runArgs({ ...flags, namespaces: [], leaderElection: true }, { image: "op:1" }), [
 *   "--all-namespaces",
 *   "--leader-election",
 *   "--liveness=http://0.0.0.0:8080/healthz",
 *   "handlers.ts",
 * ]);
 * ```
 */
export function runArgs(flags: OperatorFlags, manifest: ManifestsFlags): string[] {
  const args: string[] = flags.namespaces.length
    ? flags.namespaces.map((ns) => `--namespace=${ns}`)
    : ["--all-namespaces"];
  if (flags.standalone) args.push("--standalone");
  if (flags.peering) args.push(`--peering=${flags.peering}`);
  if (flags.leaderElection === true) args.push("--leader-election");
  else if (flags.leaderElection) args.push(`--leader-election=${flags.leaderElection}`);
  if (flags.leaderElectionNamespace) {
    args.push(`--leader-election-namespace=${flags.leaderElectionNamespace}`);
  }
  if (flags.shards === true) args.push("--shards");
  else if (flags.shards) args.push(`--shards=${flags.shards}`);
  if (flags.shardsNamespace) args.push(`--shards-namespace=${flags.shardsNamespace}`);
  args.push(`--liveness=${manifest.liveness ?? DEFAULT_LIVENESS}`);
  args.push(manifest.entry ?? "handlers.ts");
  return args;
}

const DEFAULT_LIVENESS = "http://0.0.0.0:8080/healthz";

/**
 * The Deployment of the operator.
 *
 * @param flags The operator's flags (name, namespace, scope and modes).
 * @param manifest The image, replicas, probes and entry.
 * @returns The Deployment.
 * @throws {Error} For a `--liveness` that is not an http URL.
 */
export function deployment(flags: OperatorFlags, manifest: ManifestsFlags): ManifestObject {
  const liveness = new URL(manifest.liveness ?? DEFAULT_LIVENESS);
  if (liveness.protocol !== "http:") {
    throw new Error(`--liveness ${manifest.liveness}: use an http:// URL, as kopf run serves it`);
  }
  const port = Number(liveness.port || 80);
  const labels = { "app.kubernetes.io/name": flags.name };
  const replicas = manifest.replicas ?? 1;
  // Kopf's advice: one operator at a time, also during a rollout — unless the replicas
  // coordinate themselves (a Lease: leader election, or sharding).
  const coordinated = !!flags.leaderElection || !!flags.shards;
  const probe = (path: string, extra: Record<string, number>) => ({
    httpGet: { path, port: "probes" },
    ...extra,
  });
  const fromField = (name: string, fieldPath: string) => ({
    name,
    valueFrom: { fieldRef: { fieldPath } },
  });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: flags.name, namespace: flags.accountNamespace, labels },
    spec: {
      replicas,
      ...(coordinated ? {} : { strategy: { type: "Recreate" } }),
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: flags.name,
          // deploy/Dockerfile runs as the image's uid 1993 (numeric, so the kubelet can check).
          securityContext: { runAsNonRoot: true },
          containers: [{
            name: "operator",
            image: manifest.image,
            args: runArgs(flags, manifest),
            env: [
              fromField("POD_ID", "metadata.name"),
              fromField("POD_NAMESPACE", "metadata.namespace"),
            ],
            ports: [{ name: "probes", containerPort: port }],
            // 200 once the operator has logged in and listed what it serves; until then
            // the startup probe waits (up to 5 minutes), so a long first listing is no restart.
            startupProbe: probe(liveness.pathname, { periodSeconds: 5, failureThreshold: 60 }),
            livenessProbe: probe(liveness.pathname, { periodSeconds: 10, failureThreshold: 3 }),
            readinessProbe: probe("/readyz", { periodSeconds: 5 }),
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] },
            },
          }],
        },
      },
    },
  };
}

/**
 * Runs `kopf manifests`: prints the Namespace (optional), ServiceAccount, CRDs, RBAC and
 * Deployment of the operator.
 *
 * @param flags The operator's flags.
 * @param manifest The manifests' flags.
 * @param write Where the YAML goes (default stdout).
 * @returns The exit code: 0.
 * @throws {LoadingError | CatalogError | OperatorError} For files, resources, startup handlers.
 */
export async function runManifests(
  flags: OperatorFlags,
  manifest: ManifestsFlags,
  write: (text: string) => void = (t) => Deno.stdout.writeSync(new TextEncoder().encode(t)),
): Promise<number> {
  const loaded = await loadOperator(flags);
  const resolve = await resolver(loaded.registry, flags.crdFiles);
  const needs = operatorAccess(loaded.registry, loaded.settings, {
    namespaces: loaded.namespaces,
    accountNamespace: flags.accountNamespace,
    resolve,
  });
  const rbac = rbacObjects(needs, {
    name: flags.name,
    accountNamespace: flags.accountNamespace,
    namespaces: loaded.namespaces,
  });
  for (const note of rbac.notes) console.error(`kopf: ${note}`);
  const replicas = manifest.replicas ?? 1;
  if (replicas > 1 && !flags.leaderElection && !flags.shards) {
    console.error(
      `kopf: --replicas ${replicas} without --leader-election or --shards: the replicas handle ` +
        "the same objects at once unless a peering with priorities pauses all but one",
    );
  }
  const labels = { "app.kubernetes.io/name": flags.name };
  const objects: ManifestObject[] = [
    ...(manifest.createNamespace
      ? [{ apiVersion: "v1", kind: "Namespace", metadata: { name: flags.accountNamespace } }]
      : []),
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: flags.name, namespace: flags.accountNamespace, labels },
    },
    ...crds(loaded.registry),
    ...rbac.objects,
    deployment(flags, manifest),
  ];
  write(manifestYaml(
    objects,
    `The operator ${flags.accountNamespace}/${flags.name} (kopf manifests): ` +
      "kubectl apply -f - to deploy it.",
  ));
  return 0;
}
