/**
 * Cluster discovery: which resources the API serves, as {@link Resource}s
 * that selectors are matched against. Read from `/api` + `/api/<v>` (the
 * core group, always preferred) and `/apis` + `/apis/<group>/<version>` (the
 * group's `preferredVersion` marks the preferred one). Subresources
 * (`kopfexamples/status`) are folded into their resource's `subresources`.
 *
 * A 404 on one group-version means "nothing there": the last resource of a
 * group was just deleted and the group went away between the two requests.
 *
 * @module
 */

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
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../../../mod.ts";
 * import { Selector } from "../../../mod.ts";
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
  const versions: Array<Promise<Resource[]>> = [];
  const core = async () => {
    if (groups && !groups.has("")) return [];
    const rsp = await api.request<{ versions?: string[] }>("GET", "/api", { signal });
    const found = await Promise.all(
      (rsp.versions ?? []).map((v) => readGroupVersion(api, `/api/${v}`, "", v, true, signal)),
    );
    return found.flat();
  };
  const named = async () => {
    if (groups && ![...groups].some((g) => g !== "")) return [];
    const rsp = await api.request<ApiGroupList>("GET", "/apis", { signal });
    const tasks = [];
    for (const group of rsp.groups ?? []) {
      if (groups && !groups.has(group.name)) continue;
      for (const { version } of group.versions ?? []) {
        const preferred = version === group.preferredVersion?.version;
        const url = `/apis/${group.name}/${version}`;
        tasks.push(readGroupVersion(api, url, group.name, version, preferred, signal));
      }
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
 * import { startApiServer } from "../../../testing.ts";
 * import { ConnectionInfo, Vault } from "../../../mod.ts";
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

async function readGroupVersion(
  api: ApiClient,
  url: string,
  group: string,
  version: string,
  preferred: boolean,
  signal: AbortSignal | undefined,
): Promise<Resource[]> {
  let rsp: { resources?: ApiResource[] };
  try {
    rsp = await api.request("GET", url, { signal });
  } catch (error) {
    if (error instanceof NotFoundError) return [];
    throw error;
  }
  const all = rsp.resources ?? [];
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
      preferred,
      verbs: r.verbs ?? [],
    })
  );
}
