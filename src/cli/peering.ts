/**
 * `kopf freeze` and `kopf resume`: pausing and resuming the operators of a
 * peering by hand, as Kopf's CLI does it. `freeze` writes a peer entry of its
 * own (identity `user@host`, or `--id`) with a priority (100 by default;
 * `--dev`: 666) and a lifetime into the peering object; every operator with a
 * lower priority pauses until the entry is removed (`kopf resume`, same id)
 * or expires. The scope picks the peering as `kopf run` does: `-A` (or
 * neither flag) the `ClusterKopfPeering`, `-n` the `KopfPeering` of each
 * matching namespace.
 *
 * Unlike Kopf, which logs a missing peering object at debug level and exits
 * with 0, a peering object or CRD that is not there is an error here: one
 * line saying what to do, and exit code 1 — a freeze that froze nothing
 * should not look like a success. So is a `resume` whose id has no entry in
 * any of the peering objects (a mistyped `--id`, or a freeze made by another
 * user@host): the line lists the entries there are, since the operators
 * stay paused until the right entry goes or expires. (Where `get` on the
 * peering objects is not allowed, `resume` patches without knowing, as
 * Kopf's does.)
 *
 * @module
 */

import type { ApiClient } from "../cogs/clients/api.ts";
import { ApiClient as Client } from "../cogs/clients/api.ts";
import { loginViaClient, loginWithKubeconfig } from "../cogs/clients/auth.ts";
import { ForbiddenError } from "../cogs/clients/errors.ts";
import { listObjects, readObject } from "../cogs/clients/fetching.ts";
import { Vault } from "../cogs/structs/credentials.ts";
import { matchNamespace, Resource, selectSpecificNamespaces } from "../cogs/structs/references.ts";
import { type Level, lineSink, OperatorLogger } from "../core/actions/loggers.ts";
import { touchPeering, whereOf } from "../core/engines/peering.ts";
import { detectOwnId } from "../core/engines/peers.ts";
import { peeringResources } from "../core/reactor/peering.ts";
import type { FreezeValues } from "./_commands.ts";

/**
 * The flags of `kopf freeze` and `kopf resume`: the values of their options, derived from their
 * specs (`_commands.ts`; resume's are a part of freeze's), each optional for a caller in code;
 * `-n` is a list under a plural name.
 */
export interface PeeringFlags extends Partial<Omit<FreezeValues, "namespace">> {
  /** `-n, --namespace`: the `KopfPeering` of each matching namespace (none: the cluster's). */
  namespaces: string[];
}

/** What an embedding caller controls. */
export interface PeeringControls {
  /** Log in with this kubeconfig file instead of the default login. */
  kubeconfig?: string | undefined;
  /** Where log lines go (default stderr). */
  write?: ((line: string) => void) | undefined;
}

/** The peering cannot be frozen or resumed (no CRDs, no object): one line saying why. */
export class PeeringCommandError extends Error {
  override name = "PeeringCommandError";
}

const NAMESPACES = new Resource({
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
});

/**
 * Runs `kopf freeze` (with a lifetime) or `kopf resume` (removes the entry).
 *
 * @param command Which one.
 * @param flags The parsed flags.
 * @param controls The kubeconfig and the log output.
 * @returns The exit code (0).
 * @throws {PeeringCommandError} Without the peering CRDs or objects, or (resume) without the
 *   id's entry in any of them.
 *
 * @example
 * ```ts ignore
 * await peeringCommand("freeze", { namespaces: [], allNamespaces: true, lifetime: 60 });
 * await peeringCommand("resume", { namespaces: [], allNamespaces: true });
 * ```
 */
