/**
 * Shared set-up of the peering tests: the peering CRDs of peering.yaml (as users apply them)
 * and the `default` objects of examples/06-peering/default.yaml on a test cluster, the status
 * of a peering object, and handler files for operators run as child processes.
 *
 * @module
 */

import { loadAll } from "js-yaml";
import type { Cluster } from "./_setup.ts";
import { ROOT } from "./_setup.ts";

/** An object as the API server returns it. */
// deno-lint-ignore no-explicit-any
export type Obj = any;

/**
 * Creates the CRDs of peering.yaml (or peering-legacy.yaml) and, unless told not to, the
 * `default` peering objects (cluster-wide, and in `default`).
 *
 * @param c The cluster.
 * @param options `legacy`: the zalando.org CRDs; `objects`: create the default objects (true).
 */
export async function applyPeering(
  c: Cluster,
  options: { legacy?: boolean; objects?: boolean } = {},
): Promise<void> {
  const file = options.legacy ? "peering-legacy.yaml" : "peering.yaml";
  const docs = loadAll(await Deno.readTextFile(`${ROOT}${file}`)).filter(Boolean) as Array<
    Record<string, unknown>
  >;
  for (const crd of docs) await c.createCrd(crd);
  if (options.objects === false) return;
  const group = options.legacy ? "zalando.org" : "kopf.dev";
  await createPeering(c, "default", null, group);
  await createPeering(c, "default", "default", group);
}

/**
 * Creates a peering object.
 *
 * @param c The cluster.
 * @param name Its name.
 * @param namespace Its namespace (a `KopfPeering`), or null (a `ClusterKopfPeering`).
 * @param group The API group (default kopf.dev).
 */
export async function createPeering(
  c: Cluster,
  name: string,
  namespace: string | null,
  group = "kopf.dev",
): Promise<void> {
  await c.call("POST", peeringPath(namespace, undefined, group), {
    apiVersion: `${group}/v1`,
    kind: namespace ? "KopfPeering" : "ClusterKopfPeering",
    metadata: { name },
  });
}

/**
 * The URL path of peering objects.
 *
 * @param namespace The namespace, or null for the cluster-scoped ones.
 * @param name One object's name.
 * @param group The API group (default kopf.dev).
 * @returns The path.
 */
export function peeringPath(namespace: string | null, name?: string, group = "kopf.dev"): string {
  const base = namespace
    ? `/apis/${group}/v1/namespaces/${namespace}/kopfpeerings`
    : `/apis/${group}/v1/clusterkopfpeerings`;
  return name ? `${base}/${name}` : base;
}

/**
 * The status of a peering object: the peers' entries by identity.
 *
 * @param c The cluster.
 * @param namespace The namespace, or null.
 * @param name The name (default `default`).
 * @returns The entries ({} when none).
 */
export async function peeringStatus(
  c: Cluster,
  namespace: string | null = null,
  name = "default",
): Promise<Record<string, Obj>> {
  const r = await c.call("GET", peeringPath(namespace, name));
  return r.body.status ?? {};
}
