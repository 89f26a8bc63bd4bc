/**
 * Cluster discovery: which resources the API serves, as {@link Resource}s
 * that selectors are matched against. Read from `/api` + `/api/<v>` (the
 * core group, always preferred) and `/apis` + `/apis/<group>/<version>`.
 * A resource is `preferred` at the version kubectl would take for its name: the
 * group's `preferredVersion` if that serves it, else the group's first version
 * that does (a group's versions belong to several CRDs). Subresources
 * (`kopfexamples/status`) are folded into their resource's `subresources`.
 *
 * A 404 on one group-version means "nothing there": the last resource of a
 * group was just deleted and the group went away between the two requests.
 *
 * At most four group-versions are read at once (`SCAN_CONCURRENCY`): over
 * HTTP/1.1 every request in flight is a connection of its own, which the
 * client keeps idle afterwards — a cluster's 20–40 groups read all at once
 * left as many idle connections (TLS ones, in a cluster) for the life of
 * the operator.
 *
 * @module
 */

import { Limiter } from "../aio/limiter.ts";
import { Resource } from "../structs/references.ts";
import type { ApiClient } from "./api.ts";
import { NotFoundError } from "./errors.ts";

/** Options of {@link scanResources}. */
export interface ScanOptions {
  /** Scan only these groups (`""` for core); default all. */
  groups?: Iterable<string> | undefined;
  /** Stops the scan. */
  signal?: AbortSignal | undefined;
}

/**
 * Discovers the served resources.
 *
 * @param api The API client.
 * @param options Groups to limit to, signal.
 * @returns The resources, every version of every group.
 * @throws {ApiError} For error answers other than a group-version's 404.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { Selector } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { scanResources } from "./scanning.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const resources = await scanResources(new ApiClient({ vault }));
 * const pods = new Selector("pods").selectOne(resources);
 * assert.equal(pods.kind, "Pod");
 * assert.equal(pods.namespaced, true);
 * ```
 */
export async function scanResources(
  api: ApiClient,
  options: ScanOptions = {},
): Promise<Resource[]> {
  const groups = options.groups === undefined ? undefined : new Set(options.groups);
  const signal = options.signal;
  const slots = new Limiter(SCAN_CONCURRENCY);
  const read: ReadList = async (url) => {
    await slots.acquire();
    try {
      return await readGroupVersion(api, url, signal);
    } finally {
      slots.release();
    }
  };
  const versions: Array<Promise<Resource[]>> = [];
  const core = async () => {
    if (groups && !groups.has("")) return [];
    const rsp = await api.request<{ versions?: string[] }>("GET", "/api", { signal });
    const found = await Promise.all(
      (rsp.versions ?? []).map(async (v) =>
        toResources("", v, await read(`/api/${v}`), () => true)
      ),
    );
    return found.flat();
  };
  const named = async () => {
    if (groups && ![...groups].some((g) => g !== "")) return [];
    const rsp = await api.request<ApiGroupList>("GET", "/apis", { signal });
    const tasks = [];
    for (const group of rsp.groups ?? []) {
      if (groups && !groups.has(group.name)) continue;
      tasks.push(readGroup(group, read));
    }
    return (await Promise.all(tasks)).flat();
  };
  versions.push(core(), named());
  return (await Promise.all(versions)).flat();
}

/**
 * The server's version (`/version`): `major`, `minor`, `gitVersion`, ….
 *
 * @param api The API client.
 * @param options `signal` stops the request.
 * @returns The version info.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { readVersion } from "./scanning.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const version = await readVersion(new ApiClient({ vault }));
 * assert.deepEqual(version.major, "1");
 * ```
 */
export async function readVersion(
  api: ApiClient,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<Record<string, string>> {
  return await api.request<Record<string, string>>("GET", "/version", options);
}

interface ApiGroupList {
  groups?: Array<{
    name: string;
    versions?: Array<{ groupVersion?: string; version: string }>;
    preferredVersion?: { version: string };
  }>;
}

interface ApiResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  kind?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/**
 * One group's resources, every version, each marked `preferred` if it is the version that a
 * name without a version means — as kubectl resolves it: the group's preferred version if it
 * serves the resource, else the first of the group's versions (in the server's order, which is
 * its priority) that does. So a CRD that adds `v2` to a group does not hide the resources that
 * other CRDs of the group serve at `v1` only.
 */
async function readGroup(
  group: NonNullable<ApiGroupList["groups"]>[number],
  read: ReadList,
): Promise<Resource[]> {
  const versions = (group.versions ?? []).map((v) => v.version);
  const preferredVersion = group.preferredVersion?.version;
  const lists = await Promise.all(
    versions.map((version) => read(`/apis/${group.name}/${version}`)),
  );
  // The version of each plural: the preferred version's first, then in the group's order.
  const chosen = new Map<string, string>();
  const preferredAt = versions.indexOf(preferredVersion ?? "");
  const order = preferredAt < 0
    ? versions.keys()
    : [preferredAt, ...versions.keys().filter((i) => i !== preferredAt)];
  for (const i of order) {
    for (const r of lists[i]!) if (!chosen.has(r.name)) chosen.set(r.name, versions[i]!);
  }
  return versions.flatMap((version, i) =>
    toResources(group.name, version, lists[i]!, (plural) => chosen.get(plural) === version)
  );
}

/** Group-versions read at once by {@link scanResources} (each a connection over HTTP/1.1). */
const SCAN_CONCURRENCY = 4;

/** Reads a group-version's resource list, in one of the scan's slots. */
type ReadList = (url: string) => Promise<ApiResource[]>;

/** A group-version's resource list; empty if it 404s (it went away since /apis answered). */
async function readGroupVersion(
  api: ApiClient,
  url: string,
  signal: AbortSignal | undefined,
): Promise<ApiResource[]> {
  try {
    const rsp = await api.request<{ resources?: ApiResource[] }>("GET", url, { signal });
    return rsp.resources ?? [];
  } catch (error) {
    if (error instanceof NotFoundError) return [];
    throw error;
  }
}

/** The resources of one group-version's list, subresources folded in. */
function toResources(
  group: string,
  version: string,
  all: ApiResource[],
  preferred: (plural: string) => boolean,
): Resource[] {
  return all.filter((r) => !r.name.includes("/")).map((r) =>
    new Resource({
      group,
      version,
      plural: r.name,
      kind: r.kind,
      // Builtins' singulars are empty in some clusters (K3s): fall back to the lowercased kind.
      singular: r.singularName || r.kind?.toLowerCase(),
      shortcuts: r.shortNames ?? [],
      categories: r.categories ?? [],
      subresources: all
        .filter((sub) => sub.name.startsWith(`${r.name}/`))
        .map((sub) => sub.name.slice(r.name.length + 1)),
      namespaced: r.namespaced,
      preferred: preferred(r.name),
      verbs: r.verbs ?? [],
    })
  );
}