export async function peeringCommand(
  command: "freeze" | "resume",
  flags: PeeringFlags,
  controls: PeeringControls = {},
): Promise<number> {
  const level: Level = flags.debug || flags.verbose ? "debug" : flags.quiet ? "warning" : "info";
  const logger = new OperatorLogger(
    lineSink({
      level,
      format: flags.logFormat ?? "full",
      ...(controls.write ? { write: controls.write } : {}),
    }),
    "kopf.peering",
  );
  const name = flags.peering ?? "default";
  const identity = flags.id ?? detectOwnId(true);
  const priority = flags.dev ? 666 : flags.priority ?? 100;
  const lifetime = command === "freeze" ? flags.lifetime ?? 0 : 0;
  const login = controls.kubeconfig
    ? await loginWithKubeconfig({ path: controls.kubeconfig })
    : await loginViaClient();
  using vault = new Vault({ login });
  const api: ApiClient = new Client({ vault });
  const clusterwide = flags.allNamespaces || !flags.namespaces.length;
  const resources = await peeringResources(api, clusterwide);
  if (!resources.length) {
    throw new PeeringCommandError(
      `the peering CRD (${clusterwide ? "ClusterKopfPeering" : "KopfPeering"}, ` +
        "kopf.dev/v1 or zalando.org/v1) is not served: apply peering.yaml first",
    );
  }
  const namespaces = clusterwide ? [null] : await servedNamespaces(api, flags.namespaces);
  const done: string[] = [];
  const missing: string[] = [];
  /** resume: the objects found without this id's entry, and the entries they have. */
  const without: Array<{ where: string; entries: string[] }> = [];
  for (const namespace of namespaces) {
    for (const resource of resources) {
      const target = { resource, namespace, name };
      if (command === "resume") {
        const entries = await peerEntries(api, resource, namespace, name);
        if (entries && !entries.includes(identity)) {
          without.push({ where: whereOf(namespace), entries });
          continue; // nothing to remove here
        }
      }
      const found = await touchPeering(api, target, identity, priority, lifetime, {
        message: command === "freeze" ? flags.message : undefined,
      });
      const where = whereOf(namespace);
      logger.debug(`Keep-alive in '${name}' ${where}: ${found ? "ok" : "not found"}.`);
      (found ? done : missing).push(where);
    }
  }
  if (!done.length && without.length) {
    // A resume that resumed nothing: a mistyped --id leaves the operators paused, so say so.
    const where = without.map((w) =>
      `${w.where} (${
        w.entries.length
          ? `its entries: ${w.entries.map((e) => `'${e}'`).join(", ")}`
          : "it has no entries"
      })`
    ).join(", ");
    throw new PeeringCommandError(
      `nothing to resume: the peering '${name}' has no entry '${identity}' ${where}: ` +
        "give the --id that kopf freeze was given (its default: user@host, or $POD_ID)",
    );
  }
  if (!done.length) {
    const where = clusterwide
      ? "cluster-wide"
      : namespaces.length
      ? `in ${namespaces.map((n) => `'${n}'`).join(", ")}`
      : `in no namespace matching ${flags.namespaces.join(", ")}`;
    throw new PeeringCommandError(
      `the peering '${name}' is not found ${where}: create it (see peering.yaml) ` +
        "or name an existing one with --peering",
    );
  }
  const places = [...new Set(done)].join(", ");
  if (command === "freeze") {
    logger.info(
      `Frozen the operators of the peering '${name}' ${places}: '${identity}' with priority ` +
        `${priority} for ${lifetime} seconds (until 'kopf resume').`,
    );
  } else {
    logger.info(`Resumed the operators of the peering '${name}' ${places}: '${identity}' removed.`);
  }
  return 0;
}

/**
 * The ids of the entries in a peering object, or undefined when it cannot be read (absent, or
 * `get` not allowed: then `resume` patches as Kopf's does, without knowing).
 */
async function peerEntries(
  api: ApiClient,
  resource: Resource,
  namespace: string | null,
  name: string,
): Promise<string[] | undefined> {
  try {
    const body = await readObject(api, resource, namespace, name);
    const status = body?.status;
    if (!body) return undefined;
    return status && typeof status === "object" ? Object.keys(status) : [];
  } catch (e) {
    if (e instanceof ForbiddenError) return undefined;
    throw e;
  }
}

/** The namespaces matching `-n` patterns (the literal ones if namespaces may not be listed). */
async function servedNamespaces(api: ApiClient, patterns: string[]): Promise<string[]> {
  try {
    const listed = await listObjects(api, NAMESPACES, null);
    return listed.items.map((n) => n.metadata?.name ?? "").filter((n) =>
      n && matchNamespace(patterns, n)
    );
  } catch (e) {
    if (e instanceof ForbiddenError) return selectSpecificNamespaces(patterns);
    throw e;
  }
}
